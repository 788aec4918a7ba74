"""`tojson` and Python's repr() of values: the JSON layout written inline or through helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from jinja2 import nodes

from ...errors import ConversionError
from ..go import textops
from ..go.gohelpers import MAX_INDENT_DEPTH, PROPERTY_KEYS, REPR_HELPER, json_helper_name, json_helpers
from ..go.textops import Emitter, go_string, json_string, repr_of_json, repr_string
from . import toolschema
from .logic import Logic
from .values import (
    ANY,
    ANYOF,
    ARGS,
    CALL,
    CALLS,
    CONTENT,
    ELEMENT,
    FUNC,
    INT,
    LIST,
    MAPPED,
    PARAMS,
    PART,
    PARTS,
    PROP,
    PROPS,
    RECORD,
    SELECT,
    STR,
    TFUNC,
    TOOL,
    TOOLS,
    UNDEF,
    Value,
    ValueOf,
    keyword_arguments,
)


class JsonEmitter(Emitter, Protocol):
    """What the JSON writer writes through: an `Emitter` that also prints, warns and fails."""

    sink: str | None
    helpers: dict[str, str]

    def put(self, code: str) -> None: ...

    def text(self, data: str) -> None: ...

    def warn(self, node: nodes.Node | None, construct: str, effect: str) -> None: ...

    def fail(self, node: nodes.Node, construct: str, why: str = ...) -> ConversionError: ...

    def call_helper(self, name: str, code: str, node: nodes.Node) -> None: ...

    def json_helper(
        self, indent: int | None, depth: int, node: nodes.Node, separators: tuple[str, str] | None = None
    ) -> str: ...


class JsonWriter:
    """Python's json.dumps of a value written inline, piece by piece, so it can be captured.

    The define helpers cannot be captured into a variable, so this writer unrolls the same
    layout statically, following the value's kind in Ollama's data model; untyped values
    (argument values, schema `items`) branch on their Go type at run time, to a fixed depth,
    below which the helpers take over when the output is not captured.
    """

    MAX_DEPTH = 10
    #: nesting inside one untyped value: each level doubles the code (a map and a list branch)
    MAX_UNTYPED = 3

    def __init__(
        self,
        tr: JsonEmitter,
        indent: int | None,
        node: nodes.Node,
        python: bool = False,
        schema: bool = False,
        separators: tuple[str, str] | None = None,
    ) -> None:
        self.tr, self.indent, self.node = tr, indent, node
        #: `tojson(separators=(item, key))`; None for json.dumps' defaults
        self.separators = separators
        self.item_sep, self.key_sep = separators or ((", " if indent is None else ","), ": ")
        self.untyped_level = 0
        self.in_anyof = False
        #: Python's repr() layout instead (`{{ tool }}`, `tool | string`): quotes, True/False/None
        self.python = python
        if python and schema:
            # a schema's repr cannot hand deep values to the helpers (they write JSON): a smaller
            # inline depth, still past the nesting a tool with one nested object and a list reaches
            self.MAX_DEPTH, self.MAX_UNTYPED = 9, 1

    def literal(self, value: object) -> str:
        """A constant as this layout writes it."""
        return (
            repr(value)
            if self.python
            else json.dumps(value, ensure_ascii=False, separators=(self.item_sep, self.key_sep))
        )

    def pad(self, depth: int) -> str:
        return "" if self.indent is None else "\n" + " " * (self.indent * depth)

    def sep(self, depth: int) -> str:
        return self.item_sep + self.pad(depth)

    def value(self, code: str, kind: str, depth: int) -> None:
        tr = self.tr
        if kind in {STR, CONTENT}:
            self.string(code)  # Ollama's message content is always a string
        elif kind == INT:
            tr.put(code)
        elif kind in {TOOLS, CALLS, LIST}:
            # no tools reach a template as None (Ollama sends none for an empty list too)
            empty = self.literal(None) if kind == TOOLS else "[]"
            self.sequence(code, depth, lambda item: self.value(item, ELEMENT.get(kind, ANY), depth + 1), empty)
        elif kind == TOOL:
            self.fields(code, depth, [("true", "type", ".Type", STR), ("true", "function", ".Function", TFUNC)])
        elif kind == TFUNC:
            self.fields(
                code,
                depth,
                [
                    ("true", "name", ".Name", STR),
                    (".Description", "description", ".Description", STR),
                    ("true", "parameters", ".Parameters", PARAMS),
                ],
            )
        elif kind == PARAMS:
            self.fields(
                code,
                depth,
                [
                    ("true", "type", ".Type", STR),
                    ("true", "properties", ".Properties", PROPS),
                    (".Required", "required", ".Required", LIST),
                ],
            )
        elif kind == CALL:
            self.fields(
                code,
                depth,
                [(".ID", "id", ".ID", STR), ("true", "type", "", "function"), ("true", "function", ".Function", FUNC)],
                always_first=False,
            )
        elif kind == "function":
            tr.text(self.literal("function"))
        elif kind == FUNC:
            self.fields(code, depth, [("true", "name", ".Name", STR), ("true", "arguments", ".Arguments", ARGS)])
        elif kind == PROP:
            pairs = []
            for entry in PROPERTY_KEYS:
                go, key = entry.split(":")
                sub = {
                    "AnyOf": "anyof",
                    "Type": "json",
                    "Items": ANY,
                    "Enum": LIST,
                    "Properties": PROPS,
                    "Required": LIST,
                    "Description": STR,
                }[go]
                pairs.append((f".{go}", key, f".{go}", sub))
            if self.python:
                self.fields(code, depth, pairs, always_first=False)
            else:
                self.property_fields(code, depth, pairs)
        elif kind in {PROPS, ARGS}:
            self.mapping(code, depth, PROP if kind == PROPS else ANY)
        elif kind == "anyof" and self.python and self.in_anyof:
            # each property level may hold both nested properties and anyOf: writing anyOf
            # inside anyOf inline would double the code at every level
            self.beyond_limit(code, depth)
        elif kind == "anyof":
            outer, self.in_anyof = self.in_anyof, True
            self.sequence(code, depth, lambda item: self.value(item, PROP, depth + 1))
            self.in_anyof = outer
        elif kind == "json":
            self.types(code, depth)
        elif kind == ANY:
            self.untyped(code, depth)
        else:
            raise tr.fail(self.node, f"tojson of {kind}")

    def too_deep(self, code: str, depth: int) -> bool:
        """At the depth limit the value at `depth` goes to `beyond_limit`; true when it did."""
        if depth <= self.MAX_DEPTH:
            return False
        self.beyond_limit(code, depth)
        return True

    def beyond_limit(self, code: str, depth: int) -> None:
        """The recursive `define` helpers write the rest exactly, unless the text is being
        captured (their output cannot be) or indented deeper than they go."""
        tr = self.tr
        if self.python:
            tr.warn(
                self.node,
                f"repr of a value nested deeper than {self.MAX_DEPTH} levels or {self.MAX_UNTYPED} levels of arguments",
                "written as Go's compact JSON from there on",
            )
            tr.put(f"(json {code})")
            return
        if tr.sink is None:
            tr.call_helper(tr.json_helper(self.indent, depth, self.node, self.separators), code, self.node)
            return
        tr.warn(
            self.node,
            f"tojson of a captured value nested deeper than {self.MAX_DEPTH} levels or {self.MAX_UNTYPED} levels of arguments",
            "written as Go's compact JSON from there on",
        )
        tr.put(f"(json {code})")

    def sequence(self, code: str, depth: int, item: Callable[[str], None], empty: str = "[]") -> None:
        tr = self.tr
        seq, i, v = tr.temp(), tr.temp(), tr.temp()
        tr.action(f"{seq} := {code}")
        tr.action(f"if {seq}")
        tr.text("[" + self.pad(depth + 1))
        tr.action(f"range {i}, {v} := {seq}")
        tr.action(f"if {i}")
        tr.text(self.sep(depth + 1))
        tr.action("end")
        if not self.too_deep(v, depth + 1):
            item(v)
        tr.action("end")
        tr.text(self.pad(depth) + "]")
        tr.action("else")
        tr.text(empty)
        tr.action("end")

    def mapping(self, code: str, depth: int, kind: str) -> None:
        """A map in sorted key order; Ollama's ordered property maps range through `.All`."""
        tr = self.tr
        m, first = tr.temp(), tr.temp()
        tr.action(f"{m} := {code}")
        tr.action(f"if {m}")
        tr.action(f"{first} := true")
        tr.text("{" + self.pad(depth + 1))
        if kind == PROP:
            # newer Ollama holds properties in an ordered map, ranged through its `.All`
            # iterator: chosen before one loop, so the members (and what nests in them) are
            # written once, not once per Go type at every level
            pairs = tr.temp()
            tr.action(f"{pairs} := {m}")
            tr.action(f'if eq (printf "%T" {m}) "*api.ToolPropertiesMap"')
            tr.action(f"{pairs} = {m}.All")
            tr.action("end")
            self.members(pairs, first, depth, kind)
        else:
            self.members(m, first, depth, kind)
        tr.text(self.pad(depth) + "}")
        tr.action("else")
        tr.text("{}")
        tr.action("end")

    def container(self, v: str, t: str, depth: int) -> None:
        """An untyped map or list (Go type name in `t`) through one loop: a map's keys sorted as
        Go ranges them, each member written once for both (only the brackets and keys differ),
        so each untyped level adds one copy of the code below it, not two."""
        tr = self.tr
        is_map, first, k, e = tr.temp(), tr.temp(), tr.temp(), tr.temp()
        tr.action(f'{is_map} := eq {t} "map[string]interface {{}}"')
        tr.action(f"if {v}")
        tr.action(f"if {is_map}")
        tr.text("{")
        tr.action("else")
        tr.text("[")
        tr.action("end")
        tr.text(self.pad(depth + 1))
        tr.action(f"{first} := true")
        tr.action(f"range {k}, {e} := {v}")
        tr.action(f"if {first}")
        tr.action(f"{first} = false")
        tr.action("else")
        tr.text(self.sep(depth + 1))
        tr.action("end")
        tr.action(f"if {is_map}")
        self.string(k)
        tr.text(self.key_sep)
        tr.action("end")
        if not self.too_deep(e, depth + 1):
            self.untyped(e, depth + 1)
        tr.action("end")
        tr.text(self.pad(depth))
        tr.action(f"if {is_map}")
        tr.text("}")
        tr.action("else")
        tr.text("]")
        tr.action("end")
        tr.action("else if " + is_map)
        tr.text("{}")
        tr.action("else")
        tr.text("[]")
        tr.action("end")

    def members(self, range_code: str, first: str, depth: int, kind: str) -> None:
        tr = self.tr
        k, v = tr.temp(), tr.temp()
        tr.action(f"range {k}, {v} := {range_code}")
        tr.action(f"if {first}")
        tr.action(f"{first} = false")
        tr.action("else")
        tr.text(self.sep(depth + 1))
        tr.action("end")
        self.string(k)
        tr.text(self.key_sep)
        if not self.too_deep(v, depth + 1):
            self.value(v, kind, depth + 1)
        tr.action("end")

    def fields(self, code: str, depth: int, pairs: list[tuple[str, str, str, str]], always_first: bool = True) -> None:
        """An object with fields in a fixed order; a guard other than `true` omits an empty one."""
        tr = self.tr
        obj, first = tr.temp(), tr.temp()
        tr.action(f"{obj} := {code}")
        tr.text("{" + self.pad(depth + 1))
        if not always_first:
            tr.action(f"{first} := true")
        for n, (guard, key, field, kind) in enumerate(pairs):
            present = "true" if guard == "true" else f"{obj}{guard}"
            if present != "true":
                tr.action(f"if {present}")
            if always_first:
                if n:
                    tr.text(self.sep(depth + 1))
            else:
                tr.action(f"if {first}")
                tr.action(f"{first} = false")
                tr.action("else")
                tr.text(self.sep(depth + 1))
                tr.action("end")
            tr.text(self.literal(key) + self.key_sep)
            if not self.too_deep(f"{obj}{field}", depth + 1):
                self.value(f"{obj}{field}", kind, depth + 1)
            if present != "true":
                tr.action("end")
        tr.text(self.pad(depth) + "}")

    def property_fields(self, code: str, depth: int, pairs: list[tuple[str, str, str, str]]) -> None:
        """A property schema's fields in order, as `fields` writes them, except that the two
        holding properties (`anyOf`'s list and `properties`' map) share one loop written once:
        a property nested in either is written by the same code, so each level of nesting adds
        one copy of the property's code, not two."""
        tr = self.tr
        obj, first, at = tr.temp(), tr.temp(), tr.temp()
        nested = [n for n, (_, _, field, _) in enumerate(pairs) if field in {".AnyOf", ".Properties"}]
        tr.action(f"{obj} := {code}")
        tr.text("{" + self.pad(depth + 1))
        tr.action(f"{first} := true")
        tr.action(f"range {at} := {len(pairs)}")
        opened = False
        for n, (guard, key, field, kind) in enumerate(pairs):
            if n in nested:
                continue
            tr.action(f"{'else if' if opened else 'if'} eq {at} {n}")
            opened = True
            tr.action(f"if {obj}{guard}")
            self.separator(first, depth)
            tr.text(self.literal(key) + self.key_sep)
            if not self.too_deep(f"{obj}{field}", depth + 1):
                self.value(f"{obj}{field}", kind, depth + 1)
            tr.action("end")
        tr.action("else")
        listed, mapped = (pairs[n] for n in nested)  # anyOf (a list), then properties (a map)
        items, is_map = tr.temp(), tr.temp()
        tr.action(f"{is_map} := eq {at} {nested[1]}")
        tr.action(f"{items} := {obj}{listed[2]}")
        tr.action(f"if {is_map}")
        tr.action(f"{items} = {obj}{mapped[2]}")
        tr.action("end")
        tr.action(f"if {items}")
        self.separator(first, depth)
        if depth + 1 > self.MAX_DEPTH:  # as `too_deep` of the field's value
            tr.action(f"if {is_map}")
            tr.text(self.literal(mapped[1]) + self.key_sep)
            tr.action("else")
            tr.text(self.literal(listed[1]) + self.key_sep)
            tr.action("end")
            self.beyond_limit(items, depth + 1)
        else:
            inner, walk, k, v = tr.temp(), tr.temp(), tr.temp(), tr.temp()
            tr.action(f"if {is_map}")
            tr.text(self.literal(mapped[1]) + self.key_sep + "{" + self.pad(depth + 2))
            tr.action("else")
            tr.text(self.literal(listed[1]) + self.key_sep + "[" + self.pad(depth + 2))
            tr.action("end")
            tr.action(f"{inner} := true")
            tr.action(f"{walk} := {items}")
            tr.action(f'if eq (printf "%T" {items}) "*api.ToolPropertiesMap"')
            tr.action(f"{walk} = {items}.All")
            tr.action("end")
            tr.action(f"range {k}, {v} := {walk}")
            self.separator(inner, depth + 1)
            tr.action(f"if {is_map}")
            self.string(k)
            tr.text(self.key_sep)
            tr.action("end")
            if not self.too_deep(v, depth + 2):
                self.value(v, PROP, depth + 2)
            tr.action("end")
            tr.text(self.pad(depth + 1))
            tr.action(f"if {is_map}")
            tr.text("}")
            tr.action("else")
            tr.text("]")
            tr.action("end")
        tr.action("end")
        tr.action("end")
        tr.action("end")
        tr.text(self.pad(depth) + "}")

    def separator(self, first: str, depth: int) -> None:
        """Nothing before an object's first member, the item separator before any other."""
        tr = self.tr
        tr.action(f"if {first}")
        tr.action(f"{first} = false")
        tr.action("else")
        tr.text(self.sep(depth + 1))
        tr.action("end")

    def types(self, code: str, depth: int) -> None:
        """A schema `type` (a list in Ollama): one name is a string, several a list of them."""
        tr = self.tr
        names = tr.temp()
        tr.action(f"{names} := {code}")
        tr.action(f"if eq (len {names}) 1")
        self.string(f"(index {names} 0)")
        tr.action("else")
        self.sequence(names, depth, self.string)
        tr.action("end")

    def string(self, code: str) -> None:
        """A JSON string: through the helper when printing, else escaped inline (longer code)."""
        tr = self.tr
        if self.python and tr.sink is None:
            tr.helpers.setdefault("ofc_repr", REPR_HELPER)
            tr.call_helper("ofc_repr_str", code, self.node)
        elif self.python:
            tr.put(repr_string(tr, code))
        elif tr.sink is None:
            tr.json_helper(None, 0, self.node)
            tr.call_helper("ofc_json_str", code, self.node)
        else:
            tr.put(json_string(tr, code))

    def untyped(self, code: str, depth: int) -> None:
        """A value of unknown Go type: branch on `%T` (maps keep Go's sorted key order)."""
        tr = self.tr
        if self.python and tr.sink is None:
            tr.helpers.setdefault("ofc_repr", REPR_HELPER)
            tr.call_helper("ofc_repr", code, self.node)  # the repr of any untyped value at any depth
            return
        if self.python:
            # being captured: one loop rewriting Ollama's `json` text of the value, at any depth,
            # instead of code unrolled per level and per Go type
            tr.put(repr_of_json(tr, f"(json {code})"))
            return
        if tr.sink is None:
            self.beyond_limit(code, depth)  # the helpers write any value at any depth
            return
        v, t = tr.temp(), tr.temp()
        tr.action(f"{v} := {code}")
        tr.action(f'{t} := printf "%T" {v}')
        tr.action(f'if eq {t} "string"')
        self.string(v)
        tr.action(f'else if eq {t} "<nil>"')
        tr.text(self.literal(None))
        if self.untyped_level < self.MAX_UNTYPED and depth <= self.MAX_DEPTH:
            self.untyped_level += 1
            tr.action(f'else if eq {t} "map[string]interface {{}}" "[]interface {{}}"')
            self.container(v, t, depth)
            self.untyped_level -= 1
            tr.action("else")
            tr.put(f"(json {v})")
        else:
            tr.action(f'else if eq {t} "bool" "float64" "int" "int64" "json.Number"')
            tr.put(f"(json {v})")
            tr.action("else")
            self.beyond_limit(v, depth)
        tr.action("end")


#: kinds printed (or passed through |string) as Python's repr() of the dict or list
PYTHON_REPR = {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ANYOF, ARGS}
#: what json.dumps of a tool schema loses through Ollama's structs
JSON_SCHEMA_EFFECT = (
    "Ollama keeps only type/description/enum/items/properties/required of a schema and "
    "sorts top-level properties; other schema keys are dropped and keys are written in "
    "get_json_schema order"
)


class ToJson(Logic):
    """`tojson` and Python's repr() of values (over Logic: a selection is written element by element)."""

    def tojson_options(self, expr: nodes.Filter, value_of: ValueOf) -> tuple[Value, int | None]:
        assert expr.node is not None
        value = value_of(expr.node)
        indent = None
        for kw in keyword_arguments(expr):
            if kw.key == "indent":
                indent = self.constant(kw.value, value_of(kw.value))
            elif kw.key not in {"ensure_ascii", "separators"}:
                raise self.fail(expr, f"tojson({kw.key}=...)")
        if expr.args:
            indent = self.constant(expr.args[0], value_of(expr.args[0]))
        if indent is not None and not isinstance(indent, int):
            raise self.fail(expr, "tojson(indent=...) with a non-integer indent")
        return value, indent

    def tojson_layout(self, expr: nodes.Filter, value_of: ValueOf) -> tuple[tuple[str, str] | None, bool]:
        """transformers' `tojson(separators=..., ensure_ascii=...)` options, which must be constant."""
        options = {
            kw.key: self.constant(kw.value, value_of(kw.value))
            for kw in keyword_arguments(expr)
            if kw.key in {"separators", "ensure_ascii"}
        }
        positional = [
            self.constant(arg, value_of(arg)) for arg in expr.args[1:3]
        ]  # tojson(indent, separators, sort_keys)
        separators = options.get("separators", positional[0] if positional else None)
        if len(positional) > 1 and positional[1]:
            raise self.fail(expr, "tojson(sort_keys=True)")
        if separators is not None:
            if not (
                isinstance(separators, (list, tuple))
                and len(separators) == 2
                and all(isinstance(part, str) for part in separators)
            ):
                raise self.fail(expr, "tojson(separators=...) other than two strings")
            separators = (separators[0], separators[1])
        ascii_only = options.get("ensure_ascii", False)
        if not isinstance(ascii_only, bool):
            raise self.fail(expr, "tojson(ensure_ascii=...) other than True or False")
        return separators, ascii_only

    def ascii_json_text(
        self, value: Value, indent: int | None, separators: tuple[str, str] | None, expr: nodes.Filter
    ) -> str:
        """`tojson(ensure_ascii=True)`: the JSON text captured, then its non-ASCII escaped."""
        text = self.capture(lambda: self.json_action(value, indent, expr, separators), "|tojson", expr)
        return textops.ascii_json(self, text)

    def json_action(
        self, value: Value, indent: int | None, expr: nodes.Node, separators: tuple[str, str] | None = None
    ) -> None:
        """Print `value` as Python's json.dumps would."""
        if value.kind in {PART, PARTS}:
            # a part exists only as the template's view of a string (which Python iterates by character)
            raise self.fail(expr, "tojson of a content part")
        if value.kind in {SELECT, MAPPED}:
            self.json_view(value, indent, expr)
            return
        if value.kind == UNDEF and not value.extra.get("maybe_undefined"):
            self.warn(
                expr,
                "tojson of an undefined value",
                "Jinja fails there (Undefined is not JSON serializable); written as empty text instead",
            )
            return
        if value.kind in {TOOL, TOOLS, TFUNC, PARAMS, PROPS, PROP}:
            self.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if value.kind in {ARGS, CALL, FUNC, CALLS}:
            self.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        if indent is not None and value.kind in {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ARGS, CALLS, CALL, FUNC, ANY}:
            self.warn(
                expr,
                f"tojson(indent=...) nested deeper than {MAX_INDENT_DEPTH} levels",
                "written without indentation from there on",
            )
        if value.kind == RECORD:
            self.json_record(value, indent, expr, separators)
            return
        if self.sink is not None or value.kind in {CALL, CALLS, FUNC}:
            # inline: capturable, and it knows the tool call structures the helpers do not
            JsonWriter(self, indent, expr, separators=separators).value(value.code, value.kind, 0)
            return
        self.call_helper(self.json_helper(indent, 0, expr, separators), value.code, expr)

    def repr_action(self, value: Value, node: nodes.Node) -> None:
        """Print a tool schema (or tool call arguments) as Python's repr() of the dict would."""
        if value.kind == ARGS:
            self.warn(node, "repr of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        elif value.kind != LIST:
            self.warn(node, f"repr of a {value.kind} schema", toolschema.ORDER_EFFECT)
        JsonWriter(self, None, node, python=True, schema=value.kind != ARGS).value(value.code, value.kind, 0)

    def json_record(
        self, value: Value, indent: int | None, expr: nodes.Node, separators: tuple[str, str] | None = None
    ) -> None:
        """json.dumps of a dict literal whose keys are constant: each value written by its kind."""
        import json

        if indent is not None:
            raise self.fail(expr, "tojson(indent=...) of a dict literal with run-time values")
        item_sep, key_sep = separators or (", ", ": ")
        self.text("{")
        for n, (key, field) in enumerate(self.dict_fields(value).items()):
            if field.kind == UNDEF:
                raise self.fail(expr, "tojson of a dict literal holding an undefined value")
            self.text((item_sep if n else "") + json.dumps(key, ensure_ascii=False) + key_sep)
            if field.is_const:
                self.text(json.dumps(field.const, ensure_ascii=False, separators=(item_sep, key_sep)))
            else:
                self.json_action(field, None, expr, separators)
        self.text("}")

    def json_helper(
        self, indent: int | None, depth: int, node: nodes.Node, separators: tuple[str, str] | None = None
    ) -> str:
        """The `define` helper writing JSON at this nesting depth (emitted once per template)."""
        self.helpers.setdefault("ofc_json", json_helpers(None)[1])
        compact, code = json_helpers(None, separators)
        self.helpers.setdefault(compact, code)
        if indent is None or depth > MAX_INDENT_DEPTH:
            return compact
        name, code = json_helpers(indent, separators)
        self.helpers.setdefault(name, code)
        return json_helper_name(indent, depth, separators)

    def json_view(self, value: Value, indent: int | None, expr: nodes.Node) -> None:
        """json.dumps of a selection (`selectattr`) or of its elements' attribute (`map`):
        the passing elements written one by one, the brackets once the first one is known."""
        base: Value = value.extra["base"]
        if value.extra.get("lazy"):
            self.warn(
                expr,
                "tojson of |map(...) without |list",
                "Jinja fails there (a generator is not JSON serializable); written as the list instead",
            )
        writer = JsonWriter(self, indent, expr)
        first, idx, item = self.temp(), self.temp(), self.temp()
        self.action(f"{first} := true")
        self.action(f"range {idx}, {item} := {base.code}")
        element = Value(item, ELEMENT[base.kind])
        guard = self.selection_test(value.extra["filters"], element) if value.extra["filters"] else "true"
        for name in value.extra.get("path", ()):
            element = self.attr(element, name, expr)
        if element.kind in {TOOL, TFUNC, PARAMS, PROPS, PROP}:
            self.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if element.kind in {ARGS, CALL, FUNC}:
            self.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        self.action(f"if {guard}")
        self.action(f"if {first}")
        self.action(f"{first} = false")
        self.text("[" + writer.pad(1))
        self.action("else")
        self.text(writer.sep(1))
        self.action("end")
        writer.value(element.code, element.kind, 1)
        self.action("end")
        self.action("end")
        self.action(f"if {first}")
        self.text("[]")
        self.action("else")
        self.text(writer.pad(0) + "]")
        self.action("end")

    def indent_json(self, value: Value, args: list[Any], options: dict[str, Any], node: nodes.Node) -> Value:
        """`tojson | indent(n)`: JSON text has no blank lines, so every newline gains the indent."""
        width = args[0] if args else 4
        first = args[1] if len(args) > 1 else False  # a width alone leaves the first line as is
        first = options.get("first", first)
        if (
            not isinstance(width, int)
            or isinstance(width, bool)
            or options.get("blank")
            or set(options) - {"first", "blank"}
        ):
            raise self.fail(node, "|indent with these options")
        self.warn(node, "|indent of JSON text", "U+0085, U+2028 and U+2029 inside JSON strings do not start a new line")
        pad = " " * width
        code = textops.replace(self, value.code, "\n", go_string("\n" + pad))
        return Value(f'(printf "%s%s" {go_string(pad)} {code})' if first else code, STR)
