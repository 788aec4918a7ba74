"""Go template `define` helpers the translator emits when a template needs them.

Go's text/template has no JSON-with-Python-separators, no Python repr and no string trimming.
Each helper below rebuilds one of them from what Go does have: `printf "%T"` to tell types
apart, `textops.json_string` to quote strings, ranging over ints and Go 1.24 iterator functions, and
`slice`/`index` on strings. Helpers take one value (Go templates pass one argument), so the
indented JSON writers are emitted once per nesting depth, one per Go type Ollama hands a template
(and one telling an unknown type apart); a template holds only those its `tojson`s can reach.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import NamedTuple

from . import ir, tree
from .calls import GoCall
from .reprs import LEAD_BYTE, rune_repr_escape
from .textops import (
    all_print_as_is,
    escape_html,
    go_string,
    html_of,
    json_string,
    position_after,
    prints_as_is,
)
from .verbs import Verbs

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
    members: str | None = None
    #: what json.dumps writes for it when empty (transformers passes no tools as None)
    empty: str = "[]"
    #: what is true when it has members (a non-nil pointer to no properties is still empty)
    filled: str = "."


CONTAINERS: dict[str, Container] = {
    "template.templateTools": Container("tools", "template.templateTool", empty="null"),
    "template.templateProperties": Container("properties", "api.ToolProperty", ".", "{}"),
    "*api.ToolPropertiesMap": Container("ordered_properties", "api.ToolProperty", ".All", "{}", ".Len"),
    "[]api.ToolProperty": Container("any_of", "api.ToolProperty"),
    "[]string": Container("strings", "string"),
    "[]interface {}": Container("list", JSON_VALUE),
    "map[string]interface {}": Container("map", JSON_VALUE, ".", "{}"),
    "template.templateArgs": Container("map", JSON_VALUE, ".", "{}"),
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


def _text(data: str) -> str:
    """Literal output inside a helper: raw text where the lexer reads it back as text (no action
    to parse), an action where it could not be (`{{`, or a `{` the next action would join)."""
    if not data:
        return ""
    if "{{" in data:
        return f"{{{{ {go_string(data)} }}}}"
    if data.endswith("{"):
        return data[:-1] + '{{ "{" }}'
    return data


class _Code:
    """Helper code built from literal text and actions, adjacent texts written as one; with
    `shown`, the text as it is printed (HTML-escaped, for the `html` layout)."""

    def __init__(self, shown: Callable[[str], str] = str) -> None:
        self.parts: list[str] = []
        self.pending = ""
        self.shown = shown

    def text(self, data: str) -> _Code:
        self.pending += self.shown(data)
        return self

    def code(self, action: str) -> _Code:
        self.parts.append(_text(self.pending))
        self.pending = ""
        self.parts.append(action)
        return self

    def done(self) -> str:
        self.code("")
        return "".join(self.parts)


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

    def lit(self, data: str) -> str:
        """A Go string literal of text the writer prints."""
        return go_string(self.shown(data))

    def code(self) -> _Code:
        return _Code(self.shown)

    def as_is(self, expr: str) -> str:
        """Print text the writer has found needs no JSON escaping (a variable or a call)."""
        return f"{{{{ {html_of(expr) if self.html else expr} }}}}"

    def helper(self, go_type: str, here: bool = False) -> str:
        """The writer of `go_type` for a value nested one level deeper (or at this depth)."""
        if here:
            return json_helper_name(self.indent, self.depth, self.separators, go_type, self.html)
        if self.indent is None or self.depth >= MAX_INDENT_DEPTH:
            return json_helper_name(None, 0, self.separators, go_type, self.html)  # compact from there on
        return json_helper_name(self.indent, self.depth + 1, self.separators, go_type, self.html)

    def quote(self, expr: str) -> str:
        return f'{{{{ template "{_string_writer(self.html)}" {expr} }}}}'

    def write(self, go_type: str, expr: str, levels: int = 2) -> str:
        """`expr` of `go_type` written as a value whose own members are `levels` deeper than
        this writer's brackets (2: a member of this writer's object or list)."""
        if go_type == "string":
            return self.quote(expr)
        if go_type == "api.PropertyType":
            return self.type_names(expr, levels)
        return f'{{{{ template "{self.helper(go_type, here=levels == 1)}" {expr} }}}}'

    def obj(self, pairs: list[tuple[str, str, str]]) -> str:
        """`{`, `"key": value` for present fields with separators only between written ones, `}`."""
        out = self.code().text("{" + self.open_pad)
        written = False  # certainly, by a field written without a test
        declared = False
        for guard, key, value in pairs:
            head = f'"{key}"{self.key_sep}'
            if written:
                if guard != "true":
                    out.code(f"{{{{ if {guard} }}}}")
                out.text(self.item_sep + head).code(value)
            elif guard == "true":
                if declared:
                    out.code("{{ $s }}")
                out.text(head).code(value)
                written = True
            else:
                if not declared:
                    out.code('{{ $s := "" }}')
                    declared = True
                out.code(f"{{{{ if {guard} }}}}").code("{{ $s }}").text(head).code(value)
                out.code(f"{{{{ $s = {self.lit(self.item_sep)} }}}}")
            if guard != "true":
                out.code("{{ end }}")
        return out.text(self.close_pad + "}").done()

    def type_names(self, expr: str, levels: int) -> str:
        """A schema `type` (a list in Ollama): one name is a string, several a list `levels`
        deeper than this writer's brackets, laid out as json.dumps lays out any list. Which
        is told by a loop without calls: the last index is 0 for one name."""
        if self.indent is None:
            first, between, last = "", self.item, ""
        else:
            first = "\n" + " " * (self.indent * (self.depth + levels))
            between, last = self.item + first, "\n" + " " * (self.indent * (self.depth + levels - 1))
        return (
            self.code()
            .code(f"{{{{ $last := 0 }}}}{{{{ range $i, $n := {expr} }}}}{{{{ $last = $i }}}}{{{{ end }}}}")
            .code("{{ if $last }}")
            .text("[" + first)
            .code(f"{{{{ range $i, $n := {expr} }}}}{{{{ if $i }}}}")
            .text(between)
            .code(f"{{{{ end }}}}{self.quote('$n')}{{{{ end }}}}")
            .text(last + "]")
            .code(f"{{{{ else if {expr} }}}}{{{{ range $n := {expr} }}}}{self.quote('$n')}{{{{ end }}}}")
            .code("{{ else }}[]{{ end }}")
            .done()
        )

    def container(self, of: Container) -> str:
        """A list, or a map in the order Go ranges it (sorted keys; an ordered map's own)."""
        out = self.code().code(f"{{{{ if {of.filled} }}}}")
        if of.members is None:
            out.text("[" + self.open_pad).code("{{ range $i, $v := . }}{{ if $i }}").text(self.item_sep)
            out.code(f"{{{{ end }}}}{self.write(of.element, '$v')}{{{{ end }}}}").text(self.close_pad + "]")
        else:
            out.text("{" + self.open_pad)
            out.code(f'{{{{ $s := "" }}}}{{{{ range $k, $v := {of.members} }}}}{{{{ $s }}}}')
            fast = of.element == JSON_VALUE and (self.indent is None or self.depth == 0)
            if fast:
                # (a key and a string value that print as they are, as most arguments do: one
                # test of three calls for both, where each alone takes three and the value's
                # type two more; in the compact writer and an indented one's outer map only,
                # each copy being parsed with the template)
                out.code(f"{{{{ if {all_print_as_is(['$k', '$v'], string_typed='$v')} }}}}").text('"')
                out.code(self.as_is("$k")).text('"' + self.key_sep + '"').code(self.as_is("$v")).text('"')
                out.code("{{ else }}")
            out.code(self.quote("$k")).text(self.key_sep).code(self.write(of.element, "$v"))
            if fast:
                out.code("{{ end }}")
            out.code(f"{{{{ $s = {self.lit(self.item_sep)} }}}}{{{{ end }}}}")
            out.text(self.close_pad + "}")
        return out.code("{{ else }}").text(of.empty).code("{{ end }}").done()

    def dispatch(self, go_types: tuple[str, ...]) -> str:
        """Tests of `printf "%T"` in this order, one per writer (types sharing one together)."""
        branches: dict[str, list[str]] = {}
        for go_type in go_types:
            branch = "{{ json . }}" if go_type in JSON_SCALARS else self.write(go_type, ".", levels=1)
            branches.setdefault(branch, []).append(go_type)
        tests = "".join(
            f"{{{{ {'else if' if n else 'if'} eq $t {' '.join(go_string(go_type) for go_type in go_types)} }}}}{branch}"
            for n, (branch, go_types) in enumerate(branches.items())
        )
        return f'{{{{ $t := printf "%T" . }}}}{tests}{{{{ else }}}}{self.as_is("json .")}{{{{ end }}}}'

    def field(self, field: SchemaField) -> str:
        """A schema struct's field, its usual value (the one Ollama fills in) printed as constant text."""
        value = self.write(field.go_type, f".{field.go}")
        if field.usual is None:
            return value
        usual = self.shown(json.dumps(field.usual, ensure_ascii=False))
        return f"{{{{ if eq .{field.go} {go_string(field.usual)} }}}}{_text(usual)}{{{{ else }}}}{value}{{{{ end }}}}"


def _json_writers(
    indent: int | None, depth: int, separators: tuple[str, str] | None, html: bool = False
) -> dict[str, str]:
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
        pairs = [(f".{field.go}" if field.optional else "true", field.key, layout.field(field)) for field in fields]
        writers[SCHEMA_TYPES[struct]] = layout.obj(pairs)
    for go_type, of in CONTAINERS.items():
        writers[go_type] = layout.container(of)  # (types sharing a writer: the same code under one name)
    return {
        layout.helper(go_type, here=True): _untrimmed(
            f'{{{{ define "{layout.helper(go_type, here=True)}" }}}}{body}{{{{ end }}}}'
        )
        for go_type, body in writers.items()
    }


def _untrimmed(code: str) -> str:
    """Helpers are written without whitespace between actions, so no action may trim text."""
    return code.replace("{{- ", "{{ ")


class _Statements(Verbs[None]):
    """Collects the statements of a textops function as the body of a `define`."""

    def __init__(self) -> None:
        self.code: list[str] = []
        self.count = 0

    def temp(self) -> str:
        self.count += 1
        return f"$_{self.count}"

    def action(self, code: str) -> None:
        self.code.append("{{ " + code + " }}")

    def if_(self, condition: str | ir.Operand, keyword: str = "if") -> None:
        """An `if` written as composed, without the parentheses around a call (a helper's
        conditions are not folded)."""
        if isinstance(condition, ir.Node):
            self.action(f"{keyword} {condition.code}")  # (a call's pipeline: not in parentheses)
        else:
            self.action(f"{keyword} {condition.bare() if isinstance(condition, GoCall) else condition}")


def _json_string_helper(html: bool = False) -> str:
    """`ofc_json_str`: a string as Python's json.dumps writes it (see textops.json_string);
    with `html`, HTML-escaped."""
    body = _Statements()
    json_string(body, ".", printed=True, html=html)
    return f'{{{{ define "{_string_writer(html)}" }}}}' + "".join(body.code) + "{{ end }}"


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
def _layout_writers(indent: int | None, separators: tuple[str, str] | None, html: bool) -> dict[str, str]:
    """Every writer of a layout by name, with the compact ones that end its indented ones and
    the string writer."""
    if indent is None:
        strings = _string_writer(html)
        return {**_json_writers(None, 0, separators, html), strings: _json_string_helper(html)}
    writers: dict[str, str] = {}
    for depth in range(MAX_INDENT_DEPTH + 1):
        writers.update(_json_writers(indent, depth, separators, html))
    return {**writers, **_layout_writers(None, separators, html)}


@functools.cache
def json_writers(
    entry: str, indent: int | None, separators: tuple[str, str] | None = None, html: bool = False
) -> dict[str, str]:
    """The Go code of the writer `entry` (a `json_helper_name` of this layout) and of every
    writer it may call, by name: a template holds only the writers its `tojson`s can reach."""
    layout = _layout_writers(indent, separators, html)
    reached: dict[str, str] = {}
    waiting = [entry]
    while waiting:
        name = waiting.pop()
        if name not in reached:
            reached[name] = layout[name]
            waiting += [called for node in tree.action_nodes([reached[name]]) for called in node.calls()]
    return reached


def _byte_table(marked: dict[int, int]) -> str:
    """A 256-byte Go string literal: the value given for each marked byte, 0 (falsy) elsewhere."""
    return go_string("".join(chr(marked.get(byte, 0)) for byte in range(256)))


def _repr_plain(quote: int) -> str:
    """Non-zero for the bytes `repr()` writes unchanged inside a string quoted with `quote`;
    zero (falsy, and the shortest literal for the rarer bytes) for controls, backslash, DEL,
    the quote, and the lead bytes of multi-byte characters (some of which repr escapes)."""
    kept = (byte for byte in range(256) if byte >= 32 and byte not in (92, 127, quote))
    return _byte_table({byte: 46 for byte in kept if not LEAD_BYTE <= byte <= 244})


def _repr_rune() -> str:
    """At a multi-byte character `$s` holds at `$i`: its escape, when repr writes one, after the
    run before it (see reprs.rune_repr_escape)."""
    body = _Statements()
    rune, escape = rune_repr_escape(body, "$s", "$i")
    return (
        "".join(body.code)
        + f"{{{{- if {escape} }}}}{{{{- slice $s $last $i }}}}{{{{- {escape} }}}}"
        + f"{{{{- $last = {position_after('$s', '$i', f'(len {rune})')} }}}}{{{{- end }}}}"
    )


#: `ofc_repr_str`: which quote is decided by a scan only when `html` shows a quote may be there;
#: the text is printed in runs between the bytes repr escapes, found by one table lookup each
_REPR_STRING = (
    '{{- define "ofc_repr_str" }}{{- $s := . }}{{- $sq := false }}{{- $dq := false }}'
    "{{- if ne (len (html $s)) (len $s) }}{{- range $i := len $s }}"
    f"{{{{- $b := index $s $i }}}}{{{{- if index {_byte_table({byte: 46 for byte in range(256) if byte not in (34, 39)})} $b }}}}"
    "{{- else if eq $b 39 }}{{- $sq = true }}{{- else }}{{- $dq = true }}{{- end }}{{- end }}{{- end }}"
    f'{{{{- $q := "\'" }}}}{{{{- $qb := 39 }}}}{{{{- $plain := {_repr_plain(39)} }}}}'
    f'{{{{- if and $sq (not $dq) }}}}{{{{- $q = "\\"" }}}}{{{{- $qb = 34 }}}}{{{{- $plain = {_repr_plain(34)} }}}}{{{{- end }}}}'
    "{{- $q }}{{- $last := 0 }}"
    # (the usual string, which %q writes as it is: so does Python, between the quote chosen)
    f"{{{{- if not {prints_as_is('$s')} }}}}"
    "{{- range $i := len $s }}{{- if index $plain (index $s $i) }}{{- else }}"
    f"{{{{- $b := index $s $i }}}}{{{{- if ge $b {LEAD_BYTE} }}}}{_repr_rune()}{{{{- else }}}}"
    "{{- slice $s $last $i }}"
    "{{- if eq $b 92 }}\\\\{{- else if eq $b $qb }}\\{{ $q }}{{- else if eq $b 10 }}\\n{{- else if eq $b 13 }}\\r"
    '{{- else if eq $b 9 }}\\t{{- else }}{{- printf "\\\\x%02x" $b }}{{- end }}'
    "{{- $last = len (slice $s (len (slice (slice $s $i) 1))) }}{{- end }}{{- end }}{{- end }}{{- end }}"
    "{{- slice $s $last }}{{- $q }}{{- end }}"
)


#: Python repr of strings, numbers, booleans, None, lists and dicts (`{{ dict }}` in Jinja).
REPR_HELPER = _untrimmed(
    '{{- define "ofc_repr" }}{{- $t := printf "%T" . }}'
    '{{- if eq $t "string" }}{{- template "ofc_repr_str" . }}'
    '{{- else if eq $t "bool" }}{{- if . }}True{{- else }}False{{- end }}'
    '{{- else if eq $t "<nil>" }}None'
    '{{- else if eq $t "float64" "int" }}{{- json . }}'
    '{{- else if eq $t "map[string]interface {}" "template.templateArgs" }}{{- $first := true }}{{- "{" }}'
    "{{- range $k, $v := . }}{{- if $first }}{{- $first = false }}{{- else }}, {{- end }}"
    '{{- template "ofc_repr_str" $k }}: {{ template "ofc_repr" $v }}{{- end }}}'
    '{{- else if eq $t "[]interface {}" "[]string" }}[{{- range $i, $v := . }}{{- if $i }}, {{ end }}'
    '{{- template "ofc_repr" $v }}{{- end }}]'
    "{{- else }}{{- print . }}{{- end }}{{- end }}"
    # strings: single quotes unless the text has ' and no ", like CPython's repr
    + _REPR_STRING
    # `{{ value }}` of an untyped value: Jinja prints strings bare and everything else as repr
    + '{{- define "ofc_str" }}{{- if eq (printf "%T" .) "string" }}{{- . }}{{- else }}{{- template "ofc_repr" . }}{{- end }}{{- end }}'
)
