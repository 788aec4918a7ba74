"""Fewer function calls in the conditions of `if` actions, with the same truth value.

Go's text/template pays a reflective call for every builtin (`not`, `eq`...), where an `if` on a
variable costs almost nothing; the translator composes conditions piece by piece and so writes
`not (not X)`, `and X true`, `or (or (eq r "a") (eq r "b")) ...`. In an `if` only the truth of
the condition matters, so these fold: `X`, `X`, one `eq r "a" "b"`; `not (eq a b)` is `ne a b`.
Each rewrite keeps the truth value and which operands are evaluated: the template renders the same
bytes and fails where it failed. A condition this module cannot read is left as it is.

Two rewrites need more than the condition's text: a loop index (a Go `int` the translator names)
compared with 0 is its own truth (`eq $i 0` is `not $i`, `ne $i 0` is `$i`; `loop.first`,
`loop.index0 == 0`), and an `if not X` on a bare operand without an `else` becomes
`if X }}{{ else` (`invert_negated_ifs`), so the test calls nothing.

The fold works on the condition's IR (`go/ir.py`): a condition the translator composed of
`GoCall`s (and `GoField`s) is the IR its calls carry (`GoCall.node`); a condition given whole as
text is read into IR (`tree.expression`). Every condition is written anew from its IR, folded or
not, and without the parentheses around it (`(eq $a "x")` as `eq $a "x"`: the same pipeline,
evaluated one level less deep), so the output does not depend on how a condition was built. A
condition that is a pipeline (`$x | len`), or holds one, is left as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet

from ..go import ir, tree
from ..go.calls import GoCall, GoField, expression_of, operand_node
from ..go.irread import Unread


def simplify_condition(code: str, ints: AbstractSet[str] = frozenset()) -> str:
    """The condition `code` of an `if` with fewer function calls (or unchanged); `ints` are
    variables certain to hold a Go `int` (loop indexes)."""
    folded = simplified_condition(code, ints)
    return code if folded is None else folded.code


def simplified_condition(code: str | ir.Operand, ints: AbstractSet[str] = frozenset()) -> ir.Pipe | None:
    """The condition `code` (text or an IR operand) of an `if` with fewer function calls, as
    the pipeline the `if` holds; None where it is text the IR reader does not read (written as
    it is)."""
    node, reads = _condition(code) if isinstance(code, str) else _node_condition(ir.operand_pipe(code))
    if node is None:
        return None
    return _simplified(node, frozenset(ints) & reads if ints else frozenset())


@functools.lru_cache(maxsize=8192)
def _condition(code: str) -> tuple[ir.Operand | None, frozenset[str]]:
    """`condition_node` of `code` and what it reads, once per text (a `GoCall`'s call is what
    reading its text gives)."""
    node = condition_node(code)
    return node, frozenset() if node is None else node.reads()


def condition_node(code: str) -> ir.Operand | None:
    """The condition `code` as IR: the call a `GoCall` (a `GoField`) carries, other text read;
    None for a pipeline (`$x | len`) or code the IR reader does not read."""
    known = None if isinstance(code, (GoCall, GoField)) else expression_of(code)
    if isinstance(code, (GoCall, GoField)):
        node = operand_node(code)
    elif known is not None and not isinstance(known, ir.Command):
        node = known  # (an operand made as IR, a variable, a constant: nothing to read)
    else:
        try:
            action = tree.expression(code)
        except Unread:
            return None
        if not isinstance(action, ir.Action) or action.pipe.decl or len(action.pipe.cmds) != 1:
            return None
        args = action.pipe.cmds[0].args
        node = args[0] if len(args) == 1 else action.pipe
    if node is None or any(isinstance(n, ir.Pipe) and (n.decl or len(n.cmds) != 1) for n in node.walk()):
        return None
    return node


def _node_condition(pipe: ir.Pipe) -> tuple[ir.Operand | None, frozenset[str]]:
    """`_condition` of a condition given as IR."""
    if pipe.decl or len(pipe.cmds) != 1:
        return None, frozenset()
    args = pipe.cmds[0].args
    if len(args) == 1 and type(args[0]) is ir.Variable:  # (the usual `if $x`: nothing inside it)
        return args[0], frozenset((args[0].name,))
    node = args[0] if len(args) == 1 else pipe
    if any(isinstance(n, ir.Pipe) and (n.decl or len(n.cmds) != 1) for n in node.walk()):
        return None, frozenset()
    return node, node.reads()


@functools.lru_cache(maxsize=4096)
def _simplified(node: ir.Operand, ints: frozenset[str]) -> ir.Pipe:
    """The folded condition as the pipeline an `if` holds (no parentheses around it)."""
    folded = fold(node, truth=True, ints=ints)
    return ir.Pipe((folded.cmds[0],)) if isinstance(folded, ir.Pipe) else ir.operand_pipe(folded)


def invert_negated_ifs(top: list[tree.Node]) -> None:
    """Every `{{ if not X }}A{{ end }}` (X a variable or field chain) in the tree as
    `{{ if X }}{{ else }}A`, and `{{ if not X }}A{{ else }}B` as `{{ if X }}B{{ else }}A`: the
    same branch runs (`not` and `if` judge truth alike) with no call. A chain with `else if` is
    left as it is."""
    bare_else = ir.Else()
    for block in tree.blocks(top):
        opening = block.node
        if not isinstance(opening, ir.Open) or opening.word != "if":
            continue
        negated = _negated_variable(opening.pipe)
        if negated is None or block.raw != ir.render(opening):
            continue  # (only the spaced `if` the translator writes)
        if len(block.branches) > 1 or any(b.raw != ir.render(bare_else) for b in block.branches):
            continue
        otherwise = block.branches[0].body if block.branches else []
        tree.rewrite(block, ir.Open("if", ir.operand_pipe(negated)))
        block.body, block.branches = otherwise, [tree.Branch(ir.render(bare_else), block.body, bare_else)]


def _negated_variable(pipe: ir.Pipe) -> ir.Variable | None:
    """X of `not X` or `(not X)`, X a variable or a field chain of one."""
    if pipe.decl or len(pipe.cmds) != 1:
        return None
    args = pipe.cmds[0].args
    if len(args) == 1 and isinstance(args[0], ir.Pipe):
        return _negated_variable(args[0])
    if len(args) == 2 and args[0] == ir.Identifier("not") and isinstance(args[1], ir.Variable):
        return args[1]
    return None


def call_args(node: ir.Operand, name: str | None = None) -> tuple[ir.Operand, ...] | None:
    """The operands of `node` where it is a call (of `name`, if given): the head first."""
    if not isinstance(node, ir.Pipe) or len(node.cmds) != 1:
        return None
    args = node.cmds[0].args
    if len(args) < 2 or (name is not None and args[0] != ir.Identifier(name)):
        return None
    return args


def _call(*args: ir.Operand) -> ir.Pipe:
    return ir.Pipe((ir.Command(args),))


TRUE, FALSE, ZERO = ir.Bool(True), ir.Bool(False), ir.Number("0")


def fold(node: ir.Operand, truth: bool, ints: frozenset[str] = frozenset()) -> ir.Operand:
    """`node` with the same value, or with the same truth value where only that is used (`truth`)."""
    if not isinstance(node, ir.Pipe):
        return node
    items = node.cmds[0].args
    if len(items) == 1:
        return fold(items[0], truth, ints)
    head, args = items[0], items[1:]
    name = head.name if isinstance(head, ir.Identifier) else None
    if truth and name in {"eq", "ne"} and len(args) == 2 and _int_variable(args[0], ints) and args[1] == ZERO:
        return _call(ir.Identifier("not"), args[0]) if name == "eq" else args[0]  # an int is true when it is not 0
    if name == "not" and len(args) == 1:
        operand = fold(args[0], truth=True, ints=ints)
        if isinstance(operand, ir.Bool):
            return ir.Bool(not operand.value)
        inner = call_args(operand)
        if truth and call_args(operand, "not"):
            return inner[1]  # type: ignore[index]
        if call_args(operand, "eq") and len(inner) == 3:  # type: ignore[arg-type]
            return _call(ir.Identifier("ne"), *inner[1:])  # type: ignore[index]
        if call_args(operand, "ne"):
            return _call(ir.Identifier("eq"), *inner[1:])  # type: ignore[index]
        return _call(head, operand)
    if name in {"and", "or"}:
        flat: list[ir.Operand] = []
        for arg in args:
            folded = fold(arg, truth, ints)
            same = call_args(folded, name)
            flat.extend(same[1:] if same else [folded])
        if truth:
            neutral = TRUE if name == "and" else FALSE
            flat = [a for a in flat if a != neutral] or [neutral]
        if name == "or":
            flat = merge_equalities(flat)
        return flat[0] if len(flat) == 1 else _call(head, *flat)
    return _call(head, *(fold(arg, truth=False, ints=ints) for arg in args))


def _int_variable(node: ir.Operand, ints: frozenset[str]) -> bool:
    return isinstance(node, ir.Variable) and not node.fields and node.name in ints


def merge_equalities(operands: list[ir.Operand]) -> list[ir.Operand]:
    """Neighbouring `eq X c...` with the same X and constant c's, as one `eq X c c'...` (Go's
    `eq` is true when its first argument equals any of the others, tried in order)."""
    merged: list[ir.Operand] = []
    for operand in operands:
        previous = constant_eq(merged[-1]) if merged else None
        current = constant_eq(operand)
        if previous is not None and current is not None and previous[1] == current[1]:
            merged[-1] = _call(*previous, *current[2:])
        else:
            merged.append(operand)
    return merged


def constant_eq(node: ir.Operand) -> tuple[ir.Operand, ...] | None:
    """The operands of `eq X c...` where every c is a constant (a string, number or bool literal)."""
    args = call_args(node, "eq")
    if args is None or len(args) < 3 or not all(_literal(arg) for arg in args[2:]):
        return None
    return args


def _literal(node: ir.Operand) -> bool:
    if isinstance(node, ir.Number):
        return node.text[:1].isdigit() or (node.text[:1] == "-" and node.text[1:2].isdigit())
    return isinstance(node, (ir.String, ir.Bool))
