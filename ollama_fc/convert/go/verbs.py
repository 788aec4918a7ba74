"""The typed verbs of every emitter of Go template code: what an action is said as a verb
(`end()`, `declare(var, value)`, `print_(value)`), each an IR action (`go/ir.py`) the emitter
writes (`write`; an emitter that keeps text renders it).

A value given as text instead of IR is the escape hatch while the translator's values are
text: `tests/test_convert_ir.py` counts the actions still written as whole text, which may
only fall.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from . import ir
from .calls import expression_of

#: what the emitter's `action` gives back (the piece written, or nothing)
W = TypeVar("W", covariant=True)


class Verbs(Generic[W]):
    """`end`, `else_`, `break_`, `continue_`, `declare`, `assign` and `write` (an action as
    IR) on an emitter's `action(code)`."""

    def action(self, code: str) -> W:
        raise NotImplementedError

    def write(self, node: ir.ActionNode) -> W:
        """Write the action `node`."""
        return self.action(node.code)

    def end(self) -> W:
        return self.write(END)

    def else_(self) -> W:
        return self.write(ELSE)

    def break_(self) -> W:
        return self.write(BREAK)

    def continue_(self) -> W:
        return self.write(CONTINUE)

    def declare(self, var: str, code: str | ir.Expression) -> W:
        """`var := code`: declare the Go variable `var` holding the expression `code` (see
        `ir.pipe_of`; text `calls.expression_of` does not know is written as it is)."""
        node = expression_of(code) if isinstance(code, str) else code
        if node is None:
            return self.action(f"{var} := {code}")
        return self.write(ir.Action(ir.pipe_of(node, (var,))))

    def assign(self, var: str, code: str | ir.Expression) -> W:
        """`var = code`: assign the expression `code` to the Go variable `var`."""
        node = expression_of(code) if isinstance(code, str) else code
        if node is None:
            return self.action(f"{var} = {code}")
        return self.write(ir.Action(ir.pipe_of(node, (var,), is_assign=True)))

    def range_(self, code: str | ir.Expression, *names: str) -> W:
        """`range names := code` (`range code` without names): a loop over `code`."""
        node = expression_of(code) if isinstance(code, str) else code
        if node is None:
            return self.opening("range", f"range {', '.join(names)} := {code}" if names else f"range {code}")
        return self.write(ir.Open("range", ir.pipe_of(node, names)))

    def opening(self, word: str, code: str) -> W:
        """The action `code`, written as text, opening a `word` block (`range`): the emitter is
        told the word rather than reading it back from the text."""
        return self.action(code)

    def print_(self, code: ir.Expression) -> W:
        """`{{ code }}`: print the expression `code`."""
        return self.write(ir.Action(ir.pipe_of(code)))


END, ELSE, BREAK, CONTINUE = ir.End(), ir.Else(), ir.Break(), ir.Continue()
