"""The JSON writers: Go template `define` helpers the translator emits when a template needs them.

Go's text/template has no JSON with Python's separators. The writers rebuild it from what Go
does have: `printf "%T"` to tell types apart, `textops.json_string` to quote strings, and
ranging over ints and Go 1.24 iterator functions. Helpers take one value (Go templates pass one
argument), so the indented writers are emitted once per nesting depth, one per Go type Ollama
hands a template (and one telling an unknown type apart); a template holds only those its
`tojson`s can reach. Each is built as IR (`helperbody`); the repr helper is in `reprhelper`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import NamedTuple

from . import ir, tree
from .calls import GoOperand
from .helperbody import (
    DOT,
    EMPTY,
    INDEX,
    JSON_DOT,
    KEY,
    LAST,
    NAME,
    SEP,
    TYPE,
    VALUE,
    ZERO,
    Body,
    Items,
    Statements,
    assign,
    composed,
    declare,
    else_if,
    if_,
    literal,
    print_,
    range_,
    template,
)
from .textops import (
    all_print_as_is,
    escape_html,
    json_string,
)
from .verbs import ELSE, END

#: Deepest JSON nesting the indented writer handles (tool schemas are far shallower).
MAX_INDENT_DEPTH = 10

#: A value of any Go type Ollama hands a template (`tojson` of a value whose kind is not known):
#: its writer tells the type at run time, among all of them
ANY_TYPE = "interface {}"
#: An `any` holding a value decoded from the request's JSON (argument values, a schema's `items`
#: and `enum`): a string, float64, bool, nil, map[string]interface {} or []interface {}; told
#: apart at run time among those only
JSON_VALUE = "json value"


class SchemaField(NamedTuple):
    """A field of one of Ollama's tool schema structs."""

    go: str
    key: str
    #: the key is written (and the dict view has it) only when the field is set
    optional: bool
    #: its Go type, as `printf "%T"` names it
    go_type: str
    #: a string nearly every schema has there, printed as a constant after one test (the
    #: string writer makes three calls)
    usual: str | None = None


#: The fields of Ollama's tool schema structs, in the order transformers' `get_json_schema`
#: writes their keys. The one table the JSON writers and the dict views of a schema read, and
#: the one place saying which field has which Go type: the same in every Ollama version
#: supported (v0.24.0 and v0.34.4, `template/template.go` and `api/types.go`), so the writers
#: write each field by its type with no run-time test.
SCHEMA_FIELDS: dict[str, tuple[SchemaField, ...]] = {
    "tool": (
        SchemaField("Type", "type", False, "string", "function"),
        SchemaField("Function", "function", False, "template.templateToolFunction"),
    ),
    "function": (
        SchemaField("Name", "name", False, "string"),
        SchemaField("Description", "description", True, "string"),
        SchemaField("Parameters", "parameters", False, "template.templateToolFunctionParameters"),
    ),
    "parameters": (
        SchemaField("Type", "type", False, "string", "object"),
        SchemaField("Properties", "properties", False, "template.templateProperties"),
        SchemaField("Required", "required", True, "[]string"),
    ),
    "property": (
        SchemaField("AnyOf", "anyOf", True, "[]api.ToolProperty"),
        SchemaField("Type", "type", True, "api.PropertyType"),
        SchemaField("Items", "items", True, JSON_VALUE),
        SchemaField("Enum", "enum", True, "[]interface {}"),
        SchemaField("Properties", "properties", True, "*api.ToolPropertiesMap"),
        SchemaField("Required", "required", True, "[]string"),
        SchemaField("Description", "description", True, "string"),
    ),
}
#: the Go type of each struct in SCHEMA_FIELDS
SCHEMA_TYPES = {
    "tool": "template.templateTool",
    "function": "template.templateToolFunction",
    "parameters": "template.templateToolFunctionParameters",
    "property": "api.ToolProperty",
}


class Container(NamedTuple):
    """A list or map type the JSON writers meet, and what it holds."""

    #: its writer: a suffix of the layout's helper names
    writer: str
    #: the Go type of its elements (of its values, for a map)
    element: str
    #: for a map, what `range $k, $v :=` goes over (an ordered map: its `.All` iterator)
    members: ir.Dot | ir.Field | None = None
    #: what json.dumps writes for it when empty (transformers passes no tools as None)
    empty: str = "[]"
    #: what is true when it has members (a non-nil pointer to no properties is still empty)
    filled: ir.Dot | ir.Field = ir.Dot()


CONTAINERS: dict[str, Container] = {
    "template.templateTools": Container("tools", "template.templateTool", empty="null"),
    "template.templateProperties": Container("properties", "api.ToolProperty", ir.Dot(), "{}"),
    "*api.ToolPropertiesMap": Container(
        "ordered_properties", "api.ToolProperty", ir.Field(("All",)), "{}", ir.Field(("Len",))
    ),
    "[]api.ToolProperty": Container("any_of", "api.ToolProperty"),
    "[]string": Container("strings", "string"),
    "[]interface {}": Container("list", JSON_VALUE),
    "map[string]interface {}": Container("map", JSON_VALUE, ir.Dot(), "{}"),
    "template.templateArgs": Container("map", JSON_VALUE, ir.Dot(), "{}"),
}
#: the Go types `json` writes as json.dumps does (a Go nil as null)
JSON_SCALARS = ("float64", "bool", "int", "int64", "json.Number", "<nil>")
#: The run-time dispatch of a value of unknown Go type, tried in this order: each test costs a
#: call, so the types met most often in a tool conversation come first (argument values and
#: `enum` members are mostly strings, then numbers; `items` is a map). Values whose type is
#: certain from the field holding them are written by their type's writer, without a test.
DISPATCH_ORDER = (
    "string",
    *JSON_SCALARS,
    "map[string]interface {}",
    "template.templateArgs",
    "[]interface {}",
    "template.templateTools",
    "template.templateTool",
    "template.templateToolFunction",
    "template.templateToolFunctionParameters",
    "api.ToolProperty",
    "template.templateProperties",
    "*api.ToolPropertiesMap",
    "[]api.ToolProperty",
    "[]string",
    "api.PropertyType",
)
#: the types a JSON_VALUE may have, in the same order
JSON_VALUE_TYPES = ("string", *JSON_SCALARS, "map[string]interface {}", "[]interface {}")
#: the writer of each Go type that has one, by the suffix of its `define`'s name
_WRITERS = {
    ANY_TYPE: "",
    JSON_VALUE: "value",
    **{go_type: struct for struct, go_type in SCHEMA_TYPES.items()},
    **{go_type: of.writer for go_type, of in CONTAINERS.items()},
}


class _JsonLayout:
    """One layout of `json.dumps` (indent, separators, HTML-escaped or not) at one nesting
    depth: the pieces each writer of `_json_writers` is made of, so every writer of a layout
    pads, separates and nests the same way."""

    def __init__(self, indent: int | None, depth: int, separators: tuple[str, str] | None, html: bool) -> None:
        self.indent, self.depth, self.separators, self.html = indent, depth, separators, html
        self.item, self.key_sep = separators or ((", " if indent is None else ","), ": ")
        if indent is None:
            self.open_pad, self.item_sep, self.close_pad = "", self.item, ""
        else:
            self.open_pad = "\n" + " " * (indent * (depth + 1))
            self.item_sep = self.item + self.open_pad
            self.close_pad = "\n" + " " * (indent * depth)
        self.shown: Callable[[str], str] = escape_html if html else str

    def lit(self, data: str) -> ir.String:
        """A Go string literal of text the writer prints."""
        return ir.String.of(self.shown(data))

    def body(self) -> Body:
        return Body(self.shown)

    def as_is(self, value: ir.Expression) -> ir.Action:
        """Print text the writer has found needs no JSON escaping (a variable or a call)."""
        if not self.html:
            return print_(value)
        return print_(ir.command("html", ir.Pipe((value,)) if isinstance(value, ir.Command) else value))

    def helper(self, go_type: str, here: bool = False) -> str:
        """The writer of `go_type` for a value nested one level deeper (or at this depth)."""
        if here:
            return json_helper_name(self.indent, self.depth, self.separators, go_type, self.html)
        if self.indent is None or self.depth >= MAX_INDENT_DEPTH:
            return json_helper_name(None, 0, self.separators, go_type, self.html)  # compact from there on
        return json_helper_name(self.indent, self.depth + 1, self.separators, go_type, self.html)

    def quote(self, value: ir.Operand) -> ir.Template:
        return template(_string_writer(self.html), value)

    def write(self, go_type: str, value: ir.Operand, levels: int = 2) -> Items:
        """`value` of `go_type` written as a value whose own members are `levels` deeper than
        this writer's brackets (2: a member of this writer's object or list)."""
        if go_type == "string":
            return (self.quote(value),)
        if go_type == "api.PropertyType":
            return self.type_names(value, levels)
        return (template(self.helper(go_type, here=levels == 1), value),)

    def obj(self, pairs: list[tuple[ir.Field | None, str, Items]]) -> Items:
        """`{`, `"key": value` for present fields (a guard, None where always present) with
        separators only between written ones, `}`."""
        out = self.body().text("{" + self.open_pad)
        written = False  # certainly, by a field written without a test
        declared = False
        for guard, key, value in pairs:
            head = f'"{key}"{self.key_sep}'
            if written:
                if guard is not None:
                    out.act(if_(guard))
                out.text(self.item_sep + head).act(value)
            elif guard is None:
                if declared:
                    out.act(print_(SEP))
                out.text(head).act(value)
                written = True
            else:
                if not declared:
                    out.act(declare("$s", EMPTY))
                    declared = True
                out.act(if_(guard), print_(SEP)).text(head).act(value)
                out.act(assign("$s", self.lit(self.item_sep)))
            if guard is not None:
                out.act(END)
        return out.text(self.close_pad + "}").done()

    def type_names(self, value: ir.Operand, levels: int) -> Items:
        """A schema `type` (a list in Ollama): one name is a string, several a list `levels`
        deeper than this writer's brackets, laid out as json.dumps lays out any list. Which
        is told by a loop without calls: the last index is 0 for one name."""
        if self.indent is None:
            first, between, last = "", self.item, ""
        else:
            first = "\n" + " " * (self.indent * (self.depth + levels))
            between, last = self.item + first, "\n" + " " * (self.indent * (self.depth + levels - 1))
        return (
            self.body()
            .act(declare("$last", ZERO), range_(value, "$i", "$n"), assign("$last", INDEX), END)
            .act(if_(LAST))
            .text("[" + first)
            .act(range_(value, "$i", "$n"), if_(INDEX))
            .text(between)
            .act(END, self.quote(NAME), END)
            .text(last + "]")
            .act(else_if(value), range_(value, "$n"), self.quote(NAME), END)
            .act(ELSE)
            .text("[]")
            .act(END)
            .done()
        )

    def container(self, of: Container) -> Items:
        """A list, or a map in the order Go ranges it (sorted keys; an ordered map's own)."""
        out = self.body().act(if_(of.filled))
        if of.members is None:
            out.text("[" + self.open_pad).act(range_(DOT, "$i", "$v"), if_(INDEX)).text(self.item_sep)
            out.act(END, self.write(of.element, VALUE), END).text(self.close_pad + "]")
        else:
            out.text("{" + self.open_pad)
            out.act(declare("$s", EMPTY), range_(of.members, "$k", "$v"), print_(SEP))
            fast = of.element == JSON_VALUE and (self.indent is None or self.depth == 0)
            if fast:
                # (a key and a string value that print as they are, as most arguments do: one
                # test of three calls for both, where each alone takes three and the value's
                # type two more; in the compact writer and an indented one's outer map only,
                # each copy being parsed with the template)
                out.act(if_(composed(all_print_as_is(["$k", "$v"], string_typed="$v")))).text('"')
                out.act(self.as_is(KEY)).text('"' + self.key_sep + '"').act(self.as_is(VALUE)).text('"')
                out.act(ELSE)
            out.act(self.quote(KEY)).text(self.key_sep).act(self.write(of.element, VALUE))
            if fast:
                out.act(END)
            out.act(assign("$s", self.lit(self.item_sep)), END)
            out.text(self.close_pad + "}")
        return out.act(ELSE).text(of.empty).act(END).done()

    def dispatch(self, go_types: tuple[str, ...]) -> Items:
        """Tests of `printf "%T"` in this order, one per writer (types sharing one together)."""
        branches: dict[Items, list[str]] = {}
        for go_type in go_types:
            branch = (print_(JSON_DOT),) if go_type in JSON_SCALARS else self.write(go_type, DOT, levels=1)
            branches.setdefault(branch, []).append(go_type)
        out = self.body().act(declare("$t", ir.command("printf", ir.String.of("%T"), DOT)))
        for n, (branch, types) in enumerate(branches.items()):
            test = ir.command("eq", TYPE, *(ir.String.of(go_type) for go_type in types))
            out.act(else_if(test) if n else if_(test), branch)
        return out.act(ELSE, self.as_is(JSON_DOT), END).done()

    def field(self, field: SchemaField) -> Items:
        """A schema struct's field, its usual value (the one Ollama fills in) printed as constant text."""
        value = self.write(field.go_type, ir.Field((field.go,)))
        if field.usual is None:
            return value
        usual = self.shown(json.dumps(field.usual, ensure_ascii=False))
        test = ir.command("eq", ir.Field((field.go,)), ir.String.of(field.usual))
        return (if_(test), *literal(usual), ELSE, *value, END)


def _json_writers(
    indent: int | None, depth: int, separators: tuple[str, str] | None, html: bool = False
) -> dict[str, tree.Generated]:
    """The JSON writers of one layout at one nesting depth: Python `json.dumps` layout of every
    type Ollama hands a template, a `define` per Go type and one telling an unknown type apart.
    With `html`, what they print is HTML-escaped, as a Markup concatenation escapes the JSON
    text (`'...'|safe + x|tojson`): escaping a text piece by piece escapes the whole.

    A field, element or map value whose Go type is certain (SCHEMA_FIELDS, CONTAINERS) is
    written by its type's writer one level deeper, with no run-time test: only a value of
    unknown type pays for `printf "%T"` and the tests of DISPATCH_ORDER (of JSON_VALUE_TYPES,
    for a value decoded from the request's JSON). Separators and brackets are literal text,
    not actions (nothing to parse or evaluate); a struct's fields that are always written come
    first without a test, and optional ones print `$s`, empty until a field was written, as
    their separator.
    """
    layout = _JsonLayout(indent, depth, separators, html)
    writers = {ANY_TYPE: layout.dispatch(DISPATCH_ORDER), JSON_VALUE: layout.dispatch(JSON_VALUE_TYPES)}
    for struct, fields in SCHEMA_FIELDS.items():
        pairs = [
            (ir.Field((field.go,)) if field.optional else None, field.key, layout.field(field)) for field in fields
        ]
        writers[SCHEMA_TYPES[struct]] = layout.obj(pairs)
    for go_type, of in CONTAINERS.items():
        writers[go_type] = layout.container(of)  # (types sharing a writer: the same code under one name)
    return {
        layout.helper(go_type, here=True): tree.Generated((ir.Define(layout.helper(go_type, here=True)), *body, END))
        for go_type, body in writers.items()
    }


def _json_string_helper(html: bool = False) -> tree.Generated:
    """`ofc_json_str`: a string as Python's json.dumps writes it (see textops.json_string);
    with `html`, HTML-escaped."""
    body = Statements()
    json_string(body, GoOperand(DOT), printed=True, html=html)
    return tree.Generated((ir.Define(_string_writer(html)), *body.nodes, END))


def _string_writer(html: bool) -> str:
    """The name of the one string writer (of its HTML-escaping copy, with `html`)."""
    return json_helper_name(None, 0, None, "string", html)


def json_helper_name(
    indent: int | None,
    depth: int,
    separators: tuple[str, str] | None = None,
    go_type: str = ANY_TYPE,
    html: bool = False,
) -> str:
    """The writer of `go_type` (by default: of any type, told at run time) for this layout at
    this nesting depth (`tojson(separators=...)` gets its own, and so does HTML-escaped output);
    strings have one writer."""
    escaped = "_html" if html else ""
    if go_type == "string":
        return f"ofc_json_str{escaped}"
    layout = escaped + ("" if separators is None else "_sep_" + "_".join(part.encode().hex() for part in separators))
    name = f"ofc_json{layout}" if indent is None else f"ofc_json{indent}{layout}_{depth}"
    return f"{name}_{_WRITERS[go_type]}" if _WRITERS[go_type] else name


@functools.cache
def _layout_writers(indent: int | None, separators: tuple[str, str] | None, html: bool) -> dict[str, tree.Generated]:
    """Every writer of a layout by name, with the compact ones that end its indented ones and
    the string writer."""
    if indent is None:
        strings = _string_writer(html)
        return {**_json_writers(None, 0, separators, html), strings: _json_string_helper(html)}
    writers: dict[str, tree.Generated] = {}
    for depth in range(MAX_INDENT_DEPTH + 1):
        writers.update(_json_writers(indent, depth, separators, html))
    return {**writers, **_layout_writers(None, separators, html)}


@functools.cache
def json_writers(
    entry: str, indent: int | None, separators: tuple[str, str] | None = None, html: bool = False
) -> dict[str, tree.Generated]:
    """The Go code of the writer `entry` (a `json_helper_name` of this layout) and of every
    writer it may call, by name: a template holds only the writers its `tojson`s can reach."""
    layout = _layout_writers(indent, separators, html)
    reached: dict[str, tree.Generated] = {}
    waiting = [entry]
    while waiting:
        name = waiting.pop()
        if name not in reached:
            reached[name] = layout[name]
            waiting += reached[name].calls()
    return reached
