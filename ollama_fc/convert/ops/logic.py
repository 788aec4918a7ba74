"""Truth, comparisons, `in`, Jinja tests, and the tests of a selection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jinja2 import nodes

from ..go import ir, search, strlists, textops
from ..go.calls import GoCall, GoOperand, go_and, go_eq, go_field, go_len, go_not, go_or, go_printf
from ..go.textops import go_string
from . import toolschema
from .access import Access
from .emit import Emit
from .values import (
    ANY,
    ARGS,
    BOOL,
    BOUND_METHOD,
    CALL,
    CALLS,
    CONTENT,
    DICT,
    ELEMENT,
    FIELDS,
    FUNC,
    INT,
    LIST,
    LITERAL_OR,
    MAPPED,
    MAPPINGS,
    MESSAGE_FIELDS,
    MSG,
    MSGS,
    NONE,
    NS,
    PARAMS,
    PART,
    PROP,
    PROPS,
    RECORD,
    SELECT,
    SEQUENCES,
    STR,
    STRLIST,
    TFUNC,
    TOOL,
    TOOLS,
    UNDEF,
    SelectionFilter,
    Value,
    ValueOf,
    const,
    literal_choice,
    py_str,
    view_of,
)


@dataclass(eq=False)
class Logic:
    """Truth, comparisons, `in`, Jinja tests, and the tests of a selection."""

    emit: Emit
    access: Access
    #: the truth of a value holding a print plan, told by the print plans that made it
    planned_truth: Callable[[Value], str] | None = None

    def truth_operand(self, value: Value) -> str:
        if value.facts.maybe_undefined and value.code:
            return value.code
        if value.kind in {UNDEF, NONE}:
            return "false"
        if value.facts.or_method:
            return "true"
        if value.kind == BOOL or value.kind in {STR, INT, CONTENT, MSGS, CALLS, TOOLS, ARGS, ANY}:
            return value.code
        return self.truth_of(value)

    def truth_of(self, value: Value) -> str:
        """Go's truthiness matches Python's for strings, numbers, lists and maps; a print plan's
        is the print plans' to tell (`planned_truth`)."""
        if value.facts.plan is not None and self.planned_truth is not None:
            return self.planned_truth(value)
        return self.unplanned_truth(value)

    def unplanned_truth(self, value: Value) -> str:
        """The truth of `value`'s Go code (a print plan's parts read their own)."""
        if value.kind == LITERAL_OR:
            choice = literal_choice(value)
            literal, other = self.truth_of(choice.literal), self.truth_of(choice.other)
            return go_or(go_and(choice.flag, literal), go_and(go_not(choice.flag), other))
        if value.is_const:
            return "true" if value.const else "false"
        if value.facts.nonempty:
            return "true"
        if (value.facts.maybe_undefined or value.facts.maybe_none) and value.code:
            return value.code  # "" until some path sets it (None is stored as "" too)
        if value.kind in {UNDEF, NONE}:
            return "false"
        if value.kind in {MSG, CALL, FUNC, TOOL, TFUNC, PART, NS, BOUND_METHOD} or value.facts.or_method:
            return "true"
        if value.kind == RECORD:
            return "true" if value.facts.fields else "false"
        if value.facts.ordered:
            return go_field(value.code, ".Len")  # a non-nil pointer to an empty map is still {}
        if value.kind in {SELECT, MAPPED}:
            return self.count_selected(value).code  # a selection is true when some element passes
        return value.code

    def compare(self, op: str, left: Value, right: Value, node: nodes.Node) -> Value:
        if left.is_const and right.is_const and not isinstance(left.const, list):
            import operator

            ops = {
                "eq": operator.eq,
                "ne": operator.ne,
                "lt": operator.lt,
                "gt": operator.gt,
                "lteq": operator.le,
                "gteq": operator.ge,
            }
            if op in ops:
                return const(ops[op](left.const, right.const))
        if op in {"in", "notin"}:
            test = self.contains(left, right, node)
            if test.is_const:
                return const(test.const if op == "in" else not test.const)
            return test if op == "in" else Value(go_not(test.code), BOOL)
        if op == "eq":
            eq = self.compare_eq(left, right, node)
            return const(eq == "true") if eq in {"true", "false"} else Value(eq, BOOL)
        if op == "ne":
            eq = self.compare_eq(left, right, node)
            return const(eq != "true") if eq in {"true", "false"} else Value(go_not(eq), BOOL)
        go = {"lt": "lt", "gt": "gt", "lteq": "le", "gteq": "ge"}[op]
        if left.kind not in {INT, STR} or right.kind not in {INT, STR}:
            raise self.emit.fail(node, f"ordering comparison of {left.kind} and {right.kind}")
        return Value(GoCall(go, left.code, right.code), BOOL)

    def compare_eq(self, left: Value, right: Value, node: nodes.Node) -> str:
        if left.is_const and not right.is_const:
            left, right = right, left
        if left.kind in {UNDEF} or (left.kind == NONE and not left.facts):
            if right.is_const:
                return "true" if right.const is None and left.kind == NONE else "false"
            return "false"
        if right.is_const:
            value = right.const
            if value is None:
                none_when = left.facts.none_when
                return GoOperand(none_when) if none_when is not None else "false"
            if isinstance(value, str):
                if left.kind in {INT, BOOL} or left.kind in MAPPINGS or left.kind in {MSGS, CALLS, TOOLS}:
                    return "false"  # never equal to a string (nor is Undefined, when it may be unset)
                if left.reads_field("Role") and self.emit.tool_role != "tool":
                    if value == self.emit.tool_role:
                        value = "tool"
                    elif value == "tool":
                        return "false"
                return go_eq(left.code, go_string(value))
            if isinstance(value, bool):
                return self.equals_bool(left, value)
            if isinstance(value, int):
                if left.kind not in {INT}:
                    raise self.emit.fail(node, f"comparing {left.kind} with a number")
                return go_eq(left.code, ir.Number.of(value))
            raise self.emit.fail(node, "comparison with a list")
        if left.kind in {STR, CONTENT, INT} and right.kind in {STR, CONTENT, INT}:
            return go_eq(left.code, right.code)
        if left.kind == BOOL and right.kind == BOOL:
            return go_eq(left.code, right.code)
        if left.kind == MSG and right.kind == MSG:
            # Python compares the message dicts by value: every field Ollama keeps
            fields = [
                go_eq(go_field(left.code, f".{go}"), go_field(right.code, f".{go}"))
                for go in ("Role", "Content", "Thinking", "ToolName", "ToolCallID")
            ]
            calls = go_eq(
                GoCall("json", go_field(left.code, ".ToolCalls")), GoCall("json", go_field(right.code, ".ToolCalls"))
            )
            return go_and(*fields, calls)
        if left.kind == ANY or right.kind == ANY:
            return go_eq(go_printf("%v", left.code), go_printf("%v", right.code))
        raise self.emit.fail(node, f"comparing {left.kind} with {right.kind}")

    def equals_bool(self, left: Value, value: bool) -> str:
        """Python's `x == True/False`: a bool or a number equal to 1/0; never a string, list or
        mapping (`'' != false` holds, unlike `not ''`)."""
        if left.kind == BOOL:
            return left.code if value else go_not(left.code)
        if left.kind == INT:
            return go_eq(left.code, ir.Number.of(int(value)))
        if left.kind == ANY:
            typed = go_printf("%T:%v", left.code, left.code)
            return go_eq(typed, ir.String.of(f"bool:{str(value).lower()}"), ir.String.of(f"float64:{int(value)}"))
        return "false"

    def contains(self, needle: Value, hay: Value, node: nodes.Node) -> Value:
        if (hay.kind == ANY and needle.kind in {STR, CONTENT} | {ANY}) or (
            hay.kind == ANY and needle.is_const and isinstance(needle.const, str)
        ):
            return self.untyped_contains(needle, hay, node)
        if hay.is_const and isinstance(hay.const, list):
            if needle.is_const:
                return const(needle.const in hay.const)
            if not hay.const:
                return const(False)
            return Value(go_eq(needle.code, *(go_string(str(v)) for v in hay.const)), BOOL)
        if hay.kind in {DICT, RECORD}:
            keys = list(self.access.dict_fields(hay))
            if needle.is_const:
                return const(needle.const in keys)
            texts = [k for k in keys if isinstance(k, str)]
            if needle.kind not in {STR, CONTENT}:
                raise self.emit.fail(node, f"'in' on a dict literal with a {needle.kind}")
            if not texts:
                return const(False)
            return Value(go_eq(needle.code, *(go_string(k) for k in texts)), BOOL)
        if hay.kind == LIST and not hay.is_const and (needle.kind in {STR, CONTENT} or needle.is_const):
            # a Go list of strings (a schema's `required`): compare element by element
            found, item = self.emit.temp(), self.emit.temp()
            self.emit.declare(found, "false")
            self.emit.range_(hay.expr, item)
            text = needle.code if not needle.is_const else go_string(py_str(needle.const))
            self.emit.if_(self.is_text(item, text))
            self.emit.assign(found, "true")
            self.emit.break_()
            self.emit.end()
            self.emit.end()
            if needle.is_const and not isinstance(needle.const, str):
                return const(False)
            return Value(found, BOOL)
        if hay.kind == STRLIST:
            if needle.is_const and not isinstance(needle.const, str):
                return const(False)
            return Value(strlists.contains(self.emit, hay.code, self.access.strlist_item(needle, node)), BOOL)
        if hay.kind == MSG and needle.is_const:
            key = needle.const
            if key in {"role", "content"}:
                return const(True)
            if key in MESSAGE_FIELDS:
                return Value(go_not(go_not(go_field(hay.code, f".{MESSAGE_FIELDS[key][0]}"))), BOOL)
            return const(False)
        if hay.kind in {TFUNC, PARAMS} and needle.is_const and toolschema.optional(hay.kind, needle.const):
            # the dict has the key only where Ollama's field is set (a tool without a description)
            return Value(go_not(go_not(toolschema.present(hay.code, hay.kind, needle.const))), BOOL)
        if hay.kind in {CALL, FUNC, TOOL, TFUNC, PARAMS} and needle.is_const:
            return const(
                needle.const in FIELDS.get(hay.kind, {}) or (hay.kind == CALL and needle.const in {"function", "type"})
            )
        if hay.kind in {STR, CONTENT} and needle.is_const and isinstance(needle.const, str):
            return Value(search.contains(self.emit, hay.code, needle.const), BOOL)
        if hay.kind == PROP and needle.is_const and isinstance(needle.const, str):
            # a property has a key when Ollama's field for it is set; Ollama keeps no other key
            if needle.const not in toolschema.KEY_ORDER[PROP]:
                self.emit.warn(
                    node,
                    f"'{needle.const}' in a tool schema property",
                    "always false: Ollama keeps no such key of a property",
                )
                return const(False)
            return Value(go_not(go_not(toolschema.present(hay.code, PROP, needle.const))), BOOL)
        if hay.kind in {STR, CONTENT} and needle.kind in {STR, CONTENT} and not needle.is_const:
            return Value(search.contains_text(self.emit, hay.code, needle.code), BOOL)
        if hay.kind in {ARGS, PROPS} and needle.kind in {STR}:
            return Value(go_not(go_not(GoCall("index", self.access.plain_map(hay), needle.code))), BOOL)
        if hay.kind == UNDEF and not hay.facts.maybe_undefined:
            return const(False)  # Jinja's Undefined iterates as empty
        if hay.kind in {UNDEF, NONE}:
            raise self.emit.fail(node, "'in' on an undefined value")
        raise self.emit.fail(node, f"'in' on {hay.kind}")

    def untyped_contains(self, needle: Value, hay: Value, node: nodes.Node) -> Value:
        """`text in x` of an untyped value: an element of a list, a key of a mapping, a
        substring of a string when the text is constant (else not searched, warned)."""
        if needle.kind == ANY:
            raise self.emit.fail(node, "'in' of an untyped value on an untyped value")
        constant = needle.is_const and isinstance(needle.const, str)
        if not constant:
            self.emit.warn(
                node, "'in' on an untyped value", "tests list elements and mapping keys; a string is never searched"
            )
        obj, hit, k, v = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
        text = needle.code
        self.emit.declare(obj, hay.expr)
        self.emit.declare(hit, "false")
        self.emit.if_(go_eq(go_printf("%.3T", obj), ir.String.of("map")))
        self.emit.key_scan(k, v, obj, text, (hit, ir.Bool(True)))
        self.emit.if_(go_eq(go_printf("%.2T", obj), ir.String.of("[]")), "else if")
        self.emit.range_(ir.Variable(obj), k, v)
        self.emit.if_(self.is_text(v, text))
        self.emit.assign(hit, "true")
        self.emit.end()
        self.emit.end()
        if constant:
            self.emit.if_(go_eq(go_printf("%T", obj), ir.String.of("string")), "else if")
            self.emit.assign(hit, search.contains(self.emit, obj, needle.const))
        self.emit.end()
        return Value(hit, BOOL)

    def is_test(self, name: str, value: Value, node: nodes.Node, args: list[Value] | None = None) -> str:
        """`value is name(args)` as a Go condition, through TESTS."""
        entry = TESTS.get(name)
        if entry is None:
            raise self.emit.fail(node, f"test `is {name}`")
        if value.kind == LITERAL_OR and entry.splits_literal_or:
            choice = literal_choice(value)
            yes, no = self.is_test(name, choice.literal, node, args), self.is_test(name, choice.other, node, args)
            return go_or(go_and(choice.flag, yes), go_and(go_not(choice.flag), no))
        return entry.apply(self, name, value, node, args or [])

    @staticmethod
    def is_text(item: str, text: str) -> GoCall:
        """The `if` condition: is the untyped `item` a string equal to `text`?"""
        is_string = go_eq(go_printf("%T", item), ir.String.of("string"))
        return go_and(is_string, go_eq(go_printf("%v", item), text))

    @staticmethod
    def negate(code: str) -> str:
        return {"true": "false", "false": "true"}.get(code) or go_not(code)

    def selection_test(self, filters: Sequence[SelectionFilter], item: Value) -> str:
        """Go condition: `item` passes every filter of a selection; a filter stored on some paths
        only applies when its Go flag is on."""
        tests = []
        for flt, value_of, when in filters:
            test = self.select_test(flt, item, value_of)
            tests.append(go_or(go_not(when), test) if when else test)
        return tests[0] if len(tests) == 1 else go_and(*tests)

    def select_test(self, node: nodes.Filter, item: Value, value_of: ValueOf) -> str:
        """The test of one `selectattr`/`rejectattr`; `value_of` evaluates its arguments in the
        scope the filter was written in."""
        args = [self.emit.constant(a, value_of(a)) for a in node.args]
        if not args or not isinstance(args[0], str):
            raise self.emit.fail(node, f"{node.name} without an attribute name")
        attr = item
        for name in args[0].split("."):  # Jinja's attribute filters follow dotted paths
            attr = self.access.attr(attr, name, node)
        if len(args) == 1:
            test = self.truth_of(attr)
        elif len(args) == 3 and args[1] in {"equalto", "==", "eq"}:
            test = self.compare_eq(attr, const(args[2]), node)
        elif len(args) == 3 and args[1] in {"ne", "!="}:
            test = go_not(self.compare_eq(attr, const(args[2]), node))
        elif len(args) == 2 and args[1] in {"defined", "undefined", "none"}:
            test = self.is_test(args[1], attr, node)
        else:
            raise self.emit.fail(node, f"{node.name} with test {args[1:]}")
        return test if node.name == "selectattr" else go_not(test)

    def count_selected(self, value: Value) -> Value:
        base, filters = view_of(value)
        if not filters:
            return Value(go_len(base.code), INT)
        count, idx, item = self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(count, "0")
        self.emit.range_(base.expr, idx, item)
        test = self.selection_test(filters, Value(item, ELEMENT[base.kind]))
        self.emit.if_(test)
        self.emit.assign(count, textops.one_more(ir.Variable(count)))
        self.emit.end()
        self.emit.end()
        return Value(count, INT)


TestFunction = Callable[[Logic, str, Value, nodes.Node, list[Value]], str]


@dataclass
class JinjaTest:
    apply: TestFunction
    #: a variable holding a dict literal on some paths tests each side (see `literal_or`)
    splits_literal_or: bool = False


#: Jinja tests (`x is defined`), one registered function each: the Go condition it gives.
TESTS: dict[str, JinjaTest] = {}


def test(*names: str, splits_literal_or: bool = False) -> Callable[[TestFunction], TestFunction]:
    """Register a function as the translation of the Jinja tests `names`."""

    def register(function: TestFunction) -> TestFunction:
        for name in names:
            if name in TESTS:
                raise ValueError(f"test `{name}` is registered twice")
            TESTS[name] = JinjaTest(function, splits_literal_or)
        return function

    return register


@test("defined", "undefined", splits_literal_or=True)
def defined(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if kind == UNDEF and not value.facts.maybe_undefined:
        defined = "false"
    elif value.facts.maybe_undefined:
        flag = value.facts.defined_flag
        if not flag:
            raise ops.emit.fail(node, "`is defined` on a variable set only on some paths")
        defined = GoOperand(flag)
    elif value.facts.optional:
        defined = go_not(go_not(value.code))
    else:
        defined = "true"
    return defined if name == "defined" else ops.negate(defined)


@test("none", splits_literal_or=True)
def none(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if value.is_const:
        return "true" if value.const is None else "false"
    if kind == NONE:
        return "true"
    if value.facts.none_when:
        return GoOperand(value.facts.none_when)
    if kind == TOOLS:
        if value.facts.emptied:
            raise ops.emit.fail(
                node, "`is none` on a list set to [] on some paths", "(Go cannot tell [] from None there)"
            )
        return go_not(value.code)
    if value.facts.maybe_none:
        return go_eq(go_printf("%v", value.code), ir.String.of(""))
    if kind == ANY:
        return go_eq(go_printf("%T", value.code), ir.String.of("<nil>"))  # JSON null
    return "false"


@test("string")
def string(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if value.is_const:
        return "true" if isinstance(value.const, str) else "false"
    if kind in {STR, CONTENT}:
        return "true"
    if kind == ANY:
        return go_eq(go_printf("%T", value.code), ir.String.of("string"))
    return "false"


@test("mapping")
def mapping(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if kind in MAPPINGS and value.facts.maybe_none:
        return GoCall("ne", go_printf("%v", value.code), ir.String.of(""))  # None is held as ""
    if kind in MAPPINGS and value.facts.maybe_undefined:
        if not value.facts.defined_flag:
            raise ops.emit.fail(node, "`is mapping` of a value left undefined on some paths")
        return ops.is_test("defined", value, node)
    if kind in MAPPINGS:
        return "true"
    if kind == ANY:
        return go_eq(go_printf("%.3T", value.code), ir.String.of("map"))
    return "false"


@test("iterable", "sequence")
def iterable(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if kind in {STR, CONTENT, STRLIST} or kind in SEQUENCES or value.facts.items:
        return "true"
    if kind == UNDEF and not value.facts.maybe_undefined:
        return "true"  # Jinja's Undefined has a length (0) and iterates as empty
    if kind in MAPPINGS:
        return "true" if name == "iterable" else "false"
    if kind == ANY:
        # Jinja's sequence test holds for anything with a length and items: a dict too
        return go_or(
            go_eq(go_printf("%T", value.code), ir.String.of("string")),
            go_eq(go_printf("%.2T", value.code), ir.String.of("[]")),
            go_eq(go_printf("%.3T", value.code), ir.String.of("map")),
        )
    return "false"


@test("number", "integer")
def number(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if kind == ANY:
        # a decoded JSON number is a float64 either way (an untyped 1.0 tests as an integer)
        if name == "integer":
            ops.emit.warn(
                node, "`is integer` of an untyped value", "a whole float such as 1.0 also counts as an integer"
            )
            whole = go_eq(go_printf("%v", value.code), go_printf("%.0f", value.code))
            return go_and(go_eq(go_printf("%T", value.code), ir.String.of("float64")), whole)
        return go_eq(
            go_printf("%T", value.code), ir.String.of("float64"), ir.String.of("bool")
        )  # Python's bool is a Number
    return "true" if kind == INT else "false"


@test("boolean")
def boolean(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if kind == ANY:
        return go_eq(go_printf("%T", value.code), ir.String.of("bool"))
    return "true" if kind == BOOL else "false"


@test("true", "false")
def true_or_false(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    kind = value.kind
    if value.is_const:
        return "true" if value.const is (name == "true") else "false"
    if kind == BOOL:
        return value.code if name == "true" else go_not(value.code)
    if kind == ANY:
        return go_eq(go_printf("%T:%v", value.code, value.code), ir.String.of(f"bool:{name}"))
    return "false"


@test("equalto", "eq", "sameas")
def equal_to(ops: Logic, name: str, value: Value, node: nodes.Node, args: list[Value]) -> str:
    if args:
        return ops.compare_eq(value, args[0], node)
    raise ops.emit.fail(node, f"test `is {name}`")
