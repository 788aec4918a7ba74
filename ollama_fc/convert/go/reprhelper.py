"""Python's `repr()` and `str()` of a value of any Go type as `define` helpers (`ofc_repr`,
`ofc_repr_str`, `ofc_str`), built as IR (see helperbody); reprs.py writes the forms a captured
value needs inline."""

from __future__ import annotations

from . import ir, tree
from .calls import GoCall
from .helperbody import (
    DOT,
    FALSE,
    INDEX,
    JSON_DOT,
    KEY,
    LAST,
    ONE,
    TRUE,
    TYPE,
    VALUE,
    ZERO,
    Body,
    Items,
    Statements,
    assign,
    called,
    composed,
    declare,
    else_if,
    if_,
    print_,
    range_,
    template,
)
from .reprs import LEAD_BYTE, rune_repr_escape
from .textops import position_after, prints_as_is
from .verbs import ELSE, END


def _byte_table(marked: dict[int, int]) -> ir.String:
    """A 256-byte Go string literal: the value given for each marked byte, 0 (falsy) elsewhere."""
    return ir.String.of("".join(chr(marked.get(byte, 0)) for byte in range(256)))


def _repr_plain(quote: int) -> ir.String:
    """Non-zero for the bytes `repr()` writes unchanged inside a string quoted with `quote`;
    zero (falsy, and the shortest literal for the rarer bytes) for controls, backslash, DEL,
    the quote, and the lead bytes of multi-byte characters (some of which repr escapes)."""
    kept = (byte for byte in range(256) if byte >= 32 and byte not in (92, 127, quote))
    return _byte_table({byte: 46 for byte in kept if not LEAD_BYTE <= byte <= 244})


def _repr_rune() -> Items:
    """At a multi-byte character `$s` holds at `$i`: its escape, when repr writes one, after the
    run before it (see reprs.rune_repr_escape)."""
    body = Statements()
    rune, escape = rune_repr_escape(body, "$s", "$i")
    after = composed(position_after("$s", "$i", GoCall("len", rune)))
    found = ir.Variable(escape)
    run = print_(ir.command("slice", STRING, LAST, INDEX))
    return (*body.nodes, if_(found), run, print_(found), assign("$last", after), END)


def _byte(value: int) -> ir.Number:
    return ir.Number.of(value)


STRING, BYTE, QUOTE = ir.Variable("$s"), ir.Variable("$b"), ir.Variable("$q")
BYTE_AT = ir.command("index", STRING, INDEX)
EACH_BYTE = range_(ir.command("len", STRING), "$i")


def _repr_string() -> Items:
    """`ofc_repr_str`: which quote is decided by a scan only when `html` shows a quote may be
    there; the text is printed in runs between the bytes repr escapes, found by one table lookup
    each."""
    quotes = _byte_table({byte: 46 for byte in range(256) if byte not in (34, 39)})
    single, double = ir.Variable("$sq"), ir.Variable("$dq")
    out = Body().act(ir.Define("ofc_repr_str"), declare("$s", DOT), declare("$sq", FALSE), declare("$dq", FALSE))
    out.act(if_(ir.command("ne", ir.call("len", ir.call("html", STRING)), ir.call("len", STRING))), EACH_BYTE)
    out.act(declare("$b", BYTE_AT), if_(ir.command("index", quotes, BYTE)))
    out.act(else_if(ir.command("eq", BYTE, _byte(39))), assign("$sq", TRUE), ELSE, assign("$dq", TRUE), END, END, END)
    out.act(declare("$q", ir.String.of("'")), declare("$qb", _byte(39)), declare("$plain", _repr_plain(39)))
    out.act(if_(ir.command("and", single, ir.call("not", double))), assign("$q", ir.String.of('"')))
    out.act(assign("$qb", _byte(34)), assign("$plain", _repr_plain(34)), END)
    out.act(print_(QUOTE), declare("$last", ZERO))
    # (the usual string, which %q writes as it is: so does Python, between the quote chosen)
    out.act(if_(ir.command("not", called(prints_as_is("$s")))))
    out.act(EACH_BYTE, if_(ir.command("index", ir.Variable("$plain"), ir.Pipe((BYTE_AT,)))), ELSE)
    out.act(declare("$b", BYTE_AT), if_(ir.command("ge", BYTE, _byte(LEAD_BYTE))), _repr_rune(), ELSE)
    out.act(print_(ir.command("slice", STRING, LAST, INDEX)))
    out.act(if_(ir.command("eq", BYTE, _byte(92)))).text("\\\\")
    out.act(else_if(ir.command("eq", BYTE, ir.Variable("$qb")))).text("\\").act(print_(QUOTE))
    for byte, escape in ((10, "\\n"), (13, "\\r"), (9, "\\t")):
        out.act(else_if(ir.command("eq", BYTE, _byte(byte)))).text(escape)
    out.act(ELSE, print_(ir.command("printf", ir.String.of("\\x%02x"), BYTE)), END)
    after = ir.call("len", ir.call("slice", ir.call("slice", STRING, INDEX), ONE))
    out.act(assign("$last", ir.command("len", ir.call("slice", STRING, after))), END, END, END, END)
    return out.act(print_(ir.command("slice", STRING, LAST)), print_(QUOTE), END).done()


def _repr() -> Items:
    """`ofc_repr`: Python repr of strings, numbers, booleans, None, lists and dicts."""
    kinds = [ir.command("eq", TYPE, *(ir.String.of(go_type) for go_type in types)) for types in _REPR_KINDS]
    out = Body().act(ir.Define("ofc_repr"), declare("$t", ir.command("printf", ir.String.of("%T"), DOT)))
    out.act(if_(kinds[0]), template("ofc_repr_str", DOT))
    out.act(else_if(kinds[1]), if_(DOT)).text("True").act(ELSE).text("False").act(END)
    out.act(else_if(kinds[2])).text("None").act(else_if(kinds[3]), print_(JSON_DOT))
    first = ir.Variable("$first")
    out.act(else_if(kinds[4]), declare("$first", TRUE), print_(ir.String.of("{")), range_(DOT, "$k", "$v"))
    out.act(if_(first), assign("$first", FALSE), ELSE).text(", ").act(END, template("ofc_repr_str", KEY))
    out.text(": ").act(template("ofc_repr", VALUE), END).text("}")
    out.act(else_if(kinds[5])).text("[").act(range_(DOT, "$i", "$v"), if_(INDEX)).text(", ").act(END)
    out.act(template("ofc_repr", VALUE), END).text("]")
    return out.act(ELSE, print_(ir.command("print", DOT)), END, END).done()


#: the Go types `ofc_repr` tells apart, in the order it tests them
_REPR_KINDS = (
    ("string",),
    ("bool",),
    ("<nil>",),
    ("float64", "int"),
    ("map[string]interface {}", "template.templateArgs"),
    ("[]interface {}", "[]string"),
)

#: `ofc_str`, `{{ value }}` of an untyped value: Jinja prints strings bare and everything else as repr
_STR = (
    ir.Define("ofc_str"),
    if_(ir.command("eq", ir.call("printf", ir.String.of("%T"), DOT), ir.String.of("string"))),
    print_(DOT),
    ELSE,
    template("ofc_repr", DOT),
    END,
    END,
)

#: Python repr of strings, numbers, booleans, None, lists and dicts (`{{ dict }}` in Jinja), of
#: strings alone (single quotes unless the text has ' and no ", like CPython's repr), and `str`
REPR_HELPER = tree.Generated((*_repr(), *_repr_string(), *_STR))
