"""Strings built only to be printed: a print plan in place of the value.

Go templates cannot capture output, so a string the Jinja builds in a loop
(`{% for t in tools %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}`, a `{% set x %}` block)
used to be built in a Go variable by the captured JSON writer: most of a ~100 KB conversion and
of its parse and execute time. Where such a string is only concatenated, assigned, tested for
truth and printed, the translator holds it statically as a plan of what to print: constant text,
Go values, the building statements themselves written as prints (a "snippet", their `tojson`
through the printed `ofc_json` define) and `if`s where a run-time branch chose between plans.
Printing the plan replays it where the Jinja prints the string.

Sound only while what a plan reads keeps its value until the plan is printed. Every part that
reads Go variables leaves a mark where it was made (`tree.Mark`, a node of the written tree
that prints nothing, holding the variables the part reads), every print or truth test of a
plan a mark where it was used; once the whole template is written, `settled` (planfallback.py)
checks that each such variable is declared at the top level of the body, that nothing declares
or assigns it after the part was made, and that no part is printed before it was made or inside
a `define`. Any other use of a plan (a filter, a macro argument, a stored copy) writes the plan's
placeholder variable into the template. When a check fails, the placeholder shows up, or the
translation fails with a plan about, the template is translated again without the plans
concerned (planfallback.py): the result is then exactly the captured translation. What is known
before a plan is made is decided there instead (a `tojson` a `set` in a loop stores beyond it,
`stored_in_loop`), and what the Jinja tree says will fail, before translating (planforecast.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from jinja2 import nodes

from ..go import ir, tree
from ..go.calls import expression_of, go_or
from ..go.irtools import is_temporary
from ..ops.values import (
    ANY,
    ARGS,
    CALL,
    CALLS,
    CONTENT,
    FUNC,
    MAPPED,
    NS,
    PARAMS,
    PROP,
    PROPS,
    SELECT,
    STR,
    TFUNC,
    TOOL,
    TOOLS,
    Facts,
    Value,
    attrs_of,
    const,
    py_str,
)
from .macros import Macros
from .plans import (
    PLACEHOLDER,
    PRINTABLE,
    Branch,
    Held,
    Key,
    Piece,
    Plan,
    PlanRefused,
    appends_to,
    as_text,
    building_body,
    calls_other_defines,
    either,
    free_variables,
    loop_between,
    parts,
    prints_only,
    refuse_markup_plans,
    snippet_free_variables,
    sources_of,
    stored_in_loop,
    stored_json,
    surely_prints,
)
from .scope import Frame, Translate

#: kinds whose `tojson` a plan stands for when a `set` stores it (tool schemas: their captured
#: JSON writer is most of a conversion's size, where a printed one is a define call)
PLANNED_JSON = {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, SELECT, MAPPED, CALLS, CALL, FUNC, ARGS, ANY}


#: what a value with only these facts needs to print
PLAIN_FACTS = {"concat", "nonempty", "json_text", "var", "assigned", "final"}


BinExprT = TypeVar("BinExprT", bound=nodes.BinExpr)


class PrintPlans(Macros):
    """Holds strings built only to be printed as plans (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logic.planned_truth = self.planned_truth
        self.strings.print_planned = lambda value, node: self.print_plan(self.plan_of(value), node)
        #: building statements left captured (indexes, see `plan_source`); None: no plans at all
        self.plans_off: frozenset[int] | None = frozenset()
        self.plans: dict[Key, Held] = {}
        self.plan_sources: dict[int, int] = {}
        self.plan_nodes: list[nodes.Node] = []
        #: the plan sources printed with each made part (what to refuse when it fails)
        self.plan_users: dict[int, frozenset[int]] = {}
        self.plan_made = 0
        self.plan_main: list[tree.Piece] | None = None
        #: variables keeping the tests of `if`s that chose between plans (see `merge_plans`)
        self.plan_tests: list[str] = []
        self._stored_json: dict[int, nodes.Assign] | None = None

    # -- what a plan is made of ---------------------------------------------------------------

    def planning(self) -> bool:
        return self.plans_off is not None and self.emit.sink is None

    def plan_source(self, node: nodes.Node) -> int:
        return self.plan_source_of(id(node))

    def plan_source_of(self, node_id: int) -> int:
        """The index of the building statement (or filter) whose `id()` is `node_id`, else -1."""
        if not self.plan_sources:
            self.plan_nodes = self.index.all((nodes.For, nodes.AssignBlock, nodes.Filter))
            self.plan_sources = {id(n): i for i, n in enumerate(self.plan_nodes)}
        return self.plan_sources.get(node_id, -1)

    def plan_node(self, source: int) -> nodes.Node:
        """The building statement a `plan_source` index stands for."""
        return self.plan_nodes[source]

    def mark(self, reads: set[str]) -> int:
        """A made mark here, for a part reading the Go variables `reads`; the part's number."""
        self.plan_made += 1
        self.emit.out.append(tree.Mark("made", self.plan_made, frozenset(reads)))
        return self.plan_made

    def piece(self, value: Value) -> Piece:
        """A Go value (or a constant) as a plan's part; refused for what `~` would not print alike."""
        if value.is_const:
            if isinstance(value.const, (list, dict, tuple)):
                raise PlanRefused(None)
            return Piece(value=const(py_str(value.const)))
        if value.kind not in PRINTABLE or value.facts.markup:
            raise PlanRefused(None)
        if (
            any(is_temporary(f"${var}") for var in free_variables(value.code))
            and set(value.facts.present()) <= PLAIN_FACTS
        ):
            # a value computed in a block (`('\n' if x else '')` inside `if tools`) is gone where
            # the plan prints: kept in a variable of the body's top level
            kept = self.emit.temp()
            self.plan_tests.append(kept)
            self.emit.assign(kept, value.code)
            value = Value(kept, value.kind, value.const, replace(value.facts, concat=None))
        copy = Value(value.code, value.kind, value.const, value.facts)
        reads = free_variables(value.code, value.facts.final or "")
        return Piece(made=self.mark(reads) if reads else 0, value=copy)

    def plan_of(self, value: Value) -> Plan:
        held = value.facts.plan
        return held if held is not None else (self.piece(value),)

    def plan_value(self, plan: Plan) -> Value:
        return Value(PLACEHOLDER, STR, facts=Facts(plan=plan))

    def snippet(self, produce: Callable[[], None]) -> tuple[tree.Piece, ...] | None:
        """The Go template `produce` writes, as printed output, kept for where the plan prints.

        None, with nothing of it kept (helpers, warnings, counters), where it prints through
        another define than the JSON writer's (see `calls_other_defines`): the statements are
        then translated as before.
        """
        self.emit.close_guard()
        mark = self.emit.checkpoint()
        with self.emit.writing_to([], fresh=True):
            produce()
            self.emit.close_guard()
            pieces = tuple(self.emit.out)
        if not calls_other_defines(pieces):
            return pieces
        self.emit.roll_back(mark)
        return None

    # -- keys: the variables that may hold plans ----------------------------------------------

    def key_of(self, node: nodes.Node, frame: Frame) -> Key | None:
        if isinstance(node, nodes.Name):
            slot = frame.lookup(node.name)
            return ("name", id(slot)) if slot is not None else None
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
            slot = frame.lookup(node.node.name)
            return ("attr", id(slot), node.attr) if slot is not None and slot.kind == NS else None
        return None

    def mentions_plan(self, node: nodes.Node, frame: Frame) -> bool:
        if any(self.json_plan_source(f, frame) >= 0 for f in [node, *self.index.find_all(node, nodes.Filter)]):
            return True
        if not self.plans:
            return False
        return any(
            self.key_of(n, frame) in self.plans for n in [node, *self.index.find_all(node, (nodes.Name, nodes.Getattr))]
        )

    def json_plan_source(self, node: nodes.Node, frame: Frame) -> int:
        """The plan source `node` is, if it is a `tojson` a plan may stand for, else -1: one a
        `set` stores (see `stored_json`) where it is not repeated, of a tool schema, not left
        captured."""
        if self._stored_json is None:
            self._stored_json = stored_json(self.index)
        assign = self._stored_json.get(id(node))
        if assign is None or not isinstance(node, nodes.Filter) or node.node is None:
            return -1
        source = self.plan_source(node)
        if not self.planning() or self.plans_off is None or source < 0 or source in self.plans_off:
            return -1
        if stored_in_loop(assign, frame):
            return -1  # `hold` would refuse it: left captured before anything is written for it
        start = len(self.emit.out) + self.emit.guard_open  # (the first action may close the prefill guard)
        operand = self.expr(node.node, frame)
        del self.emit.out[start:]  # (a lookup: evaluated again where it is used)
        return source if operand.kind in PLANNED_JSON and not operand.is_const else -1

    def hold(
        self, slot: Value, attr: str | None, value: Value, owner: Frame | None, frame: Frame, read: nodes.Expr
    ) -> bool:
        """Store a plan in a variable (`slot`, or its namespace attribute `attr`): True; or forget
        the plan it held (False: the translator assigns it in Go)."""
        key: Key = ("name", id(slot)) if attr is None else ("attr", id(slot), attr)
        plan = value.facts.plan
        if plan is None:
            self.plans.pop(key, None)
            return False
        if loop_between(frame, owner):
            raise PlanRefused(sources_of(plan))  # one copy of the body stands for every pass
        markup = value.facts.markup or False
        self.plans[key] = Held(plan, lambda: self.plain_read(key, read, frame), slot, markup)
        return True

    def plain_read(self, key: Key, read: nodes.Expr, frame: Frame) -> Value:
        """The variable's Go value, as the captured translation reads it."""
        held = self.plans.pop(key, None)
        try:
            return self.expr(read, frame)
        finally:
            if held is not None:
                self.plans[key] = held

    def forget_namespace(self, slot: Value) -> None:
        for key in [k for k in self.plans if k[0] == "attr" and k[1] == id(slot)]:
            del self.plans[key]

    # -- building statements -------------------------------------------------------------------

    def plan_stmt_For(self, node: nodes.For, frame: Frame, plain: Translate[nodes.For, None]) -> None:
        if not self.build_plan(node, frame, plain):
            self.loop_pass(node, frame, plain)

    def loop_pass(self, node: nodes.For, frame: Frame, plain: Translate[nodes.For, None]) -> None:
        """The loop, translated as before; plans held by its variables end with it (a plan held
        in a loop is one of the pass's own variables: `hold` refuses any other)."""
        before = set(self.plans)
        plain(node, frame)
        for key in set(self.plans) - before:
            del self.plans[key]

    def build_plan(self, node: nodes.For, frame: Frame, plain: Translate[nodes.For, None]) -> bool:
        """A loop that only appends to a namespace attribute: the attribute becomes a plan."""
        target = appends_to(node, self.index) if self.planning() else None
        source = self.plan_source(node)
        if target is None or source < 0 or self.plans_off is None or source in self.plans_off:
            return False
        ns_name, attr = target
        ns = frame.lookup(ns_name)
        if ns is None or ns.kind != NS or attr not in attrs_of(ns):
            return False
        if loop_between(frame, frame.owner(ns_name)):
            return False
        loop = building_body(node, ns_name, attr)
        if loop is None:
            return False
        read = nodes.Getattr(nodes.Name(ns_name, "load"), attr, "load", lineno=node.lineno)
        before = self.expr(read, frame)
        init = attrs_of(ns)[attr]
        if before.facts.plan is None and init.is_const and isinstance(init.const, str):
            before = init  # not set since namespace() gave it: its Go variable holds that text
        if before.facts.plan is None and not (
            before.kind in {STR, CONTENT} or (before.is_const and isinstance(before.const, str))
        ):
            return False
        snippet = self.snippet(lambda: self.loop_pass(loop, frame, plain))
        if snippet is None:
            return False
        made = self.mark(snippet_free_variables(snippet))
        plan = (*self.plan_of(before), Piece(made=made, snippet=snippet, source=source))
        self.hold(ns, attr, self.plan_value(plan), frame.owner(ns_name), frame, read)
        return True

    def block_plan(self, node: nodes.AssignBlock, frame: Frame) -> bool:
        """`{% set x %}` whose body only prints: x becomes a plan of that body."""
        source = self.plan_source(node)
        if not self.planning() or self.plans_off is None or source < 0 or source in self.plans_off:
            return False
        if not isinstance(node.target, nodes.Name) or node.filter is not None or not prints_only(node.body):
            return False
        if not self.index.find_all(node, nodes.For):
            return False  # text and a few values: capturing them costs little
        name = node.target.name
        slot, owner = frame.lookup(name), frame.owner(name)
        if slot is None or name not in self.read_names or loop_between(frame, owner):
            return False
        snippet = self.snippet(lambda: self.visit_body(node.body, frame))
        if snippet is None:
            return False
        made = self.mark(snippet_free_variables(snippet))
        piece = Piece(made=made, snippet=snippet, source=source, truth=True if surely_prints(node.body) else None)
        read = nodes.Name(name, "load", lineno=node.lineno)
        return self.hold(slot, None, self.plan_value((piece,)), owner, frame, read)

    # -- expressions that carry plans ----------------------------------------------------------

    def held(self, node: nodes.Node, frame: Frame) -> Held | None:
        """What a variable (or namespace attribute) `node` holds here, if it holds a plan."""
        return self.plans.get(self.key_of(node, frame) or ()) if self.plans else None

    def held_plan(self, node: nodes.Node, frame: Frame) -> Plan | None:
        held = self.held(node, frame)
        return None if held is None else held.plan

    def held_value(self, node: nodes.Node, frame: Frame) -> Value | None:
        """The plan value a variable holding a plan reads as (Markup where it was stored so)."""
        held = self.held(node, frame)
        if held is None:
            return None
        value = self.plan_value(held.plan)
        if held.markup:
            return replace(value, facts=replace(value.facts, markup=held.markup))
        return value

    def plan_expr_Name(self, node: nodes.Name, frame: Frame, plain: Translate[nodes.Name, Value]) -> Value:
        value = self.held_value(node, frame)
        if value is not None:
            return value
        return plain(node, frame)

    def plan_expr_Getattr(self, node: nodes.Getattr, frame: Frame, plain: Translate[nodes.Getattr, Value]) -> Value:
        value = self.held_value(node, frame)
        if value is not None:
            return value
        return plain(node, frame)

    def plan_expr_Filter(self, node: nodes.Filter, frame: Frame, plain: Translate[nodes.Filter, Value]) -> Value:
        """A tool schema's `tojson` that a `set` stores: a plan printing it through the JSON
        writer's define, in place of the text captured by the inline writer."""
        source = self.json_plan_source(node, frame)
        if source >= 0:
            snippet = self.snippet(lambda: self.to_json.print_tojson(node, self.value_of(frame)))
            if snippet is not None:
                made = self.mark(snippet_free_variables(snippet))
                return self.plan_value((Piece(made=made, snippet=snippet, source=source, truth=True),))
        return plain(node, frame)

    def plan_expr_Concat(self, node: nodes.Concat, frame: Frame, plain: Translate[nodes.Concat, Value]) -> Value:
        if not self.mentions_plan(node, frame):
            return plain(node, frame)
        values = [self.expr(n, frame) for n in node.nodes]
        refuse_markup_plans(values)
        if not any(v.facts.plan is not None for v in values):
            values = [self.strings.untyped_str(v, node) if v.kind == ANY and not v.is_const else v for v in values]
            return self.strings.concat(values, node)
        return self.plan_value(tuple(p for v in values for p in as_text(self.plan_of(v))))

    def plan_expr_Add(self, node: nodes.Add, frame: Frame, plain: Translate[nodes.Add, Value]) -> Value:
        if not self.mentions_plan(node, frame):
            return plain(node, frame)
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if not (left.facts.plan is not None or right.facts.plan is not None):
            return plain(node, frame)
        refuse_markup_plans([left, right])
        for v in (left, right):  # Python's `str + x` takes only a string x
            if v.facts.plan is None and not (v.kind in {STR, CONTENT} or isinstance(v.const, str)):
                raise PlanRefused(None)
        return self.plan_value(self.plan_of(left) + self.plan_of(right))

    def plan_expr_CondExpr(self, node: nodes.CondExpr, frame: Frame, plain: Translate[nodes.CondExpr, Value]) -> Value:
        """`x if c else y` with a plan on either side: a Branch on c's truth."""
        if not self.mentions_plan(node, frame) or node.expr2 is None:
            return plain(node, frame)
        truth = self.test_truth(node.test, frame)
        if truth in {"true", "false"}:
            return self.expr(node.expr1 if truth == "true" else node.expr2, frame)
        yes, yes_code, no, no_code = self.branches(node, frame)
        if not (yes.facts.plan is not None or no.facts.plan is not None):
            return self.join_branches(truth, node, yes, yes_code, no, no_code)  # (evaluated once)
        self.emit.out += yes_code + no_code
        made = self.mark(free_variables(truth))
        value = self.plan_value((Branch(made, truth, self.plan_of(yes), self.plan_of(no)),))
        markups = {bool(yes.facts.markup), bool(no.facts.markup)}
        if True in markups:
            return replace(value, facts=replace(value.facts, markup=True if markups == {True} else "mixed"))
        return value

    def plan_expr_And(self, node: nodes.And, frame: Frame, plain: Translate[nodes.And, Value]) -> Value:
        return self.plan_logic(node, frame, "and", plain)

    def plan_expr_Or(self, node: nodes.Or, frame: Frame, plain: Translate[nodes.Or, Value]) -> Value:
        return self.plan_logic(node, frame, "or", plain)

    def plan_logic(self, node: BinExprT, frame: Frame, op: str, plain: Translate[BinExprT, Value]) -> Value:
        """`a and b`, `a or b` with a plan: Python's value, an operand, chosen by a's truth."""
        if not self.mentions_plan(node, frame):
            return plain(node, frame)
        left = self.expr(node.left, frame)
        test = self.logic.truth_of(left)
        if test == ("true" if op == "or" else "false"):
            return left
        if test in {"true", "false"}:
            return self.expr(node.right, frame)
        right = self.expr(node.right, frame)
        if not (left.facts.plan is not None or right.facts.plan is not None):
            return plain(node, frame)
        made = self.mark(free_variables(test))
        if op == "or":
            chosen = self.plan_of(left)
            first = chosen[0] if len(chosen) == 1 else None
            if isinstance(first, Branch) and first.test == test and first.no_truth is False:
                chosen = first.yes  # `(c and x) or y`: where c holds, x
            return self.plan_value((Branch(made, test, chosen, self.plan_of(right), yes_truth=True),))
        if left.facts.plan is not None or (left.kind in PRINTABLE and not left.facts.markup) or left.is_const:
            falsy = self.plan_of(left)
        else:
            falsy = (Piece(truth=False, printable=False),)
        return self.plan_value((Branch(made, test, self.plan_of(right), falsy, no_truth=False),))

    # -- truth and printing --------------------------------------------------------------------

    def planned_truth(self, value: Value) -> str:
        """The truth of a value holding a plan, from its parts (Logic.truth_of asks it)."""
        plan = value.facts.plan
        if plan is None:
            return self.logic.unplanned_truth(value)
        truth = self.plan_truth(plan)
        if truth is None:
            raise PlanRefused(sources_of(plan))  # its emptiness is known only by printing it
        self.used(plan)
        return truth

    def plan_truth(self, plan: Plan) -> str | None:
        found: list[str] = []
        for part in plan:
            if isinstance(part, Branch):
                yes = self.known(part.yes_truth) or self.plan_truth(part.yes)
                no = self.known(part.no_truth) or self.plan_truth(part.no)
                if yes is None or no is None:
                    return None
                truth = either(part.test, yes, no)
            elif part.truth is not None:
                truth = "true" if part.truth else "false"
            elif part.value is not None:
                truth = self.logic.unplanned_truth(part.value)
            else:
                return None
            if truth == "true":
                return "true"
            if truth != "false":
                found.append(truth)
        if not found:
            return "false"
        return found[0] if len(found) == 1 else go_or(*found)

    @staticmethod
    def known(truth: bool | None) -> str | None:
        return None if truth is None else ("true" if truth else "false")

    def used(self, plan: Plan) -> None:
        """Use marks for every made part of `plan` (see `settled`)."""
        sources = sources_of(plan)
        for part in parts(plan):
            if part.made:
                self.plan_users[part.made] = self.plan_users.get(part.made, frozenset()) | sources
                self.emit.out.append(tree.Mark("used", part.made))

    def print_plan(self, plan: Plan, node: nodes.Node) -> None:
        if self.emit.sink is not None:
            raise PlanRefused(sources_of(plan))  # a snippet prints; it cannot be captured
        self.used(plan)
        self.emit.printed = True  # as printing the captured string did: a leading BOS in it stays
        self.replay(plan, node)

    def replay(self, plan: Plan, node: nodes.Node) -> None:
        for part in plan:
            if isinstance(part, Branch):
                self.emit.if_(part.test)
                self.replay(part.yes, node)
                if part.no:
                    self.emit.else_()
                    self.replay(part.no, node)
                self.emit.end()
            elif not part.printable:
                raise PlanRefused(sources_of(plan))
            elif part.snippet:
                for piece in part.snippet:
                    self.emit.show(piece)
            elif part.value is not None:
                self.strings.print_value(part.value, node)

    def merge_plans(self, test: str, at: int, yes: dict[Key, Held], no: dict[Key, Held]) -> None:
        """After a run-time `if`: a variable holding a plan on either path holds a Branch.

        Its test is what the `if` saw: a test reading variables is kept in a new one declared
        just before the `if` (and declared at the start of the body, so that a print after the
        blocks around the `if` sees it), as a branch may change them.
        """
        merged: dict[Key, Held] = {}
        made = 0
        for key in {**yes, **no}:
            a, b = yes.get(key), no.get(key)
            if a is b and a is not None:
                merged[key] = a
                continue
            known = a or b
            assert known is not None
            if not made:
                self.plan_made += 1
                made = self.plan_made
                written: list[tree.Piece] = []
                if free_variables(test):
                    seen = self.emit.temp()
                    self.plan_tests.append(seen)
                    tested = expression_of(test)
                    assigned = ir.Action(ir.pipe_of(tested, (seen,), is_assign=True)) if tested is not None else None
                    written.append(
                        tree.Act.of(assigned) if assigned else tree.Act(f"{seen} = {test}")
                    )  # (before the mark)
                    test = seen
                written.append(tree.Mark("made", made, frozenset(free_variables(test))))
                self.emit.out[at:at] = written
            sides = [h.plan if h is not None else self.plan_of(known.current()) for h in (a, b)]
            merged[key] = Held((Branch(made, test, sides[0], sides[1]),), known.current, known.slot)
        self.plans = merged
