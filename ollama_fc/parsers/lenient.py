"""One lenient reader for the JSON-ish text models print as tool-call arguments.

Models write JSON, JSON5 (comments, trailing commas, unquoted keys), Python literals (True, None,
single quotes), raw newlines inside strings, and sometimes stop before the closing brackets. Everything here is
read as data: `json.loads` first, then Python's parser plus a walk over literal nodes only.
Nothing is ever evaluated.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import warnings
from typing import Any

from .scan_memo import ScanMemo

OPENERS = {"{": "}", "[": "]", "(": ")"}
CLOSERS = {"}", "]", ")"}
QUOTES = {'"', "'"}

# Keeps Python's parser far from its recursion limits on hostile input.
MAX_DEPTH = 64
# Python refuses to turn longer digit strings into an int; such a number is kept as its text.
MAX_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300


class NotALiteral(ValueError):
    """The text is not a literal value, even read leniently."""


# A quote opens a string only where a value or key can start; so the apostrophe in "it's"
# inside a bracketed aside is not taken for the start of a string.
VALUE_STARTS = frozenset("[{(:,=")


_PLAIN_STOPS = re.compile(r"[\[\]{}()\"']")
_REPAIR_STOPS = re.compile(r"[\[\]{}()\"'/]")
_REPAIR_QUOTE_STOPS = {'"': re.compile(r'[\\"\r\n]'), "'": re.compile(r"[\\'\r\n]")}
_QUOTE_STOPS = {'"': re.compile(r'[\\"]'), "'": re.compile(r"[\\']")}
SCAN_FAILED = -1


class BracketTracker:
    """Incremental bracket and string state over a text fed one character at a time (`feed`),
    or a stretch at a time (`scan`, which jumps from one bracket or quote to the next)."""

    __slots__ = ("escaped", "inherited", "last", "memo", "opens", "origin", "quote", "record", "stack")

    def __init__(self, memo: ScanMemo | None = None, origin: int = 0) -> None:
        self.stack: list[str] = []
        self.opens: list[int] = []
        self.quote = ""
        self.escaped = False
        self.last = ""
        # With a memo (run items, see scan_memo): the stops are recorded as stream offsets from
        # `origin`, and a scan that meets a kept one in step ends there, `inherited` deeper.
        self.memo = memo
        self.origin = origin
        self.record: list[tuple[int, str, int]] | None = [] if memo is not None else None
        self.inherited = 0

    @property
    def depth(self) -> int:
        """How many brackets are open."""
        return len(self.stack) + self.inherited

    def scan(self, data: str, index: int, offset: int) -> int | None:
        """Feed `data[index:]`, whose first character is at position `offset` of the tracked
        text. Return the position just past the bracket that empties the stack, SCAN_FAILED at
        a closer that was not opened, or None when the data ends first. `opens` keeps the
        positions of the brackets still open."""
        length = len(data)
        position = index
        while position < length:
            if self.quote:
                if self.escaped:
                    self.escaped = False
                    position += 1
                    continue
                found = _QUOTE_STOPS[self.quote].search(data, position)
                if found is None:
                    return None
                stop = found.start()
                if data[stop] == "\\":
                    self.escaped = True
                else:
                    self.quote = ""
                    self.last = data[stop]
                    if self.memo is not None and self._stepped(offset + stop - index, offset + length - index):
                        return None
                position = stop + 1
                continue
            found = _PLAIN_STOPS.search(data, position)
            if found is None:
                break
            stop = found.start()
            char = data[stop]
            if char in QUOTES:
                back = stop - 1
                while back >= index and data[back].isspace():
                    back -= 1
                if (data[back] if back >= index else self.last) in VALUE_STARTS:
                    self.quote = char
            elif char in OPENERS:
                self.stack.append(OPENERS[char])
                self.opens.append(offset + stop - index)
            else:
                if not self.stack or self.stack[-1] != char:
                    return SCAN_FAILED
                self.stack.pop()
                self.opens.pop()
                if not self.stack:
                    self.last = char
                    return offset + stop - index + 1
            self.last = char
            if self.memo is not None and self._stepped(offset + stop - index, offset + length - index):
                return None
            position = stop + 1
        if not self.quote:
            back = length - 1
            while back >= index and data[back].isspace():
                back -= 1
            if back >= index:
                self.last = data[back]
        return None

    def _stepped(self, at: int, end: int) -> bool:
        """Record the stop just handled (at tracked position `at`, the text ending at `end`);
        True when a kept scan shows how this one ends, which is then its state."""
        assert self.memo is not None
        position = self.origin + at
        shortcut = self.memo.meet(position, self.quote, self.origin + end) if self.memo.kept else None
        if shortcut is None:
            if self.record is not None:
                self.record.append((position, self.quote, len(self.stack)))
            return False
        self.inherited = shortcut.inherited
        self.quote, self.last = shortcut.quote, shortcut.last
        self.record = None  # it did not read the rest: not a scan to keep
        return True

    def feed(self, char: str) -> bool:
        """Advance by one character; False if it closes a bracket that is not open."""
        if self.quote:
            if self.escaped:
                self.escaped = False
            elif char == "\\":
                self.escaped = True
            elif char == self.quote:
                self.quote = ""
                self.last = char
            return True
        if char in QUOTES and self.last in VALUE_STARTS:
            self.quote = char
        elif char in OPENERS:
            self.stack.append(OPENERS[char])
        elif char in CLOSERS:
            if not self.stack or self.stack[-1] != char:
                return False
            self.stack.pop()
        if not char.isspace():
            self.last = char
        return True


def scan_balanced(text: str, start: int) -> int | None:
    """Index just past the bracket that closes `text[start]`, or None if the text ends first
    (or a bracket closes that was not opened). Brackets inside quoted strings do not count."""
    end = BracketTracker().scan(text, start, start)
    return None if end is None or end == SCAN_FAILED else end


def repair(text: str) -> str:
    """Make a sloppy literal parseable by Python.

    Raw newlines inside strings become escapes, `//` and `/* */` comments go; a dangling comma
    and unclosed brackets at the end are closed. Text cut inside a string, inside a number, right
    after a key or right after an opening bracket is not repaired (NotALiteral): the value the
    model meant is unknown, and a guess ("Par" for "Paris", 1 for 15, `{}` for `{"unit": "C"}`)
    must never reach a tool.
    """
    out: list[str] = []
    tracker = BracketTracker()
    index = 0
    length = len(text)
    while index < length:  # from one bracket, quote, slash or (in a string) newline to the next
        if tracker.quote:
            if tracker.escaped:
                tracker.escaped = False
                out.append(text[index])
                index += 1
                continue
            found = _REPAIR_QUOTE_STOPS[tracker.quote].search(text, index)
            stop = length if found is None else found.start()
            out.append(text[index:stop])
            if found is None:
                break
            char = text[stop]
            if char in "\r\n":
                out.append("\\n" if char == "\n" else "\\r")
            else:
                tracker.feed(char)
                out.append(char)
            index = stop + 1
            continue
        found = _REPAIR_STOPS.search(text, index)
        stop = length if found is None else found.start()
        if stop > index:
            plain = text[index:stop]
            out.append(plain)
            tracker.last = plain.rstrip()[-1:] or tracker.last
        if found is None:
            break
        if text.startswith("//", stop):
            newline = text.find("\n", stop)
            index = length if newline < 0 else newline
        elif text.startswith("/*", stop):
            close = text.find("*/", stop + 2)
            index = length if close < 0 else close + 2
            out.append(" ")
        else:
            tracker.feed(text[stop])
            out.append(text[stop])
            index = stop + 1
    if tracker.quote:
        raise NotALiteral("the text ends inside a string")
    repaired = "".join(out).rstrip()
    if tracker.stack:
        repaired = repaired.rstrip(",").rstrip()
        if repaired.endswith((":", "=")):
            raise NotALiteral("the text ends before a value")
        if repaired[-1:] in OPENERS:
            raise NotALiteral("the text ends inside a value it just opened")
        if repaired[-1:].isdigit() or repaired.endswith("."):
            raise NotALiteral("the text ends inside a number")
    return repaired + "".join(reversed(tracker.stack))


def _read_int(digits: str) -> int | str:
    return int(digits) if len(digits) <= MAX_DIGITS else digits


def read_value(text: str) -> Any:
    """Read one JSON or Python literal leniently; raise NotALiteral when it is not one."""
    text = text.strip()
    if not text:
        raise NotALiteral("empty text")
    try:
        return json.loads(text, strict=False, parse_int=_read_int)
    except (ValueError, RecursionError):
        pass
    try:  # most model text needs no repair: skip the character walk then
        return literal_from_source(text)
    except NotALiteral:
        return literal_from_source(repair(text))


def literal_from_source(source: str) -> Any:
    """Parse Python source text and read it as a literal (see `literal_from_node`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotALiteral(f"not a literal: {exc}") from None
    return literal_from_node(tree.body)


_NAMED_CONSTANTS: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "true": True,
    "false": False,
    "null": None,
}


def literal_from_node(node: ast.AST, depth: int = 0) -> Any:
    """The JSON-compatible value of a literal node: strings, numbers, booleans, None, lists, dicts.

    Lenient where the intent is clear: `true/false/null` names, tuples and sets as lists, a set
    holding one dict (from a doubled `{{...}}` brace) as that dict, bare-name dict keys as strings.
    """
    if depth > MAX_DEPTH:
        raise NotALiteral("nested too deeply")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float, bool)) or node.value is None:
            return node.value
        raise NotALiteral(f"unsupported constant {node.value!r}")
    if isinstance(node, ast.Name) and node.id in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal_from_node(node.operand, depth + 1)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        raise NotALiteral("sign before a non-number")
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:
                raise NotALiteral("dict unpacking is not a literal")
            if isinstance(key_node, ast.Name) and key_node.id not in _NAMED_CONSTANTS:
                key: Any = key_node.id
            else:
                key = literal_from_node(key_node, depth + 1)
            if not isinstance(key, str):
                key = json.dumps(key)
            result[key] = literal_from_node(value_node, depth + 1)
        return result
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal_from_node(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Set):
        if len(node.elts) == 1 and isinstance(node.elts[0], ast.Dict):
            return literal_from_node(node.elts[0], depth + 1)
        return [literal_from_node(item, depth + 1) for item in node.elts]
    raise NotALiteral(f"{type(node).__name__} is not a literal")


def read_values(text: str) -> list[Any]:
    """Read a run of bracketed values separated by whitespace, `;` or `,` (e.g. `{..} {..}`).

    The last value may be unclosed. Raise NotALiteral if anything else is in the text.
    """
    values, end = read_values_prefix(text)
    if text[end:].strip():
        raise NotALiteral(f"unexpected text {text[end : end + 20]!r}")
    return values


def read_values_prefix(text: str) -> tuple[list[Any], int]:
    """The run of bracketed values at the start of `text` and where it ends (prose may follow).

    Raise NotALiteral if the text does not start with a value, or a value in it is not one.
    """
    values: list[Any] = []
    index = 0
    end = 0
    length = len(text)
    while True:
        while index < length and (text[index].isspace() or text[index] in ";,"):
            index += 1
        if index >= length or text[index] not in "{[":
            break
        close = scan_balanced(text, index)
        if close is None:
            close = length
        values.append(read_value(text[index:close]))
        index = end = close
    if not values:
        raise NotALiteral("no value")
    return values, end


def strip_fence(text: str) -> str:
    """The inside of a Markdown code fence (```json ... ```), or the text unchanged."""
    stripped = text.strip()
    if not stripped.startswith("```"):
        return stripped
    body = stripped[3:]
    if body.rstrip().endswith("```"):
        body = body.rstrip()[:-3]
    newline = body.find("\n")
    first = body if newline < 0 else body[:newline]
    if first.strip().isidentifier() or not first.strip():  # the block's language, if any
        body = "" if newline < 0 else body[newline + 1 :]
    return body.strip()
