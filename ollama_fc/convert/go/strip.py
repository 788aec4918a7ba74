"""Python's strip/lstrip/rstrip as two scans that stop at the first kept character.

Text from Ollama is usually stripped of nothing, so the cost is kept to a few calls for that
case: the first and last bytes are looked up in a table before any loop, and a loop runs only
over the stripped bytes at either end (see docs/RENDER_COST.md, "No scan of every byte where the ends decide").
"""

from __future__ import annotations

from collections.abc import Iterable

from . import ir
from .calls import GoCall, go_and, go_eq, go_len, go_not, go_or, go_printf, operand_of, read_operand
from .textops import PY_WHITESPACE, Emitter, go_string

#: trim scan table codes (see `scan_table`); 0, the byte that ends a scan, is falsy in an `if`
SCAN_SPACE, SCAN_INSIDE, SCAN_MAYBE = ord("s"), ord("c"), ord("m")


def scan_table(members: Iterable[str]) -> str:
    """The Go literal of the 256-byte table a trim scan looks each byte up in with `index`.

    0 (falsy, so `if` tests it without a call) where the scan stops: an ASCII character that is
    not a member, or the lead byte of multi-byte characters none of which is a member;
    SCAN_SPACE for an ASCII member, SCAN_MAYBE for a lead byte some multi-byte member starts
    with: only then is the character cut out and compared with the members. A UTF-8
    continuation byte is SCAN_INSIDE (the scan moves on to the character's lead byte) when some
    member is multi-byte, else 0: no character it belongs to is stripped.
    """
    members = list(members)
    codes = [0] * 256
    if any(ord(char) >= 0x80 for char in members):
        for byte in range(0x80, 0xC0):
            codes[byte] = SCAN_INSIDE
    for char in members:
        first = char.encode()[0]
        codes[first] = SCAN_SPACE if first < 0x80 else SCAN_MAYBE
    return go_string("".join(map(chr, codes)))


def strip(em: Emitter, text_code: str, method: str, chars: str | None) -> str:
    """Python's strip/lstrip/rstrip: a scan from either end that stops at the first kept character.

    The cost is the number of stripped bytes at the ends, not the length of the text. Both
    scans look bytes up in `scan_table`; a multi-byte character is recognised at its lead byte
    (exact for valid UTF-8, which every string Ollama passes is: it comes out of encoding/json).
    """
    members = list(dict.fromkeys(chars if chars is not None else PY_WHITESPACE))
    wide = tuple(go_string(char) for char in members if ord(char) >= 0x80)
    table = em.temp()
    text = text_code
    if not isinstance(read_operand(text_code), ir.Variable):  # a variable or field is read as it is: no copy
        text = em.temp()
        em.declare(text, text_code)
    em.declare(table, ir.String(scan_table(members)))  # once for both scans (shared: sharing.share_constants)
    if method in {"strip", "lstrip"}:
        text = _strip_front(em, text, table, wide)
    if method in {"strip", "rstrip"}:
        text = _strip_back(em, text, table, wide)
    return text


def _stripped(em: Emitter, text: str, at: str, code: str, wide: tuple[str, ...]) -> GoCall:
    """The Go condition, for a byte coded `code` (not 0) at `at`: is its character stripped?
    An ASCII member is; a lead byte (SCAN_MAYBE) is where its character is a member."""
    return go_or(GoCall("ne", code, ir.Number.of(SCAN_MAYBE)), _wide_member(text, at, wide))


def _wide_member(text: str, at: str, wide: tuple[str, ...]) -> GoCall:
    """Is the character at byte `at` of `text` one of the `wide` (non-ASCII) members?"""
    return go_eq(go_printf("%.1s", GoCall("slice", text, at)), *wide)


def _strip_front(em: Emitter, text: str, table: str, wide: tuple[str, ...]) -> str:
    """The text from its first character that is not stripped (empty when there is none)."""
    out, start, i, code = em.temp(), em.temp(), em.temp(), em.temp()
    em.declare(out, text)
    # the usual text starts with a kept character: one lookup, no loop
    em.if_(go_and(text, GoCall("index", table, GoCall("index", text, "0"))))
    em.declare(start, ir.command("len", operand_of(text)))  # where the scan stops, the end when everything goes
    em.range_(ir.command("len", operand_of(text)), i)
    em.declare(code, ir.command("index", ir.Variable(table), ir.call("index", operand_of(text), ir.Variable(i))))
    em.if_(code)  # a stripped byte, or (SCAN_MAYBE) the lead byte of one to compare
    if wide:  # (continuation bytes: the character's lead byte was a member)
        em.if_(_stripped(em, text, i, code, wide))
        em.continue_()
        em.end()
    else:
        em.continue_()
    em.end()
    em.assign(start, i)
    em.break_()
    em.end()
    em.assign(out, ir.command("slice", operand_of(text), ir.Variable(start)))
    em.end()
    return out


def _strip_back(em: Emitter, text: str, table: str, wide: tuple[str, ...]) -> str:
    """The text up to its last character that is not stripped (empty when there is none).

    Byte i from the end is at `len (slice $t i)` with `$t` the text without its first byte;
    `end` is the start of the last stripped character seen, the text's length while there is
    none."""
    out, rest, end, i, at, code, last = (em.temp() for _ in range(7))
    em.declare(out, text)
    em.if_(text)
    text_node, rest_node = operand_of(text), ir.Variable(rest)
    em.declare(rest, ir.command("slice", text_node, ir.Number.of(1)))
    em.declare(last, ir.command("index", ir.Variable(table), ir.call("index", text_node, ir.call("len", rest_node))))
    em.if_(last)  # else it ends with a kept one
    # the usual stripped end, one ASCII space or newline after a kept ASCII character: no loop
    next_kept = go_not(GoCall("index", table, GoCall("index", text, go_len(GoCall("slice", rest, "1")))))
    em.if_(go_and(rest, go_eq(last, ir.Number.of(SCAN_SPACE)), next_kept))
    em.assign(out, ir.command("slice", text_node, ir.Number.of(0), ir.call("len", rest_node)))
    em.else_()
    em.declare(end, ir.command("len", text_node))
    em.range_(ir.command("len", text_node), i)
    em.declare(at, ir.command("len", ir.call("slice", rest_node, ir.Variable(i))))
    em.declare(code, ir.command("index", ir.Variable(table), ir.call("index", text_node, ir.Variable(at))))
    em.if_(code)
    if wide:  # an ASCII member (the usual stripped byte) is decided by the first `eq`
        wide_member = go_and(go_eq(code, ir.Number.of(SCAN_MAYBE)), _wide_member(text, at, wide))
        em.if_(go_or(go_eq(code, ir.Number.of(SCAN_SPACE)), wide_member))
        em.assign(end, at)
        em.continue_()
        em.if_(go_eq(code, ir.Number.of(SCAN_INSIDE)), "else if")
        em.continue_()  # inside a multi-byte character: its lead byte decides
        em.end()
    else:
        em.assign(end, at)
        em.continue_()
    em.end()
    em.break_()
    em.end()
    em.assign(out, ir.command("slice", text_node, ir.Number.of(0), ir.Variable(end)))
    em.end()
    em.end()
    em.end()
    return out
