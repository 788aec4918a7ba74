"""The parsed template walked once, so that "every X under this node" costs a lookup, not a walk.

The translator asks the same question of the Jinja tree thousands of times per template: every
`Name` a statement reads, every `Call` in an expression, every `Assign` in a loop. jinja2's
`Node.find_all` answers each by walking the subtree again, a generator per node visited, and
those walks were a quarter of converting the corpus. As jinja2's own compiler reads a tree's
names once before generating code, the converter walks the tree once here, after the rewrites
that reshape it (tails.py, exclusive.py) and before anything reads it. Numbered in the order
`find_all` yields them, a node's descendants are one run of numbers, and those of a kind are a
slice of that kind's list, found by bisection.

The indexed tree must not change after the walk (nothing edits it once translation starts). A
node made later, a wrapper around indexed bodies or an edited copy, is not in the index: it is
walked, and the indexed nodes under it are answered from the index. The rewrites before the
walk look for bodies only, which no expression holds: `statements` walks around expressions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import TypeVar

from jinja2 import nodes

NodeT = TypeVar("NodeT", bound=nodes.Node)
Kinds = type[NodeT] | tuple[type[NodeT], ...]


class TreeIndex:
    """Every node of `tree` by its place in a preorder walk, and the nodes of each kind asked for."""

    def __init__(self, tree: nodes.Template) -> None:
        self.tree = tree
        #: the nodes in the order `find_all` yields them (the tree itself first); held, so that
        #: no id() below is reused by another object while the index lives
        self._order: list[nodes.Node] = []
        #: a node's place in `_order`, by id()
        self._place: dict[int, int] = {}
        #: for each place, the place just past its node's descendants
        self._end: list[int] = []
        #: the places of the nodes of each class, in order
        self._classes: dict[type[nodes.Node], list[int]] = {}
        #: for each kind asked for: the places of its nodes, and the nodes
        self._kinds: dict[object, tuple[list[int], list[nodes.Node]]] = {}
        order, place_of, ends, classes = self._order, self._place, self._end, self._classes
        stack: list[tuple[nodes.Node, int]] = [(tree, -1)]
        while stack:  # (not recursive: a deeply nested template must not exhaust the stack here)
            node, place = stack.pop()
            if place >= 0:
                ends[place] = len(order)
                continue
            place = len(order)
            place_of[id(node)] = place
            order.append(node)
            ends.append(place + 1)
            classes.setdefault(type(node), []).append(place)
            stack.append((node, place))
            children = _children(node)
            children.reverse()
            stack += [(child, -1) for child in children]

    def all(self, kinds: Kinds[NodeT]) -> list[NodeT]:
        """Every node of the tree of these kinds, as `tree.find_all(kinds)`."""
        return self.find_all(self.tree, kinds)

    def find_all(self, node: nodes.Node, kinds: Kinds[NodeT]) -> list[NodeT]:
        """The nodes of these kinds under `node`, as `node.find_all(kinds)` yields them."""
        place = self._place.get(id(node))
        if place is None:
            found: list[NodeT] = []
            for child in _children(node):
                if isinstance(child, kinds):
                    found.append(child)
                found += self.find_all(child, kinds)
            return found
        places, of_kinds = self._of_kinds(kinds)
        start = bisect_right(places, place)
        return of_kinds[start : bisect_left(places, self._end[place], start)]  # type: ignore[return-value]

    def in_body(self, body: Iterable[nodes.Node], kinds: Kinds[NodeT]) -> list[NodeT]:
        """The nodes of these kinds in a list of statements and under them, in order."""
        found: list[NodeT] = []
        for statement in body:
            if isinstance(statement, kinds):
                found.append(statement)
            found += self.find_all(statement, kinds)
        return found

    def _of_kinds(self, kinds: Kinds[nodes.Node]) -> tuple[list[int], list[nodes.Node]]:
        known = self._kinds.get(kinds)
        if known is None:
            lists = [places for kind, places in self._classes.items() if issubclass(kind, kinds)]
            places = lists[0] if len(lists) == 1 else sorted(place for found in lists for place in found)
            known = self._kinds[kinds] = (places, [self._order[place] for place in places])
        return known


def _children(node: nodes.Node) -> list[nodes.Node]:
    """The nodes `node` holds, as `node.iter_child_nodes()` yields them (without its generators)."""
    found: list[nodes.Node] = []
    for name in node.fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            found += [item for item in value if isinstance(item, nodes.Node)]
        elif isinstance(value, nodes.Node):
            found.append(value)
    return found


def statements(tree: nodes.Node) -> list[nodes.Node]:
    """Every node under `tree` but expressions and what they hold, in the order `find_all`
    yields them: the statements (and `tree`'s helpers), where every body is, found without
    walking the expressions, which hold none."""
    found: list[nodes.Node] = []
    stack = [child for child in _children(tree) if not isinstance(child, nodes.Expr)]
    stack.reverse()
    while stack:
        node = stack.pop()
        found.append(node)
        inside = [child for child in _children(node) if not isinstance(child, nodes.Expr)]
        inside.reverse()
        stack += inside
    return found
