"""Macros and `{% call %}` blocks, expanded inline at each call."""

from __future__ import annotations

from jinja2 import nodes

from ..ops.values import (
    ANY,
    BOUND_METHOD,
    LITERAL_OR,
    NONE,
    RECORD,
    UNDEF,
    UNDEFINED,
    Value,
)
from .core import Core
from .scope import Frame

#: how deep a recursive macro is expanded (calls of it inside one another)
MAX_RECURSION = 3
#: how deep a recursive macro is expanded on untyped arguments
MAX_UNTYPED_RECURSION = 2


class Macros(Core):
    """Macros and `{% call %}` blocks, expanded inline at each call."""

    def inline_macro(self, call: nodes.Call, frame: Frame, bound: dict[str, Value] | None = None) -> None:
        """Expand a macro call in place; `bound` fixes some parameters' values (see `literal_or`)."""
        assert isinstance(call.node, nodes.Name)
        macro = self.macros[call.node.name]
        bound = bound or {}
        for param, source in zip([p.name for p in macro.args], call.args):
            slot = frame.lookup(source.name) if isinstance(source, nodes.Name) and param not in bound else None
            if slot is not None and slot.extra.get("literal"):
                # the argument is a dict literal on some paths: expand the macro for each case
                choice = self.literal_or(slot)
                self.action(f"if {choice.extra['flag']}")
                self.inline_macro(call, frame, {**bound, param: choice.extra["literal"]})
                self.action("else")
                self.inline_macro(call, frame, {**bound, param: choice.extra["other"]})
                self.action("end")
                return
        if [name for name, _ in self.expanding].count(macro.name) >= MAX_RECURSION:
            # each call is expanded in place; recursion stops where the data model makes the
            # arguments static, and is cut here where only run-time values could go deeper
            self.warn(
                call,
                f"recursive macro {macro.name}() nested deeper than {MAX_RECURSION} calls",
                "the deeper call renders nothing",
            )
            return
        scope = Frame(names={}, parent=self.root_of(frame), loop=None)
        args = list(call.args)
        params = [p.name for p in macro.args]
        defaults = dict(zip(params[len(params) - len(macro.defaults) :], macro.defaults))
        kwargs = {kw.key: kw.value for kw in call.kwargs}
        self.action("if true")
        for i, param in enumerate(params):
            given: nodes.Expr | None = args[i] if i < len(args) else kwargs.get(param, defaults.get(param))
            if given is None:
                scope.names[param] = UNDEFINED
                continue
            value = bound[param] if param in bound else self.expr(given, frame)
            if value.kind == LITERAL_OR:
                raise self.fail(call, f"macro {macro.name}() given a dict literal on some paths")
            if value.is_const or value.kind in {UNDEF, NONE, RECORD, BOUND_METHOD}:
                scope.names[param] = value
            else:
                var = self.temp()
                self.action(f"{var} := {value.code}")
                # what is known of the argument holds for the parameter (it may be unset, None...)
                known = {
                    k: v
                    for k, v in value.extra.items()
                    if k
                    in {"defined_flag", "maybe_none", "nullable", "final", "items", "sorted", "ordered", "optional"}
                }
                if "defined_flag" in known and value.extra.get("maybe_undefined"):
                    known["maybe_undefined"] = True
                scope.names[param] = Value(var, value.kind, extra={"var": True, "set": True, **known})
        # free names in the macro body see the caller's loop variables only through globals
        scope.parent = self.root_of(frame)
        untyped = any(v.kind == ANY for v in scope.names.values())
        if untyped and self.expanding.count((macro.name, True)) >= MAX_UNTYPED_RECURSION:
            # untyped values (schema `items`, argument values) can nest without end, and each
            # level copies the macro's code: cut sooner than typed schema levels
            self.warn(
                call,
                f"recursive macro {macro.name}() on untyped values nested deeper than {MAX_UNTYPED_RECURSION} calls",
                "the deeper call renders nothing",
            )
            self.action("end")
            return
        self.expanding.append((macro.name, untyped))
        self.declare_scope(scope, macro.body)
        self.visit_body(macro.body, scope)
        self.expanding.pop()
        self.action("end")

    def run_caller(self, node: nodes.Call) -> None:
        """`caller()` in a macro: the body of the `{% call %}` block, in the scope it was written in."""
        if not self.callers or node.args or node.kwargs:
            raise self.fail(
                node, "caller()", "outside a {% call %} block, or with arguments, has no Go template equivalent"
            )
        body, frame = self.callers.pop()  # the body sees the callers outside its own block
        try:
            self.action("if true")
            self.visit_body(body, frame)
            self.action("end")
        finally:
            self.callers.append((body, frame))
