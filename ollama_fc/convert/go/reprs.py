"""Python's `repr()` of a string and of a JSON-decoded value, written as Go byte loops (see
`textops`): where a value is captured, so the recursive `ofc_repr` helper cannot print it."""

from __future__ import annotations

from typing import NamedTuple

from .calls import GoCall, go_and, go_eq, go_not, go_or
from .textops import Emitter, go_string, lacks_html_special, position_after, prints_as_is

#: the first byte of a multi-byte UTF-8 character (0xC2 to 0xF4 in valid text)
LEAD_BYTE = 194


def rune_repr_escape(em: Emitter, text: str, i: str) -> tuple[str, str]:
    """At the lead byte `i` of a multi-byte character of `text`: (the character, Python's
    `repr()` escape of it, or "" when repr writes it as it is).

    Python escapes what `str.isprintable` rejects (Unicode categories C and Z but the ASCII
    space: U+00A0, U+00AD, U+0085, U+2028, U+200B, U+FEFF, private use...); Go's `%q` escapes
    what `strconv.IsPrint` rejects, the same categories. Go writes `\\u00XX` where Python writes
    `\\xXX`; `\\uXXXX` and `\\UXXXXXXXX` are alike (lower-case hex in both).
    """
    rune, quoted, escape = em.temp(), em.temp(), em.temp()
    em.action(f'{rune} := printf "%.1s" (slice {text} {i})')
    em.action(f'{quoted} := printf "%q" {rune}')
    em.declare(escape, '""')
    em.if_(GoCall("ne", *prints_as_is(rune, quoted).args))
    em.action(f"{escape} = slice {quoted} 1 (len (slice {quoted} 1))")
    em.if_(go_eq(GoCall("slice", escape, "0", "4"), '"\\\\u00"'))
    em.action(f'{escape} = printf "\\\\x%s" (slice {escape} 4)')
    em.end()
    em.end()
    return rune, escape


def repr_string(em: Emitter, text_code: str) -> str:
    """Python's `repr()` of a string, written inline (the `ofc_repr_str` helper cannot be captured).

    Single quotes unless the text has a `'` and no `"`, as CPython chooses; backslash, the
    quote, \\n, \\r, \\t, other control bytes and the characters Python does not print
    (`rune_repr_escape`) escaped.
    """
    text, single, double, quote, out, last, i, b, escape = (em.temp() for _ in range(9))
    em.declare(text, text_code)
    em.declare(single, "false")
    em.declare(double, "false")
    em.if_(go_not(lacks_html_special(text)))  # (else no quote of either kind)
    em.action(f"range {i} := len {text}")
    em.action(f"{b} := index {text} {i}")
    em.if_(go_eq(b, "39"))
    em.assign(single, "true")
    em.if_(go_eq(b, "34"), "else if")
    em.assign(double, "true")
    em.end()
    em.end()
    em.end()
    em.action(f'{quote} := "\'"')
    em.if_(go_and(single, go_not(double)))
    em.action(f'{quote} = "\\""')
    em.end()
    em.declare(out, '""')
    em.declare(last, "0")
    # the usual string, which %q writes as it is: so does Python, between the quote chosen (a '
    # in the text makes it ")
    em.if_(go_not(prints_as_is(text)))
    em.action(f"range {i} := len {text}")
    em.action(f"{b} := index {text} {i}")
    em.if_(go_or(GoCall("lt", b, "32"), go_eq(b, "92", "127"), go_eq(b, GoCall("index", quote, "0"))))
    em.action(f'{escape} := printf "\\\\x%02x" {b}')
    em.if_(go_eq(b, "92", GoCall("index", quote, "0")))
    em.action(f'{escape} = printf "\\\\%c" {b}')
    em.if_(go_eq(b, "10", "13", "9"), "else if")
    em.action(f'{escape} = slice (printf "%q" (printf "%c" {b})) 1 3')
    em.end()
    em.action(f'{out} = printf "%s%s%s" {out} (slice {text} {last} {i}) {escape}')
    em.assign(last, position_after(text, i))
    em.if_(GoCall("ge", b, str(LEAD_BYTE)), "else if")
    rune, rune_escape = rune_repr_escape(em, text, i)
    em.if_(rune_escape)
    em.action(f'{out} = printf "%s%s%s" {out} (slice {text} {last} {i}) {rune_escape}')
    em.action(f"{last} = {position_after(text, i, f'(len {rune})')}")
    em.end()
    em.end()
    em.end()
    em.end()
    em.action(f'{out} = printf "%s%s%s%s" {quote} {out} (slice {text} {last}) {quote}')
    return out


class _ReprScan(NamedTuple):
    """The Go variables of `repr_of_json`'s one loop over Go's JSON text of a value."""

    text: str  # the JSON text
    out: str  # the repr written so far
    last: str  # the first byte not yet copied or rewritten
    quote: str  # the quote of the string being read, empty outside strings
    i: str  # the byte read
    b: str  # its value
    piece: str  # what replaces the bytes from `i` on
    step: str  # how many bytes it replaces
    escape: str  # a JSON escape read inside a string
    rest: str  # the text after a string's opening quote
    single: str  # that string holds a '
    double: str  # ... and an (escaped) "
    escaped: str  # the byte before was a backslash
    j: str  # the byte of `rest` read
    c: str  # its value


def repr_of_json(em: Emitter, json_code: str) -> str:
    r"""Python's `repr()` of a JSON-decoded value, rewritten from Go's compact `json` text of it.

    A captured value cannot go through the recursive `ofc_repr` helper, and writing the repr
    inline level by level multiplies the code; Ollama's `json` function gives the whole value
    as text in one call (maps with sorted keys, as Go ranges them), which one loop turns into
    repr: `, ` and `: ` separators, True/False/None, and each string quoted as `repr_string`
    quotes it. Go writes `<`, `>`, `&` and control bytes as `\u00XX` escapes: they come back
    as the character, or as Python's `\xXX` for a control byte (`\u2028`/`\u2029` stay, as in
    Python's repr); other characters Python does not print are escaped (`rune_repr_escape`).
    """
    v = _ReprScan(*(em.temp() for _ in range(15)))
    em.declare(v.text, json_code)
    em.declare(v.out, '""')
    em.declare(v.last, "0")
    em.declare(v.quote, '""')
    em.action(f"range {v.i} := len {v.text}")
    em.if_(GoCall("lt", v.i, v.last))  # inside an escape or a word already rewritten
    em.continue_()
    em.end()
    em.action(f"{v.b} := index {v.text} {v.i}")
    em.declare(v.piece, '""')
    em.declare(v.step, "1")
    em.if_(v.quote)
    _repr_inside_string(em, v)
    em.if_(go_eq(v.b, "34"), "else if")
    _repr_string_opens(em, v)
    for byte, word in ((44, ", "), (58, ": "), (116, "True"), (102, "False"), (110, "None")):
        em.if_(go_eq(v.b, str(byte)), "else if")
        em.assign(v.piece, go_string(word))
        if byte > 58:
            em.assign(v.step, str(len(word)))  # the JSON word true/false/null is as long
    em.else_()
    em.continue_()  # digits, signs and brackets are the same in both
    em.end()
    em.action(f'{v.out} = printf "%s%s%s" {v.out} (slice {v.text} {v.last} {v.i}) {v.piece}')
    em.assign(v.last, position_after(v.text, v.i, v.step))
    em.end()
    em.action(f'{v.out} = printf "%s%s" {v.out} (slice {v.text} {v.last})')
    return v.out


def _repr_inside_string(em: Emitter, v: _ReprScan) -> None:
    """A byte inside a JSON string as Python's repr writes it: an escape rewritten, the closing
    quote as the quote chosen, a ' escaped where it is that quote, DEL and characters Python
    does not print escaped; any other byte copied as it is (`continue`)."""
    q = go_string
    em.if_(go_eq(v.b, "92"))
    _repr_json_escape(em, v)
    em.if_(go_eq(v.b, "34"), "else if")
    em.assign(v.piece, v.quote)
    em.assign(v.quote, '""')
    em.if_(go_eq(v.b, "39"), "else if")
    em.assign(v.piece, q(chr(39)))
    em.if_(go_eq(v.quote, q(chr(39))))
    em.assign(v.piece, q(chr(92) + chr(39)))
    em.end()
    em.if_(go_eq(v.b, "127"), "else if")
    em.assign(v.piece, q(chr(92) + "x7f"))
    em.if_(GoCall("ge", v.b, str(LEAD_BYTE)), "else if")
    rune, rune_escape = rune_repr_escape(em, v.text, v.i)
    em.if_(rune_escape)
    em.assign(v.piece, rune_escape)
    em.action(f"{v.step} = len {rune}")
    em.else_()
    em.continue_()
    em.end()
    em.else_()
    em.continue_()
    em.end()


def _repr_json_escape(em: Emitter, v: _ReprScan) -> None:
    """A JSON escape (`\\x`, `\\uXXXX`) as Python's repr writes the character: most the same,
    `<`, `>`, `&` back as themselves, other `\\u00XX` as `\\xXX`, `\\"` bare, `\\b` and `\\f` in hex."""
    q = go_string
    em.action(f'{v.escape} := printf "%.2s" (slice {v.text} {v.i})')
    em.action(f"{v.step} = 2")
    em.assign(v.piece, v.escape)  # \\ \n \r \t: Python writes them the same
    em.if_(go_eq(v.escape, q(chr(92) + "u")))
    em.action(f'{v.escape} = printf "%.6s" (slice {v.text} {v.i})')
    em.action(f"{v.step} = 6")
    em.assign(v.piece, v.escape)
    for code, char in (("003c", "<"), ("003e", ">"), ("0026", "&")):
        em.if_(go_eq(v.escape, q(chr(92) + "u" + code)), "if" if code == "003c" else "else if")
        em.assign(v.piece, q(char))
    em.if_(go_eq(GoCall("slice", v.escape, "0", "4"), q(chr(92) + "u00")), "else if")
    em.action(f"{v.piece} = printf {q(chr(92) + 'x%s')} (slice {v.escape} 4)")
    em.end()
    for short, python in (('"', '"'), ("b", "\\x08"), ("f", "\\x0c")):
        em.if_(go_eq(v.escape, q(chr(92) + short)), "else if")
        em.assign(v.piece, q(python))
    em.end()


def _repr_string_opens(em: Emitter, v: _ReprScan) -> None:
    """A JSON string opens: the quote Python's repr chooses for it, single unless it holds a
    ' and no " (escaped as \\" in JSON), found by reading ahead to its closing quote."""
    em.action(f"{v.rest} := slice (slice {v.text} {v.i}) 1")
    em.declare(v.single, "false")
    em.declare(v.double, "false")
    em.declare(v.escaped, "false")
    em.action(f"range {v.j} := len {v.rest}")
    em.action(f"{v.c} := index {v.rest} {v.j}")
    em.if_(v.escaped)
    em.action(f"{v.double} = or {v.double} (eq {v.c} 34)")
    em.assign(v.escaped, "false")
    em.if_(go_eq(v.c, "92"), "else if")
    em.assign(v.escaped, "true")
    em.if_(go_eq(v.c, "39"), "else if")
    em.assign(v.single, "true")
    em.if_(go_eq(v.c, "34"), "else if")
    em.break_()
    em.end()
    em.end()
    em.assign(v.quote, go_string(chr(39)))
    em.if_(go_and(v.single, go_not(v.double)))
    em.assign(v.quote, go_string(chr(34)))
    em.end()
    em.assign(v.piece, v.quote)
