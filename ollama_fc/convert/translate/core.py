"""The translator's core: its state, the read of the whole tree it needs up front, and the
dispatch every statement and expression goes through (`visit`, `expr`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from jinja2 import nodes

from ...errors import ConversionError
from ...hf.shapes import TOOL_RESULT_ROLES, role_constants
from ...jinja_index import TreeIndex
from ..analysis import (
    assigned_names,
    constant_field_reads,
    filtered_names,
    growing_lists,
    literal_dict_names,
    names_holding_text,
    neighbour_offset,
    only_raises,
    parse_jinja,
    stopping_bodies,
)
from ..exclusive import join_exclusive_ifs
from ..go import ir
from ..go import tree as go_tree
from ..go.calls import GoCall, GoOperand, go_and, go_eq, go_variable
from ..limits import Limits
from ..ops.access import Access
from ..ops.comparisons import Comparisons
from ..ops.emit import Emit
from ..ops.filters import Lowering
from ..ops.logic import Logic
from ..ops.strings import Strings
from ..ops.tojson import ToJson
from ..ops.values import (
    ANY,
    CONTENT,
    ELEMENT,
    MAPPINGS,
    NO_FACTS,
    NONE,
    STR,
    UNDEF,
    UNDEFINED,
    Facts,
    Loop,
    Value,
    ValueOf,
)
from ..ops.views import Views
from ..passes import Written, run_passes
from ..result import ConversionWarning
from ..tails import hoist_last_steps
from .plans import is_variable
from .scope import Frame


@dataclass(frozen=True)
class Translation:
    """What a translation wrote: the Go template, and what the translator found writing it."""

    text: str
    warnings: list[ConversionWarning]
    #: the BOS text left out where it led the output (see `Emit.text`)
    leading_bos: str
    #: the template's top-level `define` blocks by name (printed), and the rest of it
    defines: dict[str, str]
    body: str


class Core:
    """The translator's state and the dispatch: `visit` for statements, `expr` for expressions."""

    def __init__(
        self,
        template: str,
        special_tokens: dict[str, str],
        limits: Limits | None = None,
        *,
        runner_adds_bos: bool = False,
    ) -> None:
        self.source = template
        self.tree = join_exclusive_ifs(hoist_last_steps(parse_jinja(template)))
        #: the tree walked once, for the questions asked of it from here on (see jinja_index.py)
        self.index = TreeIndex(self.tree)
        self.macros: dict[str, nodes.Macro] = {}
        #: for each body being translated, the statements after the current one (see read_later)
        self.following: list[tuple[Frame, int, list[nodes.Node]]] = []
        #: bodies of the `{% call %}` blocks being expanded (innermost last), with their scopes
        self.callers: list[tuple[list[nodes.Node], Frame]] = []
        #: macros being expanded, each with whether some argument is untyped
        self.expanding: list[tuple[str, bool]] = []
        self.ns_attrs: dict[str, list[str]] = {}
        self.cond_depth = 0
        #: variables that may hold a message's text get a Go flag: is it the final message's?
        self.text_names = names_holding_text(self.index)
        #: names some `is defined` test asks about: their assignments also set a Go flag
        self.tested_defined = {
            n.node.name
            for n in self.index.all(nodes.Test)
            if n.name in {"defined", "undefined"} and isinstance(n.node, nodes.Name)
        }
        #: variables that grow as lists at run time (held as strlists, never statically)
        self.growing = growing_lists(self.index)
        #: variables that may hold a filtered view of a list (see `selection_test`)
        self.filtered = filtered_names(self.index)
        #: variables that may be given a dict literal on some paths (see `literal_or`)
        self.literal_dicts = literal_dict_names(self.index)
        self.literal_uses = self.branching_uses(self.index)
        #: bodies after which their loop stops (see `stopping_bodies`), where it is a Go `range`
        self.stopping = stopping_bodies(self.index)
        #: for each loop being translated, innermost last: its id() where it is a Go `range`
        self.loop_ranges: list[int | None] = []
        #: checks that only raise_exception (dropped: they render nothing)
        self.dead_checks = {id(n) for n in self.index.all((nodes.For, nodes.If)) if only_raises(n, self.index)}
        unread = {
            id(name)
            for n in self.index.all((nodes.For, nodes.If))
            if id(n) in self.dead_checks
            for name in self.index.find_all(n, nodes.Name)
        }
        self.read_names = self.names_read(unread)
        #: attributes each name is given by `set name.attr` (Jinja lets a namespace grow)
        self.ns_refs: dict[str, list[str]] = {}
        for ref in self.index.all(nodes.NSRef):
            self.ns_refs.setdefault(ref.name, []).append(ref.attr)
        #: the strings the template compares a role with (see role_constants)
        self.role_names = role_constants(self.index)
        tool_role = next((r for r in TOOL_RESULT_ROLES if r in self.role_names), "tool")
        #: the output, and the operations the Jinja lowers to, each a service over it
        self.emit = Emit(special_tokens, tool_role, limits)
        self.access = Access(self.emit)
        self.logic = Logic(self.emit, self.access)
        self.to_json = ToJson(self.emit, self.access, self.logic)
        self.strings = Strings(self.emit, self.access, self.to_json)
        self.views = Views(self.emit, self.access, self.logic)
        self.lowering = Lowering(self.emit, self.access, self.logic, self.to_json, self.strings, self.views)
        self.comparisons = Comparisons(self.emit, self.logic, self.lowering)
        if runner_adds_bos:
            self.emit.leading_bos = special_tokens.get("bos_token") or ""

    def names_read(self, unread: set[int]) -> set[str]:
        """Names some statement that renders reads (a `set` of any other name has no effect).

        A read in the value of a `set` counts only once its target is read: a list a loop
        keeps appending to, and nothing else reads, is never needed.
        """
        assigns = [
            a for a in self.index.all(nodes.Assign) if isinstance(a.target, nodes.Name) and not self.calls_in(a.node)
        ]
        in_assign = {
            id(name): cast(nodes.Name, a.target).name
            for a in assigns
            for name in self.index.find_all(a.node, nodes.Name)
        }
        loads = [n for n in self.index.all(nodes.Name) if n.ctx == "load" and id(n) not in unread]
        read = {ref.name for ref in self.index.all(nodes.NSRef)}
        read |= {n.name for n in loads if id(n) not in in_assign}
        while True:
            more = {n.name for n in loads if in_assign.get(id(n)) in read} - read
            if not more:
                return read
            read |= more

    def calls_in(self, expr: nodes.Node) -> bool:
        """Does this expression call something (which may change state: `xs.append(x)`)?"""
        return isinstance(expr, nodes.Call) or bool(self.index.find_all(expr, nodes.Call))

    @staticmethod
    def branching_uses(index: TreeIndex) -> set[int]:
        """Name nodes where a `LITERAL_OR` value can branch on its flag: tested (truth, `is none`,
        `is defined`) or handed to a macro."""
        uses: set[int] = set()
        macros = {m.name for m in index.all(nodes.Macro)}
        for node in index.all((nodes.If, nodes.Not, nodes.CondExpr, nodes.Test, nodes.Call)):
            if isinstance(node, (nodes.If, nodes.CondExpr)):
                uses.add(id(node.test))
            elif isinstance(node, nodes.Not) or (
                isinstance(node, nodes.Test) and node.name in {"none", "defined", "undefined"}
            ):
                uses.add(id(node.node))
            elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in macros:
                uses.update(id(arg) for arg in node.args)
        return uses

    def translate(self, compact: bool = False) -> Translation:
        """The Go template; `compact`: its actions printed without inner spaces (see `tree.render`)."""
        return self.translation(self.translate_tree(), compact)

    def translation(self, top: list[go_tree.Node], compact: bool) -> Translation:
        """The printed template, with its defines printed apart (for `named.choose_on_tools`)."""
        defines = {
            node.node.name: go_tree.render([node], compact)
            for node in top
            if isinstance(node, go_tree.Block) and isinstance(node.node, ir.Define)
        }
        rest = [node for node in top if not (isinstance(node, go_tree.Block) and isinstance(node.node, ir.Define))]
        text = go_tree.render(top, compact)
        return Translation(text, self.emit.warnings, self.emit.leading_bos, defines, go_tree.render(rest, compact))

    def translate_tree(self) -> list[go_tree.Node]:
        """The template written and passed over as one tree: its helpers' defines, then the body."""
        for node in self.index.all(nodes.Macro):
            self.macros[node.name] = node
        root = Frame(names={})
        self.declare_scope(root, self.tree.body)
        self.visit_body(self.tree.body, root)
        self.emit.close_guard()
        prefill = self.emit.prefill_armed or self.emit.final_tracked  # printed, or only tracked, final text
        written = Written(
            body=go_tree.build(self.emit.out),
            helpers={name: go_tree.helper_tree(helper) for name, helper in self.emit.helpers.items()},
            prologue=go_tree.build(self.prefill_prologue()) if prefill else [],
            prefill_guarded=self.emit.prefill_armed,
        )
        return run_passes(written)

    def prefill_prologue(self) -> list[go_tree.Piece]:
        """Go variables describing an assistant prefill, computed once before the body runs.

        Ollama has no `add_generation_prompt`: a conversation ending with the assistant's message
        is continued. transformers' `continue_final_message` renders the closed conversation and
        cuts it after the last occurrence of the final message's stripped text (keeping its
        trailing whitespace when the message had no leading whitespace and was printed whole);
        an empty text cuts nothing. `$ofc_final` is that message, `$ofc_open` whether a cut is
        due (the length of the stripped text `$ofc_cut`, `$ofc_n`), `$ofc_tail` what follows
        the cut where the text continues with it: the whole text when it has no leading space.
        """
        prologue: list[go_tree.Piece] = []
        with self.emit.writing_to(prologue):
            empty, zero = ir.String.of(""), ir.Number.of(0)
            for var, initial in (
                ("$ofc_final", zero),
                ("$ofc_open", ir.Bool(False)),
                ("$ofc_go", ir.Bool(True)),
                ("$ofc_cut", empty),
                ("$ofc_n", zero),
                ("$ofc_tail", empty),
                ("$ofc_head", empty),
                ("$ofc_end", empty),
            ):
                self.emit.declare(var, initial)
            messages = ir.Variable("$", ("Messages",))
            self.emit.if_(messages)
            last = ir.call("len", ir.call("slice", messages, ir.Number.of(1)))
            self.emit.assign("$ofc_final", ir.command("index", messages, last))
            self.emit.if_(go_eq(ir.Variable("$ofc_final", ("Role",)), ir.String.of("assistant")))
            final_text = GoOperand(ir.Variable("$ofc_final", ("Content",)))
            stripped = self.strings.trim(final_text, "strip", None)
            cut = ir.Variable("$ofc_cut")
            self.emit.assign("$ofc_cut", stripped.expr)
            self.emit.assign("$ofc_n", ir.command("len", cut))
            self.emit.assign("$ofc_open", ir.Variable("$ofc_n"))
            self.emit.assign("$ofc_tail", cut)
            self.emit.if_(go_and("$ofc_open", go_eq(GoCall("slice", final_text, "0", "$ofc_n"), "$ofc_cut")))
            self.emit.assign("$ofc_tail", final_text.node)
            self.emit.end()
            self.emit.prefill_cut()
            self.emit.end()
            self.emit.end()
        return prologue

    def declare_scope(self, frame: Frame, body: Iterable[nodes.Node]) -> None:
        """Pre-declare every name a scope sets, so `if` branches assign rather than shadow; and
        look up at once the keys the scope reads of its untyped names (see `prefetch_fields`)."""
        frame.depth = self.cond_depth
        body = list(body)
        for name, value in list(frame.names.items()):
            if value.kind == ANY and not value.is_const and is_variable(value.code):
                reads = constant_field_reads(body, name, self.index)
                if reads and sum(n for path, n in reads.items() if len(path) == 1) > 1:
                    frame.names[name] = self.access.prefetch_fields(value, reads)
        for name in assigned_names(body):
            outer = frame.lookup(name)
            if outer is None and not name.endswith("_token"):
                known = self.access.global_name(name, None)
                outer = known if known.kind != UNDEF else None
            var = go_variable("$" + name if not name.startswith("_") else "$v" + name)
            init = self.emit.operand(outer, cast(nodes.Node, body)) if outer is not None and outer.code else '""'
            kind = outer.kind if outer is not None else UNDEF
            self.emit.declare(var, init)
            filtered, literal = name in self.filtered, name in self.literal_dicts
            tested, text = outer is None and name in self.tested_defined, name in self.text_names
            held = outer.facts if outer is not None else NO_FACTS  # (what holds of the outer value)
            facts = Facts(
                var=True,
                assigned=outer is not None,
                filter_flag=ir.Variable(var + "_filtered") if filtered else None,
                literal_flag=ir.Variable(var + "_literal") if literal else None,
                nullable=held.nullable,
                maybe_none=held.maybe_none,
                defined_flag=ir.Variable(var + "_defined") if tested else held.defined_flag,
                final=ir.Variable(var + "_final") if text else None,
            )
            for flag, wanted in (("_filtered", filtered), ("_literal", literal), ("_defined", tested)):
                if wanted:
                    self.emit.declare(var + flag, ir.Bool(False))
            if text:
                self.emit.set_final(f"{var}_final", held.final or "false", True)
            frame.names[name] = Value(var, kind, facts=facts)

    @contextmanager
    def conditional(self) -> Iterator[None]:
        """Code inside runs on some paths only (a branch, a loop's else): a variable it sets is
        not surely set after it (`cond_depth`, see `read_later`)."""
        self.cond_depth += 1
        try:
            yield
        finally:
            self.cond_depth -= 1

    def visit_body(self, body: Iterable[nodes.Node], frame: Frame) -> None:
        statements = list(body)
        for i, node in enumerate(statements):
            self.following.append((frame, self.cond_depth, statements[i + 1 :]))
            try:
                self.visit(node, frame)
            finally:
                self.following.pop()
        stops = self.stopping.get(id(body))
        if stops is not None and self.loop_ranges and self.loop_ranges[-1] == stops:
            self.emit.break_()  # no later step can do anything

    def read_later(self, name: str, owner: Frame) -> bool:
        """May the variable `name` of scope `owner` be read once the run-time `if` around the
        statement being translated has ended (or in a later branch of it)? If not, a `set` of it
        on some paths is as good as certain wherever it is read."""
        return any(
            isinstance(n, nodes.Name) and n.name == name and n.ctx == "load"
            for frame, depth, statements in self.following
            if depth < self.cond_depth and frame.owner(name) is owner
            for statement in statements
            for n in [statement, *self.index.find_all(statement, nodes.Name)]
        )

    def visit(self, node: nodes.Node, frame: Frame) -> None:
        if id(node) in self.dead_checks:
            self.emit.warn(
                node,
                "raise_exception()",
                "dropped with the check around it: Ollama renders instead of refusing this conversation",
            )
            return
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.emit.fail(node, f"{{% {type(node).__name__.lower()} %}}")
        planned = getattr(self, "plan_stmt_" + type(node).__name__, None)
        self.emit.statement = node
        self.emit.visiting.append(node)
        try:
            if planned is None:
                method(node, frame)
            else:
                planned(node, frame, method)
        finally:
            self.emit.visiting.pop()

    def value_of(self, frame: Frame) -> ValueOf:
        """Expressions evaluated in `frame`, for an operation that evaluates its arguments later
        or only some of them (a selection's test, `tojson`'s options)."""
        return lambda node: self.expr(node, frame)

    def expr(self, node: nodes.Node, frame: Frame) -> Value:
        """`node`'s Value, by `expr_<Node>`; where the print plans have a hook for the node's
        kind (`plan_expr_<Node>`), by the hook, given `expr_<Node>` to fall back on (so too
        `visit` with `stmt_<Node>` and `plan_stmt_<Node>`)."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.emit.fail(node, f"expression {type(node).__name__}")
        planned = getattr(self, "plan_expr_" + type(node).__name__, None)
        value: Value = method(node, frame) if planned is None else planned(node, frame, method)
        why = self.emit.budget.overdue()
        if why is not None:
            raise self.emit.over_limit(why)
        folded = value.const if value.is_const and isinstance(value.const, (str, list, tuple)) else ""
        if len(folded) > self.emit.budget.limits.max_output:  # a string doubled in a loop, folded
            unit = "characters" if isinstance(folded, str) else "elements"
            raise self.emit.fail(node, f"a constant of {len(folded):,} {unit}", self.emit.budget.too_large())
        return value

    def const_of(self, node: nodes.Expr, frame: Frame) -> Any:
        return self.emit.constant(node, self.expr(node, frame))

    def truth(self, node: nodes.Node, frame: Frame) -> str:
        return self.logic.truth_of(self.expr(node, frame))

    def root_of(self, frame: Frame) -> Frame:
        while frame.parent is not None:
            frame = frame.parent
        return frame

    def test_truth(self, node: nodes.Expr, frame: Frame) -> str:
        """The Go condition of `node`'s truth: "true" or "false" where it is known statically
        (a constant, or certain from Ollama's data model)."""
        test = self.expr(node, frame)
        if test.is_const:
            return "true" if test.const else "false"
        return self.logic.truth_of(test)

    def chosen_value(self, truth: str, node: nodes.CondExpr, frame: Frame) -> Value:
        """`a if c else b`, c's truth being `truth` (not known statically): the branch taken."""
        return self.join_branches(truth, node, *self.branches(node, frame))

    def branches(
        self, node: nodes.CondExpr, frame: Frame
    ) -> tuple[Value, list[go_tree.Piece], Value, list[go_tree.Piece]]:
        """`a if c else b`'s branches evaluated, each with the code its value needs, kept apart
        from the output: (a, its code, b, its code)."""
        self.emit.close_guard()  # (else the first action of a branch would close it there)
        yes_code, no_code = list[go_tree.Piece](), list[go_tree.Piece]()
        with self.emit.writing_to(yes_code):  # (a refused plan is retried from the statement)
            yes = self.expr(node.expr1, frame)
        with self.emit.writing_to(no_code):
            no = self.expr(node.expr2, frame) if node.expr2 is not None else UNDEFINED
        return yes, yes_code, no, no_code

    def join_branches(
        self,
        truth: str,
        node: nodes.CondExpr,
        yes: Value,
        yes_code: list[go_tree.Piece],
        no: Value,
        no_code: list[go_tree.Piece],
    ) -> Value:
        """The value of the branch `truth` takes. As Python evaluates only that branch, each
        branch's code runs in its own block of the `if` (`x if x is string else x | string`
        builds no str() of a string). `a` where the test is `a is string` is a string."""
        if yes.kind == ANY and is_string_test_of(node.test, node.expr1):
            yes = Value(yes.code, STR, facts=Facts(var=yes.facts.var))
        yes, no = self.access.empty_list_as(yes, no), self.access.empty_list_as(no, yes)
        result = self.emit.temp()
        initial = '""' if no_code else self.emit.operand(no, node)  # (both branches set it)
        self.emit.declare(result, initial)
        self.emit.if_(truth)
        self.emit.out += yes_code
        self.emit.assign(result, self.emit.operand(yes, node))
        if no_code:
            self.emit.else_()
            self.emit.out += no_code
            self.emit.assign(result, self.emit.operand(no, node))
        self.emit.end()
        kind = yes.kind if yes.kind == no.kind or no.kind in {UNDEF, NONE} else ANY
        if yes.kind in {STR, CONTENT} and no.kind in {STR, CONTENT, UNDEF, NONE}:
            kind = STR
        facts = NO_FACTS
        if kind in MAPPINGS and {yes.kind, no.kind} & {UNDEF, NONE}:
            # a message (or tool...) on one side, None or Undefined ("" in Go) on the other
            facts = Facts(maybe_none=True) if NONE in {yes.kind, no.kind} else Facts(maybe_undefined=True)
        return Value(result, kind, facts=facts)

    @staticmethod
    def innermost_loop(frame: Frame) -> Loop | None:
        f: Frame | None = frame
        while f is not None and f.loop is None:
            f = f.parent
        return None if f is None else f.loop

    def loop_of(self, frame: Frame) -> Loop:
        loop = self.innermost_loop(frame)
        if loop is None:
            raise ConversionError("loop used outside a for loop")
        return loop

    def loop_neighbour(self, node: nodes.Getitem, base: Value, frame: Frame) -> Value | None:
        """`xs[loop.index0 - 1]` or `xs[loop.index0 + 1]` in a loop over `xs`: the element
        beside the step, which the loop keeps in variables (see Loop.source) where the index
        arithmetic and lookup would cost four calls a step. Python reads `xs[-1]` at the first
        step: the last element, which the carried variable starts as."""
        offset = neighbour_offset(node.arg)
        if offset is None or frame.lookup("loop") is not None:
            return None
        loop = self.innermost_loop(frame)
        if loop is None or not base.is_operand(loop.source):
            return None
        return Value(self.access.kept_neighbour(loop, offset < 0), ELEMENT.get(base.kind, ANY))


def is_string_test_of(test: nodes.Expr, value: nodes.Expr) -> bool:
    """Is `test` `name is string` and `value` that same name?"""
    return (
        isinstance(test, nodes.Test)
        and test.name == "string"
        and isinstance(test.node, nodes.Name)
        and isinstance(value, nodes.Name)
        and test.node.name == value.name
    )
