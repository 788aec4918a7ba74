"""Go template `define` helpers the translator emits when a template needs them.

Go's text/template has no JSON-with-Python-separators, no Python repr and no string trimming.
Each helper below rebuilds one of them from what Go does have: `printf "%T"` to tell types
apart, `textops.json_string` to quote strings, ranging over ints and Go 1.24 iterator functions, and
`slice`/`index` on strings. Helpers take one value (Go templates pass one argument), so the
indented JSON writer is emitted once per nesting depth.
"""

from __future__ import annotations

from .textops import LEAD_BYTE, go_string, json_string, position_after, rune_repr_escape

#: Deepest JSON nesting the indented writer handles (tool schemas are far shallower).
MAX_INDENT_DEPTH = 10

#: The JSON keys of Ollama's tool, function and parameters structs, in the order transformers'
#: `get_json_schema` writes them: (Go field, key, optional), an optional key written only when
#: its field is set. The one table the JSON writers and the dict views of a schema read.
SCHEMA_FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "tool": (("Type", "type", False), ("Function", "function", False)),
    "function": (("Name", "name", False), ("Description", "description", True), ("Parameters", "parameters", False)),
    "parameters": (("Type", "type", False), ("Properties", "properties", False), ("Required", "required", True)),
}
#: the string fields among them (written as JSON strings; the others are structs or lists)
SCHEMA_STRINGS = {"Type", "Name", "Description"}

#: Key order used for a property schema: the order `transformers.get_json_schema` writes.
PROPERTY_KEYS = (
    "AnyOf:anyOf",
    "Type:type",
    "Items:items",
    "Enum:enum",
    "Properties:properties",
    "Required:required",
    "Description:description",
)


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
    """Helper code built from literal text and actions, adjacent texts written as one."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = ""

    def text(self, data: str) -> _Code:
        self.pending += data
        return self

    def code(self, action: str) -> _Code:
        self.parts.append(_text(self.pending))
        self.pending = ""
        self.parts.append(action)
        return self

    def done(self) -> str:
        self.code("")
        return "".join(self.parts)


def _json_writer(
    name: str, indent: int | None, depth: int, child: str, separators: tuple[str, str] | None = None
) -> str:
    """One JSON writer: Python `json.dumps` layout over every type Ollama hands a template.

    Separators and brackets are literal text, not actions (nothing to parse or evaluate); a
    struct's fields that are always written come first without a test, and optional ones
    print `$s`, empty until a field was written, as their separator.
    """
    item, key_sep = separators or ((", " if indent is None else ","), ": ")
    if indent is None:
        open_pad, item_sep, close_pad = "", item, ""
    else:
        open_pad = "\n" + " " * (indent * (depth + 1))
        item_sep = item + open_pad
        close_pad = "\n" + " " * (indent * depth)
    lit = go_string

    def quote(expr: str) -> str:
        return f'{{{{ template "ofc_json_str" {expr} }}}}'

    def sub(expr: str) -> str:
        return f'{{{{ template "{child}" {expr} }}}}'

    def obj(pairs: list[tuple[str, str, str]]) -> str:
        """`{`, `"key": value` for present fields with separators only between written ones, `}`."""
        out = _Code().text("{" + open_pad)
        written = False  # certainly, by a field written without a test
        declared = False
        for guard, key, value in pairs:
            head = f'"{key}"{key_sep}'
            if written:
                if guard != "true":
                    out.code(f"{{{{ if {guard} }}}}")
                out.text(item_sep + head).code(value)
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
                out.code(f"{{{{ $s = {lit(item_sep)} }}}}")
            if guard != "true":
                out.code("{{ end }}")
        return out.text(close_pad + "}").done()

    def type_names(expr: str, levels: int) -> str:
        """A schema `type` (a list in Ollama): one name is a string, several a list `levels`
        deeper than this writer's object, laid out as json.dumps lays out any list."""
        if indent is None:
            first, between, last = "", item, ""
        else:
            first = "\n" + " " * (indent * (depth + levels))
            between, last = item + first, "\n" + " " * (indent * (depth + levels - 1))
        return (
            _Code()
            .code(f"{{{{ if eq (len {expr}) 1 }}}}{quote(f'(index {expr} 0)')}{{{{ else if {expr} }}}}")
            .text("[" + first)
            .code(f"{{{{ range $i, $n := {expr} }}}}{{{{ if $i }}}}")
            .text(between)
            .code(f"{{{{ end }}}}{quote('$n')}{{{{ end }}}}")
            .text(last + "]")
            .code("{{ else }}[]{{ end }}")
            .done()
        )

    def mapping(range_expr: str) -> str:
        return (
            _Code()
            .code("{{ if . }}")
            .text("{" + open_pad)
            .code(f'{{{{ $s := "" }}}}{{{{ range $k, $v := {range_expr} }}}}{{{{ $s }}}}{quote("$k")}')
            .text(key_sep)
            .code(f"{sub('$v')}{{{{ $s = {lit(item_sep)} }}}}{{{{ end }}}}")
            .text(close_pad + "}")
            .code("{{ else }}{}{{ end }}")
            .done()
        )

    sequence = (
        _Code()
        .code("{{ if . }}")
        .text("[" + open_pad)
        .code("{{ range $i, $v := . }}{{ if $i }}")
        .text(item_sep)
        .code(f"{{{{ end }}}}{sub('$v')}{{{{ end }}}}")
        .text(close_pad + "]")
        .code("{{ else }}[]{{ end }}")
        .done()
    )

    def schema_object(struct: str) -> str:
        return obj(
            [
                (f".{go}" if optional else "true", key, (quote if go in SCHEMA_STRINGS else sub)(f".{go}"))
                for go, key, optional in SCHEMA_FIELDS[struct]
            ]
        )

    tool, function, parameters = (schema_object(struct) for struct in ("tool", "function", "parameters"))
    prop = obj(
        [
            (f".{field}", key, sub(f".{field}") if field != "Type" else type_names(".Type", 2))
            for field, key in (entry.split(":") for entry in PROPERTY_KEYS)
        ]
    )
    return (
        f'{{{{ define "{name}" }}}}{{{{ $t := printf "%T" . }}}}'
        '{{ if eq $t "string" }}{{ template "ofc_json_str" . }}'
        '{{ else if eq $t "bool" "float64" "int" "int64" "json.Number" }}{{ json . }}'
        '{{ else if eq $t "<nil>" }}null'
        # no tools: transformers passes `tools=None`, which json.dumps writes as null
        '{{ else if and (eq $t "template.templateTools") (not .) }}null'
        f'{{{{ else if eq $t "template.templateTool" }}}}{tool}'
        f'{{{{ else if eq $t "template.templateToolFunction" }}}}{function}'
        f'{{{{ else if eq $t "template.templateToolFunctionParameters" }}}}{parameters}'
        f'{{{{ else if eq $t "api.ToolProperty" }}}}{prop}'
        f'{{{{ else if eq $t "api.PropertyType" }}}}{type_names(".", 1)}'
        f'{{{{ else if eq $t "*api.ToolPropertiesMap" }}}}{mapping(".All")}'
        f'{{{{ else if eq $t "map[string]interface {{}}" "template.templateArgs" "template.templateProperties" }}}}{mapping(".")}'
        f'{{{{ else if eq $t "[]interface {{}}" "[]string" "template.templateTools" "[]api.ToolProperty" }}}}{sequence}'
        "{{ else }}{{ json . }}{{ end }}{{ end }}"
    )


def _untrimmed(code: str) -> str:
    """Helpers are written without whitespace between actions, so no action may trim text."""
    return code.replace("{{- ", "{{ ")


class _Statements:
    """Collects the statements of a textops function as the body of a `define`."""

    def __init__(self) -> None:
        self.code: list[str] = []
        self.count = 0

    def temp(self) -> str:
        self.count += 1
        return f"$_{self.count}"

    def action(self, code: str) -> None:
        self.code.append("{{ " + code + " }}")


def _json_string_helper() -> str:
    """`ofc_json_str`: a string as Python's json.dumps writes it (see textops.json_string)."""
    body = _Statements()
    json_string(body, ".", printed=True)
    return '{{ define "ofc_json_str" }}' + "".join(body.code) + "{{ end }}"


def json_helper_name(indent: int | None, depth: int, separators: tuple[str, str] | None = None) -> str:
    """The writer for this layout at this nesting depth (`tojson(separators=...)` gets its own)."""
    layout = "" if separators is None else "_sep_" + "_".join(part.encode().hex() for part in separators)
    return f"ofc_json{layout}" if indent is None else f"ofc_json{indent}{layout}_{depth}"


def json_helpers(indent: int | None, separators: tuple[str, str] | None = None) -> tuple[str, str]:
    """(entry helper name, Go code of all helpers) for `tojson` / `tojson(indent=N)` (and with
    explicit `separators`); the compact writer of a layout also ends its indented ones."""
    compact = json_helper_name(None, 0, separators)
    if indent is None:
        code = _untrimmed(_json_writer(compact, None, 0, compact, separators))
        return compact, code + (_json_string_helper() if separators is None else "")
    names = [json_helper_name(indent, depth, separators) for depth in range(MAX_INDENT_DEPTH + 1)]
    code = ""
    for depth, name in enumerate(names):
        child = names[depth + 1] if depth < MAX_INDENT_DEPTH else compact
        code += _json_writer(name, indent, depth, child, separators)
    return names[0], _untrimmed(code)  # the depth-limit fallback (the compact writer) is emitted separately


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
    run before it (see textops.rune_repr_escape)."""
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
    "{{- $q }}{{- $last := 0 }}{{- range $i := len $s }}{{- if index $plain (index $s $i) }}{{- else }}"
    f"{{{{- $b := index $s $i }}}}{{{{- if ge $b {LEAD_BYTE} }}}}{_repr_rune()}{{{{- else }}}}"
    "{{- slice $s $last $i }}"
    "{{- if eq $b 92 }}\\\\{{- else if eq $b $qb }}\\{{ $q }}{{- else if eq $b 10 }}\\n{{- else if eq $b 13 }}\\r"
    '{{- else if eq $b 9 }}\\t{{- else }}{{- printf "\\\\x%02x" $b }}{{- end }}'
    "{{- $last = len (slice $s (len (slice (slice $s $i) 1))) }}{{- end }}{{- end }}{{- end }}"
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
