"""Comparisons that read their operands' syntax: where the filter under a comparison shows a
cheaper test with the same truth than computing the filtered value and comparing it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jinja2 import nodes

from ..go import ir
from ..go.calls import GoCall, go_and, go_eq, go_len, go_not, go_printf
from ..go.textops import go_string
from .emit import Emit
from .filters import Lowering
from .logic import Logic
from .values import (
    ANY,
    ANYOF,
    ARGS,
    BOOL,
    CALLS,
    CONTENT,
    LIST,
    MSGS,
    PARTS,
    PROPS,
    STR,
    TOOLS,
    Value,
    ValueOf,
    const,
    keyword_arguments,
)

#: filters that change only the case of str() of their operand (see string_only_comparison)
CASE_ONLY = {"upper", "lower", "string"}
#: how str() of a number, list or dict starts, or all of None, True and False, in any case
NON_STRING_STR = re.compile(r"[-+.\d\[{]|(none|true|false)$", re.IGNORECASE)
#: kinds whose Python len() is nonzero exactly when Go's truth of them holds (a string's
#: bytes, a slice's or a map's elements; an ordered map's truth is its `.Len`, see `truth_of`)
COUNTED_BY_TRUTH = {STR, CONTENT, MSGS, CALLS, TOOLS, PARTS, LIST, ANYOF, ARGS, PROPS}
#: `len(x) OP n` that holds exactly when x is not empty, and when it is empty
NOT_EMPTY = {("gt", 0), ("ne", 0), ("gteq", 1)}
EMPTY = {("eq", 0), ("lteq", 0), ("lt", 1)}
#: the operator seen from the other side (`0 < n` is `n > 0`)
MIRRORED = {"gt": "lt", "lt": "gt", "gteq": "lteq", "lteq": "gteq", "eq": "eq", "ne": "ne"}


@dataclass(eq=False)
class Comparisons:
    """Comparisons of a filtered value with a constant, tested without the filter where the
    constant makes its result certain from less."""

    emit: Emit
    logic: Logic
    lowering: Lowering

    def length_comparison(self, node: nodes.Compare, value_of: ValueOf) -> Value | None:
        """`x | length > 0` (or `!= 0`, `>= 1`, `== 0`, `< 1`, `<= 0`, either way round) of a
        string, list or mapping: x's truth, or its negation. A string's length counts its
        characters (five calls) and a list's is a call; the truth of either is a variable read.
        None where the comparison is not of that shape; the fallback compares the length."""
        if len(node.ops) != 1:
            return None
        counted, op, bound = node.expr, node.ops[0].op, node.ops[0].expr
        if isinstance(counted, nodes.Const):
            counted, bound, op = bound, counted, MIRRORED.get(op, op)
        if not (
            isinstance(counted, nodes.Filter)
            and counted.name in {"length", "count"}
            and counted.node is not None
            and not (counted.args or counted.kwargs or counted.dyn_args or counted.dyn_kwargs)
            and isinstance(bound, nodes.Const)
            and type(bound.value) is int
            and (op, bound.value) in NOT_EMPTY | EMPTY
        ):
            return None
        operand = value_of(counted.node)
        if operand.is_const or operand.kind not in COUNTED_BY_TRUTH:
            size = self.lowering.filter_value(counted, operand, value_of)
            return self.logic.compare(op, size, value_of(bound), node)
        truth = self.logic.truth_of(operand)
        return Value(truth if (op, bound.value) in NOT_EMPTY else go_not(truth), BOOL)

    def string_only_comparison(self, node: nodes.Compare, value_of: ValueOf) -> Value | None:
        """`x | upper == 'STRING'` of an untyped x: no number, None, bool, list or dict prints
        as such a constant, in any case, so only a string can pass. Anything else is not
        written out as its str() (a repr written inline, about 2 KB of template each) but
        fails the test; a string of another length fails before its case is changed. None
        where the comparison is not of that shape."""
        if len(node.ops) != 1 or node.ops[0].op not in {"eq", "ne"}:
            return None
        left, right = node.expr, node.ops[0].expr
        if isinstance(left, nodes.Const):
            left, right = right, left  # (== and != are symmetric, and constants do nothing)
        if not (isinstance(right, nodes.Const) and isinstance(right.value, str) and right.value):
            return None
        if NON_STRING_STR.match(right.value):
            return None
        chain: list[nodes.Filter] = []
        while isinstance(left, nodes.Filter) and left.name in CASE_ONLY and not keyword_arguments(left):
            if left.args or left.dyn_args or left.dyn_kwargs or left.node is None:
                return None
            chain.append(left)
            left = left.node
        if not chain:
            return None
        operand = value_of(left)
        if operand.kind != ANY or operand.is_const:
            for step in reversed(chain):
                operand = self.lowering.filter_value(step, operand, value_of)
            return self.logic.compare(node.ops[0].op, operand, const(right.value), node)
        text = self.emit.temp()
        self.emit.declare(text, operand.expr)
        case = next((step.name for step in chain if step.name != "string"), None)  # (the outermost)
        if case is not None:
            self.emit.warn(chain[0], f"|{case}", "changes the case of ASCII letters only")
        test = self.case_folded_equals(text, right.value, case)
        return Value(test if node.ops[0].op == "eq" else go_not(test), BOOL)

    @staticmethod
    def case_folded_equals(text: str, constant: str, case: str | None) -> str:
        """Whether the string in Go variable `text` (which may hold any value) changed to the
        ASCII `case` (`upper`, `lower`, or None) equals `constant`: a string of as many bytes
        whose bytes are the constant's, an ASCII letter in either case. No case-change table or
        loop: a string of another length or first byte fails in three calls. A constant no
        such change can give (an ASCII lower-case letter after `upper`) fails at once."""
        wrong_case = {"upper": str.islower, "lower": str.isupper}.get(case or "")
        if wrong_case is not None and any(char.isascii() and wrong_case(char) for char in constant):
            return "false"
        data = constant.encode()
        tests = [go_eq(go_printf("%T", text), ir.String.of("string")), go_eq(go_len(text), ir.Number.of(len(data)))]
        for i, byte in enumerate(data):
            char = chr(byte)
            spellings = [char, char.swapcase()] if case and char.isascii() and char.isalpha() else [char]
            literals = [go_string(c) if byte < 0x80 else f'"\\x{byte:02x}"' for c in spellings]
            tests.append(go_eq(GoCall("slice", text, ir.Number.of(i), ir.Number.of(i + 1)), *literals))
        return go_and(*tests)
