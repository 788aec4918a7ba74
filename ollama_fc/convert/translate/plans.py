"""What a print plan is made of (see printplan.py), and the reads of Jinja syntax and of
written Go template text it needs: which loops only append to a string, which `{% set %}`
bodies only print, and which Go variables a piece of template reads and can see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union, cast

from jinja2 import nodes

from ...jinja_index import TreeIndex
from ..go import ir, irtools, tree
from ..go.calls import expression_of, go_and, go_not, go_or
from ..ops.values import BOOL, CONTENT, INT, STR, UNDEF, Value
from .scope import Frame

PLACEHOLDER = "$ofc_plan"
#: where the template's body starts (the tests of `if`s that chose between plans are declared there)
BODY = tree.Mark("body")
#: kinds a plan can print as Jinja's `~` prints them (`print_value` writes them the same way)
PRINTABLE = {STR, CONTENT, INT, BOOL, UNDEF}

Key = tuple[Any, ...]


class PlanRefused(Exception):
    """A plan cannot stand for its string here: translate again without these sources."""

    def __init__(self, sources: frozenset[int] | None) -> None:
        super().__init__("print plan refused")
        #: the building statements (indexes, see `plan_source`) to leave captured; None: all
        self.sources = sources


@dataclass(frozen=True)
class Piece:
    """Constant text, a Go value, or a snippet of Go template that prints (`source` made it)."""

    made: int = 0
    value: Value | None = None
    #: the pieces of Go template it prints, as the translator wrote them (`tree.Act`, `tree.Text`,
    #: the marks of the plans it prints)
    snippet: tuple[tree.Piece, ...] = ()
    source: int = -1
    #: its truth when known without a run-time test
    truth: bool | None = None
    #: False for a falsy operand of `and` that `~` would not print alike (printing it refuses)
    printable: bool = True


@dataclass(frozen=True)
class Branch:
    """`if test` (evaluated where the Jinja's `if` ran) chose `yes`, else `no`."""

    made: int
    test: str
    yes: Plan
    no: Plan
    yes_truth: bool | None = None
    no_truth: bool | None = None


Plan = tuple[Union[Piece, Branch], ...]


@dataclass
class Held:
    """A variable holding a plan; `current` reads its own Go value (where the plan is not taken).

    Keys are `id()`s of the variables' slots: `slot` keeps the slot alive while it is held, so
    that no other object takes its id.
    """

    plan: Plan
    current: Callable[[], Value] = field(compare=False)
    slot: Value = field(compare=False)
    #: the string is Markup (`|safe`): True, or "mixed" where only some paths make it so
    markup: bool | Literal["mixed"] = False


def parts(plan: Plan) -> Iterator[Piece | Branch]:
    for part in plan:
        yield part
        if isinstance(part, Branch):
            yield from parts(part.yes)
            yield from parts(part.no)


def sources_of(plan: Plan) -> frozenset[int]:
    return frozenset(p.source for p in parts(plan) if isinstance(p, Piece) and p.source >= 0)


def refuse_markup_plans(values: list[Value]) -> None:
    """A `|safe` plan joined to text would escape it as Markup does: not held as a plan."""
    for value in values:
        if value.facts.plan is not None and value.facts.markup:
            raise PlanRefused(sources_of(value.facts.plan))


def as_text(plan: Plan) -> Plan:
    """The plan after `~` (str() of each value): a bool, a number, None print non-empty."""
    out: list[Piece | Branch] = []
    for part in plan:
        if isinstance(part, Branch):
            out.append(
                replace(
                    part,
                    yes=as_text(part.yes),
                    no=as_text(part.no),
                    yes_truth=part.yes_truth or None,
                    no_truth=part.no_truth or None,
                )
            )
        elif part.value is not None and part.value.kind in {INT, BOOL} and part.truth is None:
            out.append(replace(part, truth=True))
        else:
            out.append(part)
    return tuple(out)


def either(test: str, yes: str, no: str) -> str:
    """A Go condition: `yes` where `test` holds, else `no` (each a condition, `true` or `false`)."""
    if yes == no:
        return yes
    if (yes, no) == ("true", "false"):
        return test
    if (yes, no) == ("false", "true"):
        return go_not(test)
    if yes == "true":
        return go_or(test, no)
    if no == "false":
        return go_and(test, yes)
    if yes == "false":
        return go_and(go_not(test), no)
    if no == "true":
        return go_or(go_not(test), yes)
    return go_or(go_and(test, yes), go_and(go_not(test), no))


def refers_to(expr: nodes.Node, ns: str, attr: str) -> bool:
    """Does `expr` name the namespace `ns` at all (any attribute of it, or it whole)?"""
    return any(n.name == ns for n in [expr, *expr.find_all(nodes.Name)] if isinstance(n, nodes.Name))


def is_ref(expr: nodes.Node, ns: str, attr: str) -> bool:
    """Is `expr` the read `ns.attr` (or `ns['attr']`)?"""
    if isinstance(expr, nodes.Getattr):
        name, key = expr.node, expr.attr
    elif isinstance(expr, nodes.Getitem) and isinstance(expr.arg, nodes.Const):
        name, key = expr.node, expr.arg.value
    else:
        return False
    return isinstance(name, nodes.Name) and name.name == ns and key == attr


def appended(expr: nodes.Expr, ns: str, attr: str) -> nodes.Expr | None:
    """What `set ns.attr = expr` appends (`ns.attr ~ a ~ b`, `ns.attr + a + b`), else None."""
    if isinstance(expr, nodes.Concat) and expr.nodes:
        head, rest = expr.nodes[0], list(expr.nodes[1:])
        if not is_ref(head, ns, attr):
            inner = appended(head, ns, attr) if isinstance(head, (nodes.Concat, nodes.Add)) else None
            if inner is None:
                return None
            rest.insert(0, inner)
        return nodes.Concat(rest or [nodes.Const("")], lineno=expr.lineno)
    if isinstance(expr, nodes.Add):
        if is_ref(expr.left, ns, attr):
            return nodes.Add(nodes.Const(""), expr.right, lineno=expr.lineno)  # keeps `+`'s meaning
        inner = appended(expr.left, ns, attr) if isinstance(expr.left, (nodes.Concat, nodes.Add)) else None
        return None if inner is None else nodes.Add(inner, expr.right, lineno=expr.lineno)
    return None


def as_prints(body: list[nodes.Node], ns: str, attr: str) -> list[nodes.Node] | None:
    """A loop body that only appends to `ns.attr` (in `if`s and nested loops) and sets values
    of its own pass, its appends written as prints; None when it does anything else or reads
    `ns.attr` otherwise."""
    out: list[nodes.Node] = []
    for stmt in body:
        if (
            isinstance(stmt, nodes.Assign)
            and isinstance(stmt.target, nodes.Name)
            and stmt.target.name != ns
            and not refers_to(stmt.node, ns, attr)
        ):
            out.append(stmt)  # a value of the pass (Jinja scopes a loop's `set` to it): kept
        elif isinstance(stmt, nodes.Assign):
            if not (isinstance(stmt.target, nodes.NSRef) and (stmt.target.name, stmt.target.attr) == (ns, attr)):
                return None
            rest = appended(cast(nodes.Expr, stmt.node), ns, attr)
            if rest is None or refers_to(rest, ns, attr):
                return None
            out.append(nodes.Output([rest], lineno=stmt.lineno))
        elif isinstance(stmt, nodes.If):
            if refers_to(stmt.test, ns, attr):
                return None
            yes, no = as_prints(stmt.body, ns, attr), as_prints(stmt.else_, ns, attr)
            elifs: list[nodes.If] = []
            for e in stmt.elif_:
                branch = as_prints(e.body, ns, attr)
                if branch is None or refers_to(e.test, ns, attr):
                    return None
                elifs.append(nodes.If(e.test, branch, [], [], lineno=e.lineno))
            if yes is None or no is None:
                return None
            out.append(nodes.If(stmt.test, yes, elifs, no, lineno=stmt.lineno))
        elif isinstance(stmt, nodes.For):
            loop = building_body(stmt, ns, attr)
            if loop is None:
                return None
            out.append(loop)
        else:
            return None
    return out


def building_body(loop: nodes.For, ns: str, attr: str) -> nodes.For | None:
    """The loop with its appends to `ns.attr` as prints, when that is all it does."""
    names = {n.name for n in loop.target.find_all(nodes.Name)} | (
        {loop.target.name} if isinstance(loop.target, nodes.Name) else set()
    )
    if loop.recursive or loop.else_ or ns in names or refers_to(loop.iter, ns, attr):
        return None
    if loop.test is not None and refers_to(loop.test, ns, attr):
        return None
    body = as_prints(loop.body, ns, attr)
    if body is None:
        return None
    return nodes.For(loop.target, loop.iter, body, [], loop.test, False, lineno=loop.lineno)


def appends_to(loop: nodes.For, index: TreeIndex) -> tuple[str, str] | None:
    """The namespace attribute the loop's first `set` appends to, if it sets one."""
    for assign in index.find_all(loop, nodes.Assign):
        if isinstance(assign.target, nodes.NSRef):
            return (assign.target.name, assign.target.attr)
    return None


def prints_only(body: list[nodes.Node]) -> bool:
    """Does this `{% set %}` body only print (no `set` outside its own loops, no macro call)?"""

    def sets_outside_loops(stmts: list[nodes.Node]) -> bool:
        for stmt in stmts:
            if isinstance(stmt, (nodes.Assign, nodes.AssignBlock)):
                return True
            if isinstance(stmt, nodes.If) and (
                sets_outside_loops(stmt.body)
                or sets_outside_loops(stmt.else_)
                or any(sets_outside_loops(e.body) for e in stmt.elif_)
            ):
                return True
            if isinstance(stmt, (nodes.Scope, nodes.FilterBlock)) and sets_outside_loops(stmt.body):
                return True
        return False

    wrapper = nodes.Scope(body)
    if any(isinstance(n.target, nodes.NSRef) for n in wrapper.find_all(nodes.Assign)):
        return False
    if any(wrapper.find_all((nodes.Macro, nodes.CallBlock, nodes.ExprStmt, nodes.Call))):
        return False
    return not sets_outside_loops(body)


def surely_prints(body: list[nodes.Node]) -> bool:
    """Does the body print constant non-empty text whatever happens?"""
    for stmt in body:
        if isinstance(stmt, nodes.Output) and any(isinstance(n, nodes.TemplateData) and n.data for n in stmt.nodes):
            return True
    return False


@dataclass
class PlanMarks:
    """Where the plans' parts were made and used in the written tree (see `plan_marks`)."""

    #: every action that says something, in order (a mark sits before the head it indexes)
    heads: list[tree.Action | tree.Block | tree.Branch] = field(default_factory=list)
    #: made part -> its mark, the mark's place among the marks and the index in `heads` of the
    #: first head after it (the last, where one is written twice)
    made: dict[int, tuple[tree.Mark, int, int]] = field(default_factory=dict)
    #: (place among the marks, part, Go variables in scope there) of each use
    uses: list[tuple[int, int, set[str]]] = field(default_factory=list)


def plan_marks(top: list[tree.Node]) -> PlanMarks:
    """The plans' marks in the tree, each use with the Go variables in scope where it is.

    Go's scopes: a variable lives from its declaration to the `end` of the block around it;
    an `else` starts a new block (what the `if` branch declared was never set on that path).
    """
    marks = PlanMarks()
    scopes: list[set[str]] = [set()]
    seen = 0

    def walk(body: list[tree.Node]) -> None:
        nonlocal seen
        for node in body:
            if isinstance(node, tree.Mark):
                seen += 1
                if node.kind == "used":
                    marks.uses.append((seen, node.part, set().union(*scopes)))
                elif node.kind == "made":
                    marks.made[node.part] = (node, seen, len(marks.heads))
            elif isinstance(node, tree.Action):
                marks.heads.append(node)
                scopes[-1] |= declared(node.node)
            elif isinstance(node, tree.Block):
                marks.heads.append(node)
                scopes.append(declared(node.node))
                walk(node.body)
                for branch in node.branches:
                    marks.heads.append(branch)
                    scopes[-1] = declared(branch.node)
                    walk(branch.body)
                scopes.pop()

    walk(top)
    return marks


def unsound_use(marks: PlanMarks) -> int | None:
    """The part of the first use that may not print what the part was made from (made after
    it or nowhere in the tree, reading a variable not in scope there or set again since it was
    made); None when every use is sound."""
    for at, part, visible in marks.uses:
        made = marks.made.get(part)
        if made is None or made[1] > at:
            return part
        mark, _, start = made
        if any(var not in visible or set_after(marks.heads, var, start) for var in mark.reads):
            return part
    return None


def plan_marked(helper: tree.Helper) -> bool:
    """Does the helper hold one of the plans' marks? (A plan printed in a define cannot be
    checked against the body's scopes.)"""
    return tree.helper_marked(helper)


def declared(node: ir.Node) -> set[str]:
    """The Go variables `node` declares, without their `$`."""
    return {name[1:] for name in node.declares()}


#: the printed helpers that write what their inline (captured) forms write: JSON and repr
PLANNED_HELPERS = ("ofc_json", "ofc_repr", "ofc_str")


def calls_other_defines(snippet: Sequence[tree.Piece]) -> bool:
    """Does the snippet print through a `define` other than the JSON and repr writers? Any
    other (a macro's define, say) keeps the captured text the translation writes inline."""
    return any(not name.startswith(PLANNED_HELPERS) for node in tree.action_nodes(snippet) for name in node.calls())


def set_after(heads: list[tree.Action | tree.Block | tree.Branch], var: str, start: int) -> bool:
    """Is the Go variable `var` assigned or declared again in an action of `heads` from `start` on?"""
    name = "$" + var
    return any(name in node.node.declares() or name in node.node.assigns() for node in heads[start:])


def free_variables(*code: str | ir.Node) -> set[str]:
    """Go variables the Go expressions `code` (text or IR) read (without their `$`)."""
    return {name[1:] for expression in code if expression for name in _expression_node(expression).reads()} - {""}


def _expression_node(code: str | ir.Node) -> ir.Node:
    """The Go expression `code` as IR: IR as it is, the node composed code carries, other text read."""
    if isinstance(code, ir.Node):
        return code
    known = expression_of(code)
    return known if known is not None else tree.expression(code)


def snippet_free_variables(snippet: Sequence[tree.Piece]) -> set[str]:
    """Go variables the snippet's actions read and do not declare themselves (without `$`)."""
    actions = list(tree.action_nodes(snippet))
    read = {name[1:] for node in actions for name in node.reads()} - {""}
    return read - {name for node in actions for name in declared(node)}


def is_variable(code: str) -> bool:
    """Is the Go expression `code` one variable (`$x`, not `$` nor a field of it)?"""
    known = expression_of(code)
    if known is not None:
        return isinstance(known, ir.Variable) and known.name != "$" and not known.fields
    node = tree.expression(code)
    if not isinstance(node, ir.Action) or not irtools.is_simple_variable(node):
        return False
    variable = node.pipe.cmds[0].args[0]
    return isinstance(variable, ir.Variable) and variable.name != "$" and not variable.fields


def trailing_text(snippet: Sequence[tree.Piece]) -> str:
    """The text a snippet prints after its last action."""
    tail: list[str] = []
    for piece in reversed(snippet):
        if not isinstance(piece, tree.Text):
            break  # (a plan's mark ends it as an action does)
        tail.append(piece.text)
    return "".join(reversed(tail))


def without_trailing(snippet: Sequence[tree.Piece], count: int) -> tuple[tree.Piece, ...]:
    """The snippet without the last `count` characters of its trailing text."""
    pieces = list(snippet)
    while count:
        last = pieces.pop()
        assert isinstance(last, tree.Text), "only the trailing text is cut"
        if len(last.text) > count:
            pieces.append(tree.Text(last.text[:-count]))
            break
        count -= len(last.text)
    return tuple(pieces)


def stored_json(index: TreeIndex) -> dict[int, nodes.Assign]:
    """The `tojson` filters whose text a `set` stores, alone, marked `|safe`, or joined by `+`,
    `~` or an inline `if` (`{% set d = '[TOOLS]' + (tools | tojson) + '[/TOOLS]' %}`): by
    `id()`, the ones a plan may stand for, each with the `set` storing it."""
    found: dict[int, nodes.Assign] = {}
    for assign in index.all(nodes.Assign):
        todo: list[nodes.Node | None] = [assign.node]
        while todo:
            node = todo.pop()
            if isinstance(node, nodes.Filter) and node.name == "tojson":
                found[id(node)] = assign
            elif isinstance(node, nodes.Filter) and node.name == "safe":
                todo.append(node.node)
            elif isinstance(node, nodes.Add):
                todo += [node.left, node.right]
            elif isinstance(node, nodes.Concat):
                todo += node.nodes
            elif isinstance(node, nodes.CondExpr):
                todo += [node.expr1, node.expr2]
    return found


def loop_between(frame: Frame, owner: Frame | None) -> bool:
    """Is a loop body between `frame` and the scope `owner` (a `set` there repeats)?"""
    f: Frame | None = frame
    while f is not None and f is not owner:
        if f.loop is not None:
            return True
        f = f.parent
    return False


def stored_in_loop(assign: nodes.Assign, frame: Frame) -> bool:
    """Does `assign`, run in `frame`, set a variable (or a namespace's attribute) that outlives
    a loop it runs in (where a plan cannot be held: one copy of the body stands for every pass)?"""
    target = assign.target
    if not isinstance(target, (nodes.Name, nodes.NSRef)):
        return False
    return loop_between(frame, frame.owner(target.name))
