"""Python string operations Go's text/template lacks, rebuilt as byte loops over a string.

Go templates can range over an integer, and `slice`, `index`, `len` and `printf "%.*s"` work on
strings; each function here emits the statements that compute one Python operation into a fresh
Go variable, and returns that variable. `%.*s` counts runes, so a needle's length is given in
characters where it is compared and in bytes where text is skipped.
"""

from __future__ import annotations

from typing import Protocol

import markupsafe

from . import ir
from .calls import GoCall, go_eq, go_len, go_literal, go_not, go_or, go_printf

#: a Go string literal for a text: the IR's quoting, the text carrying its node
go_string = go_literal

ONE = ir.Number.of(1)
_ONE_TO_7 = (ONE, ir.Number.of(7))

#: Python's str.isspace() characters, the set `str.strip()` removes.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def plus_one(number: str) -> GoCall:
    """Go code for the int `number + 1`: text/template has no arithmetic, but the length of
    `number` spaces and one more character is it (`number` must not be negative). It builds a
    string that long: for a position inside a string use `position_after`, constant time."""
    return GoCall("len", GoCall("printf", ir.String.of("%*s."), number, EMPTY), parenthesised=False)


def position_after(text: str, position: str, count: int | str = 1) -> GoCall:
    """Go code for the int `position + count` where that is at most the length n of the string in
    `text`, in constant time: `slice (slice text position) count` is n - position - count long,
    and cutting that many bytes off the front of `text` leaves position + count."""
    cut = GoCall("slice", GoCall("slice", text, position), ir.Number.of(count) if isinstance(count, int) else count)
    return GoCall("len", GoCall("slice", text, GoCall("len", cut)))


#: `html` escapes exactly these characters (and NUL), each into a longer text: when the escaped
#: text is as long as the text, none of them occurs in it, a check in one native call
HTML_ESCAPED = "'\"&<>"


def prints_as_is(text: str, quoted: str = "") -> GoCall:
    """A Go condition true when `%q` (its result already in `quoted`, if given) escapes nothing
    in the string in `text`: printable, no `"` or `\\`. Python's json.dumps and repr of it are
    then the text between quotes as well."""
    if not quoted:
        return all_print_as_is([text])
    return go_eq(quoted, GoCall("printf", go_string('"%s"'), text))


def all_print_as_is(texts: list[str], string_typed: str | None = None) -> GoCall:
    """`prints_as_is` of several strings in one test of three calls: `%q` of a text is at least
    two bytes longer than the text, exactly two only when it adds just the quotes, so the
    quoted texts written together equal the texts between quotes only when each does. With
    `string_typed`, that value's Go type must be `string` too: `%T` leads one side and `string`
    the other, and no other type Ollama passes a template has a name starting with `s`."""
    typed = ["%T"] if string_typed else []
    quoted = go_string("".join(typed) + "%q" * len(texts))
    bare = go_string(("string" if string_typed else "") + '"%s"' * len(texts))
    args = ([string_typed] if string_typed else []) + texts
    return go_eq(GoCall("printf", quoted, *args), GoCall("printf", bare, *texts))


def lacks_html_special(text: str) -> GoCall:
    """A Go condition true when the string in `text` holds none of `HTML_ESCAPED`: a needle with
    one of them cannot occur in it, so a search can be skipped."""
    return go_eq(go_len(GoCall("html", text)), go_len(text))


def lacks_markup(text: str) -> GoCall:
    """A Go condition true when the string in `text` holds no `<`, `>` or `&` (nor NUL), whatever
    quotes it holds (a tool result's JSON, where `lacks_html_special` fails). `html` lengthens a
    text by 3 for each `<` or `>`, 4 for each `&`, `'` or `"`, and 2 for each NUL; `js` writes
    the first three and NUL as `\\u00XX` and keeps each quote (after a backslash), so `html`
    lengthens the `js` text by 4 for each quote only. The two lengthenings are equal exactly
    where there is none of the others: compared as the lengths of the texts written crosswise
    (no subtraction in Go templates), in nine calls."""
    crosswise = go_len(go_printf("%s%s", GoCall("html", text), GoCall("js", text)))
    return go_eq(crosswise, go_len(go_printf("%s%s", GoCall("html", GoCall("js", text)), text)))


def lacks_any_of(text: str, chars: str) -> GoCall:
    """A Go condition true only when the string in `text` holds none of `chars`, some of which `html`
    escapes: it holds no character `html` escapes (`lacks_html_special`, three calls), or, where
    `chars` has `<`, `>` or `&`, none of those three (`lacks_markup`, tried only when the first fails)."""
    markup = any(char in "<>&" for char in chars)
    return go_or(lacks_html_special(text), lacks_markup(text)) if markup else lacks_html_special(text)


class Emitter(Protocol):
    """Where the statements go: the translator's output, with its fresh variable names."""

    def temp(self) -> str: ...
    def action(self, code: str) -> object: ...  # (what it wrote: unread here)
    def if_(self, condition: str | ir.Operand, keyword: str = "if") -> object: ...  # (without its outer parentheses)
    # the typed verbs (go/verbs.py)
    def write(self, node: ir.ActionNode) -> object: ...
    def end(self) -> object: ...
    def else_(self) -> object: ...
    def break_(self) -> object: ...
    def continue_(self) -> object: ...
    def declare(self, var: str, code: str | ir.Expression) -> object: ...
    def assign(self, var: str, code: str | ir.Expression) -> object: ...
    def range_(self, code: ir.Expression, *names: str) -> object: ...
    def print_(self, code: ir.Expression) -> object: ...


def _changed_bytes(mapping: dict[int, int]) -> tuple[str, int]:
    """(table literal, its length): the byte each byte becomes, 0 where it stays (falsy in an
    `if`), up to the last byte that changes; bytes past it are tested with `lt` first, which
    keeps the literal short (it is repeated wherever the conversion is)."""
    size = max(mapping) + 1
    return go_string("".join(chr(mapping.get(byte, 0)) for byte in range(size))), size


def after(text: ir.Operand, position: ir.Operand, count: ir.Operand = ONE) -> ir.Pipe:
    """`position_after` as IR."""
    rest = ir.call("len", ir.call("slice", ir.call("slice", text, position), count))
    return ir.call("len", ir.call("slice", text, rest))


def appended(out: str, *pieces: ir.Operand, verbs: str = "") -> ir.Command:
    """`printf "%s..." out piece...`: the text in `out` with the pieces after it (each written
    with `%s`, unless `verbs` says how)."""
    return ir.command("printf", ir.String.of("%s" + (verbs or "%s" * len(pieces))), ir.Variable(out), *pieces)


def run_of(text: str, start: str, stop: str | None = None) -> ir.Pipe:
    """`(slice text start stop)`: the bytes of the Go variable `text` from `start` (to `stop`)."""
    bounds = (ir.Variable(start),) if stop is None else (ir.Variable(start), ir.Variable(stop))
    return ir.call("slice", ir.Variable(text), *bounds)


def _lookup(em: Emitter, var: str, table: tuple[str, int], byte: str) -> None:
    """`var` = the table's entry for `byte`, 0 past its end."""
    em.if_(GoCall("lt", byte, ir.Number.of(table[1])))
    em.assign(var, ir.command("index", ir.String(table[0]), ir.Variable(byte)))
    em.else_()
    em.assign(var, "0")
    em.end()


def _rebuilt(em: Emitter, text: str, out: str, last: str, i: str, new_byte: str) -> None:
    """Append the unchanged run before byte `i` and the byte it becomes; `last` moves past it."""
    em.assign(out, appended(out, run_of(text, last, i), ir.Variable(new_byte), verbs="%s%c"))
    em.assign(last, after(ir.Variable(text), ir.Variable(i)))


def ascii_case(em: Emitter, text: str, method: str) -> str:
    """`lower` / `upper` of the ASCII letters of the string in Go variable `text`: each byte is
    looked up in a table of the letters that change, and runs of the others are copied whole."""
    letters = range(65, 91) if method == "lower" else range(97, 123)
    table = _changed_bytes({c: ord(chr(c).lower() if method == "lower" else chr(c).upper()) for c in letters})
    result, last, i, b, new = (em.temp() for _ in range(5))
    em.declare(result, '""')
    em.declare(last, "0")
    em.declare(new, "0")
    each_byte(em, text, i, b)
    _lookup(em, new, table, b)
    em.if_(new)
    _rebuilt(em, text, result, last, i, new)
    em.end()
    em.end()
    em.assign(result, appended(result, run_of(text, last)))
    return result


def each_byte(em: Emitter, text: str, i: str, b: str) -> None:
    """`range i := len text` and `b := index text i`: a loop over the bytes of the Go variable
    `text` (closed by the caller)."""
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.declare(b, ir.command("index", ir.Variable(text), ir.Variable(i)))


#: the bytes before which Jinja's `|title` starts a word: `-`, ASCII whitespace, `(`, `{`, `[`, `<`
TITLE_WORD_BREAKS = (45, 32, 9, 10, 11, 12, 13, 40, 123, 91, 60)


#: bytes after which Python's `str.title()` starts a word: every ASCII character but a letter
PYTHON_TITLE_BREAKS = tuple(c for c in range(128) if not chr(c).isalpha())

#: what a message's role almost always is: its title case is looked up before any byte loop
COMMON_ROLES = ("user", "assistant", "tool", "system")


def title_of(text: str, breaks: tuple[int, ...]) -> str:
    """What `ascii_title` computes, for constant text."""
    out, start = [], True
    for char in text:
        code = ord(char)
        if code >= 128:
            out.append(char)
            start = False
        elif code in breaks:
            out.append(char)
            start = True
        else:
            out.append(char.upper() if start else char.lower())
            start = False
    return "".join(out)


def ascii_title(
    em: Emitter, text: str, breaks: tuple[int, ...] = TITLE_WORD_BREAKS, common: tuple[str, ...] = ()
) -> str:
    """Jinja's `|title` (or, with PYTHON_TITLE_BREAKS, `str.title()`) of the string in Go
    variable `text`, for ASCII letters: the first character of each word upper-cased, the
    others lower-cased (bytes of other characters kept). Two table lookups per byte (the
    letter at a word start or inside a word, whether a word starts after it), runs of
    unchanged bytes copied whole; the strings in `common` are compared first and need no loop."""
    at_start = _changed_bytes({c: ord(chr(c).upper()) for c in range(128) if c not in breaks and chr(c).islower()})
    inside = _changed_bytes({c: ord(chr(c).lower()) for c in range(128) if c not in breaks and chr(c).isupper()})
    # whether a word starts after a byte: the rarer answer is the zero, the shorter literal
    breaks_rare = len(breaks) < 64
    marked = set(breaks) if breaks_rare else set(range(128)) - set(breaks)
    starts_word = go_string("".join("\0" if c in marked else "." for c in range(128)))
    result, last, start, i, b, new = (em.temp() for _ in range(6))
    em.declare(result, '""')
    for n, word in enumerate(common):
        em.if_(go_eq(text, go_string(word)), "if" if n == 0 else "else if")
        em.assign(result, go_string(title_of(word, breaks)))
    if common:
        em.else_()
    em.declare(last, "0")
    em.declare(start, "true")
    em.declare(new, "0")
    each_byte(em, text, i, b)
    em.if_(start)
    _lookup(em, new, at_start, b)
    em.else_()
    _lookup(em, new, inside, b)
    em.end()
    em.if_(new)
    _rebuilt(em, text, result, last, i, new)
    em.end()
    em.if_(GoCall("lt", b, ir.Number.of(128)))
    em.if_(GoCall("index", starts_word, b))
    em.assign(start, "false" if breaks_rare else "true")
    em.else_()
    em.assign(start, "true" if breaks_rare else "false")
    em.end()
    em.else_()
    em.assign(start, "false")
    em.end()
    em.end()
    em.assign(result, appended(result, run_of(text, last)))
    if common:
        em.end()
    return result


#: the bytes json.dumps writes unchanged in a string are non-zero in this table, the ones it
#: escapes (controls, `"`, backslash) zero: the rare ones take the four-character escape
JSON_PLAIN = go_string("".join("\0" if byte < 32 or byte in (34, 92) else "." for byte in range(256)))


def escape_html(data: str) -> str:
    """Text as markupsafe escapes it (`& < > ' "`), as Go's `html` does (which also turns NUL
    into U+FFFD)."""
    return str(markupsafe.escape(data))


def html_of(value: str) -> str:
    """Go code HTML-escaping the Go value `value` (a variable, or a call to parenthesize)."""
    return f"html {value}" if value.startswith("$") else f"html ({value})"


def json_string(em: Emitter, text_code: str, printed: bool = False, html: bool = False) -> str:
    """Python's `json.dumps` of a string (`ensure_ascii=False`, as transformers' `tojson`).

    Go's `%q` writes the same for text it only puts quotes around (printable, without `"` and
    `\\`: the usual string, told in two calls), and for ASCII text without control characters
    other than \\t, \\n, \\r, \\b, \\f; Ollama's `json` escapes `<`, `>`, `&` but writes
    controls as Python does. So an ASCII string on which both agree takes `%q` too; any other is
    escaped byte by byte (printed: one table lookup per byte), copying runs of plain bytes
    (UTF-8 sequences included) whole. The escapes Python writes short are the ones `%q` writes
    for those single bytes; the others are `\\u00XX`. With `printed`, the pieces are printed as
    they are found (linear; the define helper does this) and the result is the empty string
    literal; else they are collected into the returned variable. With `html` (printed only),
    each piece is printed HTML-escaped, which escapes the whole JSON text.
    """
    assert printed or not html, "only printed pieces are escaped one by one"

    def show(piece: ir.Expression) -> None:
        operand = ir.Pipe((piece,)) if isinstance(piece, ir.Command) else piece
        em.print_(ir.command("html", operand) if html else piece)

    text, quoted, last, i, b, escape = (em.temp() for _ in range(6))
    em.declare(text, text_code)
    em.declare(quoted, ir.command("printf", ir.String.of("%q"), ir.Variable(text)))
    # both also agree on U+2028 and U+2029, escaped, where Python writes them raw: the second
    # path is for ASCII only. `%-*s` pads the text to as many characters as it has bytes, which
    # adds a space per byte a character has beyond its first: the padded text then `%q` equals
    # the text then `json` (which starts with a quote) only when nothing was padded and the two
    # escapes agree; four calls and `json`
    agree = go_eq(go_printf("%-*s%s", go_len(text), text, quoted), go_printf("%s%s", text, GoCall("json", text)))
    # (first the usual string that `%q` only puts quotes around, as Python does: two calls)
    plain = prints_as_is(text, quoted)
    fast = go_or(plain, agree)
    quote = ir.String.of("&#34;" if html else '"')
    if printed:
        em.if_(fast)
        show(ir.Variable(quoted))
        em.else_()
        em.print_(quote)
    else:
        em.if_(go_not(fast))
        em.assign(quoted, '""')
    em.declare(last, "0")
    byte = ir.command("index", ir.Variable(text), ir.Variable(i))
    em.range_(ir.command("len", ir.Variable(text)), i)
    if printed:  # one copy per template: a table lookup per byte
        em.if_(GoCall("index", JSON_PLAIN, GoCall("index", text, i)))
        em.else_()
        em.declare(b, byte)
    else:  # a copy per use: shorter code
        em.declare(b, byte)
        em.if_(go_or(GoCall("lt", b, ir.Number.of(32)), go_eq(b, ir.Number.of(34), ir.Number.of(92))))
    em.declare(escape, ir.command("printf", ir.String.of("\\u%04x"), ir.Variable(b)))
    em.if_(go_eq(b, *SHORT_ESCAPED))
    em.assign(escape, short_escape(ir.Variable(b)))
    em.end()
    if printed:
        show(ir.Command((ir.Identifier("slice"), ir.Variable(text), ir.Variable(last), ir.Variable(i))))
        show(ir.Variable(escape))
    else:
        em.assign(quoted, appended(quoted, run_of(text, last, i), ir.Variable(escape)))
    em.assign(last, after(ir.Variable(text), ir.Variable(i)))
    em.end()
    em.end()
    if printed:
        show(ir.command("slice", ir.Variable(text), ir.Variable(last)))
        em.print_(quote)
        em.end()
        return '""'
    rest = run_of(text, last)
    em.assign(quoted, ir.command("printf", ir.String.of('"%s%s"'), ir.Variable(quoted), rest))
    em.end()
    return quoted


#: the bytes Python's JSON escapes with two characters, as `%q` does: `"`, `\\`, \b, \t, \n, \f, \r
SHORT_ESCAPED = tuple(ir.Number.of(byte) for byte in (34, 92, 8, 9, 10, 12, 13))


def short_escape(byte: ir.Operand) -> ir.Command:
    """`slice (printf "%q" (printf "%c" byte)) 1 3`: the two-character escape `%q` writes for
    the byte (`\\n`, `\\"`...)."""
    quoted = ir.call("printf", ir.String.of("%q"), ir.call("printf", ir.String.of("%c"), byte))
    return ir.command("slice", quoted, ir.Number.of(1), ir.Number.of(3))


def slice_text(em: Emitter, text_code: str, start: int | None, stop: int | None) -> str:
    """Python's `text[start:stop]` for constant bounds, counted in characters (negative ones
    from the end, clamped to the text): `%.*s` turns a character count into a byte offset."""
    text, count, lo, hi, out = (em.temp() for _ in range(5))
    em.declare(text, text_code)
    if any(bound is not None and bound < 0 for bound in (start, stop)):
        em.declare(count, char_count(text))  # characters, without a loop

    def offset(var: str, bound: int | None, default: str) -> None:
        if bound is None:
            em.declare(var, default)
        elif bound >= 0:
            em.declare(var, ir.command("len", ir.call("printf", PRECISION, ir.Number.of(bound), ir.Variable(text))))
        else:
            em.declare(var, "0")
            em.if_(GoCall("gt", count, ir.Number.of(-bound)))
            kept = _minus(ir.Variable(count), -bound)
            em.assign(var, ir.command("len", ir.call("printf", PRECISION, kept, ir.Variable(text))))
            em.end()

    offset(lo, start, "0")
    offset(hi, stop, GoCall("len", text, parenthesised=False))
    em.declare(out, '""')
    em.if_(GoCall("lt", lo, hi))
    em.assign(out, ir.command("slice", ir.Variable(text), ir.Variable(lo), ir.Variable(hi)))
    em.end()
    return out


#: `printf "%.*s" n text`: the first n characters of the text
PRECISION = ir.String.of("%.*s")
#: `printf "%*s" n ""`: n spaces; several such give the sum of their widths
SPACES, EMPTY = ir.String.of("%*s"), ir.String.of("")


def less(value: ir.Operand, amount: ir.Operand) -> ir.Command:
    """`len (slice (printf "%*s" value "") amount)`: `value - amount` for an int `value` >=
    `amount` (Go templates have no arithmetic)."""
    return ir.command("len", ir.call("slice", ir.call("printf", SPACES, value, EMPTY), amount))


def one_more(value: ir.Operand) -> ir.Command:
    """`plus_one` as IR."""
    return ir.command("len", ir.call("printf", ir.String.of("%*s."), value, EMPTY))


def _minus(value: ir.Operand, amount: int) -> ir.Pipe:
    """`value - amount` (see `less`) as an operand."""
    return ir.Pipe((less(value, ir.Number.of(amount)),))


def _times4(value: ir.Operand) -> ir.Pipe:
    return ir.call("len", ir.call("printf", ir.String.of("%[1]*s" * 4), value, EMPTY))


def _times(value: ir.Operand, power_of_4: int) -> ir.Operand:
    for _ in range(power_of_4):
        value = _times4(value)
    return value


def _sum(*terms: ir.Operand | int) -> ir.Pipe:
    """The sum of ints as the length of their widths of spaces."""
    widths = [item for term in terms for item in (ir.Number.of(term) if isinstance(term, int) else term, EMPTY)]
    return ir.call("len", ir.call("printf", ir.String.of("%*s" * len(terms)), *widths))


def ascii_json(em: Emitter, text_code: str) -> str:
    """`json.dumps(..., ensure_ascii=True)` from the `ensure_ascii=False` text in `text_code`.

    The two differ only in characters outside ' '..'~' that the latter leaves raw (non-ASCII
    ones and DEL), which become `\\uXXXX`: Go's `%+q` of such a character writes exactly that
    within the Basic Multilingual Plane; a character beyond it becomes Python's UTF-16
    surrogate pair, computed from its four UTF-8 bytes b0..b3 as 0xD7C0 + (b0-0xF0)*256 +
    (b1-0x80)*4 + (b2-0x80)/16 and 0xDC00 + ((b2-0x80)%16)*64 + (b3-0x80).
    """
    text, out, last, i, b, char, escape, low = (em.temp() for _ in range(8))
    over_16 = go_string("".join(chr(n >> 4) for n in range(64)))
    mod_16 = go_string("".join(chr(n & 15) for n in range(64)))
    em.declare(text, text_code)
    em.declare(out, '""')
    em.declare(last, "0")
    each_byte(em, text, i, b)
    em.if_(go_or(go_eq(b, ir.Number.of(127)), GoCall("ge", b, ir.Number.of(192))))
    em.declare(char, ir.command("printf", ir.String.of("%.1s"), run_of(text, i)))
    em.declare(escape, ir.String.of("\\u007f"))
    em.if_(GoCall("lt", b, ir.Number.of(240)))
    em.if_(GoCall("ge", b, ir.Number.of(192)))
    em.assign(escape, ir.command("slice", ir.call("printf", ir.String.of("%+q"), ir.Variable(char)), *_ONE_TO_7))
    em.end()
    em.else_()

    def byte_of_char(n: int) -> ir.Pipe:
        return ir.call("index", ir.Variable(char), ir.Number.of(n))

    em.declare(low, _minus(byte_of_char(2), 128))
    high_terms = (_times(_minus(ir.Variable(b), 240), 4), _times4(_minus(byte_of_char(1), 128)))
    high = _sum(55232, *high_terms, ir.call("index", ir.String(over_16), ir.Variable(low)))
    bottom = _sum(56320, _times(ir.call("index", ir.String(mod_16), ir.Variable(low)), 3), _minus(byte_of_char(3), 128))
    em.assign(escape, ir.command("printf", ir.String.of("\\u%04x\\u%04x"), high, bottom))
    em.end()
    em.assign(out, appended(out, run_of(text, last, i), ir.Variable(escape)))
    em.assign(last, after(ir.Variable(text), ir.Variable(i), ir.call("len", ir.Variable(char))))
    em.end()
    em.end()
    em.assign(out, appended(out, run_of(text, last)))
    return out


def char_count(text: str) -> GoCall:
    """Python's `len()` of the string in Go variable `text`, in characters without a loop: `%-*s`
    pads to a width counted in characters, so padding the text to its byte length adds
    (bytes - characters) spaces, and characters = 2 * bytes - that padded length."""
    padded = go_len(go_printf("%-*s", go_len(text), text))
    return go_len(GoCall("slice", go_printf("%s%s", text, text), padded))
