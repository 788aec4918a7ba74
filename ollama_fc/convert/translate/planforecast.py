"""What the print plans (printplan.py) will refuse, read off the Jinja tree before translating.

A plan that fails once it is made costs a second translation of the whole template (see
`PlanFallback.without`). What the Jinja tree says surely fails is decided here instead, as
jinja2's own compiler decides what it can by reading names on the tree before it generates
(`forecast`, one walk that follows which variables may hold a plan of which source):

- a plan stored, through variables that only carry it (`~`, `+`, an inline `if`, `and`/`or`),
  by a `set ns.attr` in a loop the namespace outlives: `hold` refuses it there (one copy of the
  loop's body stands for every pass). Those sources start captured.
- a plan surely made (its conditions are all in the tree) and then used other than printed
  (compared with a string, filtered): its placeholder shows up, and the template is translated
  without any plan. The translation starts so, where nothing else read of the plan could
  refuse it first (a truth test, a print into a captured string...).
- `{% if v is not string %}{% set v = v | tojson %}{% endif %}` on a mapping's value: a plan
  on one path, on the other the value itself, which no plan prints: every plan is refused
  after the `if`. Whether the value is a schema (and the test decided at run time) only the
  translation knows: `SchemaWitness` checks it where the `set` is translated.

A forecast names the statements it relies on being translated (`Forecast.witnesses`: the
plan's source, outside any captured text, and where it is refused or used); where one is not
(a dead branch, a macro never called), the template is translated again without the forecast.
A source left captured that the translation would not have made a plan of anyway (its value
not a schema's) is translated as it would have been.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from jinja2 import nodes

from ...jinja_index import TreeIndex
from ..analysis import assigned_names
from .plans import appends_to, building_body, prints_only, stored_json

#: where a plan may be held: a name, or a namespace's attribute
HeldKey = tuple[str, ...]

#: filters that take a string and give another value: on a plan, its placeholder is written
CONSUMING_FILTERS = {"trim", "length", "count", "lower", "upper", "replace", "tojson", "title", "capitalize"}
#: tests a plan answers without its text (it is a defined string)
PLAIN_TESTS = {"defined", "undefined", "string"}


@dataclass(frozen=True)
class Witness:
    """What a forecast relies on being translated (statements by `id()`): where `premise` is
    translated (or is None), one of `alternatives` is too."""

    premise: int | None
    alternatives: frozenset[int]

    def holds(self, translated: set[int]) -> bool:
        return (self.premise is not None and self.premise not in translated) or bool(self.alternatives & translated)


@dataclass(frozen=True)
class SchemaWitness:
    """`{% if c %}{% set name = name | tojson %}{% endif %}` (the `set` is `statement`, the `if`
    `branch`): where `name` holds a tool schema's value there (a kind whose `tojson` is planned),
    the plan is made, and after the run-time `if` the other path's value is one no plan prints
    (`PrintPlans.merge_plans` refuses every plan). Holds where every translation of the `set`
    outside captured text is so, in the `if`'s run-time branch, and one is."""

    statement: int
    branch: int
    name: str


@dataclass(frozen=True)
class Forecast:
    """The plan sources (`id()`s of their nodes) to leave captured, None for no plans at all,
    and what that relies on being translated."""

    captured: frozenset[int] | None
    witnesses: tuple[Witness, ...]
    schema: SchemaWitness | None = None

    def statements(self) -> frozenset[int]:
        """Every statement a witness names."""
        named = {w.premise for w in self.witnesses if w.premise is not None}
        return frozenset(named.union(*(w.alternatives for w in self.witnesses)))


@dataclass
class Scope:
    """A Jinja scope the walk is in: a loop's body, a macro's, or the template's."""

    kind: str
    #: the names it binds itself (a loop's target, a macro's parameters)
    own: set[str]
    body: list[nodes.Node]
    _names: set[str] | None = None

    @property
    def names(self) -> set[str]:
        """Every name the scope binds (found when first asked: most scopes never are)."""
        if self._names is None:
            self._names = self.own | set(assigned_names(self.body))
        return self._names


@dataclass
class TreeFacts:
    """What the forecast asks of the whole tree (read off the translator's `TreeIndex`): the
    loops holding a `set ns.attr` (the others build no plan), the macros called and every call
    printed by `{{ }}` outside captured text and macros, the names no statement sets (the
    template's inputs), whether it has `{% set %}` blocks."""

    appending: set[int]
    printed_macros: set[str]
    unset: set[str]
    blocks: bool

    @classmethod
    def of(cls, index: TreeIndex) -> TreeFacts:
        appending = {
            id(loop)
            for loop in index.all(nodes.For)
            if any(isinstance(a.target, nodes.NSRef) for a in index.find_all(loop, nodes.Assign))
        }
        macros = {m.name for m in index.all(nodes.Macro)}
        calls = [c for c in index.all(nodes.Call) if isinstance(c.node, nodes.Name) and c.node.name in macros]
        printed = {id(c) for output in index.all(nodes.Output) for c in output.nodes if isinstance(c, nodes.Call)}
        captured = (nodes.AssignBlock, nodes.FilterBlock, nodes.CallBlock, nodes.Macro)
        inside = {id(c) for block in index.all(captured) for c in index.find_all(block, nodes.Call)}
        called = {c.node.name for c in calls}  # type: ignore[attr-defined]
        unprinted = {c.node.name for c in calls if id(c) not in printed or id(c) in inside}  # type: ignore[attr-defined]
        names = index.all(nodes.Name)
        unset = {n.name for n in names if n.ctx == "load"} - {n.name for n in names if n.ctx != "load"}
        return cls(appending, called - unprinted, unset, bool(index.all(nodes.AssignBlock)))


@dataclass
class Forecaster:
    """The walk of `forecast`: which sources each variable may hold a plan of, in order."""

    json: dict[int, nodes.Assign]
    tree: TreeFacts
    index: TreeIndex
    #: the checks that only raise (`Core.dead_checks`)
    dead: set[int] = field(default_factory=set)
    held: dict[HeldKey, frozenset[int]] = field(default_factory=dict)
    #: the `set`s storing a `tojson` (`json`'s values)
    json_sets: set[int] = field(default_factory=set)
    #: namespace attributes holding constant text (namespace(s='')): a loop may build on them
    text: set[HeldKey] = field(default_factory=set)
    scopes: list[Scope] = field(default_factory=list)
    #: source -> the looped `set`s that refuse it
    refused: dict[int, set[int]] = field(default_factory=dict)
    #: source -> statements using it other than printed
    leaks: dict[int, set[int]] = field(default_factory=dict)
    #: sources read where the translation might refuse them (which a leak cannot outrun)
    unsafe: set[int] = field(default_factory=set)
    #: sources held in a namespace read whole (see `escape`): no forecast follows them
    escaped: set[int] = field(default_factory=set)
    #: sources made whenever their statement is translated outside captured text
    sure: set[int] = field(default_factory=set)
    #: the `{% set %}` blocks among the sources
    blocks: set[int] = field(default_factory=set)
    #: `set x = x | tojson` alone in an `if`, where x held no plan (see `SchemaWitness`)
    schema_sets: list[SchemaWitness] = field(default_factory=list)
    #: for each loop around, the name of the value of `for k, v in m.items()`, else ""
    items_loops: list[str] = field(default_factory=list)
    #: source -> its statement (a stored `tojson`'s `set`)
    statement_of: dict[int, int] = field(default_factory=dict)
    capturing: int = 0
    current: nodes.Node | None = None

    def body(self, body: Iterable[nodes.Node]) -> None:
        for node in body:
            self.current = node
            self.statement(node)

    def scoped(self, kind: str, names: set[str], body: list[nodes.Node]) -> None:
        """A nested scope: a plan it holds in a name it sets itself ends with it (as a loop's pass
        ends the plans it made, `PrintPlans.loop_pass`)."""
        held, text = dict(self.held), set(self.text)
        self.scopes.append(Scope(kind, names, body))
        self.body(body)
        self.scopes.pop()
        self.held = {key: self.held[key] for key in held if key in self.held}
        self.text = {key for key in text if key in self.text}

    def statement(self, node: nodes.Node) -> None:
        if id(node) in self.dead:
            return  # a check that only raises: dropped, never translated (`Core.dead_checks`)
        if isinstance(node, nodes.For):
            self.loop(node)
        elif isinstance(node, nodes.If):
            self.branches(node)
        elif isinstance(node, nodes.Assign):
            self.assign(node)
        elif isinstance(node, nodes.AssignBlock):
            self.assign_block(node)
        elif isinstance(node, nodes.Output):
            for expr in node.nodes:
                self.reads(expr, "other" if self.capturing else "printed", root=True)
        elif isinstance(node, nodes.Macro):
            saved, self.held, self.text = (self.held, self.text), {}, set()
            captured = node.name not in self.tree.printed_macros
            self.capturing += captured
            self.scoped("macro", {arg.name for arg in node.args}, node.body)
            self.capturing -= captured
            self.held, self.text = saved
        else:
            for child in node.iter_child_nodes():
                if isinstance(child, nodes.Expr):
                    self.reads(child, "other")
            if isinstance(node, (nodes.CallBlock, nodes.Scope, nodes.FilterBlock, nodes.With)):
                captured = isinstance(node, (nodes.FilterBlock, nodes.CallBlock))
                self.capturing += captured
                self.body(node.body)
                self.capturing -= captured

    def loop(self, node: nodes.For) -> None:
        target = appends_to(node, self.index) if id(node) in self.tree.appending else None
        if target is not None and building_body(node, *target) is not None and self.bound_outside_loop(target[0]):
            key = ("attr", *target)
            if (key in self.held or key in self.text) and not self.calls(node) and not self.capturing:
                self.sure.add(id(node))
            self.statement_of[id(node)] = id(node)
            self.read_inside(node)  # (what the loop's body reads of a plan)
            self.held[key] = self.held.get(key, frozenset()) | {id(node)}  # the loop's own text, after what it held
            self.text.discard(key)
            return
        self.reads(node.iter, "other")
        names = {n.name for n in node.target.find_all(nodes.Name)}
        if isinstance(node.target, nodes.Name):
            names.add(node.target.name)
        self.items_loops.append(item_value(node))
        self.scoped("for", names, node.body)
        self.items_loops.pop()
        self.body(node.else_)

    def branches(self, node: nodes.If) -> None:
        """Each path from what held before; after the `if`, what any path holds (a Branch), and
        the constant text every path keeps."""
        self.schema_set(node)
        held, text = dict(self.held), set(self.text)
        merged: dict[HeldKey, frozenset[int]] = {}
        kept = set(text)
        for test, body in [(node.test, node.body), *((e.test, e.body) for e in node.elif_), (None, node.else_)]:
            self.held, self.text = dict(held), set(text)
            if test is not None:
                self.current = node  # (only the first test is surely evaluated where the `if` is translated)
                self.reads(test, "other", root=test is node.test)
            self.body(body)
            for key, sources in self.held.items():
                merged[key] = merged.get(key, frozenset()) | sources
            kept &= self.text
        self.held, self.text = merged, kept

    def schema_set(self, node: nodes.If) -> None:
        """Note `{% if c %}{% set x = x | tojson %}{% endif %}` where x holds no plan, a value of
        the mapping the loop around goes through (`for k, x in m.items()`: any value, tested at
        run time; elsewhere x is seldom a schema whose test is not decided statically)."""
        if node.elif_ or node.else_ or len(node.body) != 1 or self.capturing or not self.items_loops:
            return
        (assign,) = node.body
        if not isinstance(assign, nodes.Assign) or not isinstance(assign.target, nodes.Name):
            return
        name, stored = assign.target.name, assign.node
        if (
            isinstance(stored, nodes.Filter)
            and stored.name == "tojson"
            and id(stored) in self.json
            and isinstance(stored.node, nodes.Name)
            and stored.node.name == name
            and ("name", name) not in self.held
            and self.scopes[-1].kind == "for"
            and name == self.items_loops[-1]
        ):
            self.schema_sets.append(SchemaWitness(id(assign), id(node), name))

    def assign(self, node: nodes.Assign) -> None:
        key = held_key(node.target)
        if key is None:
            self.reads(node.node, "other")
            return
        if key[0] == "name" and isinstance(node.node, nodes.Call) and is_namespace(node.node):
            self.declare_namespace(key[1], node.node)
        sources: frozenset[int] = frozenset()
        looped = False
        if self.held or id(node) in self.json_sets:  # (else it stores no plan)
            looped = key[0] == "attr" and self.looped(key[1])
            sources = self.reads(node.node, "carried", stored=not looped, root=True)
        if looped and sources:
            for source in sources:  # `hold` refuses the whole plan the `set` stores
                self.refused.setdefault(source, set()).add(id(node))
            sources = frozenset()
        if sources:
            self.held[key] = sources
        else:
            self.held.pop(key, None)
        if isinstance(node.node, nodes.Const) and isinstance(node.node.value, str) and key[0] == "attr":
            self.text.add(key)
        else:
            self.text.discard(key)

    def declare_namespace(self, name: str, call: nodes.Call) -> None:
        for key in [k for k in self.held if k[:2] == ("attr", name)]:
            del self.held[key]
        self.text = {k for k in self.text if k[:2] != ("attr", name)}
        for keyword in call.kwargs:
            if isinstance(keyword.value, nodes.Const) and isinstance(keyword.value.value, str):
                self.text.add(("attr", name, keyword.key))

    def assign_block(self, node: nodes.AssignBlock) -> None:
        key = held_key(node.target)
        if key is None:
            return
        if node.filter is None and prints_only(node.body) and self.index.find_all(node, nodes.For):
            if not self.capturing:
                self.sure.add(id(node))
            self.blocks.add(id(node))
            self.statement_of[id(node)] = id(node)
            self.read_inside(node)
            self.held[key] = frozenset({id(node)})
            return
        self.held.pop(key, None)
        self.capturing += 1
        self.body(node.body)
        self.capturing -= 1

    def read_inside(self, node: nodes.Node) -> None:
        """Every plan `node` reads, read where a refusal may come first (a plan's own source)."""
        if self.held:
            reads = self.index.find_all(node, (nodes.Name, nodes.Getattr))
            bases = {id(read.node) for read in reads if isinstance(read, nodes.Getattr)}
            for read in reads:
                if id(read) not in bases:
                    self.reads(read, "other")

    def calls(self, node: nodes.Node) -> bool:
        """Does `node` call anything (a macro's define would print it, `calls_other_defines`)?"""
        called = self.index.find_all(node, nodes.Call)
        return any(isinstance(c.node, nodes.Name) and c.node.name != "namespace" for c in called) or bool(
            self.index.find_all(node, nodes.CallBlock)
        )

    def escape(self, name: str) -> None:
        """A namespace read whole (handed to a macro, stored under another name): what its
        attributes hold may change where the walk does not follow."""
        for key, sources in self.held.items():
            if key[:2] == ("attr", name):
                self.escaped |= sources

    def reads(self, expr: nodes.Node | None, context: str, stored: bool = True, root: bool = False) -> frozenset[int]:
        """Record how `expr` reads the plans held (printed, carried into a `set`, used other
        than printed, or where a refusal may come first); the sources its value carries.
        `root`: `expr` is the whole expression a statement evaluates (sure to be evaluated)."""
        if expr is None or not (self.held or context == "carried"):
            return frozenset()  # (nothing held to read; a `set` may store a new plan)
        if isinstance(expr, nodes.Name):
            self.escape(expr.name)
        key = held_key(expr) if isinstance(expr, (nodes.Name, nodes.Getattr)) else None
        if key is not None and key in self.held:
            sources = self.held[key]
            if context in {"other", "leak"}:
                for source in sources:
                    if context == "leak" and self.current is not None:
                        self.leaks.setdefault(source, set()).add(id(self.current))
                    else:
                        self.unsafe.add(source)
            return sources if context in {"carried", "printed"} else frozenset()
        if isinstance(expr, nodes.Concat):
            return frozenset().union(*(self.reads(n, context, stored) for n in expr.nodes))
        if isinstance(expr, nodes.Add):
            return self.reads(expr.left, context, stored) | self.reads(expr.right, context, stored)
        if isinstance(expr, (nodes.And, nodes.Or)):
            self.reads(expr.left, "other")  # (its truth chooses)
            return self.carried_too(expr.left, context, stored) | self.reads(expr.right, context, stored)
        if isinstance(expr, nodes.CondExpr) and expr.expr2 is not None:
            self.reads(expr.test, "other")
            return self.reads(expr.expr1, context, stored) | self.reads(expr.expr2, context, stored)
        if isinstance(expr, nodes.Filter) and expr.name == "tojson" and id(expr) in self.json:
            self.reads(expr.node, "other")
            if context == "carried" and stored:
                self.statement_of[id(expr)] = id(self.current)
                if is_input(expr.node, "tools", self.tree.unset) and not self.capturing:
                    self.sure.add(id(expr))  # the tool list: a tool schema, never constant
                return frozenset({id(expr)})
            return frozenset()  # (stored in a loop: never made, `stored_in_loop`)
        self.used(expr, root)
        return frozenset()

    def carried_too(self, left: nodes.Expr, context: str, stored: bool) -> frozenset[int]:
        """What the left operand of `and`/`or` carries (its reads already recorded)."""
        if isinstance(left, (nodes.Name, nodes.Getattr)):
            key = held_key(left)
            return self.held.get(key, frozenset()) if key is not None else frozenset()
        return frozenset()

    def used(self, expr: nodes.Node, root: bool) -> None:
        """Any other expression: a plan it writes the placeholder of (`leaked_read`, where the
        expression is the whole of a statement's, so surely evaluated) is used other than
        printed; every other read of a plan in it may be refused first."""
        if isinstance(expr, nodes.Test) and expr.name in PLAIN_TESTS and isinstance(expr.node, nodes.Name):
            return  # (a plan is a defined string)
        if isinstance(expr, nodes.Getattr) and isinstance(expr.node, nodes.Name):
            return  # (an attribute holding no plan)
        leaked = self.leaked_read(expr) if root else None
        if isinstance(expr, nodes.Compare):
            children: list[nodes.Node] = [expr.expr, *(operand.expr for operand in expr.ops)]
        else:
            children = list(expr.iter_child_nodes())
        for child in children:
            self.reads(child, "leak" if child is leaked else "other")

    def leaked_read(self, expr: nodes.Node) -> nodes.Node | None:
        """The operand `expr` writes the placeholder of if it holds a plan: one compared with a
        string, or given to a filter taking the text (not a `{% set %}` block's to `trim`,
        which plantext.py may print)."""
        if isinstance(expr, nodes.Compare) and len(expr.ops) == 1 and expr.ops[0].op in {"eq", "ne", "in", "notin"}:
            left, right = expr.expr, expr.ops[0].expr
            return right if is_text(left) else left if is_text(right) else None
        if isinstance(expr, nodes.Filter) and expr.name in CONSUMING_FILTERS:
            key = held_key(expr.node)
            if key is not None and not self.blocks & self.held.get(key, frozenset()):
                return expr.node
        return None

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

    def result(self) -> Forecast:
        """No plans at all where a plan surely made leaks (its source and a use translated), or
        where a schema's `tojson` set in an `if` leaves the other path unprintable; else the
        sources a looped `set` refuses (where a source is made, a `set` refusing it translated:
        one not made is captured all the same)."""
        for source, consumers in self.leaks.items():
            if source in self.sure and not {source} & (self.unsafe | self.escaped | set(self.refused)):
                made = Witness(None, frozenset({self.statement_of[source]}))
                return Forecast(None, (made, Witness(None, frozenset(consumers))))
        if self.schema_sets:
            return Forecast(None, (), self.schema_sets[0])
        refused = {source: sets for source, sets in self.refused.items() if source not in self.escaped}
        witnesses = tuple(Witness(self.statement_of[s], frozenset(sets)) for s, sets in refused.items())
        return Forecast(frozenset(refused), witnesses)


def item_value(loop: nodes.For) -> str:
    """The value's name in `for k, v in m.items()`, else ""."""
    target, items = loop.target, loop.iter
    if not (isinstance(target, nodes.Tuple) and len(target.items) == 2 and isinstance(target.items[1], nodes.Name)):
        return ""
    if isinstance(items, nodes.Call) and isinstance(items.node, nodes.Getattr) and items.node.attr == "items":
        return target.items[1].name
    return ""


def held_key(node: nodes.Node | None) -> HeldKey | None:
    if isinstance(node, nodes.Name):
        return ("name", node.name)
    if isinstance(node, nodes.NSRef):
        return ("attr", node.name, node.attr)
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
        return ("attr", node.node.name, node.attr)
    return None


def is_input(node: nodes.Node | None, name: str, unset: set[str]) -> bool:
    """Is `node` the template's input `name`, which it never sets?"""
    return isinstance(node, nodes.Name) and node.name == name and name in unset


def is_text(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, str)


def is_namespace(call: nodes.Call) -> bool:
    return isinstance(call.node, nodes.Name) and call.node.name == "namespace"


def forecast(
    tree: nodes.Template,
    index: TreeIndex | None = None,
    json: dict[int, nodes.Assign] | None = None,
    dead: set[int] | None = None,
) -> Forecast:
    """What the print plans will refuse in `tree` (see the module's docstring); `index`, `json`,
    `dead`: its `TreeIndex`, `stored_json` and the checks the translation drops, where known."""
    index = index or TreeIndex(tree)
    facts = TreeFacts.of(index)
    stored = stored_json(index) if json is None else json
    if not (facts.appending or stored or facts.blocks):
        return Forecast(frozenset(), ())  # nothing a plan is made of
    walk = Forecaster(stored, facts, index, dead or set())
    walk.json_sets = {id(assign) for assign in stored.values()}
    walk.scoped("template", set(), tree.body)
    return walk.result()
