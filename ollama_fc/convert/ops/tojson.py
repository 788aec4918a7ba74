"""`tojson` and Python's repr() of values: the JSON layout written inline or through helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes

from ..go import ir, search, textops
from ..go.calls import go_printf
from ..go.gohelpers import MAX_INDENT_DEPTH
from ..go.textops import go_string
from . import toolschema
from .access import Access
from .emit import Emit
from .jsonwriter import JsonWriter as JsonWriter  # (re-exported: strings.py writes repr through it)
from .logic import Logic
from .values import (
    ANY,
    ANYOF,
    ARGS,
    CALL,
    CALLS,
    ELEMENT,
    FUNC,
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
    view_of,
)

#: kinds only the inline writer writes (it knows the tool call structures the helpers do not)
INLINE_JSON = {CALL, CALLS, FUNC}
#: kinds printed (or passed through |string) as Python's repr() of the dict or list
PYTHON_REPR = {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ANYOF, ARGS}
#: what json.dumps of a tool schema loses through Ollama's structs
JSON_SCHEMA_EFFECT = (
    "Ollama keeps only type/description/enum/items/properties/required of a schema and "
    "sorts top-level properties; other schema keys are dropped and keys are written in "
    "get_json_schema order"
)


@dataclass(eq=False)
class ToJson:
    """`tojson` and Python's repr() of values (a selection is written element by element, by the
    tests of `logic`)."""

    emit: Emit
    access: Access
    logic: Logic

    def tojson_options(self, expr: nodes.Filter, value_of: ValueOf) -> tuple[Value, int | None]:
        assert expr.node is not None
        value = value_of(expr.node)
        indent = None
        for kw in keyword_arguments(expr):
            if kw.key == "indent":
                indent = self.emit.constant(kw.value, value_of(kw.value))
            elif kw.key not in {"ensure_ascii", "separators"}:
                raise self.emit.fail(expr, f"tojson({kw.key}=...)")
        if expr.args:
            indent = self.emit.constant(expr.args[0], value_of(expr.args[0]))
        if indent is not None and not isinstance(indent, int):
            raise self.emit.fail(expr, "tojson(indent=...) with a non-integer indent")
        return value, indent

    def tojson_layout(self, expr: nodes.Filter, value_of: ValueOf) -> tuple[tuple[str, str] | None, bool]:
        """transformers' `tojson(separators=..., ensure_ascii=...)` options, which must be constant."""
        options = {
            kw.key: self.emit.constant(kw.value, value_of(kw.value))
            for kw in keyword_arguments(expr)
            if kw.key in {"separators", "ensure_ascii"}
        }
        positional = [
            self.emit.constant(arg, value_of(arg)) for arg in expr.args[1:3]
        ]  # tojson(indent, separators, sort_keys)
        separators = options.get("separators", positional[0] if positional else None)
        if len(positional) > 1 and positional[1]:
            raise self.emit.fail(expr, "tojson(sort_keys=True)")
        if separators is not None:
            if not (
                isinstance(separators, (list, tuple))
                and len(separators) == 2
                and all(isinstance(part, str) for part in separators)
            ):
                raise self.emit.fail(expr, "tojson(separators=...) other than two strings")
            separators = (separators[0], separators[1])
        ascii_only = options.get("ensure_ascii", False)
        if not isinstance(ascii_only, bool):
            raise self.emit.fail(expr, "tojson(ensure_ascii=...) other than True or False")
        return separators, ascii_only

    def ascii_json_text(
        self, value: Value, indent: int | None, separators: tuple[str, str] | None, expr: nodes.Filter
    ) -> str:
        """`tojson(ensure_ascii=True)`: the JSON text captured, then its non-ASCII escaped."""
        text = self.emit.capture(lambda: self.json_action(value, indent, expr, separators), "|tojson", expr)
        return textops.ascii_json(self.emit, text)

    def json_action(
        self,
        value: Value,
        indent: int | None,
        expr: nodes.Node,
        separators: tuple[str, str] | None = None,
        html: bool = False,
    ) -> None:
        """Print `value` as Python's json.dumps would (with `html`, HTML-escaped: only where
        `html_json_printable` holds)."""
        if value.kind in {PART, PARTS}:
            # a part exists only as the template's view of a string (which Python iterates by character)
            raise self.emit.fail(expr, "tojson of a content part")
        if value.kind in {SELECT, MAPPED}:
            self.json_view(value, indent, expr)
            return
        if value.kind == UNDEF and not value.facts.maybe_undefined:
            self.emit.warn(
                expr,
                "tojson of an undefined value",
                "Jinja fails there (Undefined is not JSON serializable); written as empty text instead",
            )
            return
        if value.kind in {TOOL, TOOLS, TFUNC, PARAMS, PROPS, PROP}:
            self.emit.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if value.kind in {ARGS, CALL, FUNC, CALLS}:
            self.emit.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        if indent is not None and value.kind in {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ARGS, CALLS, CALL, FUNC, ANY}:
            self.emit.warn(
                expr,
                f"tojson(indent=...) nested deeper than {MAX_INDENT_DEPTH} levels",
                "written without indentation from there on",
            )
        if value.kind == RECORD:
            self.json_record(value, indent, expr, separators)
            return
        if self.emit.sink is not None or value.kind in INLINE_JSON:
            # inline: capturable, and it knows the tool call structures the helpers do not
            assert not html, "HTML-escaped JSON is written through the helpers only"
            JsonWriter(self.emit, indent, expr, separators=separators).value(value.code, value.kind, 0)
            return
        JsonWriter(self.emit, indent, expr, separators=separators, html=html).through_helpers(value)

    def html_json_printable(self, value: Value) -> bool:
        """Can `json_action(value, html=True)` print it: HTML-escaped JSON written by the
        helpers, piece by piece, instead of captured whole and then escaped?"""
        return (
            self.emit.sink is None
            and not value.is_const
            and value.kind not in INLINE_JSON | {PART, PARTS, SELECT, MAPPED, RECORD, UNDEF}
        )

    def repr_action(self, value: Value, node: nodes.Node) -> None:
        """Print a tool schema (or tool call arguments) as Python's repr() of the dict would."""
        if value.kind == ARGS:
            self.emit.warn(node, "repr of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        elif value.kind != LIST:
            self.emit.warn(node, f"repr of a {value.kind} schema", toolschema.ORDER_EFFECT)
        JsonWriter(self.emit, None, node, python=True, schema=value.kind != ARGS).value(value.code, value.kind, 0)

    def json_record(
        self, value: Value, indent: int | None, expr: nodes.Node, separators: tuple[str, str] | None = None
    ) -> None:
        """json.dumps of a dict literal whose keys are constant: each value written by its kind."""

        if indent is not None:
            raise self.emit.fail(expr, "tojson(indent=...) of a dict literal with run-time values")
        item_sep, key_sep = separators or (", ", ": ")
        self.emit.text("{")
        for n, (key, field) in enumerate(self.access.dict_fields(value).items()):
            if field.kind == UNDEF:
                raise self.emit.fail(expr, "tojson of a dict literal holding an undefined value")
            self.emit.text((item_sep if n else "") + json.dumps(key, ensure_ascii=False) + key_sep)
            if field.is_const:
                self.emit.text(json.dumps(field.const, ensure_ascii=False, separators=(item_sep, key_sep)))
            else:
                self.json_action(field, None, expr, separators)
        self.emit.text("}")

    def json_view(self, value: Value, indent: int | None, expr: nodes.Node) -> None:
        """json.dumps of a selection (`selectattr`) or of its elements' attribute (`map`):
        the passing elements written one by one, the brackets once the first one is known."""
        base, filters = view_of(value)
        if value.facts.lazy:
            self.emit.warn(
                expr,
                "tojson of |map(...) without |list",
                "Jinja fails there (a generator is not JSON serializable); written as the list instead",
            )
        writer = JsonWriter(self.emit, indent, expr)
        first, idx, item = self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(first, "true")
        self.emit.range_(base.expr, idx, item)
        element = Value(item, ELEMENT[base.kind])
        guard = self.logic.selection_test(filters, element) if filters else "true"
        for name in value.facts.path or ():
            element = self.access.attr(element, name, expr)
        if element.kind in {TOOL, TFUNC, PARAMS, PROPS, PROP}:
            self.emit.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if element.kind in {ARGS, CALL, FUNC}:
            self.emit.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        self.emit.if_(guard)
        self.emit.if_(first)
        self.emit.assign(first, "false")
        self.emit.text("[" + writer.pad(1))
        self.emit.else_()
        self.emit.text(writer.sep(1))
        self.emit.end()
        writer.value(element.code, element.kind, 1)
        self.emit.end()
        self.emit.end()
        self.emit.if_(first)
        self.emit.text("[]")
        self.emit.else_()
        self.emit.text(writer.pad(0) + "]")
        self.emit.end()

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
            raise self.emit.fail(node, "|indent with these options")
        self.emit.warn(
            node, "|indent of JSON text", "U+0085, U+2028 and U+2029 inside JSON strings do not start a new line"
        )
        pad = " " * width
        code = search.replace(self.emit, value.code, "\n", go_string("\n" + pad))
        return Value(go_printf("%s%s", ir.String.of(pad), code) if first else code, STR)

    def print_tojson(self, expr: nodes.Filter, value_of: ValueOf) -> None:
        """Print `x | tojson(...)`."""
        value, indent = self.tojson_options(expr, value_of)
        separators, ascii_only = self.tojson_layout(expr, value_of)
        if value.is_const:
            self.emit.text(json.dumps(value.const, ensure_ascii=ascii_only, indent=indent, separators=separators))
            return
        if ascii_only:
            self.emit.put(self.ascii_json_text(value, indent, separators, expr))
            return
        self.json_action(value, indent, expr, separators)
