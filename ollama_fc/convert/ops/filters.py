"""Jinja filters, one registered function per filter: `FILTERS` is the only way `value | name`
is translated.

A filter is a function of the operations (`Lowering`) and the call (`FilterCall`: the operand
and positional arguments already evaluated, keyword arguments evaluated on request), returning
the Value it gives. Register it with `@filter("name")`; a filter it cannot translate for this
operand ends in `ops.unsupported(call)`, the one-line error naming the filter and the operand's
kind. Add a line for it to the construct table of tests/test_convert_constructs.py, which
checks the rendered output against the Hugging Face reference with Ollama's template package.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes

from ..go import ir, strlists, textops
from ..go.calls import GoCall, go_eq, go_len, go_or, go_printf
from . import toolschema
from .access import Access
from .emit import Emit
from .logic import Logic
from .strings import Strings
from .tojson import ToJson
from .values import (
    ANY,
    ARGS,
    CALLS,
    CONTENT,
    ELEMENT,
    INT,
    LIST,
    MAPPED,
    MSGS,
    NO_FACTS,
    NONE,
    PARTS,
    PROPS,
    RECORD,
    REVERSED,
    SELECT,
    SEQUENCES,
    SPLIT,
    STR,
    STRLIST,
    TOOLS,
    UNDEF,
    Facts,
    SelectionFilter,
    Value,
    ValueOf,
    const,
    final_of,
    keyword_arguments,
)
from .views import Views

#: string filters applied at conversion time to a constant (jinja2's own, so exactly)
CONSTANT_FILTERS = {"replace", "title", "capitalize", "center", "indent", "wordcount"}
CONSTANT_FOLDER = jinja2.Environment()


@dataclass
class FilterCall:
    """`value | name(args, key=...)`: its node, the operand and positional arguments as Values."""

    node: nodes.Filter
    value: Value
    args: list[Value]
    #: evaluates an expression in the filter's scope (keyword arguments, tojson's operand)
    value_of: ValueOf

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def keywords(self) -> list[str]:
        return [kw.key for kw in keyword_arguments(self.node)]

    def options(self, ops: Lowering) -> dict[str, Any]:
        """The keyword arguments, which must be constants."""
        return {kw.key: ops.emit.constant(kw.value, self.value_of(kw.value)) for kw in keyword_arguments(self.node)}


FilterFunction = Callable[["Lowering", FilterCall], Value]
#: `[a, b] | min`: a filter of a literal list, given the list's items (not the list) unevaluated
LiteralListFunction = Callable[["Lowering", FilterCall, "nodes.List | nodes.Tuple"], Value]


@dataclass
class Filter:
    apply: FilterFunction
    #: applied instead when the operand is a list literal and the filter has no arguments
    of_literal_list: LiteralListFunction | None = None
    #: the operand may stay a split string (`text.split(sep) | first` picks one part)
    takes_split: bool = False
    #: printed `a + b` with this filter on either side is a string concatenation
    gives_text: bool = False


FILTERS: dict[str, Filter] = {}


def filter(
    *names: str, takes_split: bool = False, gives_text: bool = False
) -> Callable[[FilterFunction], FilterFunction]:
    """Register a function as the translation of the Jinja filters `names`."""

    def register(function: FilterFunction) -> FilterFunction:
        for name in names:
            if name in FILTERS:
                raise ValueError(f"filter |{name} is registered twice")
            FILTERS[name] = Filter(function, takes_split=takes_split, gives_text=gives_text)
        return function

    return register


def literal_list_filter(*names: str) -> Callable[[LiteralListFunction], LiteralListFunction]:
    """Register how the (registered) filters `names` apply to a list literal's items."""

    def register(function: LiteralListFunction) -> LiteralListFunction:
        for name in names:
            FILTERS[name].of_literal_list = function
        return function

    return register


@dataclass(eq=False)
class Lowering:
    """The one dispatch of filters; a filter's translation reaches every operation through it."""

    emit: Emit
    access: Access
    logic: Logic
    to_json: ToJson
    strings: Strings
    views: Views

    def apply_filter(self, node: nodes.Filter, value_of: ValueOf) -> Value:
        """`value | name(...)` through FILTERS: the operand, then the arguments, are evaluated
        first (in that order), as Jinja does."""
        if node.node is None:
            raise self.emit.fail(node, f"|{node.name} block")
        entry = FILTERS.get(node.name)
        if (
            entry is not None
            and entry.of_literal_list is not None
            and isinstance(node.node, (nodes.List, nodes.Tuple))
            and not node.args
            and not node.kwargs
        ):
            return entry.of_literal_list(self, FilterCall(node, const(None), [], value_of), node.node)
        return self.filter_value(node, value_of(node.node), value_of)

    def filter_value(self, node: nodes.Filter, value: Value, value_of: ValueOf) -> Value:
        """Filter `node` applied to its operand's `value` (already evaluated)."""
        entry = FILTERS.get(node.name)
        if value.kind == SPLIT and not (entry is not None and entry.takes_split):
            value = self.strings.split_list(value)
        call = FilterCall(node, value, [value_of(a) for a in node.args], value_of)
        if entry is None:
            raise self.unsupported(call)
        return entry.apply(self, call)

    def unsupported(self, call: FilterCall) -> Exception:
        return self.emit.fail(call.node, f"filter |{call.name} on {call.value.kind}")


def constant_folded(ops: Lowering, call: FilterCall) -> Value | None:
    """A string filter of constants, applied now by jinja2 itself."""
    value, args = call.value, call.args
    if (
        call.name in CONSTANT_FILTERS
        and value.is_const
        and isinstance(value.const, str)
        and all(a.is_const for a in args)
    ):
        options = call.options(ops)
        return const(CONSTANT_FOLDER.call_filter(call.name, value.const, [a.const for a in args], options))
    return None


def const_pairs(ops: Lowering, call: FilterCall) -> Value | None:
    """`dictsort`/`items` of a dict literal of constants: its pairs, sorted by jinja2's own filter."""
    value, args = call.value, call.args
    if value.is_const and isinstance(value.const, dict) and all(a.is_const for a in args):
        options = call.options(ops)
        pairs = (
            jinja2.filters.do_dictsort(value.const, *(a.const for a in args), **options)
            if call.name == "dictsort"
            else list(value.const.items())
        )
        return const([list(pair) for pair in pairs])
    return None


def untyped_pairs(ops: Lowering, call: FilterCall) -> Value | None:
    """`dictsort`/`items` of a run-time map (an argument value, a schema's items): Go ranges over
    it in sorted key order."""
    value = call.value
    if value.kind == ANY and not call.args:
        if call.name == "dictsort":
            ops.emit.warn(
                call.node, "|dictsort of an untyped mapping", "keys are sorted by byte value (dictsort ignores case)"
            )
        else:
            ops.emit.warn(
                call.node, "|items of an untyped mapping", "keys come out sorted (Ollama decodes it into a Go map)"
            )
        return Value(value.code, ANY, facts=dataclasses.replace(value.facts, items=True))
    return None


@filter("items")
def items(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    pairs = const_pairs(ops, call)
    if pairs is not None:
        return pairs
    if value.kind == UNDEF and not value.facts.maybe_undefined:
        return const([])  # Jinja's |items of Undefined is empty
    if value.is_const and isinstance(value.const, dict):
        return const([list(pair) for pair in value.const.items()])
    if value.kind == RECORD:
        return Value(
            "", RECORD, facts=dataclasses.replace(value.facts, items=True)
        )  # only its (absent) attributes are usable
    if value.kind in {PROPS, ARGS} or value.kind in toolschema.KEY_ORDER:
        return Value(value.code, value.kind, facts=dataclasses.replace(value.facts, items=True))
    untyped = untyped_pairs(ops, call)
    if untyped is not None:
        return untyped
    raise ops.unsupported(call)


@filter("dictsort")
def dictsort(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    pairs = const_pairs(ops, call)
    if pairs is None:
        pairs = untyped_pairs(ops, call)
    if pairs is not None:
        return pairs
    if value.kind in {PROPS, ARGS} or value.kind in toolschema.KEY_ORDER:
        # an ordered map (nested properties) is sorted as the Go map it converts to
        return Value(ops.access.plain_map(value), value.kind, facts=Facts(items=True, sorted=True))
    raise ops.unsupported(call)


@filter("replace")
def replace(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    if len(args) == 2 and not call.keywords and value.kind in {STR, CONTENT} and not value.is_const:
        return ops.strings.string_method("replace", value, args, call.node)  # the filter is str.replace
    folded = constant_folded(ops, call)
    if folded is not None:
        return folded
    raise ops.unsupported(call)


@filter("capitalize", "center", "wordcount")
def folded_only(ops: Lowering, call: FilterCall) -> Value:
    folded = constant_folded(ops, call)
    if folded is not None:
        return folded
    raise ops.unsupported(call)


@filter("title")
def title(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    folded = constant_folded(ops, call)
    if folded is not None:
        return folded
    if value.kind in {STR, CONTENT} and not call.args and not call.keywords:
        ops.emit.warn(
            call.node, "|title", "changes the case of ASCII letters only, and starts words after ASCII whitespace only"
        )
        text = ops.emit.temp()
        ops.emit.declare(text, value.expr)
        return Value(textops.ascii_title(ops.emit, text), STR)
    raise ops.unsupported(call)


@filter("indent")
def indent(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    folded = constant_folded(ops, call)
    if folded is not None:
        return folded
    if value.facts.json_text and all(a.is_const for a in args):
        return ops.to_json.indent_json(value, [a.const for a in args], call.options(ops), call.node)
    raise ops.unsupported(call)


@filter("trim", gives_text=True)
def trim(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    if value.is_const:
        return const(value.const.strip(*(a.const for a in args)))
    if value.kind in {UNDEF, NONE}:
        return const("")
    return ops.strings.trim(value.code, "strip", args[0].const if args else None, final_of(value))


@filter("length", "count")
def length(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    if value.is_const:
        return const(len(value.const))
    if value.kind == UNDEF and not value.facts.maybe_undefined:
        return const(0)  # Jinja's Undefined has length 0
    if value.kind == ANY:
        ops.emit.warn(
            call.node, "|length of an untyped value", "counts bytes, not characters, where it is non-ASCII text"
        )
        obj, size = ops.emit.temp(), ops.emit.temp()
        ops.emit.declare(obj, value.expr)
        ops.emit.declare(size, "0")
        is_map, is_list = (
            go_eq(go_printf("%.3T", obj), ir.String.of("map")),
            go_eq(go_printf("%.2T", obj), ir.String.of("[]")),
        )
        ops.emit.if_(go_or(is_map, is_list, go_eq(go_printf("%T", obj), ir.String.of("string"))))
        ops.emit.assign(size, ir.command("len", ir.Variable(obj)))
        ops.emit.end()
        return Value(size, INT)
    if value.kind in {STR, CONTENT}:
        text = ops.emit.temp()
        ops.emit.declare(text, value.expr)
        return Value(textops.char_count(text), INT)
    if value.kind in SEQUENCES or value.kind in {ARGS, PROPS}:
        return Value(go_len(ops.access.plain_map(value)), INT)
    if value.kind in {SELECT, MAPPED}:
        return ops.logic.count_selected(value)
    if value.kind == STRLIST:
        return Value(strlists.count(ops.emit, value.code), INT)
    if value.kind == REVERSED:
        return Value(go_len(value.code), INT)
    raise ops.emit.fail(call.node, f"|length of {value.kind}")


@filter("selectattr", "rejectattr")
def selectattr(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    if value.kind in {CONTENT, PARTS}:
        return Value(value.code, PARTS)
    if value.kind in {MSGS, CALLS, TOOLS}:
        return Value(
            value.code, SELECT, facts=Facts(base=value, filters=(SelectionFilter(call.node, call.value_of, None),))
        )
    if value.kind == SELECT:
        filters = (*(value.facts.filters or ()), SelectionFilter(call.node, call.value_of, None))
        return Value(value.code, SELECT, facts=Facts(base=value.facts.base, filters=filters))
    raise ops.emit.fail(call.node, f"|{call.name} on {value.kind}")


@filter("list")
def to_list(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    if value.kind == MAPPED:
        return Value(value.code, value.kind, facts=dataclasses.replace(value.facts, lazy=False))
    return value


@filter("first", "last", takes_split=True)
def first_or_last(ops: Lowering, call: FilterCall) -> Value:
    value, first = call.value, call.name == "first"
    if value.kind in SEQUENCES and not value.is_const:
        element = ELEMENT.get(value.kind, ANY)
        if first:
            return Value(GoCall("index", value.code, "0"), element)
        return Value(GoCall("index", value.code, go_len(GoCall("slice", value.code, "1"))), element)
    if value.kind == SPLIT and not (not first and value.facts.limit is not None):
        return ops.strings.split_part(value, 0 if first else -1, call.node)
    if value.kind == SPLIT:
        value = ops.strings.split_list(value)
    if value.kind == STRLIST:
        return Value(strlists.element(ops.emit, value.code, 0 if first else -1), STR, facts=final_of(value))
    raise ops.emit.fail(call.node, f"|{call.name} of {value.kind}")


@filter("default")
def default(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    fallback = args[0] if args else const("")
    if value.kind == UNDEF:
        return fallback
    if len(args) > 1 and args[1].is_const and args[1].const:
        result = ops.emit.temp()
        ops.emit.declare(result, ops.emit.operand(fallback, call.node))
        ops.emit.if_(ops.logic.truth_of(value))
        ops.emit.assign(result, value.expr)
        ops.emit.end()
        # an empty fallback leaves a message's text (and where a prefill ends) as it was
        keep = final_of(value) if fallback.is_const and fallback.const == "" else NO_FACTS
        return Value(result, value.kind, facts=keep)
    return value


@filter("string", gives_text=True)
def string(ops: Lowering, call: FilterCall) -> Value:
    return ops.strings.stringified(call.value, call.node)


@filter("format")
def format_(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    if value.is_const and isinstance(value.const, str) and not call.keywords:
        return ops.strings.percent_format(value.const, call.args, call.node)
    raise ops.unsupported(call)


@filter("safe")
def safe(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    return Value(value.code, value.kind, value.const, dataclasses.replace(value.facts, markup=True))


@filter("tojson", gives_text=True)
def tojson(ops: Lowering, call: FilterCall) -> Value:
    value, indent = ops.to_json.tojson_options(call.node, call.value_of)
    separators, ascii_only = ops.to_json.tojson_layout(call.node, call.value_of)
    if value.is_const:
        return const(json.dumps(value.const, ensure_ascii=ascii_only, indent=indent, separators=separators))
    if ascii_only:
        return Value(
            ops.to_json.ascii_json_text(value, indent, separators, call.node), STR, facts=Facts(json_text=True)
        )
    return Value(
        ops.emit.capture(lambda: ops.to_json.json_action(value, indent, call.node, separators), "|tojson", call.node),
        STR,
        facts=Facts(json_text=True),
    )


@filter("join")
def join(ops: Lowering, call: FilterCall) -> Value:
    value, args, node = call.value, call.args, call.node
    if value.is_const:
        return const((args[0].const if args else "").join(value.const))
    if value.kind in {ANY, LIST} and all(a.is_const and isinstance(a.const, str) for a in args):
        if value.kind == ANY:
            ops.emit.warn(
                node,
                "|join of an untyped value",
                "joins the elements of a list; any other value is written as str() of it",
            )
        sep = args[0].const if args else ""
        return Value(ops.emit.capture(lambda: ops.strings.untyped_join(value.code, sep, node), "|join", node), STR)
    if value.kind == STRLIST:
        separator = args[0] if args else const("")
        return Value(strlists.join(ops.emit, value.code, ops.access.strlist_item(separator, node)), STR)
    raise ops.unsupported(call)


@filter("int")
def to_int(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    if value.is_const and all(a.is_const for a in args):
        options = call.options(ops)
        return const(CONSTANT_FOLDER.call_filter(call.name, value.const, [a.const for a in args], options))
    if value.kind == INT and not value.facts.maybe_undefined:
        return value  # already an int: |int leaves it as it is
    if value.kind in {STR, CONTENT} and not args and not call.keywords:
        return ops.strings.parsed_int(value, call.node)
    raise ops.unsupported(call)


@filter("select", "reject")
def select(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    if value.kind in toolschema.KEY_ORDER and not value.facts.items and args and all(a.is_const for a in args):
        # keys are constants once the loop is unrolled: the test runs here, as Jinja's own
        tests = (*(value.facts.key_tests or ()), (call.name, args[0].const, tuple(a.const for a in args[1:])))
        return Value(value.code, value.kind, facts=dataclasses.replace(value.facts, key_tests=tests))
    raise ops.unsupported(call)


@filter("lower", "upper", gives_text=True)
def change_case(ops: Lowering, call: FilterCall) -> Value:
    value = call.value
    if value.is_const:
        return const(getattr(value.const, call.name)())
    if value.kind == UNDEF and not value.facts.maybe_undefined:
        return const("")  # str() of Undefined is empty
    if value.kind == ANY:
        return ops.strings.change_case(
            ops.strings.untyped_str(value, call.node), call.name, call.node
        )  # Jinja's filter takes str() first
    if value.kind in {STR, CONTENT}:
        return ops.strings.change_case(value, call.name, call.node)
    raise ops.unsupported(call)


@filter("map")
def map_(ops: Lowering, call: FilterCall) -> Value:
    value, args = call.value, call.args
    if value.kind == ANY and len(args) == 1 and args[0].const in {"upper", "lower", "string"} and not call.keywords:
        return ops.strings.untyped_map(value, args[0].const, call.node)
    if value.kind in {MSGS, CALLS, TOOLS, SELECT, MAPPED} and not args and call.keywords == ["attribute"]:
        attribute = ops.emit.constant(call.node.kwargs[0].value, call.value_of(call.node.kwargs[0].value))
        return ops.views.mapped_attribute(value, attribute, call.node)
    raise ops.unsupported(call)


@filter("min", "max")
def extreme(ops: Lowering, call: FilterCall) -> Value:
    raise ops.unsupported(call)


@literal_list_filter("min", "max")
def extreme_of_numbers(ops: Lowering, call: FilterCall, items_node: nodes.List | nodes.Tuple) -> Value:
    """`[a, b]|min` (or max) of numbers: compared one by one, as Python's min() does."""
    name = call.name
    items = [call.value_of(item) for item in items_node.items]
    if not items:
        raise ops.emit.fail(items_node, f"|{name} of an empty list")
    if all(item.is_const for item in items):
        return const((min if name == "min" else max)(item.const for item in items))
    if not all(item.kind == INT and not isinstance(item.const, bool) for item in items):
        raise ops.emit.fail(
            items_node, f"|{name} of a list holding {', '.join(sorted({i.kind for i in items}))} values"
        )
    best = ops.emit.temp()
    ops.emit.declare(best, items[0].expr)
    for item in items[1:]:
        ops.emit.if_(GoCall("lt" if name == "min" else "gt", item.code, best))
        ops.emit.assign(best, item.expr)
        ops.emit.end()
    return Value(best, INT, facts=Facts(maybe_negative=any(i.facts.maybe_negative for i in items)))
