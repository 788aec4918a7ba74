"""Substring search on text, which Go's text/template lacks: `in`, `split(sep)[0]` / `[-1]` and
`replace`, as byte loops kept to two function calls per byte, and fewer where `html` (native)
shows a piece of text cannot hold the needle's first byte.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir
from .calls import GoCall, go_and, go_eq, go_len, go_not, go_or, go_printf, operand_of, starts_with
from .textops import HTML_ESCAPED, Emitter, go_string, lacks_any_of, one_more, position_after

ZERO = ir.Number.of(0)

#: sizes of the pieces of a long text that a search tests with `html` before looking inside
#: them: a piece `html` leaves as long is skipped, another is taken in the next smaller pieces,
#: the smallest byte by byte
PIECES = (1024, 64)


def _search(em: Emitter, text: str, needle: str, on_match: Callable[[str], object], last: bool = False) -> None:
    """Call `on_match` with the Go variable holding each position of `text` where the constant
    `needle` starts (the first only, unless `last`), to emit what happens there.

    Text has no native substring search, so this is a byte loop, kept to two calls per byte:
    the first byte of the needle is compared alone and the rest only where it matched. `html`
    (native) escapes `HTML_ESCAPED` into longer text, so where the needle starts with one of
    those characters (`</think>`, `<|im_end|>`) the text is taken in pieces
    (PIECES) and only a piece that `html` lengthens is looked at byte by byte (the rest of the
    needle is compared across the piece's end); where it merely holds one, a text that `html`
    leaves as long is skipped whole. A needle holding `<`, `>` or `&` also skips a text or
    piece whose only such characters are quotes (`lacks_markup`).
    """
    if chr(needle.encode()[0]) in HTML_ESCAPED:
        done = em.temp()
        em.declare(done, "false")
        em.if_(lacks_any_of(text, needle))
        em.else_()
        _scan_pieces(em, text, text, text, PIECES, needle, on_match, last, done)
        em.end()
        return
    guarded = any(char in HTML_ESCAPED for char in needle)
    if guarded:
        em.if_(lacks_any_of(text, needle))
        em.else_()
    _scan_bytes(em, text, text, text, needle, on_match, last, None)
    if guarded:
        em.end()


def _scan_pieces(
    em: Emitter,
    text: str,
    region: str,
    tail: str,
    sizes: tuple[int, ...],
    needle: str,
    on_match: Callable[[str], object],
    last: bool,
    done: str,
) -> None:
    """The pieces of `sizes[0]` bytes of `region`, a part of `text` that `tail` holds from its
    start to the text's end (a match may run past the region): each skipped in a few calls
    unless `html` lengthens it, else taken in the next smaller pieces, down to its bytes."""
    rest, step, piece = em.temp(), em.temp(), em.temp()
    em.declare(rest, region)
    rest_of_tail = rest
    if tail != region:
        rest_of_tail = em.temp()
        em.declare(rest_of_tail, tail)
    em.range_(ir.command("len", ir.Variable(region)), step)
    em.declare(piece, rest)
    em.if_(GoCall("gt", go_len(rest), ir.Number.of(sizes[0])))
    em.assign(piece, ir.command("slice", ir.Variable(rest), ir.Number.of(0), ir.Number.of(sizes[0])))
    em.end()
    em.if_(lacks_any_of(piece, needle[0]))  # (a match starting here may end past it)
    em.else_()
    if len(sizes) > 1:
        _scan_pieces(em, text, piece, rest_of_tail, sizes[1:], needle, on_match, last, done)
    else:
        _scan_bytes(em, text, piece, rest_of_tail, needle, on_match, last, done)
    em.end()
    em.assign(rest, ir.command("slice", ir.Variable(rest), ir.call("len", ir.Variable(piece))))
    if rest_of_tail != rest:
        em.assign(rest_of_tail, ir.command("slice", ir.Variable(rest_of_tail), ir.call("len", ir.Variable(piece))))
    em.if_(go_not(rest) if last else go_or(done, go_not(rest)))
    em.break_()
    em.end()
    em.end()


def _scan_bytes(
    em: Emitter,
    text: str,
    region: str,
    tail: str,
    needle: str,
    on_match: Callable[[str], object],
    last: bool,
    done: str | None,
) -> None:
    """Each byte of `region` (held with the rest of `text` by `tail`) where the needle starts:
    its first byte compared alone, the rest only where that matched. The position in `text` is
    counted from the end (`len (slice text rest)` is n - rest) unless the region is the text;
    `done` is set where the scan stops at the first match (the loops around it stop too)."""
    j = em.temp()
    em.range_(ir.command("len", ir.Variable(region)), j)
    em.if_(go_eq(GoCall("index", region, j), ir.Number.of(needle.encode()[0])))
    if len(needle.encode()) > 1:
        em.if_(go_eq(go_printf("%.*s", ir.Number.of(len(needle)), GoCall("slice", tail, j)), go_string(needle)))
    at = j
    if tail != text:
        at = em.temp()
        rest = ir.call("len", ir.call("slice", ir.Variable(tail), ir.Variable(j)))
        em.declare(at, ir.command("len", ir.call("slice", ir.Variable(text), rest)))
    on_match(at)
    if not last:
        if done is not None:
            em.assign(done, "true")
        em.break_()
    if len(needle.encode()) > 1:
        em.end()
    em.end()
    em.end()


def contains(em: Emitter, hay: str, needle: str) -> str:
    """Whether the constant `needle` occurs in `hay`."""
    found, text = em.temp(), em.temp()
    em.declare(text, hay)
    em.declare(found, "false" if needle else "true")
    if needle:
        _search(em, text, needle, lambda i: em.assign(found, "true"))
    return found


def contains_text(em: Emitter, hay: str, needle: str) -> str:
    """Whether the string in Go operand `needle` (known only at run time) occurs in `hay`:
    where its first byte is found, the rest is compared; the empty string occurs in any
    string, as in Python."""
    found, text, pattern, first, i, rest = (em.temp() for _ in range(6))
    em.declare(text, hay)
    em.declare(pattern, needle)
    em.declare(found, ir.command("eq", ir.call("len", ir.Variable(pattern)), ir.Number.of(0)))
    em.if_(pattern)
    em.declare(first, ir.command("index", ir.Variable(pattern), ir.Number.of(0)))
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_eq(GoCall("index", text, i), first))
    em.declare(rest, ir.command("slice", ir.Variable(text), ir.Variable(i)))
    em.if_(starts_with(rest, pattern, go_len(pattern)))
    em.assign(found, "true")
    em.break_()
    em.end()
    em.end()
    em.end()
    em.end()
    return found


def split_part(em: Emitter, text_code: str, sep: str, which: int) -> str:
    """`s.split(sep)[0]` / `[-1]`: the text before the first / after the last separator (the
    last place it starts, found in one forward pass: cheaper per byte than a scan from the end
    when, as usual, the separator is absent)."""
    text, result = em.temp(), em.temp()
    text_node = ir.Variable(text)
    em.declare(text, text_code)
    em.declare(result, text_node)
    if which == 0:
        _search(em, text, sep, lambda i: em.assign(result, ir.command("slice", text_node, ZERO, ir.Variable(i))))
    else:
        size = ir.Number.of(len(sep.encode()))

        def after(i: str) -> None:
            em.assign(result, ir.command("slice", ir.call("slice", text_node, ir.Variable(i)), size))

        _search(em, text, sep, after, last=True)
    return result


def replace(em: Emitter, text_code: str, old: str, new_code: str, limit: int | None = None) -> str:
    """Python's `str.replace(old, new[, limit])`: non-overlapping `old`, left to right (the
    first `limit` of them when given), found as `_search` finds it."""
    text, result, last, done = em.temp(), em.temp(), em.temp(), em.temp()
    size = len(old.encode())
    em.declare(text, text_code)
    em.declare(result, '""')
    em.declare(last, "0")
    if limit is not None:
        em.declare(done, "0")

    def replaced(i: str) -> None:
        # a match inside the previous one (only possible for a needle over one byte) is skipped
        checks = ([GoCall("ge", i, last)] if size > 1 else []) + (
            [GoCall("lt", done, ir.Number.of(limit))] if limit is not None else []
        )
        if checks:
            em.if_(checks[0] if len(checks) == 1 else go_and(*checks))
        run = ir.call("slice", ir.Variable(text), ir.Variable(last), ir.Variable(i))
        em.assign(result, ir.command("printf", ir.String.of("%s%s%v"), ir.Variable(result), run, operand_of(new_code)))
        em.assign(last, position_after(text, i, size))
        if limit is not None:
            em.assign(done, one_more(ir.Variable(done)))
        if checks:
            em.end()

    _search(em, text, old, replaced, last=True)
    rest = ir.call("slice", ir.Variable(text), ir.Variable(last))
    em.assign(result, ir.command("printf", ir.String.of("%s%s"), ir.Variable(result), rest))
    return result


def print_replaced(
    em: Emitter, text_code: str, old: str, print_piece: Callable[[str], None], print_new: Callable[[], None]
) -> None:
    """Print `str.replace(old, new)` of the text without building it: the runs between the
    matches through `print_piece` (given each as a Go operand, a call), and `print_new` at each match, found
    as `replace` finds them (where `new` prints, but is no Go value)."""
    text, last = em.temp(), em.temp()
    size = len(old.encode())
    em.declare(text, text_code)
    em.declare(last, "0")

    def replaced(i: str) -> None:
        if size > 1:  # (a match inside the previous one is skipped)
            em.if_(GoCall("ge", i, last))
        print_piece(GoCall("slice", text, last, i))
        print_new()
        em.assign(last, position_after(text, i, size))
        if size > 1:
            em.end()

    _search(em, text, old, replaced, last=True)
    print_piece(GoCall("slice", text, last))
