"""The prefill guards coalesced over the written template's tree (go/tree.py): a pass of
convert/passes.py."""

from __future__ import annotations

from .go import ir
from .go.tree import Act, Action, Block, Node

#: the prefill guard around output (`Emit.show`): true until the prefilled final text is cut,
#: which only the cut (`CUT_NODE`) does
GUARD_NODE = ir.Open("if", ir.operand_pipe(ir.Variable("$ofc_go")))
GUARD = Act.of(GUARD_NODE)
#: the cut (`Emit.cut`), `$ofc_go = false`: the passes ask an action's node whether it is one
CUT_NODE = ir.Action(ir.pipe_of(ir.Bool(False), ("$ofc_go",), is_assign=True))


def coalesce_guards(tree: list[Node]) -> None:
    """The template's tree with one prefill guard around each outermost block that prints guarded
    output at least twice and cannot cut the prefill, in place of the guards inside it.

    `$ofc_go` only ever turns false (at a cut), and from then on all output is guarded, so once
    it is false nothing a block does can be seen: a block with no cut inside may be skipped
    whole, and inside it the guards all see `$ofc_go` as it was at the block's start. A block
    (`if`, `range`, `with` to its `end`) scopes its own variables, so guarding it changes what
    no later action sees. Fewer guards: less to parse, to walk (`Vars()`) and to test."""
    inside: dict[int, tuple[int, bool]] = {}
    _count(tree, inside)
    _coalesce(tree, inside)


def _count(body: list[Node], inside: dict[int, tuple[int, bool]]) -> tuple[int, bool]:
    """How many guards `body` holds at any depth and whether a cut is among them; the same of
    each block in it, recorded in `inside` by the block's id."""
    guards, cut = 0, False
    for node in body:
        if isinstance(node, Action):
            cut |= node.node == CUT_NODE
        elif isinstance(node, Block):
            held, held_cut = 0, False
            for inner in (node.body, *(branch.body for branch in node.branches)):
                more, more_cut = _count(inner, inside)
                held, held_cut = held + more, held_cut or more_cut
            inside[id(node)] = (held, held_cut)
            guards, cut = guards + held + (node.node == GUARD_NODE), cut or held_cut
    return guards, cut


def _coalesce(tree: list[Node], inside: dict[int, tuple[int, bool]]) -> None:
    for i, node in enumerate(tree):
        if not isinstance(node, Block) or node.node == GUARD_NODE:
            continue
        guards, cut = inside[id(node)]
        if node.keyword in {"if", "range", "with"} and not cut and guards > 1:
            for body in (node.body, *(branch.body for branch in node.branches)):
                _unguard(body)
            tree[i] = Block(GUARD.text, [node], written=GUARD_NODE)
        else:
            for body in (node.body, *(branch.body for branch in node.branches)):
                _coalesce(body, inside)


def _unguard(body: list[Node]) -> None:
    """Every guard in `body`, at any depth, replaced by what it guards."""
    i = 0
    while i < len(body):
        node = body[i]
        if isinstance(node, Block) and node.node == GUARD_NODE:
            body[i : i + 1] = node.body
            continue
        if isinstance(node, Block):
            for inner in (node.body, *(branch.body for branch in node.branches)):
                _unguard(inner)
        i += 1
