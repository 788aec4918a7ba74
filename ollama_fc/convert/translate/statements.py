"""Statements: output, `if`, `set` and its block form, filter blocks, call blocks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from jinja2 import nodes

from ..go import ir
from ..go.calls import operand_of
from ..ops.tojson import PYTHON_REPR
from ..ops.values import (
    ANY,
    ARGS,
    CALLS,
    CONTENT,
    LIST,
    MAPPINGS,
    MSGS,
    NONE,
    NOT_CONST,
    NS,
    RECORD,
    REVERSED,
    SELECT,
    SPLIT,
    STR,
    STRLIST,
    TOOLS,
    UNDEF,
    Facts,
    Kind,
    SelectionFilter,
    Value,
    attrs_of,
    const,
    final_of,
    view_of,
)
from .concat import MARKUP_STORED, Concatenations
from .scope import Frame


class Statements(Concatenations):
    """Statements: `stmt_<Node>` for each jinja2 statement node but `for`, reached through `Core.visit`."""

    def stmt_Output(self, node: nodes.Output, frame: Frame) -> None:
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                self.emit.text(child.data)
            else:
                self.output(child, frame)

    def output(self, expr: nodes.Expr, frame: Frame, plus: bool = False) -> None:
        """Print an expression; concatenations print piece by piece, macro calls inline.

        `plus` marks a piece of a `+` concatenation: Python refuses `str + dict`, so tool call
        arguments there must be the JSON string the template was written for.
        """
        if isinstance(expr, (nodes.Concat,)):
            for piece in expr.nodes:
                self.output(piece, frame)
            return
        if isinstance(expr, nodes.Add):
            markup = self.adds_markup(expr, frame)
            if not markup and self.stringish(expr):
                self.output(expr.left, frame, plus=True)
                self.output(expr.right, frame, plus=True)
                return
            if markup and self.print_markup(expr, frame):
                return
        if isinstance(expr, nodes.Call) and isinstance(expr.node, nodes.Name):
            name = expr.node.name
            if name in self.macros and frame.lookup(name) is None:
                self.inline_macro(expr, frame)
                return
            if name == "caller" and frame.lookup(name) is None:
                self.run_caller(expr)
                return
        if isinstance(expr, nodes.CondExpr):
            test = self.truth(expr.test, frame)
            self.emit.if_(test)
            self.output(expr.expr1, frame)
            if expr.expr2 is not None:
                self.emit.else_()
                self.output(expr.expr2, frame)
            self.emit.end()
            return
        if isinstance(expr, nodes.Filter) and expr.name == "safe" and expr.node is not None and not expr.args:
            self.output(expr.node, frame, plus)  # no escaping to undo: printed as it is
            return
        if self.planning() and self.print_planned(expr, frame):
            return  # a plan through strip() or as replace()'s replacement, printed (see plantext.py)
        if (
            isinstance(expr, nodes.Filter)
            and expr.name == "trim"
            and expr.node is not None
            and not (expr.args or expr.kwargs)
            and self.prints_unpadded(expr.node, frame)
        ):
            self.output(expr.node, frame)  # nothing to trim: printed, not captured (see macros.py)
            return
        if isinstance(expr, nodes.Filter) and expr.name == "tojson":
            self.to_json.print_tojson(expr, self.value_of(frame))
            return
        if (
            isinstance(expr, nodes.Filter)
            and expr.name == "string"
            and isinstance(expr.node, (nodes.Name, nodes.Getattr, nodes.Getitem))
        ):
            # a plain lookup (no side effects to repeat): a schema's repr printed, not captured
            inner = self.expr(expr.node, frame)
            if inner.kind in PYTHON_REPR or (inner.kind == LIST and not inner.is_const):
                self.to_json.repr_action(inner, expr)
                return
            if inner.kind == ANY:
                self.strings.print_value(inner, expr)  # str(): strings bare, anything else its repr
                return
        value = self.expr(expr, frame)
        if plus and value.kind == ARGS:
            self.to_json.json_action(value, None, expr)
            return
        self.strings.print_value(value, expr, concatenated=plus)

    def print_markup(self, expr: nodes.Add, frame: Frame) -> bool:
        """`'...'|safe + x + y|tojson` printed: Markup escapes each plain operand, so each is
        printed HTML-escaped in turn (JSON through the escaping writers) instead of the whole
        captured and then escaped (`markup_add`), where every operand is a `|safe` one, a
        string, or `tojson` the writers can print; else False, having printed nothing."""
        operands = self.string_operands(expr)
        kinds = (nodes.Const, nodes.Filter, nodes.Name, nodes.Getattr, nodes.Getitem)
        if self.emit.sink is not None or not all(isinstance(operand, kinds) for operand in operands):
            return False
        prints: list[Callable[[], None]] = []
        for operand in operands:
            if (
                isinstance(operand, nodes.Filter)
                and operand.name == "safe"
                and operand.node is not None
                and not operand.args
            ):
                prints.append(partial(self.output, operand.node, frame))
            elif isinstance(operand, nodes.Filter) and operand.name == "tojson" and operand.node is not None:
                value, indent = self.to_json.tojson_options(operand, self.value_of(frame))
                separators, ascii_only = self.to_json.tojson_layout(operand, self.value_of(frame))
                if ascii_only or not self.to_json.html_json_printable(value):
                    return False
                prints.append(partial(self.to_json.json_action, value, indent, operand, separators, html=True))
            elif isinstance(operand, nodes.Filter):
                return False
            else:
                value = self.expr(operand, frame)
                if not (value.kind in {STR, CONTENT} or (value.is_const and isinstance(value.const, str))):
                    return False
                if not value.facts.markup:  # (Markup added to Markup is not escaped again)
                    value = self.strings.html_escaped(value, operand)  # (refuses a message's text, as `+` does)
                prints.append(partial(self.strings.print_value, value, operand))
        for print_operand in prints:
            print_operand()
        return True

    def stmt_If(self, node: nodes.If, frame: Frame) -> None:
        branches = [(node.test, node.body)] + [(e.test, e.body) for e in node.elif_]
        first = self.expr(node.test, frame)
        if first.kind in {UNDEF, NONE} and not first.facts:
            first = const(False)
        if not first.is_const and self.logic.truth_of(first) in {"true", "false"}:
            first = const(
                self.logic.truth_of(first) == "true"
            )  # a mapping Ollama always fills (a message, a tool's function)
        if first.is_const:
            # resolved statically (Ollama's data model makes it certain): keep the branch taken
            if first.const:
                self.visit_body(node.body, frame)
            elif len(branches) > 1:
                rest = nodes.If(branches[1][0], branches[1][1], node.elif_[1:], node.else_, lineno=node.elif_[0].lineno)
                self.stmt_If(rest, frame)
            else:
                self.visit_body(node.else_, frame)
            return
        test = self.logic.truth_of(first)
        self.emit.close_guard()
        at = len(self.emit.out)  # where a plan set in a branch is made (see printplan.py)
        self.emit.if_(test)
        before = dict(self.plans)
        with self.conditional():
            self.following.append((frame, self.cond_depth - 1, [*node.elif_, *node.else_]))  # they see the old values
            try:
                self.visit_body(node.body, frame)
            finally:
                self.following.pop()
            yes, self.plans = self.plans, before
            if node.elif_:
                # the rest is an `if` of its own inside the else: its test is computed there and
                # may resolve statically
                self.emit.else_()
                first_elif = node.elif_[0]
                self.stmt_If(
                    nodes.If(first_elif.test, first_elif.body, node.elif_[1:], node.else_, lineno=first_elif.lineno),
                    frame,
                )
            elif node.else_:
                self.emit.else_()
                self.visit_body(node.else_, frame)
        self.emit.end()
        if yes or self.plans:
            self.merge_plans(test, at, yes, self.plans)

    def stmt_Assign(self, node: nodes.Assign, frame: Frame) -> None:
        target = node.target
        if isinstance(target, nodes.NSRef):
            self.assign_attribute(node, target, frame)
            return
        if (
            isinstance(target, nodes.Tuple)
            and isinstance(node.node, nodes.Tuple)
            and self.independent_pairs(target, node.node)
        ):
            # `set a, b = x, y`: one assignment per pair (no right side reads a name set here)
            for name, item in zip(target.items, node.node.items):
                self.stmt_Assign(nodes.Assign(name, item, lineno=node.lineno), frame)
            return
        if not isinstance(target, nodes.Name):
            raise self.emit.fail(node, "tuple assignment in set")
        if target.name not in self.read_names and not self.calls_in(node.node):
            return  # never read, and computing it changes nothing
        self.assign_name(node, target, frame)

    def assign_attribute(self, node: nodes.Assign, target: nodes.NSRef, frame: Frame) -> None:
        """`set ns.attr = x`: the namespace's Go variable for the attribute set, and what is
        known of the attribute joined with what was known before (it may be set on some paths)."""
        ns = frame.lookup(target.name)
        if ns is None or ns.kind != NS:
            raise self.emit.fail(node, f"set {target.name}.{target.attr}", "on something that is not a namespace()")
        value = self.expr(node.node, frame)
        if value.kind == SPLIT:
            value = self.strings.split_list(value)
        var = f"{ns.code}_{target.attr}"
        attrs = attrs_of(ns)
        read = nodes.Getattr(nodes.Name(target.name, "load"), target.attr, "load", lineno=node.lineno)
        if target.attr in attrs and self.hold(ns, target.attr, value, frame.owner(target.name), frame, read):
            return  # a plan, printed where it is read (see printplan.py)
        if (target.attr in attrs and attrs[target.attr].kind == STRLIST) or value.kind == STRLIST:
            value = Value(self.access.strlist_code(value, node), STRLIST, facts=final_of(value))
        if target.attr not in attrs:
            raise self.emit.fail(
                node, f"set {target.name}.{target.attr}", "sets an attribute namespace() did not declare"
            )
        if value.facts.markup:
            self.emit.warn(node, f"set {target.name}.{target.attr} to a |safe concatenation", MARKUP_STORED)
        joined = self.joined_attribute(attrs[target.attr], value)
        self.emit.assign(var, self.emit.operand(value, node))
        if value.is_const and not isinstance(value.const, (list, dict)):
            joined = replace(joined, facts=replace(joined.facts, known=(self.emit.flow_epoch, value.const)))
        elif value.facts.nonempty:
            joined = replace(joined, facts=replace(joined.facts, known_nonempty=self.emit.flow_epoch))  # (as `known`)
        ns.take(replace(ns, facts=replace(ns.facts, attrs={**attrs, target.attr: joined})))
        if target.attr in (ns.facts.text_attrs or ()):
            self.emit.set_final(f"{var}_final", value.facts.final or "false")

    def joined_attribute(self, old: Value, value: Value) -> Value:
        """A namespace attribute after `set ns.attr = value` on some path: what holds on every
        path (may be negative, undefined or None), setting the attribute's defined-flag."""
        joined = old.join(value)
        facts = joined.facts.join(
            Facts(
                # Go's printf-width arithmetic needs to know
                maybe_negative=any(
                    v.facts.maybe_negative or (v.is_const and isinstance(v.const, int) and v.const < 0)
                    for v in (old, value)
                ),
                maybe_undefined=old.facts.maybe_undefined,
                maybe_none=old.kind == NONE
                or old.facts.maybe_none
                or value.kind == NONE,  # some path may leave (or set) None
            )
        )
        flag = old.facts.defined_flag
        if old.facts.maybe_undefined and flag and (value.kind == UNDEF or not value.facts.maybe_undefined):
            facts = replace(facts, defined_flag=flag)
            self.emit.assign(flag.name, "false" if value.kind == UNDEF else "true")
        return replace(joined, facts=facts)

    def assign_name(self, node: nodes.Assign, target: nodes.Name, frame: Frame) -> None:
        """`set x = value`: held as a plan, a namespace, a view on some paths, a static value,
        or a Go assignment, in that order of preference."""
        value = self.expr(node.node, frame)
        if value.kind == SPLIT:
            value = self.strings.split_list(value)
        slot = frame.lookup(target.name)
        assert slot is not None, target.name
        slot.take(replace(slot, facts=replace(slot.facts, known=None)))
        if value.kind == NS:
            self.forget_namespace(slot)
        name_read = nodes.Name(target.name, "load", lineno=node.lineno)
        if self.hold(slot, None, value, frame.owner(target.name), frame, name_read):
            return  # a plan, printed where it is read (see printplan.py)
        if target.name in self.growing and (
            value.kind == STRLIST or (value.is_const and isinstance(value.const, list))
        ):
            value = Value(self.access.strlist_code(value, node), STRLIST, facts=final_of(value))
        if value.kind == NS:
            self.declare_namespace(slot, value, target.name, node)
            return
        owner = frame.owner(target.name)
        strong = owner is not None and (self.cond_depth == owner.depth or not self.read_later(target.name, owner))
        if not strong and self.assign_on_some_paths(slot, value, target.name, node):
            return
        if self.assign_statically(slot, value, strong, target.name, node):
            return
        self.keep_ordered(slot, value, strong, target.name, node)
        self.keep_markup(slot, value, strong, node, target.name)
        self.assign_go_value(slot, value, strong, node)

    def declare_namespace(self, slot: Value, value: Value, name: str, node: nodes.Assign) -> None:
        """`set ns = namespace(..)`: one Go variable per attribute, declared here, including those
        only a later `set ns.attr` adds (undefined, with a flag, until set)."""
        attrs = dict(attrs_of(value))
        # Jinja lets `set ns.x` add attributes; declare them all now, undefined until set
        for attr in self.ns_refs.get(name, []):
            if attr not in attrs:
                # a Go flag tells whether some `set ns.attr` ran (for `ns.attr is defined`)
                flag = ir.Variable(f"{slot.code}_{attr}_defined")
                attrs[attr] = Value("", UNDEF, facts=Facts(maybe_undefined=True, defined_flag=flag))
                self.emit.declare(flag.name, "false")
        for attr, init in attrs.items():
            if init.is_const and isinstance(init.const, list):
                # a list attribute can only be a list of strings built at run time
                init = attrs[attr] = Value(self.access.strlist_code(init, node), STRLIST)
            self.emit.declare(f"{slot.code}_{attr}", self.emit.operand(init, node))
        # in attribute order, not a set: the flags are declared the same on every run
        text_attrs = tuple(a for a in attrs if f"{name}.{a}" in self.text_names)
        slot.take(replace(slot, kind=NS, facts=replace(slot.facts, attrs=attrs, text_attrs=text_attrs)))
        for attr in text_attrs:
            self.emit.declare(f"{slot.code}_{attr}_final", ir.Bool(False))

    def assign_on_some_paths(self, slot: Value, value: Value, name: str, node: nodes.Assign) -> bool:
        """A value Go cannot hold in the variable, set only on some paths, kept as a Go flag beside
        it: the variable's own list filtered, a dict literal, or an empty list of its kind.
        False where `value` is none of these, having written nothing."""
        if value.kind == SELECT and self.filters_own_list(slot, value):
            # `set xs = xs | rejectattr(..)` on some paths: the filters apply once a Go flag is on
            flag = slot.facts.filter_flag
            assert flag is not None  # (`filters_own_list` holds only for a variable with the flag)
            self.emit.assign(flag.name, "true")
            added = (SelectionFilter(f, fr, flag) for f, fr, _ in value.facts.filters or ())
            facts = replace(slot.facts, filters=(*(slot.facts.filters or ()), *added))
            if slot.kind != SELECT:
                facts = replace(facts, base=Value(slot.code, slot.kind))
            slot.take(replace(slot, kind=SELECT, facts=facts))
            return True
        if value.is_const and isinstance(value.const, dict) and slot.facts.literal_flag and not slot.is_const:
            # a dict literal on some paths: a Go flag says the variable holds it (see `literal_or`)
            if (slot.facts.literal or value).const != value.const:
                raise self.emit.fail(node, f"set {name}", "(different dict literals on different paths)")
            slot.take(replace(slot, facts=replace(slot.facts, literal=value)))
            self.emit.assign(slot.facts.literal_flag.name, "true")
            return True
        if value.is_const and value.const == [] and slot.kind in {TOOLS, MSGS, CALLS} and not slot.is_const:
            # `set tools = []` on some paths: an empty list of the kind the variable holds
            listed = operand_of(slot.code)
            self.emit.assign(slot.code, ir.command("slice", listed, ir.Number.of(0), ir.Number.of(0)))
            # no longer None where Ollama's list is empty
            slot.take(replace(slot, facts=replace(slot.facts, emptied=True, assigned=True)))
            return True
        return False

    def assign_statically(self, slot: Value, value: Value, strong: bool, name: str, node: nodes.Assign) -> bool:
        """A literal list or dict, a filtered, reversed list or a record has no Go value: the
        variable holds it statically (a view keeps its list in the variable). False, having
        written nothing, where the value is a Go value to assign."""
        static = (value.is_const and isinstance(value.const, (list, tuple, dict))) or value.kind in {
            SELECT,
            REVERSED,
            RECORD,
        }
        if static or slot.is_const:
            if not strong:
                raise self.emit.fail(node, f"set {name}", "(a list stored only on some paths)")
            slot.take(replace(slot, const=value.const if value.is_const else NOT_CONST))
        if not static:
            return False
        facts = replace(slot.facts, assigned=True)
        if value.kind == RECORD:
            facts = replace(facts, fields=value.facts.fields)
        if value.kind in {SELECT, REVERSED}:
            base, _ = view_of(value)
            facts = replace(replace(facts, **value.facts.present()), base=Value(slot.code, base.kind))
            slot.take(replace(slot, kind=value.kind, facts=facts))
            self.emit.assign(slot.code, base.code)
        else:
            slot.take(replace(slot, kind=value.kind, facts=facts))
        return True

    def keep_ordered(self, slot: Value, value: Value, strong: bool, name: str, node: nodes.Assign) -> None:
        """A nested property map is ranged through .All, a plain map directly: a variable holds
        one of them on every path."""
        if bool(value.facts.ordered) == bool(slot.facts.ordered) or value.kind in {UNDEF, NONE}:
            return
        if not (strong or slot.kind == UNDEF or not slot.facts.assigned):
            raise self.emit.fail(node, f"set {name}", "(an ordered and a plain property map on different paths)")
        slot.take(replace(slot, facts=replace(slot.facts, ordered=bool(value.facts.ordered))))

    def assign_go_value(self, slot: Value, value: Value, strong: bool, node: nodes.Assign) -> None:
        """The Go assignment of a value the variable holds at run time, its flags set, and what
        is known of the variable: the value's on a path every read follows (`strong`), else the
        join of old and new."""
        if strong:
            kind, maybe_undefined, list_or_text, emptied = value.kind, False, None, False
        else:
            maybe_undefined, emptied = slot.kind == UNDEF or slot.facts.maybe_undefined, slot.facts.emptied
            list_or_text = self.list_or_text(slot, value) if slot.facts.assigned else None
            kind = slot.join(value).kind if slot.facts.assigned else value.kind
            list_or_text = list_or_text if kind == ANY else None
        # `x if c else none`: None is held as ""; a maybe-undefined mapping no flag tells about
        # (`is defined` of it is refused)
        none = value.facts.maybe_none and value.kind in MAPPINGS
        unflagged = value.facts.maybe_undefined and not value.facts.defined_flag and value.kind in MAPPINGS
        kept = replace(
            slot.facts,
            maybe_undefined=maybe_undefined,
            defined_flag=None if unflagged else slot.facts.defined_flag,
            list_or_text=list_or_text,
            emptied=emptied,
            assigned=True,
        )
        facts = kept.join(Facts(maybe_undefined=unflagged, maybe_none=none or value.kind == NONE))
        if value.is_const and not isinstance(value.const, (list, dict)):
            facts = replace(facts, known=(self.emit.flow_epoch, value.const))  # until the next branch point
        if facts.defined_flag:
            self.emit.assign(facts.defined_flag.name, "false" if value.kind == UNDEF else "true")
        if facts.literal:
            assert facts.literal_flag is not None  # (a literal is held only with its flag)
            self.emit.assign(facts.literal_flag.name, "false")
        if facts.final:
            assert isinstance(facts.final, ir.Variable)  # (a variable's own flag: see `declare_scope`)
            self.emit.set_final(facts.final.name, value.facts.final or "false")
        operand = '""' if value.kind in {UNDEF, NONE} else None
        slot.take(replace(slot, kind=kind, facts=facts))
        self.emit.assign(slot.code, operand or self.emit.operand(value, node))

    @staticmethod
    def independent_pairs(targets: nodes.Tuple, values: nodes.Tuple) -> bool:
        names = {t.name for t in targets.items if isinstance(t, nodes.Name)}
        read = {n.name for v in values.items for n in [v, *v.find_all(nodes.Name)] if isinstance(n, nodes.Name)}
        return len(names) == len(targets.items) == len(values.items) and not names & read

    def filters_own_list(self, slot: Value, value: Value) -> bool:
        """Is `value` a filtering of the list the variable holds now (not yet filtered on some path)?"""
        base, filters = view_of(value)
        own = slot.facts.base or slot
        unflagged = all(when is None for _, _, when in filters)
        if not slot.facts.filter_flag or base.node is None or base.node != own.node:
            return False  # (not the same Go operand as the variable's list)
        return base.kind == own.kind and unflagged

    @staticmethod
    def list_or_text(old: Value, new: Value) -> tuple[Kind, Kind] | None:
        """(list kind, text kind) when a variable set on some paths holds Ollama's messages, tool
        calls or tools on one and a message's text on another: a loop over it branches on the Go type."""
        kinds: set[Kind] = set()
        for value in (old, new):
            if value.kind == ANY and value.facts.list_or_text:
                kinds.update(value.facts.list_or_text)
            elif value.kind != UNDEF:
                kinds.add(value.kind)
        lists, texts = kinds & {MSGS, CALLS, TOOLS}, kinds & {STR, CONTENT}
        if len(lists) != 1 or len(texts) != 1 or len(kinds) != 2:
            return None
        return (lists.pop(), texts.pop())

    def stmt_AssignBlock(self, node: nodes.AssignBlock, frame: Frame) -> None:
        """`{% set x %}...{% endset %}`: the body's output appended to x piece by piece."""
        if not isinstance(node.target, nodes.Name) or node.filter is not None:
            raise self.emit.fail(node, "{% set %}...{% endset %} with a filter or into an attribute")
        slot = frame.lookup(node.target.name)
        assert slot is not None
        if self.block_plan(node, frame):
            return  # its body, printed where x is (see printplan.py)
        captured = self.emit.capture(lambda: self.visit_body(node.body, frame), "{% set %}...{% endset %} block", node)
        value = self.emit.captured(captured)
        self.stmt_Assign(
            nodes.Assign(node.target, nodes.Name("__captured__", "load"), lineno=node.lineno),
            Frame({"__captured__": value}, parent=frame),
        )

    def stmt_Macro(self, node: nodes.Macro, frame: Frame) -> None:
        return  # expanded inline where called

    def stmt_Scope(self, node: nodes.Scope, frame: Frame) -> None:
        self.visit_body(node.body, frame)

    def stmt_Break(self, node: nodes.Node, frame: Frame) -> None:
        self.emit.break_()

    def stmt_Continue(self, node: nodes.Node, frame: Frame) -> None:
        self.emit.continue_()

    def stmt_ExprStmt(self, node: nodes.ExprStmt, frame: Frame) -> None:
        raise self.emit.fail(node, "{% do %}")

    def stmt_CallBlock(self, node: nodes.CallBlock, frame: Frame) -> None:
        """`{% call m(..) %}body{% endcall %}`: m inlined, its `caller()` rendering body where the call is."""
        call = node.call
        if (
            node.args
            or not isinstance(call.node, nodes.Name)
            or call.node.name not in self.macros
            or frame.lookup(call.node.name) is not None
        ):
            raise self.emit.fail(
                node,
                "{% call %} block",
                "other than a macro called with a caller() taking no arguments has no Go template equivalent",
            )
        self.callers.append((node.body, frame))
        try:
            self.inline_macro(call, frame)
        finally:
            self.callers.pop()

    def stmt_FilterBlock(self, node: nodes.FilterBlock, frame: Frame) -> None:
        """`{% filter f %}...{% endfilter %}`: the body captured as text, printed through `f`."""
        captured = self.emit.capture(lambda: self.visit_body(node.body, frame), "{% filter %} block", node)
        self.output(
            self.filtered_capture(node.filter, node),
            Frame({"__captured__": self.emit.captured(captured)}, parent=frame),
        )

    @staticmethod
    def filtered_capture(chain: nodes.Filter, node: nodes.Node) -> nodes.Expr:
        """The block filter `chain` (whose innermost filter has no operand) applied to `__captured__`."""

        def rebuild(f: nodes.Filter) -> nodes.Filter:
            inner = (
                rebuild(f.node)
                if isinstance(f.node, nodes.Filter)
                else nodes.Name("__captured__", "load", lineno=node.lineno)
            )
            return nodes.Filter(inner, f.name, f.args, f.kwargs, f.dyn_args, f.dyn_kwargs, lineno=node.lineno)

        return rebuild(chain)
