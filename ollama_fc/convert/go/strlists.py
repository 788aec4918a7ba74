"""Lists of strings that grow at run time, held in one Go string.

Go templates cannot build a list, but a list of strings can live in a string: each element is
written after a 0xFF byte. Valid UTF-8 never contains that byte, and every string Ollama passes
(decoded JSON) or a template writes is valid UTF-8, so the encoding is exact: element boundaries
are the 0xFF bytes, membership is a match of `0xFF needle 0xFF`, and the length is their count.
Each function emits the statements computing one Python operation and returns the Go operand.
"""

from __future__ import annotations

from . import ir
from .calls import GoCall, GoOperand, go_and, go_eq, go_len, go_printf, operand_of, starts_with
from .textops import Emitter, go_string, one_more, position_after

#: the element marker, as a Go string literal (a byte, not the rune U+00FF)
MARK = GoOperand(ir.String('"\\xff"'))
MARK_BYTE = 255
#: the format of one item of a list: the marker, then the item (`printf "\xff%s" item`)
MARKED = ir.String('"\\xff%s"')
#: `printf` formats with the marker, written with its escape (a byte, not a rune)
APPEND_ITEM, MARKED_AFTER, MARKED_AROUND = (
    ir.String(f'"{verbs}"') for verbs in ("%s\\xff%s", "%s\\xff", "\\xff%s\\xff")
)


def literal(items: list[str]) -> GoOperand:
    """The Go string literal encoding a constant list of strings."""
    return GoOperand(ir.String('"' + "".join("\\xff" + go_string(item)[1:-1] for item in items) + '"'))


def of_items(codes: list[str]) -> str:
    """A list built from Go string operands, `[a, b]`."""
    if not codes:
        return '""'
    return GoCall("printf", ir.String('"' + "\\xff%s" * len(codes) + '"'), *codes)


def concat(left: str, right: str) -> str:
    """`left + right` of two encoded lists."""
    return go_printf("%s%s", left, right)


def append(em: Emitter, var: str, item: str) -> None:
    """`var.append(item)`: the variable holding the list is updated in place."""
    em.assign(var, ir.command("printf", APPEND_ITEM, ir.Variable(var), operand_of(item)))


def count(em: Emitter, code: str) -> str:
    """`list | length`: the number of element markers."""
    text, n, i = em.temp(), em.temp(), em.temp()
    em.declare(text, code)
    em.declare(n, "0")
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE)))
    em.assign(n, one_more(ir.Variable(n)))
    em.end()
    em.end()
    return n


def join(em: Emitter, code: str, sep_code: str) -> str:
    """`list | join(sep)`: the elements with `sep` between them."""
    text, out, last, i = em.temp(), em.temp(), em.temp(), em.temp()
    em.declare(text, code)
    em.declare(out, '""')
    em.if_(text)
    em.declare(last, "1")
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_and(GoCall("gt", i, "0"), go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE))))
    run = ir.call("slice", ir.Variable(text), ir.Variable(last), ir.Variable(i))
    em.assign(out, ir.command("printf", ir.String.of("%s%s%s"), ir.Variable(out), run, operand_of(sep_code)))
    em.assign(last, position_after(text, i))
    em.end()
    em.end()
    rest = ir.call("slice", ir.Variable(text), ir.Variable(last))
    em.assign(out, ir.command("printf", ir.String.of("%s%s"), ir.Variable(out), rest))
    em.end()
    return out


def contains(em: Emitter, code: str, needle: str) -> str:
    """`needle in list`: some element is exactly `needle`."""
    hay, pat, found, i, rest = em.temp(), em.temp(), em.temp(), em.temp(), em.temp()
    em.declare(hay, ir.command("printf", MARKED_AFTER, operand_of(code)))
    em.declare(pat, ir.command("printf", MARKED_AROUND, operand_of(needle)))
    em.declare(found, "false")
    em.range_(ir.command("len", ir.Variable(hay)), i)
    em.if_(go_eq(GoCall("index", hay, i), ir.Number.of(MARK_BYTE)))
    em.declare(rest, ir.command("slice", ir.Variable(hay), ir.Variable(i)))
    em.if_(starts_with(rest, pat, go_len(pat)))
    em.assign(found, "true")
    em.break_()
    em.end()
    em.end()
    em.end()
    return found


def element(em: Emitter, code: str, which: int, var: str | None = None) -> str:
    """`list[0]` / `list[-1]` (empty text for an empty list, which Python refuses to index);
    with `var`, `var.pop(0)` / `var.pop()`: the element is also removed from the variable."""
    text, cut, i, result = em.temp(), em.temp(), em.temp(), em.temp()
    em.declare(text, code)
    em.declare(result, '""')
    em.if_(text)
    text_node = ir.Variable(text)
    em.declare(cut, ir.command("len", text_node) if which == 0 else ir.Number.of(0))
    em.range_(ir.command("len", text_node), i)
    em.if_(go_and(GoCall("gt", i, "0"), go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE))))
    em.assign(cut, i)
    if which == 0:
        em.break_()
    em.end()
    em.end()
    if which == 0:
        em.assign(result, ir.command("slice", text_node, ir.Number.of(1), ir.Variable(cut)))
        if var is not None:
            em.assign(var, ir.command("slice", text_node, ir.Variable(cut)))
    else:
        em.assign(result, ir.command("slice", text_node, operand_of(position_after(text, cut))))
        if var is not None:
            em.assign(var, ir.command("slice", text_node, ir.Number.of(0), ir.Variable(cut)))
    em.end()
    return result


def each(em: Emitter, code: str) -> tuple[str, str, str]:
    """Open a loop over the elements: (element, index0, count) Go variables; the caller
    emits the body and then two `end`s (the marker test and the byte loop)."""
    text, start, i, item, idx, seen = (em.temp() for _ in range(6))
    total = count(em, code)
    em.declare(text, ir.command("printf", MARKED_AFTER, operand_of(code)))
    em.declare(start, "1")
    em.declare(seen, "0")
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_and(GoCall("gt", i, "0"), go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE))))
    em.declare(item, ir.command("slice", ir.Variable(text), ir.Variable(start), ir.Variable(i)))
    em.assign(start, position_after(text, i))
    em.declare(idx, seen)
    em.assign(seen, one_more(ir.Variable(seen)))
    return item, idx, total


def nth(em: Emitter, code: str, position: str) -> tuple[str, str]:
    """`list[i]` for a run-time `i >= 0`: Go variables (element, whether it exists); Jinja's
    subscript past the end is Undefined, here the empty text with the flag false."""
    text, start, seen, i, result, found = (em.temp() for _ in range(6))
    em.declare(text, ir.command("printf", MARKED_AFTER, operand_of(code)))
    em.declare(result, '""')
    em.declare(found, "false")
    em.declare(start, "1")
    em.declare(seen, "0")
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_and(GoCall("gt", i, "0"), go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE))))
    em.if_(go_eq(seen, position))
    em.assign(result, ir.command("slice", ir.Variable(text), ir.Variable(start), ir.Variable(i)))
    em.assign(found, "true")
    em.break_()
    em.end()
    em.assign(start, position_after(text, i))
    em.assign(seen, one_more(ir.Variable(seen)))
    em.end()
    em.end()
    return result, found


def tail(em: Emitter, code: str, start: str) -> str:
    """`list[start:]` for a run-time `start >= 0`: the encoding from the start-th marker on."""
    text, seen, i, result = (em.temp() for _ in range(4))
    em.declare(text, code)
    em.declare(result, '""')
    em.declare(seen, "0")
    em.range_(ir.command("len", ir.Variable(text)), i)
    em.if_(go_eq(GoCall("index", text, i), ir.Number.of(MARK_BYTE)))
    em.if_(go_eq(seen, start))
    em.assign(result, ir.command("slice", ir.Variable(text), ir.Variable(i)))
    em.break_()
    em.end()
    em.assign(seen, one_more(ir.Variable(seen)))
    em.end()
    em.end()
    return result
