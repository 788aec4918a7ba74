"""Macros and `{% call %}` blocks: expanded inline at each call, or a recursive macro whose
output is printed as one `define` per combination of its constant arguments."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from jinja2 import nodes

from ..go import ir, tree
from ..go.tree import action_nodes, helper_texts
from ..ops.values import (
    ANY,
    ANYOF,
    ARGS,
    BOUND_METHOD,
    CALL,
    CALLS,
    FUNC,
    LIST,
    LITERAL_OR,
    NONE,
    NS,
    PARAMS,
    PROP,
    PROPS,
    RECORD,
    STRLIST,
    TFUNC,
    TOOL,
    TOOLS,
    UNDEF,
    UNDEFINED,
    Value,
    literal_choice,
)
from .core import Core
from .scope import Frame

#: how deep a recursive macro is expanded (calls of it inside one another)
MAX_RECURSION = 3
#: how deep a recursive macro is expanded on untyped arguments
MAX_UNTYPED_RECURSION = 2
#: kinds the variable a recursive macro's varying arguments are read from may have to become a
#: `define`'s dot: containers of Ollama's data model and untyped values, whose nesting bounds the
#: recursion (a string recursed on by character would recurse without end, where the expansion
#: is cut with a warning), and never message text (an assistant prefill may cut it)
DEFINE_KINDS = {ANY, LIST, STRLIST, TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ANYOF, ARGS, CALLS, CALL, FUNC}
#: what is known of an argument that names a Go variable of the caller (not visible in a define)
CALLER_FLAGS = {"defined_flag", "final", "filter_flag", "literal", "literal_flag"}
#: what is known of an argument that holds for the parameter (it may be unset, None...)
KNOWN_OF_ARGUMENTS = {"defined_flag", "maybe_none", "nullable", "final", "items", "sorted", "ordered", "optional"}
#: most `define`s one macro becomes (one per combination of constant arguments and kind)
MAX_DEFINES = 16


def _self_contained(written: list[tree.Piece]) -> bool:
    """Does the template code written (the translator's pieces) read only variables it
    declares (Go's block scopes: a variable lives to the `end` of the `if`, `range` or `with`
    it is declared in, a branch to its `else`)?"""
    scopes: list[set[str]] = [set()]
    for node in action_nodes(written):
        word = node.keyword
        if word in {"else", "end"}:
            scopes.pop()
        if any(all(name not in scope for scope in scopes) for name in node.reads() | set(node.assigns())):
            return False
        if word in {"if", "range", "with", "else"}:
            scopes.append(set())
        if node.declares():
            scopes[-1].update(node.declares())
    return True


class Macros(Core):
    """Macros and `{% call %}` blocks, expanded inline at each call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the `define` each (macro, varying parameter, its kind, constant arguments) became,
        #: None where the body cannot be one
        self.macro_defines: dict[tuple[str, ...], str | None] = {}
        self._recursive: set[str] | None = None
        self._dead: dict[str, frozenset[str]] = {}

    def inline_macro(self, call: nodes.Call, frame: Frame, bound: dict[str, Value] | None = None) -> None:
        """Expand a macro call in place; `bound` fixes some parameters' values (see `literal_or`).

        A recursive macro printed (not captured) with one argument varying at run time is
        called as a `define` instead (see `macro_call`)."""
        assert isinstance(call.node, nodes.Name)
        macro = self.macros[call.node.name]
        if bound is None and self.emit.sink is None and macro.name in self.recursive_macros():
            called, bound = self.call_as_define(call, macro, frame)
            if called:
                return
        bound = bound or {}
        if self.expanded_per_literal(call, macro, frame, bound):
            return
        if [name for name, _ in self.expanding].count(macro.name) >= MAX_RECURSION:
            # each call is expanded in place; recursion stops where the data model makes the
            # arguments static, and is cut here where only run-time values could go deeper
            self.emit.warn(
                call,
                f"recursive macro {macro.name}() nested deeper than {MAX_RECURSION} calls",
                "the deeper call renders nothing",
            )
            return
        self.emit.if_(ir.Bool(True))
        scope = self.macro_scope(call, macro, frame, bound)
        untyped = any(v.kind == ANY for v in scope.names.values())
        if untyped and self.expanding.count((macro.name, True)) >= MAX_UNTYPED_RECURSION:
            # untyped values (schema `items`, argument values) can nest without end, and each
            # level copies the macro's code: cut sooner than typed schema levels
            self.emit.warn(
                call,
                f"recursive macro {macro.name}() on untyped values nested deeper than {MAX_UNTYPED_RECURSION} calls",
                "the deeper call renders nothing",
            )
            self.emit.end()
            return
        self.expanding.append((macro.name, untyped))
        self.declare_scope(scope, macro.body)
        self.visit_body(macro.body, scope)
        self.expanding.pop()
        self.emit.end()

    def call_as_define(
        self, call: nodes.Call, macro: nodes.Macro, frame: Frame
    ) -> tuple[bool, dict[str, Value] | None]:
        """A recursive macro printed where called: (True, None) once called as a `define`
        (`macro_define`); else (False, its arguments evaluated once, for the expansion to take
        as they are, or None where they are not evaluated here)."""
        start = len(self.emit.out) + self.emit.guard_open  # (the first action may close the prefill guard)
        arguments = self.macro_arguments(call, frame)
        if arguments is None:
            return False, None
        called = self.macro_define(macro, call, frame, arguments)
        if called is None:
            return False, arguments
        # the arguments are evaluated inside the define, from its dot: their code
        # here (pure: macro_define refuses calls) is not needed
        del self.emit.out[start:]
        self.emit.call_helper(*called, call)
        return True, None

    def expanded_per_literal(self, call: nodes.Call, macro: nodes.Macro, frame: Frame, bound: dict[str, Value]) -> bool:
        """An argument that is a dict literal on some paths (see `literal_or`): the macro
        expanded once for each case, under the Go flag telling which; False where there is none."""
        for param, source in zip([p.name for p in macro.args], call.args):
            slot = frame.lookup(source.name) if isinstance(source, nodes.Name) and param not in bound else None
            if slot is not None and slot.facts.literal:
                choice = literal_choice(self.access.literal_or(slot))
                self.emit.if_(choice.flag)
                self.inline_macro(call, frame, {**bound, param: choice.literal})
                self.emit.else_()
                self.inline_macro(call, frame, {**bound, param: choice.other})
                self.emit.end()
                return True
        return False

    def macro_scope(self, call: nodes.Call, macro: nodes.Macro, frame: Frame, bound: dict[str, Value]) -> Frame:
        """The macro body's names: each parameter the argument given (positional, keyword or
        default), a run-time one copied into a Go variable that keeps what is known of it, the
        rest of the names the template's globals (not the caller's loop variables)."""
        scope = Frame(names={}, parent=self.root_of(frame), loop=None)
        args = list(call.args)
        params = [p.name for p in macro.args]
        defaults = dict(zip(params[len(params) - len(macro.defaults) :], macro.defaults))
        kwargs = {kw.key: kw.value for kw in call.kwargs}
        for i, param in enumerate(params):
            given: nodes.Expr | None = args[i] if i < len(args) else kwargs.get(param, defaults.get(param))
            if given is None:
                scope.names[param] = UNDEFINED
                continue
            value = bound[param] if param in bound else self.expr(given, frame)
            if value.kind == LITERAL_OR:
                raise self.emit.fail(call, f"macro {macro.name}() given a dict literal on some paths")
            if value.kind == NS and sets_attribute_of(macro, param):
                # (the caller's namespace changes too: what is known of its text would be lost)
                raise self.emit.fail(call, f"macro {macro.name}() setting an attribute of the namespace it is given")
            if value.is_const or value.kind in {UNDEF, NONE, RECORD, BOUND_METHOD, NS}:
                scope.names[param] = value
            else:
                var = self.emit.temp()
                self.emit.declare(var, value.code)
                # what is known of the argument holds for the parameter (it may be unset, None...)
                facts = value.facts.only(KNOWN_OF_ARGUMENTS)
                if facts.defined_flag and value.facts.maybe_undefined:
                    facts = replace(facts, maybe_undefined=True)
                scope.names[param] = Value(var, value.kind, facts=replace(facts, var=True, assigned=True))
        # free names in the macro body see the caller's loop variables only through globals
        scope.parent = self.root_of(frame)
        return scope

    def prints_unpadded(self, expr: nodes.Expr, frame: Frame) -> bool:
        """Is `expr` a macro call whose output always starts and ends with constant text that is
        not whitespace? Then `|trim` of it changes nothing, and it can be printed, not captured."""
        if not (
            isinstance(expr, nodes.Call)
            and isinstance(expr.node, nodes.Name)
            and expr.node.name in self.macros
            and frame.lookup(expr.node.name) is None
        ):
            return False
        body = self.macros[expr.node.name].body

        def edge(statements: list[nodes.Node], at: int) -> bool:
            for statement in statements:
                if isinstance(statement, nodes.Assign) and not self.calls_in(statement.node):
                    continue  # prints nothing
                if not isinstance(statement, nodes.Output) or not statement.nodes:
                    return False
                data = statement.nodes[at]
                return isinstance(data, nodes.TemplateData) and data.data != "" and not data.data[at].isspace()
            return False

        return edge(body, 0) and edge(body[::-1], -1)

    def recursive_macros(self) -> set[str]:
        """Macros that call themselves, directly or through other macros."""
        if self._recursive is None:
            calls = {
                name: {
                    c.node.name
                    for c in self.index.find_all(macro, nodes.Call)
                    if isinstance(c.node, nodes.Name) and c.node.name in self.macros
                }
                for name, macro in self.macros.items()
            }
            recursive = set()
            for name in calls:
                seen, todo = set(), list(calls[name])
                while todo:
                    callee = todo.pop()
                    if callee not in seen:
                        seen.add(callee)
                        todo.extend(calls.get(callee, ()))
                if name in seen:
                    recursive.add(name)
            self._recursive = recursive
        return self._recursive

    def dead_parameters(self, macro: nodes.Macro) -> frozenset[str]:
        """Parameters whose value never reaches the output: every read of one is the same
        parameter's argument of a call of the macro itself (gpt-oss's `required_params`).

        Such a parameter does not vary the define (it is left unset inside), so a call site
        whose only other varying argument comes from one variable still becomes a define. The
        arguments given for it are dropped unevaluated: only where they call nothing (a
        function call could have an effect, a filter or attribute read has none)."""
        if macro.name not in self._dead:
            params = [p.name for p in macro.args]
            passed: set[int] = set()  # ids of the Name nodes that are pass-through arguments
            clean = set(params)
            for call in self.index.find_all(macro, nodes.Call):
                if not (isinstance(call.node, nodes.Name) and call.node.name == macro.name):
                    continue
                given = {**dict(zip(params, call.args)), **{kw.key: kw.value for kw in call.kwargs}}
                if call.dyn_args or call.dyn_kwargs:
                    clean.clear()
                for param, expr in given.items():
                    if isinstance(expr, nodes.Name) and expr.name == param:
                        passed.add(id(expr))
                    elif self.index.find_all(expr, nodes.Call):
                        clean.discard(param)
            for stmt in macro.body:
                for name in self.index.find_all(stmt, nodes.Name):
                    if name.name in clean and (name.ctx != "load" or id(name) not in passed):
                        clean.discard(name.name)
            self._dead[macro.name] = frozenset(clean)
        return self._dead[macro.name]

    @staticmethod
    def varies(value: Value) -> bool:
        return not (value.is_const or value.kind in {UNDEF, NONE})

    def macro_arguments(self, call: nodes.Call, frame: Frame) -> dict[str, Value] | None:
        """Each given parameter's value, evaluated in the caller's scope as the expansion does;
        None when the call is not a plain one (a dict literal on some paths, unpacking)."""
        assert isinstance(call.node, nodes.Name)
        macro = self.macros[call.node.name]
        params = [p.name for p in macro.args]
        if (
            call.dyn_args
            or call.dyn_kwargs
            or len(call.args) > len(params)
            or {kw.key for kw in call.kwargs} - set(params)
        ):
            return None
        givens = self.macro_givens(macro, call)
        for given in givens.values():
            slot = frame.lookup(given.name) if isinstance(given, nodes.Name) else None
            if slot is not None and slot.facts.literal:
                return None
        return {param: self.expr(given, frame) for param, given in givens.items()}

    def macro_define(
        self, macro: nodes.Macro, call: nodes.Call, frame: Frame, arguments: dict[str, Value]
    ) -> tuple[str, str] | None:
        """The `define` printing `macro` for this call, and the Go value to call it with.

        The arguments that vary at run time must all be read from one variable of the caller
        (`f(x)`, `f(v['properties'], v['required'] | default([]))`): that variable is the
        define's dot and they are read from it inside; the constant arguments and the
        expressions read are the define's identity, so the recursive call finds the same define
        and the recursion depth is the data's. None where the call is expanded inline instead.
        """
        dead = self.dead_parameters(macro)
        arguments = {param: UNDEFINED if param in dead else value for param, value in arguments.items()}
        varying = {param: value for param, value in arguments.items() if self.varies(value)}
        if not varying or (self.emit.leading_bos and not self.emit.printed):
            return None  # (a leading BOS the macro prints first is left out only inline)
        givens = self.macro_givens(macro, call)
        sources = {givens[param] for param in varying}
        names = {n.name for source in sources for n in self.index.find_all(source, nodes.Name) if n.ctx == "load"}
        names |= {source.name for source in sources if isinstance(source, nodes.Name)}
        if len(names) != 1 or any(
            not (isinstance(c.node, nodes.Getattr) and c.node.attr in {"get", "items", "keys", "values"})
            for source in sources
            for c in self.index.find_all(source, nodes.Call)
        ):
            return None  # several variables, or a call that may change state if run twice
        base_name = names.pop()
        base = frame.lookup(base_name)
        if base is None or not self.varies(base) or base.kind not in DEFINE_KINDS or not base.code:
            return None
        if CALLER_FLAGS & set(base.facts.present()):
            return None  # (the arguments' own flags are computed again inside, from the dot)
        known = tuple(
            sorted(
                f"{k}={v!r}"
                for k, v in base.facts.present().items()
                if k not in {"var", "assigned", "fields", "prefetched"}
            )
        )
        reads = tuple(f"{param}={self.read_from_dot(givens[param], base_name)}" for param in sorted(varying))
        constants = tuple(
            f"{p}:{v.kind}:{v.const!r}" if v.is_const else f"{p}:{v.kind}"
            for p, v in sorted(arguments.items())
            if p not in varying
        )
        key = (macro.name, str(base.kind), *known, "|", *reads, "|", *constants)
        if key in self.macro_defines:
            # (one being written further out is complete unless it fails, and then every
            # define written inside it, which could call it, is dropped with it)
            name = self.macro_defines[key]
            return None if name is None else (name, base.code)
        if sum(1 for k in self.macro_defines if k[0] == macro.name) >= MAX_DEFINES:
            return None
        if self.reads_template_variables(macro, frame):
            self.macro_defines[key] = None
            return None
        name = f"ofc_macro_{macro.name}_{len(self.macro_defines)}"
        self.macro_defines[key] = name
        body = self.macro_define_body(name, macro, frame, arguments, givens, (base_name, base))
        if body is None:
            self.macro_defines[key] = None
            return None
        self.emit.helpers[name] = (tree.Act.of(ir.Define(name)), *body, tree.Act.of(ir.End()))
        return name, base.code

    @staticmethod
    def read_from_dot(source: nodes.Expr, base_name: str) -> str:
        """What an argument reads from the define's dot, whatever the caller named it."""
        shared = {id(source.environment): source.environment}  # (every node's, not copied)
        renamed = copy.deepcopy(source, shared)
        for name in [renamed, *renamed.find_all(nodes.Name)]:
            if isinstance(name, nodes.Name) and name.name == base_name:
                name.name = "."
        return repr(renamed)

    def macro_givens(self, macro: nodes.Macro, call: nodes.Call) -> dict[str, nodes.Expr]:
        """Each parameter's expression at this call: given, by keyword or its default."""
        params = [p.name for p in macro.args]
        defaults = dict(zip(params[len(params) - len(macro.defaults) :], macro.defaults))
        kwargs = {kw.key: kw.value for kw in call.kwargs}
        givens: dict[str, nodes.Expr] = {}
        for i, param in enumerate(params):
            given = call.args[i] if i < len(call.args) else kwargs.get(param, defaults.get(param))
            if given is not None:
                givens[param] = given
        return givens

    def macro_define_body(
        self,
        name: str,
        macro: nodes.Macro,
        frame: Frame,
        arguments: dict[str, Value],
        givens: dict[str, nodes.Expr],
        base: tuple[str, Value],
    ) -> tuple[tree.Piece, ...] | None:
        """The macro's body written for a `define` whose dot is the caller's variable `base`;
        None when it needs anything else of the caller's (a variable, the prefill state, `$`)."""
        mark, defines = self.emit.checkpoint(), set(self.macro_defines)
        with self.emit.writing_to([], fresh=True, own_blocks=True):
            dot = self.emit.temp()
            self.emit.declare(dot, ir.Dot())
            root = self.defined_fresh(macro, self.root_of(frame))
            reads = Frame(names={base[0]: Value(dot, base[1].kind, facts=base[1].facts)}, parent=root)
            scope = Frame(names={}, parent=root, loop=None)
            for param in (a.name for a in macro.args):
                value = arguments.get(param, UNDEFINED)
                if self.varies(value):
                    value = self.expr(givens[param], reads)
                if self.varies(value) and value.kind not in {RECORD, BOUND_METHOD}:  # (as the expansion keeps them)
                    var = self.emit.temp()
                    self.emit.declare(var, value.code)
                    facts = replace(value.facts.only(KNOWN_OF_ARGUMENTS), var=True, assigned=True)
                    value = Value(var, value.kind, facts=facts)
                scope.names[param] = value
            self.expanding.append((macro.name, any(v.kind == ANY for v in scope.names.values())))
            try:
                self.declare_scope(scope, macro.body)
                self.visit_body(macro.body, scope)
            finally:
                self.expanding.pop()
            self.emit.close_guard()
            written = self.emit.out
            body = tuple(written)
        if not _self_contained(written):
            self.emit.budget.spent = mark.spent  # written, not kept: the expansion is counted instead
            del self.emit.warnings[mark.warnings :]
            self.drop_defines_calling(name, set(self.macro_defines) - defines, mark.helpers)
            self.emit.budget.spent += sum(
                len(text)
                for n, helper in self.emit.helpers.items()
                if n not in mark.helpers
                for text in helper_texts(helper)
            )  # kept
            return None
        return body

    def drop_defines_calling(self, name: str, written: set[tuple[str, ...]], before: dict[str, tree.Helper]) -> None:
        """Drop the defines written while define `name` was being written that call it (directly
        or through one another): `name` will not exist. The others are complete and stay."""
        dropped = {name}
        while True:
            more = {
                define
                for key in written
                if (define := self.macro_defines.get(key)) is not None
                and define not in dropped
                and any(
                    f'template "{gone}"' in text
                    for text in helper_texts(self.emit.helpers.get(define, ()))
                    for gone in dropped
                )
            }
            if not more:
                break
            dropped |= more
        for key in written:
            if self.macro_defines.get(key) in dropped:
                del self.macro_defines[key]
        self.emit.helpers = {n: code for n, code in self.emit.helpers.items() if n not in dropped or n in before}

    def reads_template_variables(self, macro: nodes.Macro, frame: Frame) -> bool:
        """Does the macro's body name a Go variable of the template's scope (read, or set from
        it)? Then no define can hold it: known before writing the body (the scan of the written
        body stays the guarantee)."""
        root = self.defined_fresh(macro, self.root_of(frame))
        params = {a.name for a in macro.args}
        named = {
            n.name
            for statement in macro.body
            for n in [statement, *self.index.find_all(statement, nodes.Name)]
            if isinstance(n, nodes.Name)
        }
        if "caller" in named:
            return True  # a `{% call %}` body is written in its caller's scope
        return any(
            (slot := root.names.get(name)) is not None and isinstance(slot.node, ir.Variable) for name in named - params
        )

    @staticmethod
    def defined_fresh(macro: nodes.Macro, root: Frame) -> Frame:
        """The template's scope as a define's macro body sees it: a name the body first sets,
        unconditionally, before anything reads it, starts fresh instead of from the template's
        variable of that name (a define cannot see it, and no read needs it)."""
        fresh: set[str] = set()
        for i, statement in enumerate(macro.body):
            if isinstance(statement, nodes.Assign) and isinstance(statement.target, nodes.Name):
                name = statement.target.name
                earlier = [n for s in [*macro.body[:i], statement.node] for n in [s, *s.find_all(nodes.Name)]]
                if not any(isinstance(n, nodes.Name) and n.name == name for n in earlier):
                    fresh.add(name)
        if not fresh & set(root.names):
            return root
        return Frame(
            names={k: v for k, v in root.names.items() if k not in fresh},
            parent=root.parent,
            loop=root.loop,
            depth=root.depth,
        )

    def run_caller(self, node: nodes.Call) -> None:
        """`caller()` in a macro: the body of the `{% call %}` block, in the scope it was written in."""
        if not self.callers or node.args or node.kwargs:
            raise self.emit.fail(
                node, "caller()", "outside a {% call %} block, or with arguments, has no Go template equivalent"
            )
        body, frame = self.callers.pop()  # the body sees the callers outside its own block
        try:
            self.emit.if_(ir.Bool(True))
            self.visit_body(body, frame)
            self.emit.end()
        finally:
            self.callers.append((body, frame))


def sets_attribute_of(macro: nodes.Macro, name: str) -> bool:
    """Does the macro's body `set name.attr`? (A namespace is shared with the caller.)"""
    targets = [
        *(s.target for s in macro.find_all(nodes.Assign)),
        *(s.target for s in macro.find_all(nodes.AssignBlock)),
    ]
    return any(isinstance(target, nodes.NSRef) and target.name == name for target in targets)
