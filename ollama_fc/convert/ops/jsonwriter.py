"""Python's json.dumps (and repr) of a value written inline, piece by piece, so that it can be
captured into a variable (a `define`'s output cannot be)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Protocol

from jinja2 import nodes

from ...errors import ConversionError
from ..go import ir, tree
from ..go.calls import GoCall, go_eq, go_field, go_len, go_printf
from ..go.gohelpers import (
    ANY_TYPE,
    JSON_VALUE,
    MAX_INDENT_DEPTH,
    REPR_HELPER,
    SCHEMA_FIELDS,
    json_helper_name,
    json_writers,
)
from ..go.reprs import repr_of_json, repr_string
from ..go.textops import Emitter, json_string
from .toolschema import SCHEMA_STRUCTS
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
    PARAMS,
    PROP,
    PROPS,
    STR,
    TFUNC,
    TOOL,
    TOOLS,
    Kind,
    Value,
)

#: properties known to be a parameters' plain map or a property's ordered one (ranged through its
#: `.All`), where a value of kind PROPS may be either; and a property's `type` names
PLAIN_PROPS, ORDERED_PROPS, TYPE_NAMES = "plain_props", "ordered_props", "type_names"
#: what this writer takes a schema field of each Go type for (gohelpers.SCHEMA_FIELDS)
FIELD_KINDS: dict[str, str] = {
    "string": STR,
    "template.templateToolFunction": TFUNC,
    "template.templateToolFunctionParameters": PARAMS,
    "template.templateProperties": PLAIN_PROPS,
    "*api.ToolPropertiesMap": ORDERED_PROPS,
    "[]api.ToolProperty": ANYOF,
    "api.PropertyType": TYPE_NAMES,
    "[]string": LIST,
    "[]interface {}": LIST,
    JSON_VALUE: ANY,
}
#: the Go type a value of each of these kinds always has: printed through the helpers, it enters
#: the writer of that type, with no run-time dispatch (a LIST is a schema's `required` or `enum`:
#: a []string or []interface {}, which the list writer writes alike, telling members apart)
KIND_TYPES: dict[str, str] = {
    TOOLS: "template.templateTools",
    TOOL: "template.templateTool",
    TFUNC: "template.templateToolFunction",
    PARAMS: "template.templateToolFunctionParameters",
    PROPS: "template.templateProperties",
    PLAIN_PROPS: "template.templateProperties",
    ORDERED_PROPS: "*api.ToolPropertiesMap",
    PROP: "api.ToolProperty",
    ANYOF: "[]api.ToolProperty",
    ARGS: "template.templateArgs",
    LIST: "[]interface {}",
    STR: "string",
    CONTENT: "string",
}


def _field(obj: str, chain: str) -> ir.Variable:
    """The field `chain` (`.Description`) of the Go variable `obj`."""
    assert chain.startswith("."), f"a field chain, not {chain!r}"
    return ir.Variable(obj, tuple(chain[1:].split(".")))


class JsonEmitter(Emitter, Protocol):
    """What the JSON writer writes through: an `Emitter` that also prints, warns and fails."""

    sink: str | None
    helpers: dict[str, tree.Helper]

    def put(self, code: str | ir.Operand) -> None: ...

    def text(self, data: str) -> None: ...

    def warn(self, node: nodes.Node | None, construct: str, effect: str) -> None: ...

    def fail(self, node: nodes.Node, construct: str, why: str = ...) -> ConversionError: ...

    def call_helper(self, name: str, code: str, node: nodes.Node) -> None: ...


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
        html: bool = False,
    ) -> None:
        self.tr, self.indent, self.node = tr, indent, node
        #: the helpers' output HTML-escaped (only through the helpers: see `through_helpers`)
        self.html = html
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
            self.sequence(code, depth, lambda item: self.value(item, ELEMENT.get(Kind(kind), ANY), depth + 1), empty)
        elif kind in SCHEMA_STRUCTS:
            pairs = [
                (f".{field.go}" if field.optional else "true", field.key, f".{field.go}", FIELD_KINDS[field.go_type])
                for field in SCHEMA_FIELDS[SCHEMA_STRUCTS[kind]]
            ]
            if kind != PROP:
                self.fields(code, depth, pairs)
            elif self.python:
                self.fields(code, depth, pairs, always_first=False)
            else:
                self.property_fields(code, depth, pairs)
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
        elif kind == ARGS:
            self.mapping(code, depth, ANY, ordered=False)
        elif kind in {PROPS, PLAIN_PROPS, ORDERED_PROPS}:
            self.mapping(code, depth, PROP, ordered={PLAIN_PROPS: False, ORDERED_PROPS: True}.get(kind))
        elif kind == ANYOF and self.python and self.in_anyof:
            # each property level may hold both nested properties and anyOf: writing anyOf
            # inside anyOf inline would double the code at every level
            self.beyond_limit(code, depth)
        elif kind == ANYOF:
            outer, self.in_anyof = self.in_anyof, True
            self.sequence(code, depth, lambda item: self.value(item, PROP, depth + 1))
            self.in_anyof = outer
        elif kind == TYPE_NAMES:
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

    def beyond_limit(self, code: str, depth: int, go_type: str = ANY_TYPE) -> None:
        """The recursive `define` helpers write the rest (a value of `go_type`) exactly, unless
        the text is being captured (their output cannot be) or indented deeper than they go."""
        tr = self.tr
        if self.python:
            tr.warn(
                self.node,
                f"repr of a value nested deeper than {self.MAX_DEPTH} levels or {self.MAX_UNTYPED} levels of arguments",
                "written as Go's compact JSON from there on",
            )
            tr.put(GoCall("json", code))
            return
        if tr.sink is None:
            tr.call_helper(self.helper(go_type, depth), code, self.node)
            return
        tr.warn(
            self.node,
            f"tojson of a captured value nested deeper than {self.MAX_DEPTH} levels or {self.MAX_UNTYPED} levels of arguments",
            "written as Go's compact JSON from there on",
        )
        tr.put(GoCall("json", code))

    def helper(self, go_type: str, depth: int) -> str:
        """The `define` writing a value of `go_type` at `depth` in this layout (compact below the
        deepest indented one), emitted with every writer it may call."""
        indent = None if depth > MAX_INDENT_DEPTH else self.indent
        name = json_helper_name(indent, depth, self.separators, go_type, self.html)
        for define, code in json_writers(name, indent, self.separators, self.html).items():
            self.tr.helpers.setdefault(define, code)
        return name

    def through_helpers(self, value: Value) -> None:
        """Print `value` (not captured) through the `define` writers, entering at the writer of
        its Go type where its kind makes that certain: no run-time dispatch is paid for it."""
        kind = ORDERED_PROPS if value.kind == PROPS and value.facts.ordered else value.kind
        go_type = KIND_TYPES.get(kind, ANY_TYPE)
        if value.facts.maybe_none or value.facts.maybe_undefined:
            go_type = ANY_TYPE  # None is held as "" until some path sets the value
        self.tr.call_helper(self.helper(go_type, 0), value.code, self.node)

    def sequence(self, code: str, depth: int, item: Callable[[str], None], empty: str = "[]") -> None:
        tr = self.tr
        seq, i, v = tr.temp(), tr.temp(), tr.temp()
        tr.declare(seq, code)
        tr.if_(seq)
        tr.text("[" + self.pad(depth + 1))
        tr.range_(ir.Variable(seq), i, v)
        tr.if_(i)
        tr.text(self.sep(depth + 1))
        tr.end()
        if not self.too_deep(v, depth + 1):
            item(v)
        tr.end()
        tr.text(self.pad(depth) + "]")
        tr.else_()
        tr.text(empty)
        tr.end()

    def mapping(self, code: str, depth: int, kind: str, ordered: bool | None) -> None:
        """A map in sorted key order; Ollama's ordered property maps range through `.All`
        (`ordered` None: properties that may be either, told at run time), and are empty when
        they hold no properties (`.Len`), even a non-nil pointer."""
        tr = self.tr
        m, first = tr.temp(), tr.temp()
        tr.declare(m, code)
        members, filled = ir.Variable(m), ir.Variable(m)
        if ordered:
            members, filled = ir.Variable(m, ("All",)), ir.Variable(m, ("Len",))
        elif ordered is None:
            # properties of unknown origin: a parameters' plain map or a property's ordered one,
            # chosen before one loop, so the members (and what nests in them) are written once,
            # not once per Go type at every level
            members, filled = ir.Variable(tr.temp()), ir.Variable(tr.temp())
            tr.declare(members.name, ir.Variable(m))
            tr.declare(filled.name, ir.Variable(m))
            tr.if_(go_eq(go_printf("%T", m), ir.String.of("*api.ToolPropertiesMap")))
            tr.assign(members.name, ir.Variable(m, ("All",)))
            tr.assign(filled.name, ir.Variable(m, ("Len",)))
            tr.end()
        tr.if_(filled)
        tr.declare(first, "true")
        tr.text("{" + self.pad(depth + 1))
        self.members(members, first, depth, kind)
        tr.text(self.pad(depth) + "}")
        tr.else_()
        tr.text("{}")
        tr.end()

    def container(self, v: str, t: str, depth: int) -> None:
        """An untyped map or list (Go type name in `t`) through one loop: a map's keys sorted as
        Go ranges them, each member written once for both (only the brackets and keys differ),
        so each untyped level adds one copy of the code below it, not two."""
        tr = self.tr
        is_map, first, k, e = tr.temp(), tr.temp(), tr.temp(), tr.temp()
        tr.declare(is_map, ir.command("eq", ir.Variable(t), ir.String.of("map[string]interface {}")))
        tr.if_(v)
        tr.if_(is_map)
        tr.text("{")
        tr.else_()
        tr.text("[")
        tr.end()
        tr.text(self.pad(depth + 1))
        tr.declare(first, "true")
        tr.range_(ir.Variable(v), k, e)
        tr.if_(first)
        tr.assign(first, "false")
        tr.else_()
        tr.text(self.sep(depth + 1))
        tr.end()
        tr.if_(is_map)
        self.string(k)
        tr.text(self.key_sep)
        tr.end()
        if not self.too_deep(e, depth + 1):
            self.untyped(e, depth + 1)
        tr.end()
        tr.text(self.pad(depth))
        tr.if_(is_map)
        tr.text("}")
        tr.else_()
        tr.text("]")
        tr.end()
        tr.if_(is_map, "else if")
        tr.text("{}")
        tr.else_()
        tr.text("[]")
        tr.end()

    def members(self, members: ir.Variable, first: str, depth: int, kind: str) -> None:
        tr = self.tr
        k, v = tr.temp(), tr.temp()
        tr.range_(members, k, v)
        tr.if_(first)
        tr.assign(first, "false")
        tr.else_()
        tr.text(self.sep(depth + 1))
        tr.end()
        self.string(k)
        tr.text(self.key_sep)
        if not self.too_deep(v, depth + 1):
            self.value(v, kind, depth + 1)
        tr.end()

    def fields(self, code: str, depth: int, pairs: list[tuple[str, str, str, str]], always_first: bool = True) -> None:
        """An object with fields in a fixed order; a guard other than `true` omits an empty one."""
        tr = self.tr
        obj, first = tr.temp(), tr.temp()
        tr.declare(obj, code)
        tr.text("{" + self.pad(depth + 1))
        if not always_first:
            tr.declare(first, "true")
        for n, (guard, key, field, kind) in enumerate(pairs):
            present = "true" if guard == "true" else go_field(obj, guard)
            if present != "true":
                tr.if_(present)
            if always_first:
                if n:
                    tr.text(self.sep(depth + 1))
            else:
                tr.if_(first)
                tr.assign(first, "false")
                tr.else_()
                tr.text(self.sep(depth + 1))
                tr.end()
            tr.text(self.literal(key) + self.key_sep)
            if not self.too_deep(go_field(obj, field), depth + 1):
                self.value(go_field(obj, field), kind, depth + 1)
            if present != "true":
                tr.end()
        tr.text(self.pad(depth) + "}")

    def property_fields(self, code: str, depth: int, pairs: list[tuple[str, str, str, str]]) -> None:
        """A property schema's fields in order, as `fields` writes them, except that the two
        holding properties (`anyOf`'s list and `properties`' map) share one loop written once:
        a property nested in either is written by the same code, so each level of nesting adds
        one copy of the property's code, not two."""
        tr = self.tr
        obj, first, at = tr.temp(), tr.temp(), tr.temp()
        nested = [n for n, (_, _, field, _) in enumerate(pairs) if field in {".AnyOf", ".Properties"}]
        tr.declare(obj, code)
        tr.text("{" + self.pad(depth + 1))
        tr.declare(first, "true")
        tr.range_(ir.Number.of(len(pairs)), at)
        opened = False
        for n, (guard, key, field, kind) in enumerate(pairs):
            if n in nested:
                continue
            tr.if_(go_eq(at, ir.Number.of(n)), "else if" if opened else "if")
            opened = True
            tr.if_(_field(obj, guard))
            self.separator(first, depth)
            tr.text(self.literal(key) + self.key_sep)
            if not self.too_deep(go_field(obj, field), depth + 1):
                self.value(go_field(obj, field), kind, depth + 1)
            tr.end()
        tr.else_()
        listed, mapped = (pairs[n] for n in nested)  # anyOf (a list), then properties (a map)
        items, is_map = tr.temp(), tr.temp()
        tr.declare(is_map, ir.command("eq", ir.Variable(at), ir.Number.of(nested[1])))
        tr.declare(items, _field(obj, listed[2]))
        tr.if_(is_map)
        tr.assign(items, _field(obj, mapped[2]))
        tr.end()
        tr.if_(items)
        self.separator(first, depth)
        if depth + 1 > self.MAX_DEPTH:  # as `too_deep` of the field's value
            tr.if_(is_map)
            tr.text(self.literal(mapped[1]) + self.key_sep)
            tr.else_()
            tr.text(self.literal(listed[1]) + self.key_sep)
            tr.end()
            self.beyond_limit(items, depth + 1)
        else:
            inner, walk, k, v, filled = tr.temp(), tr.temp(), tr.temp(), tr.temp(), tr.temp()
            tr.declare(filled, items)  # (an anyOf list here has members)
            tr.if_(is_map)
            tr.assign(filled, ir.Variable(items, ("Len",)))  # a non-nil pointer to no properties: {}
            tr.end()
            tr.if_(filled)
            tr.if_(is_map)
            tr.text(self.literal(mapped[1]) + self.key_sep + "{" + self.pad(depth + 2))
            tr.else_()
            tr.text(self.literal(listed[1]) + self.key_sep + "[" + self.pad(depth + 2))
            tr.end()
            tr.declare(inner, "true")
            tr.declare(walk, items)
            tr.if_(is_map)
            tr.assign(walk, ir.Variable(items, ("All",)))  # a property's properties: always the ordered map
            tr.end()
            tr.range_(ir.Variable(walk), k, v)
            self.separator(inner, depth + 1)
            tr.if_(is_map)
            self.string(k)
            tr.text(self.key_sep)
            tr.end()
            if not self.too_deep(v, depth + 2):
                self.value(v, PROP, depth + 2)
            tr.end()
            tr.text(self.pad(depth + 1))
            tr.if_(is_map)
            tr.text("}")
            tr.else_()
            tr.text("]")
            tr.end()
            tr.else_()
            tr.text(self.literal(mapped[1]) + self.key_sep + "{}")
            tr.end()
        tr.end()
        tr.end()
        tr.end()
        tr.text(self.pad(depth) + "}")

    def separator(self, first: str, depth: int) -> None:
        """Nothing before an object's first member, the item separator before any other."""
        tr = self.tr
        tr.if_(first)
        tr.assign(first, "false")
        tr.else_()
        tr.text(self.sep(depth + 1))
        tr.end()

    def types(self, code: str, depth: int) -> None:
        """A schema `type` (a list in Ollama): one name is a string, several a list of them."""
        tr = self.tr
        names = tr.temp()
        tr.declare(names, code)
        tr.if_(go_eq(go_len(names), "1"))
        self.string(GoCall("index", names, ir.Number.of(0)))
        tr.else_()
        self.sequence(names, depth, self.string)
        tr.end()

    def string(self, code: str) -> None:
        """A JSON string: through the helper when printing, else escaped inline (longer code)."""
        tr = self.tr
        if self.python and tr.sink is None:
            tr.helpers.setdefault("ofc_repr", REPR_HELPER)
            tr.call_helper("ofc_repr_str", code, self.node)
        elif self.python:
            tr.put(repr_string(tr, code))
        elif tr.sink is None:
            tr.call_helper(self.helper("string", 0), code, self.node)
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
            tr.put(repr_of_json(tr, GoCall("json", code)))
            return
        if tr.sink is None:
            # the helpers write any value at any depth; nested in Ollama's data, an untyped value
            # was decoded from the request's JSON (an argument value, a schema's items)
            self.beyond_limit(code, depth, JSON_VALUE if depth else ANY_TYPE)
            return
        v, t = tr.temp(), tr.temp()
        tr.declare(v, code)
        tr.declare(t, ir.command("printf", ir.String.of("%T"), ir.Variable(v)))
        tr.if_(go_eq(t, ir.String.of("string")))
        self.string(v)
        tr.if_(go_eq(t, ir.String.of("<nil>")), "else if")
        tr.text(self.literal(None))
        if self.untyped_level < self.MAX_UNTYPED and depth <= self.MAX_DEPTH:
            self.untyped_level += 1
            tr.if_(go_eq(t, ir.String.of("map[string]interface {}"), ir.String.of("[]interface {}")), "else if")
            self.container(v, t, depth)
            self.untyped_level -= 1
            tr.else_()
            tr.put(GoCall("json", v))
        else:
            tr.if_(
                go_eq(
                    t,
                    ir.String.of("bool"),
                    ir.String.of("float64"),
                    ir.String.of("int"),
                    ir.String.of("int64"),
                    ir.String.of("json.Number"),
                ),
                "else if",
            )
            tr.put(GoCall("json", v))
            tr.else_()
            self.beyond_limit(v, depth)
        tr.end()
