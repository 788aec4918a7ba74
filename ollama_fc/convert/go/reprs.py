"""Python's `repr()` of a string and of a JSON-decoded value, written as Go byte loops (see
`textops`): where a value is captured, so the recursive `ofc_repr` helper cannot print it."""

from __future__ import annotations

from typing import NamedTuple

from . import ir
from .calls import GoCall, go_and, go_eq, go_not, go_or
from .textops import (
    ONE,
    Emitter,
    after,
    appended,
    each_byte,
    go_string,
    lacks_html_special,
    prints_as_is,
    run_of,
    short_escape,
)

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
    em.declare(rune, ir.command("printf", ir.String.of("%.1s"), run_of(text, i)))
    em.declare(quoted, ir.command("printf", ir.String.of("%q"), ir.Variable(rune)))
    em.declare(escape, '""')
    em.if_(GoCall("ne", *prints_as_is(rune, quoted).args))
    quoted_node = ir.Variable(quoted)
    em.assign(escape, ir.command("slice", quoted_node, ONE, ir.call("len", ir.call("slice", quoted_node, ONE))))
    em.if_(go_eq(GoCall("slice", escape, "0", ir.Number.of(4)), go_string(chr(92) + "u00")))
    em.assign(escape, _hex_escape(escape))
    em.end()
    em.end()
    return rune, escape


def _hex_escape(escape: str) -> ir.Command:
    """`printf "\\x%s" (slice escape 4)`: Python's `\\xXX` of Go's `\\u00XX` in `escape`."""
    return ir.command("printf", ir.String.of("\\x%s"), ir.call("slice", ir.Variable(escape), ir.Number.of(4)))


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
    each_byte(em, text, i, b)
    em.if_(go_eq(b, ir.Number.of(39)))
    em.assign(single, "true")
    em.if_(go_eq(b, ir.Number.of(34)), "else if")
    em.assign(double, "true")
    em.end()
    em.end()
    em.end()
    em.declare(quote, ir.String.of("'"))
    em.if_(go_and(single, go_not(double)))
    em.assign(quote, ir.String.of('"'))
    em.end()
    em.declare(out, '""')
    em.declare(last, "0")
    # the usual string, which %q writes as it is: so does Python, between the quote chosen (a '
    # in the text makes it ")
    em.if_(go_not(prints_as_is(text)))
    each_byte(em, text, i, b)
    em.if_(
        go_or(
            GoCall("lt", b, ir.Number.of(32)),
            go_eq(b, ir.Number.of(92), ir.Number.of(127)),
            go_eq(b, GoCall("index", quote, "0")),
        )
    )
    em.declare(escape, ir.command("printf", ir.String.of("\\x%02x"), ir.Variable(b)))
    em.if_(go_eq(b, ir.Number.of(92), GoCall("index", quote, "0")))
    em.assign(escape, ir.command("printf", ir.String.of("\\%c"), ir.Variable(b)))
    em.if_(go_eq(b, ir.Number.of(10), ir.Number.of(13), ir.Number.of(9)), "else if")
    em.assign(escape, short_escape(ir.Variable(b)))
    em.end()
    em.assign(out, appended(out, run_of(text, last, i), ir.Variable(escape)))
    em.assign(last, after(ir.Variable(text), ir.Variable(i)))
    em.if_(GoCall("ge", b, ir.Number.of(LEAD_BYTE)), "else if")
    rune, rune_escape = rune_repr_escape(em, text, i)
    em.if_(rune_escape)
    em.assign(out, appended(out, run_of(text, last, i), ir.Variable(rune_escape)))
    em.assign(last, after(ir.Variable(text), ir.Variable(i), ir.call("len", ir.Variable(rune))))
    em.end()
    em.end()
    em.end()
    em.end()
    quoted_text = (ir.Variable(quote), ir.Variable(out), run_of(text, last), ir.Variable(quote))
    em.assign(out, ir.command("printf", ir.String.of("%s%s%s%s"), *quoted_text))
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
    em.range_(ir.command("len", ir.Variable(v.text)), v.i)
    em.if_(GoCall("lt", v.i, v.last))  # inside an escape or a word already rewritten
    em.continue_()
    em.end()
    em.declare(v.b, ir.command("index", ir.Variable(v.text), ir.Variable(v.i)))
    em.declare(v.piece, '""')
    em.declare(v.step, "1")
    em.if_(v.quote)
    _repr_inside_string(em, v)
    em.if_(go_eq(v.b, ir.Number.of(34)), "else if")
    _repr_string_opens(em, v)
    for byte, word in ((44, ", "), (58, ": "), (116, "True"), (102, "False"), (110, "None")):
        em.if_(go_eq(v.b, ir.Number.of(byte)), "else if")
        em.assign(v.piece, ir.String.of(word))
        if byte > 58:
            em.assign(v.step, ir.Number.of(len(word)))  # the JSON word true/false/null is as long
    em.else_()
    em.continue_()  # digits, signs and brackets are the same in both
    em.end()
    em.assign(v.out, appended(v.out, run_of(v.text, v.last, v.i), ir.Variable(v.piece)))
    em.assign(v.last, after(ir.Variable(v.text), ir.Variable(v.i), ir.Variable(v.step)))
    em.end()
    em.assign(v.out, appended(v.out, run_of(v.text, v.last)))
    return v.out


def _repr_inside_string(em: Emitter, v: _ReprScan) -> None:
    """A byte inside a JSON string as Python's repr writes it: an escape rewritten, the closing
    quote as the quote chosen, a ' escaped where it is that quote, DEL and characters Python
    does not print escaped; any other byte copied as it is (`continue`)."""
    q = go_string
    em.if_(go_eq(v.b, ir.Number.of(92)))
    _repr_json_escape(em, v)
    em.if_(go_eq(v.b, ir.Number.of(34)), "else if")
    em.assign(v.piece, v.quote)
    em.assign(v.quote, '""')
    em.if_(go_eq(v.b, ir.Number.of(39)), "else if")
    em.assign(v.piece, ir.String.of(chr(39)))
    em.if_(go_eq(v.quote, q(chr(39))))
    em.assign(v.piece, ir.String.of(chr(92) + chr(39)))
    em.end()
    em.if_(go_eq(v.b, ir.Number.of(127)), "else if")
    em.assign(v.piece, ir.String.of(chr(92) + "x7f"))
    em.if_(GoCall("ge", v.b, ir.Number.of(LEAD_BYTE)), "else if")
    rune, rune_escape = rune_repr_escape(em, v.text, v.i)
    em.if_(rune_escape)
    em.assign(v.piece, rune_escape)
    em.assign(v.step, ir.command("len", ir.Variable(rune)))
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
    em.declare(v.escape, ir.command("printf", ir.String.of("%.2s"), run_of(v.text, v.i)))
    em.assign(v.step, ir.Number.of(2))
    em.assign(v.piece, v.escape)  # \\ \n \r \t: Python writes them the same
    em.if_(go_eq(v.escape, q(chr(92) + "u")))
    em.assign(v.escape, ir.command("printf", ir.String.of("%.6s"), run_of(v.text, v.i)))
    em.assign(v.step, ir.Number.of(6))
    em.assign(v.piece, v.escape)
    for code, char in (("003c", "<"), ("003e", ">"), ("0026", "&")):
        em.if_(go_eq(v.escape, q(chr(92) + "u" + code)), "if" if code == "003c" else "else if")
        em.assign(v.piece, ir.String.of(char))
    em.if_(go_eq(GoCall("slice", v.escape, "0", ir.Number.of(4)), q(chr(92) + "u00")), "else if")
    em.assign(v.piece, _hex_escape(v.escape))
    em.end()
    for short, python in (('"', '"'), ("b", "\\x08"), ("f", "\\x0c")):
        em.if_(go_eq(v.escape, q(chr(92) + short)), "else if")
        em.assign(v.piece, ir.String.of(python))
    em.end()


def _repr_string_opens(em: Emitter, v: _ReprScan) -> None:
    """A JSON string opens: the quote Python's repr chooses for it, single unless it holds a
    ' and no " (escaped as \\" in JSON), found by reading ahead to its closing quote."""
    em.declare(v.rest, ir.command("slice", run_of(v.text, v.i), ONE))
    em.declare(v.single, "false")
    em.declare(v.double, "false")
    em.declare(v.escaped, "false")
    each_byte(em, v.rest, v.j, v.c)
    em.if_(v.escaped)
    em.assign(v.double, ir.command("or", ir.Variable(v.double), ir.call("eq", ir.Variable(v.c), ir.Number.of(34))))
    em.assign(v.escaped, "false")
    em.if_(go_eq(v.c, ir.Number.of(92)), "else if")
    em.assign(v.escaped, "true")
    em.if_(go_eq(v.c, ir.Number.of(39)), "else if")
    em.assign(v.single, "true")
    em.if_(go_eq(v.c, ir.Number.of(34)), "else if")
    em.break_()
    em.end()
    em.end()
    em.assign(v.quote, ir.String.of(chr(39)))
    em.if_(go_and(v.single, go_not(v.double)))
    em.assign(v.quote, ir.String.of(chr(34)))
    em.end()
    em.assign(v.piece, v.quote)
