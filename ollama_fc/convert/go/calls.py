"""A Go function call as the translator composes it: text, and the call it is.

A condition is built piece by piece (`(not X)`, `(and A B)`, `(eq X "a")`) and then folded for
the `if` that tests it (see `ops/conditions.py`). A `GoCall` is the text every consumer reads,
unchanged, and also carries its function and arguments, so the fold reads the call it was given
instead of parsing the text back.
"""

from __future__ import annotations


class GoCall(str):
    """`(head arg...)`: a Go function call written as an operand, or, made `bare`, the whole
    condition of an `if` (`head arg...`). An argument is a `GoCall` or the operand's text."""

    head: str
    args: tuple[str, ...]

    def __new__(cls, head: str, *args: str, parenthesised: bool = True) -> GoCall:
        text = " ".join((head, *args))
        call = super().__new__(cls, f"({text})" if parenthesised else text)
        call.head, call.args = head, args
        return call

    def bare(self) -> GoCall:
        """The call without its parentheses, as an `if` condition is written."""
        return GoCall(self.head, *self.args, parenthesised=False)


class GoField(str):
    """`(head arg...).Field`: a field of a call's result, the text and the call it reads."""

    call: GoCall
    chain: str

    def __new__(cls, call: GoCall, chain: str) -> GoField:
        field = super().__new__(cls, call + chain)
        field.call, field.chain = call, chain
        return field


def go_field(operand: str, chain: str) -> str:
    """`operand` then the field `chain` (`.Role`), keeping the call a composed operand is."""
    if isinstance(operand, GoField):
        return GoField(operand.call, operand.chain + chain)
    if isinstance(operand, GoCall) and operand.startswith("("):
        return GoField(operand, chain)
    return operand + chain


def go_not(operand: str) -> GoCall:
    return GoCall("not", operand)


def go_and(*operands: str) -> GoCall:
    return GoCall("and", *operands)


def go_or(*operands: str) -> GoCall:
    return GoCall("or", *operands)


def go_eq(operand: str, *others: str) -> GoCall:
    """True when `operand` equals any of `others` (Go's `eq` takes several)."""
    return GoCall("eq", operand, *others)


def go_printf(verbs: str, *operands: str) -> GoCall:
    """`(printf "verbs" operand...)`; `verbs` holds no quote or backslash."""
    return GoCall("printf", f'"{verbs}"', *operands)


def go_len(operand: str) -> GoCall:
    return GoCall("len", operand)


def starts_with(text: str, prefix: str, size: str) -> GoCall:
    """The `if` condition: does the string in Go variable `text` start with the string
    `prefix`, `size` bytes long (`text` may be shorter)?"""
    return go_and(GoCall("ge", go_len(text), size), go_eq(GoCall("slice", text, "0", size), prefix))
