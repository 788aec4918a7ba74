"""A Go function call as the translator composes it: text, and the call it is.

A condition is built piece by piece (`(not X)`, `(and A B)`, `(eq X "a")`) and then folded for
the `if` that tests it (see `ops/conditions.py`). A `GoCall` is the text every consumer reads,
unchanged, and also carries its function and arguments, and the IR of the call (`node`, a
`go/ir.py` pipeline), so the fold works on the call it was given; an argument given as text is
read into IR (`operand_nodes`). An operand the translator makes as IR (a fresh variable, a
value made as IR, a field of one) is a `GoOperand`: its text, carrying the node it renders, so
whatever composes it as text still hands on the node and nothing reads it back.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Union

from . import ir, tree
from .irread import Unread


class GoCall(str):
    """`(head arg...)`: a Go function call written as an operand, or, made `bare`, the whole
    condition of an `if` (`head arg...`). An argument is a `GoCall`, an operand as IR (kept as
    a `GoOperand`) or the operand's text."""

    head: str
    args: tuple[str, ...]

    def __new__(cls, head: str, *args: str | ir.Operand, parenthesised: bool = True) -> GoCall:
        texts = tuple(arg if isinstance(arg, str) else GoOperand(arg) for arg in args)
        text = " ".join((head, *texts))
        call = super().__new__(cls, f"({text})" if parenthesised else text)
        call.head, call.args = head, texts
        return call

    def bare(self) -> GoCall:
        """The call without its parentheses, as an `if` condition is written."""
        return GoCall(self.head, *self.args, parenthesised=False)

    @property
    def node(self) -> ir.Pipe | None:
        """The call as IR (a pipeline of one command), None where an argument's text is not read
        (see `operand_nodes`)."""
        try:
            return self.__dict__["_node"]  # type: ignore[no-any-return]
        except KeyError:
            pass
        items: list[ir.Operand] = [ir.Identifier(self.head)] if self.head.isidentifier() else []
        for arg in self.args if items else (self.head, *self.args):
            operands = operand_nodes(arg)
            if operands is None:
                items = []
                break
            items.extend(operands)
        node = ir.Pipe((ir.Command(tuple(items)),)) if items else None
        self.__dict__["_node"] = node
        return node


class GoOperand(str):
    """An operand's Go text written from its IR: the text, and the node (`node`) it renders, so
    a call or an action composed of it takes the node instead of reading the text back."""

    node: ir.Operand

    def __new__(cls, node: ir.Operand) -> GoOperand:
        operand = super().__new__(cls, ir.operand_code(node))
        operand.node = node
        return operand

    def __reduce__(self) -> tuple[type[GoOperand], tuple[ir.Operand]]:
        return GoOperand, (self.node,)  # (copied as made: from its node)


@functools.lru_cache(maxsize=8192)
def go_literal(text: str) -> GoOperand:
    """A Go interpreted string literal for `text` (`ir.go_string`), carrying its node."""
    return GoOperand(ir.String.of(text))


def go_variable(name: str) -> GoOperand:
    """The Go variable `name` (`$_3`) as an operand's text carrying its node."""
    return GoOperand(ir.Variable(name))


class GoField(str):
    """`(head arg...).Field`: a field of a call's result, the text and the call it reads."""

    call: GoCall
    chain: str

    def __new__(cls, call: GoCall, chain: str) -> GoField:
        field = super().__new__(cls, call + chain)
        field.call, field.chain = call, chain
        return field


def operand_nodes(text: str) -> tuple[ir.Operand, ...] | None:
    """What the operand `text` adds to a call's arguments, as IR: a `GoCall` its call, a
    `GoField` a field of it, other text read (a command's text, `len $x`, adds its operands
    each); None for a pipeline, or text the IR reader does not read."""
    if isinstance(text, GoOperand):
        return (text.node,)
    if isinstance(text, (GoCall, GoField)):
        node = operand_node(text)
        return None if node is None else (node,)
    known = expression_of(text)
    if known is not None and not isinstance(known, ir.Command):
        return (known,)
    try:
        action = tree.expression(text)
    except Unread:
        return None
    if not isinstance(action, ir.Action) or action.pipe.decl or len(action.pipe.cmds) != 1:
        return None
    return action.pipe.cmds[0].args


def operand_node(code: GoCall | GoField) -> ir.Operand | None:
    """A composed operand's IR: the call a `GoCall` is, the field of its call a `GoField` reads."""
    if isinstance(code, GoField):
        call = code.call.node
        if call is None or not code.call.startswith("("):
            return None
        return ir.Chain(call, tuple(code.chain[1:].split(".")))
    return code.node


#: the converter's own spellings of the constants it writes most, as IR (a table: no text is read)
CONSTANTS: dict[str, ir.Operand] = {
    "0": ir.Number("0"),
    "1": ir.Number("1"),
    "-1": ir.Number("-1"),
    "true": ir.Bool(True),
    "false": ir.Bool(False),
    '""': ir.String('""'),
}


def expression_of(code: str) -> ir.Expression | None:
    """The IR `code` is known to be without reading its text: a composed call's (a bare one's
    command), a constant's (`CONSTANTS`), a variable's (`$_3`, `$content`); None for any other
    text."""
    if isinstance(code, GoCall):
        node = code.node
        if node is None:
            return None
        return node if code.startswith("(") else node.cmds[0]
    if isinstance(code, GoOperand):
        return code.node
    if isinstance(code, GoField):
        return operand_node(code)
    constant = CONSTANTS.get(code)
    if constant is not None:
        return constant
    if code[:1] == "$" and (code[1:].isidentifier() or code == "$"):
        return ir.Variable(code)
    return None


def operand_of(code: str | ir.Operand) -> ir.Operand:
    """The operand `code` as IR (see `read_operand`); `Unread` where it is not one."""
    node = read_operand(code)
    if node is None:
        raise Unread(code)
    return node


def read_operand(code: str | ir.Operand) -> ir.Operand | None:
    """The operand `code` as IR: IR as it is, a composed call the call it carries, a variable's
    name (`$_3`, what `temp` gives) that variable, other text read (`tree.operand`); None where
    it is not one operand."""
    if not isinstance(code, str):
        return code
    if isinstance(code, GoOperand):
        return code.node
    if isinstance(code, (GoCall, GoField)):
        return operand_node(code)
    known = expression_of(code)
    if isinstance(known, ir.Command):
        return None
    return known if known is not None else tree.operand(code)


def go_field(operand: str, chain: str) -> str:
    """`operand` then the field `chain` (`.Role`), keeping the call a composed operand is."""
    if isinstance(operand, GoOperand) and isinstance(operand.node, (ir.Variable, ir.Field, ir.Chain)):
        node = operand.node
        return GoOperand(replace(node, fields=node.fields + tuple(chain[1:].split("."))))
    if isinstance(operand, GoField):
        return GoField(operand.call, operand.chain + chain)
    if isinstance(operand, GoCall) and operand.startswith("("):
        return GoField(operand, chain)
    return operand + chain


#: an argument of a composed call: its text, or the operand as IR
Arg = Union[str, ir.Operand]


def go_not(operand: Arg) -> GoCall:
    return GoCall("not", operand)


def go_and(*operands: Arg) -> GoCall:
    return GoCall("and", *operands)


def go_or(*operands: Arg) -> GoCall:
    return GoCall("or", *operands)


def go_eq(operand: Arg, *others: Arg) -> GoCall:
    """True when `operand` equals any of `others` (Go's `eq` takes several)."""
    return GoCall("eq", operand, *others)


def go_printf(verbs: str, *operands: Arg) -> GoCall:
    """`(printf "verbs" operand...)`; `verbs` holds no quote or backslash."""
    return GoCall("printf", ir.String.of(verbs), *operands)


def go_len(operand: Arg) -> GoCall:
    return GoCall("len", operand)


def starts_with(text: str, prefix: str, size: str) -> GoCall:
    """The `if` condition: does the string in Go variable `text` start with the string
    `prefix`, `size` bytes long (`text` may be shorter)?"""
    return go_and(GoCall("ge", go_len(text), size), go_eq(GoCall("slice", text, "0", size), prefix))
