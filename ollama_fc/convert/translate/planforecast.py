"""What the print plans (printplan.py) will refuse, read off the Jinja tree before translating.

A plan that fails once it is made costs a second translation of the whole template (see
`PrintPlans.without`). What the Jinja tree alone says surely fails is decided here instead, as
jinja2's own compiler decides what it can by reading names on the tree before it generates:

- `loop_refusals`: a plan stored, through variables that only carry it (`~`, `+`, an inline
  `if`, `and`/`or`), by a `set ns.attr` in a loop the namespace outlives: `hold` refuses it
  there (one copy of the loop's body stands for every pass). Those sources start captured.
- `plan_tainted`: the names a plan's text may flow into. A translation that fails on a
  statement that reads none of them and is no part of a plan's source fails the same way
  without plans: the error is raised, not translated again (`independent_of_plans`).

A forecast only ever names sources the translation would refuse: a source named that the
translation would not have made into a plan is left captured as it would have been; what is
not foreseen is still found by the translation and translated again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from jinja2 import nodes

from ..analysis import assigned_names
from .plans import appends_to, building_body, prints_only, stored_json

#: where a plan may be held: a name, or a namespace's attribute
HeldKey = tuple[str, ...]


@dataclass
class Scope:
    """A Jinja scope the walk is in: a loop's body, a macro's, or the template's."""

    kind: str
    names: set[str]


@dataclass
class LoopForecast:
    """The walk of `loop_refusals`: which sources each variable may hold a plan of."""

    json: dict[int, nodes.Assign]
    held: dict[HeldKey, frozenset[int]] = field(default_factory=dict)
    scopes: list[Scope] = field(default_factory=list)
    refused: set[int] = field(default_factory=set)

    def body(self, body: Iterable[nodes.Node]) -> None:
        for node in body:
            self.statement(node)

    def scoped(self, kind: str, names: set[str], body: list[nodes.Node]) -> None:
        """A nested scope: a plan it holds in a name it sets itself ends with it (as a loop's pass
        ends the plans it made, `PrintPlans.loop_pass`)."""
        before = dict(self.held)
        self.scopes.append(Scope(kind, names | set(assigned_names(body))))
        self.body(body)
        self.scopes.pop()
        self.held = {key: self.held[key] for key in before if key in self.held}

    def statement(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.For):
            self.loop(node)
        elif isinstance(node, nodes.If):
            self.branches(node)
        elif isinstance(node, nodes.Assign):
            self.assign(node)
        elif isinstance(node, nodes.AssignBlock):
            self.assign_block(node)
        elif isinstance(node, nodes.Macro):
            params = {arg.name for arg in node.args}
            saved, self.held = self.held, {}
            self.scoped("macro", params, node.body)
            self.held = saved
        elif isinstance(node, (nodes.CallBlock, nodes.Scope, nodes.FilterBlock, nodes.With)):
            self.body(node.body)

    def loop(self, node: nodes.For) -> None:
        target = appends_to(node)
        if target is not None and building_body(node, *target) is not None and self.bound_outside_loop(target[0]):
            key = ("attr", *target)
            self.held[key] = self.held.get(key, frozenset()) | {id(node)}  # the loop's own text, after what it held
            return
        names = {n.name for n in node.target.find_all(nodes.Name)}
        if isinstance(node.target, nodes.Name):
            names.add(node.target.name)
        self.scoped("for", names, node.body)
        self.body(node.else_)

    def branches(self, node: nodes.If) -> None:
        """Each path from what held before; after the `if`, what any path holds (a Branch)."""
        before = dict(self.held)
        merged: dict[HeldKey, frozenset[int]] = {}
        for body in [node.body, *(e.body for e in node.elif_), node.else_]:
            self.held = dict(before)
            self.body(body)
            for key, sources in self.held.items():
                merged[key] = merged.get(key, frozenset()) | sources
        self.held = merged

    def assign(self, node: nodes.Assign) -> None:
        key = held_key(node.target)
        if key is None:
            return
        looped = key[0] == "attr" and self.looped(key[1])
        sources = self.carried(node.node, stored=not looped)
        if looped and sources:
            self.refused |= sources  # `hold` refuses the whole plan the `set` stores
            sources = frozenset()
        if sources:
            self.held[key] = sources
        else:
            self.held.pop(key, None)

    def assign_block(self, node: nodes.AssignBlock) -> None:
        key = held_key(node.target)
        if key is None:
            return
        planned = node.filter is None and prints_only(node.body) and any(node.find_all(nodes.For))
        if planned:
            self.held[key] = frozenset({id(node)})
        else:
            self.held.pop(key, None)

    def carried(self, expr: nodes.Node | None, stored: bool) -> frozenset[int]:
        """The sources whose plans `expr`'s value carries where the print plans' hooks join them."""
        if isinstance(expr, (nodes.Name, nodes.Getattr)):
            key = held_key(expr)
            return self.held.get(key, frozenset()) if key is not None else frozenset()
        if isinstance(expr, nodes.Concat):
            return frozenset().union(*(self.carried(n, stored) for n in expr.nodes))
        if isinstance(expr, (nodes.Add, nodes.And, nodes.Or)):
            return self.carried(expr.left, stored) | self.carried(expr.right, stored)
        if isinstance(expr, nodes.CondExpr) and expr.expr2 is not None:
            return self.carried(expr.expr1, stored) | self.carried(expr.expr2, stored)
        if isinstance(expr, nodes.Filter) and expr.name == "safe":
            return self.carried(expr.node, stored)
        if isinstance(expr, nodes.Filter) and stored and id(expr) in self.json:
            return frozenset({id(expr)})  # (stored in a loop: never made, `stored_in_loop`)
        return frozenset()

    def binding(self, name: str) -> int | None:
        """The index in `scopes` of the scope `name` is bound in (not past a macro's own)."""
        for at in range(len(self.scopes) - 1, -1, -1):
            if name in self.scopes[at].names:
                return at
            if self.scopes[at].kind == "macro":
                return None
        return None

    def looped(self, name: str) -> bool:
        """Is a loop's body between here and the scope that binds `name`?"""
        at = self.binding(name)
        return at is not None and any(scope.kind == "for" for scope in self.scopes[at + 1 :])

    def bound_outside_loop(self, name: str) -> bool:
        """Is `name` bound with no loop between it and here (where a loop may build a plan)?"""
        at = self.binding(name)
        return at is not None and not any(scope.kind == "for" for scope in self.scopes[at + 1 :])


def held_key(node: nodes.Node) -> HeldKey | None:
    if isinstance(node, nodes.Name):
        return ("name", node.name)
    if isinstance(node, nodes.NSRef):
        return ("attr", node.name, node.attr)
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
        return ("attr", node.node.name, node.attr)
    return None


def loop_refusals(tree: nodes.Template) -> set[int]:
    """The `id()`s of the plan sources a `set` in a loop would refuse (see the module's docstring)."""
    forecast = LoopForecast(stored_json(tree))
    forecast.scoped("template", set(), tree.body)
    return forecast.refused


def plan_sources(tree: nodes.Template) -> list[tuple[nodes.Stmt, set[str]]]:
    """The statements a plan may be made of (a superset of those made), each with the names it
    sets: loops appending to a namespace attribute, `{% set %}` blocks, `set`s storing a `tojson`."""
    found: list[tuple[nodes.Stmt, set[str]]] = []
    for node in tree.find_all((nodes.For, nodes.AssignBlock)):
        if isinstance(node, nodes.AssignBlock):
            found.append((node, targets(node)))
        elif isinstance(node, nodes.For) and (appended := appends_to(node)) is not None:
            found.append((node, {appended[0]}))
    stored = {id(assign): assign for assign in stored_json(tree).values()}
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


def plan_tainted(tree: nodes.Template) -> set[str]:
    """The names a plan's text (or anything computed from it) may be held in: the names plan
    sources set, and every name set from one of them, to a fixed point (a macro's parameters,
    where a call hands one on)."""
    tainted: set[str] = set().union(*(names for _, names in plan_sources(tree)))
    macros = {m.name: m for m in tree.find_all(nodes.Macro)}
    binders = list(tree.find_all((nodes.Assign, nodes.AssignBlock, nodes.For, nodes.With)))
    calls = [
        (call, macros[call.node.name])
        for call in tree.find_all(nodes.Call)
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


def independent_of_plans(statement: nodes.Node, tree: nodes.Template) -> bool:
    """Does translating `statement` not depend on the plans? It reads no name a plan may flow
    into (nor does a macro it calls), is outside every macro and plan source, and holds none."""
    sources = [source for source, _ in plan_sources(tree)]
    enclosing = [*sources, *tree.find_all((nodes.Macro, nodes.CallBlock))]
    if any(statement is node or any(n is statement for n in node.find_all(type(statement))) for node in enclosing):
        return False
    if any(statement is s or any(n is s for n in statement.find_all(type(s))) for s in sources):
        return False
    macros = {m.name: m for m in tree.find_all(nodes.Macro)}
    read: set[str] = set()
    todo: list[nodes.Node] = [statement]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        read |= names_read(node)
        for name in names_read(node) & set(macros) - seen:
            seen.add(name)
            todo.append(macros[name])
    return not read & plan_tainted(tree)
