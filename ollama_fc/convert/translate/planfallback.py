"""Translation with print plans (printplan.py), and again without those that fail.

A plan fails where it is refused while translating (`PlanRefused`), where a translation that
made one fails (a ConversionError), or where the finished tree says it does not print what it
was made from (`settled`): the template is then translated again from the start by a new
translator leaving the failing sources captured (`without`), which gives exactly the captured
translation. What the Jinja tree says will fail is decided before translating instead
(planforecast.py, `foresee`); a forecast that relied on a statement not translated is dropped,
the template translated again as before it. A failure in a statement no plan reaches is raised
as it is (`fails_without_plans`: the statement reads no name a plan's text may flow into,
`plan_tainted`, and lies outside every plan source). `translations` counts the translations one
template took.
"""

from __future__ import annotations

from typing import Any

from jinja2 import nodes

from ...errors import ConversionError
from ...jinja_index import TreeIndex
from ..go import ir, tree
from .core import Translation
from .planforecast import SchemaWitness, Witness, forecast
from .plans import BODY, PLACEHOLDER, PlanRefused, appends_to, plan_marked, plan_marks, stored_json, unsound_use
from .printplan import PLANNED_JSON, PrintPlans
from .scope import Frame


class PlanFallback(PrintPlans):
    """Translates with the plans; what fails, foreseen or found, is left captured."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plan_args = (args, kwargs)
        #: how many times the template was translated (1, unless a plan failed after it was made)
        self.translations = 1
        #: the innermost statement a ConversionError was raised in (see `fails_without_plans`)
        self.failed_statement: nodes.Node | None = None
        #: start from what the Jinja tree says the plans will refuse (see `foresee`)
        self.foreseeing = True
        #: what the forecast relies on being translated, the statements it names, and those
        #: of them translated outside captured text (`id()`s)
        self.witnesses: tuple[Witness, ...] = ()
        self.watched: frozenset[int] = frozenset()
        self.translated: set[int] = set()
        #: the `tojson` set in an `if` the forecast relies on (see `SchemaWitness`): the
        #: conditional depth inside its `if`, and whether each translation of it was as foreseen
        self.schema: SchemaWitness | None = None
        self.schema_depth = -1
        self.schema_seen: set[bool] = set()

    def translate(self, compact: bool = False) -> Translation:
        """The template with its plans, from what is foreseen, and translated again where a plan
        fails (or the forecast did not hold): the captured translation of what failed."""
        if self.plans_off is not None and self.foreseeing:
            self.foresee()
        if self.plans_off is None:
            try:
                translation = super().translate(compact)
            except ConversionError:
                if self.foreseen():
                    raise
                return self.again(frozenset(), compact, foreseeing=False)
            return translation if self.foreseen() else self.again(frozenset(), compact, foreseeing=False)
        self.plan_main = self.emit.out
        self.emit.out.append(BODY)
        try:
            top = self.translate_tree()
        except PlanRefused as refused:
            return self.without(refused.sources, compact)
        except ConversionError:
            if not self.plan_made or self.fails_without_plans():
                raise
            return self.without(None, compact)
        declared = [tree.Action.of(ir.Action(ir.pipe_of(ir.Bool(False), (var,)))) for var in self.plan_tests]
        at = next(i for i, node in enumerate(top) if isinstance(node, tree.Mark) and node == BODY)
        top[at : at + 1] = declared
        settled, failing = self.settled(top)
        if not settled:
            return self.without(failing, compact)
        if not self.foreseen():
            return self.again(frozenset(), compact, foreseeing=False)
        return self.translation(top, compact)

    def without(self, sources: frozenset[int] | None, compact: bool = False) -> Translation:
        """Translate again from the start, leaving `sources` (None: every one) captured."""
        off = None if sources is None or self.plans_off is None else self.plans_off | sources
        if off is not None and off == self.plans_off:
            off = None  # nothing new to leave out: no plans at all
        return self.again(off, compact, self.foreseeing)

    def again(self, plans_off: frozenset[int] | None, compact: bool, foreseeing: bool) -> Translation:
        """The template translated again by a new translator, leaving `plans_off` captured."""
        args, kwargs = self.plan_args
        fresh = type(self)(*args, **kwargs)
        fresh.plans_off, fresh.foreseeing = plans_off, foreseeing
        try:
            return fresh.translate(compact)
        finally:
            self.translations += fresh.translations

    def foresee(self) -> None:
        """Leave captured from the start what the Jinja tree says the plans will refuse, and
        note the statements that forecast relies on being translated (planforecast.py)."""
        if self._stored_json is None:
            self._stored_json = stored_json(self.index)
        foreseen = forecast(self.tree, self.index, self._stored_json, self.dead_checks)
        self.witnesses, self.watched, self.schema = foreseen.witnesses, foreseen.statements(), foreseen.schema
        if foreseen.captured is None:
            self.plans_off = None
        elif self.plans_off is not None:
            self.plans_off |= {self.plan_source_of(source) for source in foreseen.captured}

    def foreseen(self) -> bool:
        """Was every statement the forecast relies on translated (outside captured text)? If
        not, the template is translated again without the forecast, as before it."""
        schema_held = self.schema is None or self.schema_seen == {True}
        return schema_held and all(witness.holds(self.translated) for witness in self.witnesses)

    def visit(self, node: nodes.Node, frame: Frame) -> None:
        if id(node) in self.watched and self.emit.sink is None and id(node) not in self.dead_checks:
            self.translated.add(id(node))
        if self.schema is not None and self.emit.sink is None:
            self.watch_schema(node, frame, self.schema)
        try:
            super().visit(node, frame)
        except ConversionError:
            if self.failed_statement is None:
                self.failed_statement = node
            raise

    def watch_schema(self, node: nodes.Node, frame: Frame, schema: SchemaWitness) -> None:
        """At the forecast's `set x = x | tojson`: is it in its `if`'s run-time branch, x a tool
        schema's value (a kind `PLANNED_JSON`, not constant), so that a plan is made of it?"""
        if id(node) == schema.branch:
            self.schema_depth = self.cond_depth
        elif id(node) == schema.statement:
            value = frame.lookup(schema.name)
            known = value.facts.known if value is not None else None
            self.schema_seen.add(
                value is not None
                and value.kind in PLANNED_JSON
                and not value.is_const
                and not value.facts.literal
                and (known is None or known[0] != self.emit.flow_epoch)
                and self.cond_depth == self.schema_depth + 1
            )

    def fails_without_plans(self) -> bool:
        """Would the translation without plans fail the same way? Where the statement that
        failed does not depend on the plans (see `independent_of_plans`) and no limit was
        reached (the output a plan saves counts toward it)."""
        budget = self.emit.budget
        if budget.spent > budget.limits.max_output or budget.overdue() is not None:
            return False
        return self.failed_statement is not None and independent_of_plans(self.failed_statement, self.index)

    def settled(self, top: list[tree.Node]) -> tuple[bool, frozenset[int] | None]:
        """Does every plan printed read what it was made from? If not, the sources to refuse."""
        if any(map(plan_marked, self.emit.helpers.values())):
            return False, None
        marks = plan_marks(top)
        if any(PLACEHOLDER in node.node.reads() for node in marks.heads):
            return False, None
        part = unsound_use(marks)
        if part is not None:
            return False, self.plan_users.get(part)
        return True, frozenset()


def plan_sources(index: TreeIndex) -> list[tuple[nodes.Stmt, set[str]]]:
    """The statements a plan may be made of (a superset of those made), each with the names it
    sets: loops appending to a namespace attribute, `{% set %}` blocks, `set`s storing a `tojson`."""
    found: list[tuple[nodes.Stmt, set[str]]] = []
    for node in index.all((nodes.For, nodes.AssignBlock)):
        if isinstance(node, nodes.AssignBlock):
            found.append((node, targets(node)))
        elif isinstance(node, nodes.For) and (appended := appends_to(node, index)) is not None:
            found.append((node, {appended[0]}))
    stored = {id(assign): assign for assign in stored_json(index).values()}
    return found + [(assign, targets(assign)) for assign in stored.values()]


def targets(node: nodes.Node) -> set[str]:
    """The names a statement binds (a namespace's name for `set ns.attr`)."""
    target = getattr(node, "target", None)
    if isinstance(target, nodes.NSRef):
        return {target.name}
    if target is None:
        return set()
    return {n.name for n in [target, *target.find_all(nodes.Name)] if isinstance(n, nodes.Name)}


def names_read(node: nodes.Node) -> set[str]:
    return {n.name for n in [node, *node.find_all(nodes.Name)] if isinstance(n, nodes.Name)}


def plan_tainted(index: TreeIndex) -> set[str]:
    """The names a plan's text (or anything computed from it) may be held in: the names plan
    sources set, and every name set from one of them, to a fixed point (a macro's parameters,
    where a call hands one on)."""
    tainted: set[str] = set().union(*(names for _, names in plan_sources(index)))
    macros = {m.name: m for m in index.all(nodes.Macro)}
    binders = index.all((nodes.Assign, nodes.AssignBlock, nodes.For, nodes.With))
    calls = [
        (call, macros[call.node.name])
        for call in index.all(nodes.Call)
        if isinstance(call.node, nodes.Name) and call.node.name in macros
    ]
    while True:
        before = len(tainted)
        for binder in binders:
            if isinstance(binder, nodes.For):
                read = names_read(binder.iter)
            elif isinstance(binder, nodes.With):
                read = set().union(*map(names_read, binder.values))
                tainted |= set().union(*map(targets, binder.targets)) if read & tainted else set()
                continue
            else:
                read = names_read(binder)
            if read & tainted:
                tainted |= targets(binder)
        for call, macro in calls:
            arguments = [*call.args, *(k.value for k in call.kwargs)]
            if any(names_read(a) & tainted for a in arguments):
                tainted |= {arg.name for arg in macro.args}
        if len(tainted) == before:
            return tainted


def independent_of_plans(statement: nodes.Node, index: TreeIndex) -> bool:
    """Does translating `statement` not depend on the plans? It reads no name a plan may flow
    into (nor does a macro it calls), is outside every macro, call block and plan source, and
    holds none."""
    sources = [source for source, _ in plan_sources(index)]
    enclosing = [*sources, *index.all((nodes.Macro, nodes.CallBlock))]
    if any(statement is node or any(n is statement for n in node.find_all(type(statement))) for node in enclosing):
        return False
    if any(statement is s or any(n is s for n in statement.find_all(type(s))) for s in sources):
        return False
    macros = {m.name: m for m in index.all(nodes.Macro)}
    read: set[str] = set()
    todo: list[nodes.Node] = [statement]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        read |= names_read(node)
        for name in names_read(node) & set(macros) - seen:
            seen.add(name)
            todo.append(macros[name])
    return not read & plan_tainted(index)
