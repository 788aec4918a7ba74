"""The body of a generated helper (a JSON writer, the repr) built as IR: actions as nodes
between pieces of literal text, so nothing of a helper is written as text and read back.
Small constructors for the actions helpers are made of, and `Body`, which joins literal text
and keeps it text where Go reads it as text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Union

from . import ir
from .calls import GoCall, expression_of
from .verbs import Verbs

#: a piece of a generated helper: literal text (never an action), or an action
Item = Union[str, ir.ActionNode]
Items = tuple[Item, ...]

DOT, EMPTY, ZERO, ONE = ir.Dot(), ir.String('""'), ir.Number("0"), ir.Number("1")
TRUE, FALSE = ir.Bool(True), ir.Bool(False)
SEP, TYPE, INDEX, KEY, VALUE, NAME, LAST = (ir.Variable(name) for name in ("$s", "$t", "$i", "$k", "$v", "$n", "$last"))


def print_(value: ir.Expression) -> ir.Action:
    return ir.Action(ir.pipe_of(value))


def declare(var: str, value: ir.Expression) -> ir.Action:
    return ir.Action(ir.pipe_of(value, (var,)))


def assign(var: str, value: ir.Expression) -> ir.Action:
    return ir.Action(ir.pipe_of(value, (var,), is_assign=True))


def if_(condition: ir.Expression) -> ir.Open:
    return ir.Open("if", _condition(condition))


def else_if(condition: ir.Expression) -> ir.Else:
    return ir.Else("if", _condition(condition))


def _condition(condition: ir.Expression) -> ir.Pipe:
    """An `if`'s pipeline: a command bare, an operand as it is (a call in parentheses)."""
    return ir.pipe_of(condition)


def range_(over: ir.Expression, *names: str) -> ir.Open:
    return ir.Open("range", ir.pipe_of(over, names))


def template(name: str, argument: ir.Operand) -> ir.Template:
    return ir.Template(name, ir.pipe_of(argument))


def composed(call: GoCall) -> ir.Expression:
    """The IR a call composed by textops carries (its arguments given as IR or variables)."""
    node = expression_of(call)
    assert node is not None, f"a helper's call without its IR: {call}"
    return node


def called(call: GoCall) -> ir.Pipe:
    """The IR of a call composed by textops, as an operand (written in parentheses)."""
    node = call.node
    assert node is not None, f"a helper's call without its IR: {call}"
    return node


def literal(data: str) -> list[Item]:
    """Literal output as a template holds it (a helper's, the translator's): text where Go reads
    it as text, an action printing what it could not (`{{`, or a `{` the next action would join)."""
    out: list[Item] = []
    for i, part in enumerate(data.split("{{")):
        if i:
            out.append(print_(ir.String.of("{{")))
        if part.endswith("{"):
            out += [part[:-1], print_(ir.String.of("{"))]
        elif part:
            out.append(part)
    return out


class Body:
    """Helper code built from literal text and actions (or pieces built before), adjacent texts
    written as one; with `shown`, the text as it is printed (HTML-escaped, for the `html` layout)."""

    def __init__(self, shown: Callable[[str], str] = str) -> None:
        self.items: list[Item] = []
        self.pending = ""
        self.shown = shown

    def text(self, data: str) -> Body:
        self.pending += self.shown(data)
        return self

    def act(self, *parts: ir.ActionNode | Items) -> Body:
        self.items += literal(self.pending)
        self.pending = ""
        for part in parts:
            if isinstance(part, tuple):
                self.items += part
            else:
                self.items.append(part)
        return self

    def done(self) -> Items:
        self.act()
        return tuple(self.items)


#: `json .`: Ollama's JSON of the value in scope
JSON_DOT = ir.command("json", DOT)


class Statements(Verbs[None]):
    """Collects the statements of a textops function as actions of a helper, as IR."""

    def __init__(self) -> None:
        self.nodes: list[ir.ActionNode] = []
        self.count = 0

    def temp(self) -> str:
        self.count += 1
        return f"$_{self.count}"

    def action(self, code: str) -> None:
        raise AssertionError(f"a helper's action written as text: {code}")

    def write(self, node: ir.ActionNode) -> None:
        self.nodes.append(node)

    def if_(self, condition: str | ir.Operand, keyword: str = "if") -> None:
        """An `if` written as composed, without the parentheses around a call (a helper's
        conditions are not folded)."""
        if isinstance(condition, GoCall):
            node: ir.Expression = composed(condition.bare())
        elif isinstance(condition, str):
            node = composed(GoCall(condition, parenthesised=False))
        else:
            node = condition
        pipe = node if isinstance(node, ir.Pipe) else ir.pipe_of(node)
        self.write(ir.Open("if", pipe) if keyword == "if" else ir.Else("if", pipe))
