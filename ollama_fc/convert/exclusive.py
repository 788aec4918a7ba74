"""Sibling `{% if %}`s whose tests cannot both hold, joined into one if/elif chain.

Chat templates often test a message's role in a row of separate `if`s (DeepSeek's: user, then
assistant with no content, then assistant with content, then tool). Go evaluates every test of
such a row for every message, each a reflective call (`eq`) or several; once one test has held,
the others cannot. Written as one `if`/`else if` chain, a message pays for the tests up to its
own branch and no more.

Two tests cannot both hold when each is a conjunction (`a and b and ...`) and some conjunct of
one contradicts some conjunct of the other: `E == 'x'` against `E == 'y'` (the same expression,
two different constants), or `E is none` against `E is not none`. The join keeps what renders
when nothing between the tests changes E: E is read from a variable that no branch before it
assigns (`set`, a loop target, a namespace attribute), and nothing in those branches calls a
method that could change it in place. One difference remains, on inputs the template refuses:
a later test that would raise (`m.content.strip()` of a None) is no longer evaluated once an
earlier test held, so where the template fails the conversion may render.
"""

from __future__ import annotations

from jinja2 import nodes

from ..jinja_index import statements

#: methods that change a dict or list in place (a branch calling one may change a later test's E)
MUTATING = {"update", "append", "extend", "pop", "insert", "clear", "setdefault", "remove", "sort", "reverse"}


def join_exclusive_ifs(tree: nodes.Template) -> nodes.Template:
    """The tree with every run of mutually exclusive sibling `if`s joined into one chain."""
    for node in [tree, *statements(tree)]:  # (expressions hold no body)
        for field in ("body", "else_"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and all(isinstance(n, nodes.Node) for n in body):
                setattr(node, field, _join_run(body))
    return tree


def _join_run(body: list[nodes.Node]) -> list[nodes.Node]:
    joined: list[nodes.Node] = []
    for node in body:
        previous = joined[-1] if joined else None
        if isinstance(previous, nodes.If) and isinstance(node, nodes.If) and _joinable(previous, node):
            previous.elif_.append(nodes.If(node.test, node.body, [], [], lineno=node.lineno))
            continue
        joined.append(node)
    return joined


def _joinable(chain: nodes.If, candidate: nodes.If) -> bool:
    """`candidate` (a plain `if`) can hold only when no test of `chain` held, and no branch of
    `chain` changes what the contradicting conjuncts read; `chain` has no `else` (it would run
    when none of its tests held, before `candidate`'s test)."""
    if chain.else_ or candidate.elif_ or candidate.else_:
        return False
    for branch in [chain, *chain.elif_]:
        roots = _contradicted(branch.test, candidate.test)
        if not roots or any(_may_change(branch.body, root) for root in roots):
            return False
    return True


def _conjuncts(test: nodes.Node) -> list[nodes.Node]:
    if isinstance(test, nodes.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def _contradicted(first: nodes.Node, second: nodes.Node) -> set[str]:
    """The variables read by the pairs of conjuncts, one of each test, that contradict each
    other; empty when the two tests may both hold."""
    roots: set[str] = set()
    for a in _conjuncts(first):
        for b in _conjuncts(second):
            root = _contradiction(a, b)
            if root is not None:
                roots.add(root)
    return roots


def _contradiction(a: nodes.Node, b: nodes.Node) -> str | None:
    """The variable E is read from when `a` and `b` cannot both hold, else None."""
    for first, second in ((_equals_constant(a), _equals_constant(b)), (_none_test(a), _none_test(b))):
        if first is not None and second is not None and first[0] == second[0] and first[1] != second[1]:
            return first[0][0]
    return None


#: what a test reads: a variable and the keys read from it (`message['role']`: message, role)
Chain = tuple[str, ...]


def _equals_constant(test: nodes.Node) -> tuple[Chain, object] | None:
    """(E, c) for `E == c` or `c == E`, with E an item or attribute chain of a variable and c a
    string or number constant."""
    if not isinstance(test, nodes.Compare) or len(test.ops) != 1 or test.ops[0].op != "eq":
        return None
    left, right = test.expr, test.ops[0].expr
    for expr, constant in ((left, right), (right, left)):
        chain = _chain(expr)
        if (
            chain is not None
            and isinstance(constant, nodes.Const)
            and isinstance(constant.value, (str, int, float))
            and not isinstance(constant.value, bool)
        ):
            return chain, constant.value
    return None


def _none_test(test: nodes.Node) -> tuple[Chain, bool] | None:
    """(E, holds) for `E is none` (True) and `E is not none` (False)."""
    negated = isinstance(test, nodes.Not)
    inner = test.node if isinstance(test, nodes.Not) else test
    if isinstance(inner, nodes.Test) and inner.name == "none" and not inner.args:
        chain = _chain(inner.node)
        if chain is not None:
            return chain, not negated
    return None


def _chain(expr: nodes.Node) -> Chain | None:
    """The variable and the keys an item or attribute chain reads; None for anything that
    computes (a call, a filter, a variable index). `m.role` and `m['role']` read the same key
    (Jinja's attribute lookup falls back to the item); an attribute a dict, list or string has
    (`m.items`) is kept apart, since it is that method and not the item."""
    keys: list[str] = []
    while isinstance(expr, (nodes.Getitem, nodes.Getattr)):
        if isinstance(expr, nodes.Getattr):
            method = any(hasattr(kind, expr.attr) for kind in (dict, list, str))
            key = "." + expr.attr if method else expr.attr
        elif isinstance(expr.arg, nodes.Const) and isinstance(expr.arg.value, str):
            key = expr.arg.value
        else:
            return None
        keys.append(key)
        expr = expr.node
    return (expr.name, *reversed(keys)) if isinstance(expr, nodes.Name) else None


def _may_change(body: list[nodes.Node], root: str) -> bool:
    """Whether running `body` may change what variable `root` holds or what it refers to."""
    for top in body:
        for node in [top, *top.find_all(nodes.Node)]:
            if isinstance(node, nodes.NSRef) and node.name == root:
                return True
            if isinstance(node, nodes.Name) and node.name == root and node.ctx in {"store", "param"}:
                return True
            if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr in MUTATING:
                return True
    return False
