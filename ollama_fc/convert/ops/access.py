"""Attribute, item and slice access on Values: Ollama's fields resolved statically by kind,
untyped values (argument values, schema items) looked up at run time, dict literals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from jinja2 import nodes

from ..go import ir, strlists
from ..go.calls import GoCall, go_and, go_eq, go_field, go_len, go_or, go_printf, operand_of
from ..go.textops import PRECISION, go_string
from . import toolschema
from .emit import FINAL_MESSAGE, Emit
from .values import (
    ANY,
    ANYOF,
    ARGS,
    BOOL,
    BOUND_METHOD,
    CALL,
    CALLS,
    CONTENT,
    DICT,
    FIELDS,
    FUNC,
    FUNCTION,
    GLOBAL_FUNCTIONS,
    INT,
    LIST,
    LITERAL_OR,
    METHOD,
    MSG,
    MSGS,
    NO_FACTS,
    NONE,
    NS,
    OPTIONAL_MESSAGE_KEYS,
    PART,
    PROP,
    PROPS,
    RECORD,
    SEQUENCES,
    STR,
    STRLIST,
    TOOLS,
    UNDEF,
    UNDEFINED,
    Facts,
    Kind,
    LiteralChoice,
    Loop,
    Prefetched,
    PrefetchedKey,
    Value,
    attrs_of,
    const,
    final_of,
)

TRUE = ir.Bool(True)
#: the request's messages, `$.Messages`
MESSAGES = ir.Variable("$", ("Messages",))


@dataclass(eq=False)
class Access:
    """Attribute, item and slice access on Values, written to `emit`."""

    emit: Emit

    def global_name(self, name: str, node: nodes.Node | None) -> Value:
        if name == "messages":
            return Value.of(MESSAGES, MSGS)
        if name == "tools":
            return Value.of(ir.Variable("$", ("Tools",)), TOOLS, facts=Facts(nullable=True))
        if name == "add_generation_prompt":
            last = GoCall("index", MESSAGES, go_len(GoCall("slice", MESSAGES, ir.Number.of(1))))
            return Value(GoCall("ne", go_field(last, ".Role"), ir.String.of("assistant")), BOOL)
        if name in self.emit.tokens:
            return const(self.emit.tokens[name])
        if name.endswith("_token"):
            self.emit.warn(node, name, "the tokenizer does not define it; rendered as empty text")
            return UNDEFINED
        if name in GLOBAL_FUNCTIONS:
            return Value("", FUNCTION)
        if name in {"true", "True"}:
            return const(True)
        if name in {"false", "False"}:
            return const(False)
        if name in {"none", "None"}:
            return const(None)
        return UNDEFINED

    @staticmethod
    def literal_or(slot: Value) -> Value:
        """A variable given a dict literal on some paths: `LITERAL_OR`, which only `is none`,
        `is defined`, truth tests and macro arguments take (each branches on the Go flag);
        anything else refuses the kind."""
        other = Value(
            slot.code,
            slot.kind,
            facts=replace(slot.facts, literal=None, literal_flag=None),
        )
        flag, literal = slot.facts.literal_flag, slot.facts.literal
        assert flag is not None and literal is not None, "a variable without its dict literal"
        return Value(slot.code, LITERAL_OR, facts=Facts(choice=LiteralChoice(flag, literal, other)))

    @staticmethod
    def any_final(values: list[Value]) -> Facts:
        """The `final` mark of a value built from these: set when any of them may be the final text."""
        finals = [v.facts.final for v in values if v.facts.final]
        if not finals:
            return NO_FACTS
        return Facts(final=finals[0] if len(finals) == 1 else ir.call("or", *finals))

    def strlist_item(self, value: Value, node: nodes.Node, may_be_final: bool = False) -> str:
        """Go operand of a string going into a run-time list (only strings can be held there).

        A message's text goes in only where the list carries the `final` mark on (`may_be_final`):
        its elements are then printed as the final text may be, cut after the first holding it.
        """
        if value.is_const and isinstance(value.const, str):
            return go_string(value.const)
        if value.kind not in {STR, CONTENT} or value.is_const:
            raise self.emit.fail(
                node,
                f"a list of {value.kind if not value.is_const else type(value.const).__name__} values built at run time",
            )
        if value.facts.final:
            if not may_be_final:
                raise self.emit.fail(
                    node, "a message's text stored in a list", "(an assistant prefill could not be cut inside it)"
                )
            self.emit.warn(
                node,
                "a message's text stored in a list",
                "if it is the prefilled final message's text, the reply is cut after the first element "
                "holding that text (transformers cuts after the last)",
            )
        return value.code

    def strlist_code(self, value: Value, node: nodes.Node) -> str:
        """Go operand of a list of strings: a literal list or one built at run time."""
        if value.kind == STRLIST:
            return value.code
        if value.is_const and isinstance(value.const, list):
            if not all(isinstance(item, str) for item in value.const):
                raise self.emit.fail(node, "a list literal of non-strings as a value")
            return strlists.literal(value.const)
        raise self.emit.fail(node, f"a list of strings combined with {value.kind}")

    def attr(self, base: Value, name: str, node: nodes.Node) -> Value:
        value = self.field(base, name, node)
        if toolschema.optional(base.kind, name) and value.kind != UNDEF:
            return replace(value, facts=replace(value.facts, optional=True))
        return value

    def field(self, base: Value, name: str, node: nodes.Node) -> Value:
        """`base.name` by what `base` is: a literal's or a namespace's own, a content part's or a
        tool's (schema, call) field, one of Ollama's structs' fields, or a text's, list's or
        untyped value's attribute."""
        if base.kind == BOUND_METHOD or base.facts.items:
            return UNDEFINED  # neither a method nor a list of (key, value) pairs has fields
        if base.kind in {DICT, RECORD}:
            return self.dict_fields(base).get(name, UNDEFINED)
        if base.kind == NS:
            return self.namespace_attr(base, name)
        found = self.part_field(base, name) or self.tool_field(base, name, node)
        if found is not None:
            return found
        fields = FIELDS.get(base.kind)
        if fields is not None:
            return self.struct_field(base, name, fields)
        return self.value_attr(base, name, node)

    def namespace_attr(self, base: Value, name: str) -> Value:
        """`ns.name`: its Go variable, or the constant it was set to with no branch point since;
        what may hold of it on some path (undefined, None, negative) carried over."""
        attrs = attrs_of(base)
        if name not in attrs:
            return UNDEFINED
        found = attrs[name]
        known = found.facts.known
        if known is not None and known[0] == self.emit.flow_epoch:
            return const(known[1])  # set to a constant with no branch point since
        facts = Facts(
            maybe_undefined=found.facts.maybe_undefined,
            defined_flag=found.facts.defined_flag or None,
            maybe_none=found.kind == NONE or found.facts.maybe_none,  # None is held as "" until some path sets it
            # set to text holding constant text, no branch point since
            nonempty=found.facts.known_nonempty == self.emit.flow_epoch,
            final=ir.Variable(f"{base.code}_{name}_final") if name in (base.facts.text_attrs or ()) else None,
        )
        if found.facts.maybe_negative or (found.is_const and isinstance(found.const, int) and found.const < 0):
            facts = replace(facts, maybe_negative=True)
        return Value(f"{base.code}_{name}", found.kind if found.kind not in {NONE, UNDEF} else ANY, facts=facts)

    @staticmethod
    def part_field(base: Value, name: str) -> Value | None:
        """A content part's field: Ollama's message has one part, its text. None where `base` is
        no content part."""
        if base.kind == PART:
            if name == "type":
                return const("text")
            if name == "text":
                assert base.facts.content is not None  # (a PART always holds its text)
                return Value.of(base.facts.content, STR, facts=final_of(base))
            return UNDEFINED
        if base.kind in {CONTENT} and name in {"text"}:
            return UNDEFINED
        return None

    def tool_field(self, base: Value, name: str, node: nodes.Node) -> Value | None:
        """A field of a tool's schema (a property map, a property) or of a call (its arguments,
        a flat call read through `.function`). None where `base` has no such field here."""
        if base.kind == ARGS:
            return Value(GoCall("index", base.code, go_string(name)), ANY)
        if base.kind == PROPS:
            return Value(GoCall("index", self.plain_map(base), go_string(name)), PROP)
        if base.kind == PROP and name in {"type"}:
            # (a property may have no type, only `anyOf`: Undefined, "" in Go)
            types = go_field(base.code, ".Type")
            return Value(
                go_or(go_and(types, GoCall("index", types, "0")), ir.String.of("")),
                STR,
                facts=Facts(types=operand_of(types)),
            )
        if base.kind == PROP and name == "properties":
            # a *api.ToolPropertiesMap (ordered); ranged through .All, tojson'd by its Go type
            return Value(go_field(base.code, ".Properties"), PROPS, facts=Facts(ordered=True))
        if base.kind == PROP and name == "required":
            return Value(go_field(base.code, ".Required"), LIST)
        if base.kind == PROP and name == "anyOf":
            return Value(go_field(base.code, ".AnyOf"), ANYOF)
        if base.kind == CALL and name in {"name", "arguments"}:
            # a flat {"name", "arguments"} call: read through `.function`
            return self.attr(Value(go_field(base.code, ".Function"), FUNC), name, node)
        if base.kind == CALL and name == "type":
            return const("function")
        return None

    @staticmethod
    def struct_field(base: Value, name: str, fields: dict[str, tuple[str, Kind]]) -> Value:
        """A field of one of Ollama's Go structs (`FIELDS`); a message's content knows where it is
        the final message's and where Jinja's would be None (an assistant's calls with no text)."""
        if name not in fields:
            return UNDEFINED
        go, kind = fields[name]
        if base.kind != MSG:
            return Value(go_field(base.code, f".{go}"), kind)
        content = name == "content"
        facts = Facts(
            optional=name in OPTIONAL_MESSAGE_KEYS,
            final=operand_of(go_eq(base.code, FINAL_MESSAGE)) if content else None,
            # Ollama sends "" where transformers users pass None: an assistant's calls
            # with no text (templates print the calls only when the content is none)
            none_when=operand_of(
                go_and(go_eq(go_field(base.code, ".Content"), ir.String.of("")), go_field(base.code, ".ToolCalls"))
            )
            if content
            else None,
        )
        return Value(go_field(base.code, f".{go}"), kind, facts=facts)

    def value_attr(self, base: Value, name: str, node: nodes.Node) -> Value:
        """An attribute of nothing (Undefined), of text (a bound method), of a list (a method
        Jinja cannot call on Ollama's lists fails), or of an untyped value (looked up at run time)."""
        if base.kind in {UNDEF, NONE}:
            return UNDEFINED
        if base.kind in {STR, CONTENT}:
            if not hasattr(str, name):
                return UNDEFINED  # a string has no such attribute: Jinja gives Undefined
            return Value("", METHOD, facts=Facts(receiver=base, method=name))
        if (base.kind in SEQUENCES or base.kind == STRLIST) and not hasattr(list, name):
            return UNDEFINED  # a list has no such attribute: Jinja gives Undefined
        if base.kind in {MSGS, TOOLS, CALLS, LIST} and name in {"items", "keys", "values", "get"}:
            raise self.emit.fail(node, f".{name}() on a list")
        if base.kind == ANY:
            return self.untyped_field(base, name)
        raise self.emit.fail(node, f"attribute .{name} of {base.kind}")

    def untyped_field(self, base: Value, name: str) -> Value:
        """`x.name` / `x['name']` of an untyped value (decoded JSON): the key's value where `x` is
        a mapping that has it, else Undefined (empty text) — found by a scan, so a key holding
        null still counts as defined. A key prefetched with the variable (see `prefetch_fields`)
        is read from there."""
        prefetched = base.facts.prefetched
        if prefetched is not None and base.is_operand(prefetched.scanned) and name in prefetched.keys:
            known = prefetched.keys[name]
            facts = Facts(maybe_undefined=True, defined_flag=known.found, prefetched=known.deeper)
            return Value.of(known.value, ANY, facts=facts)
        obj, value, found, k, v = (self.emit.temp() for _ in range(5))
        self.emit.declare(obj, base.expr)
        self.emit.declare(value, '""')
        self.emit.declare(found, "false")
        self.emit.if_(go_eq(go_printf("%.3T", obj), ir.String.of("map")))
        self.emit.key_scan(k, v, obj, go_string(name), (value, ir.Variable(v)), (found, TRUE))
        self.emit.end()
        return Value(value, ANY, facts=Facts(maybe_undefined=True, defined_flag=ir.Variable(found)))

    def prefetch_fields(self, base: Value, reads: Mapping[tuple[str, ...], int]) -> Value:
        """The untyped variable `base` with the values of the keys its scope reads looked up at
        once, in one scan of the mapping where the scope starts (a schema's `type`, read by each
        test of an if/elif chain, is looked up once instead of at every test): `untyped_field`
        reads them from there. `reads` counts each path of keys read (see
        `constant_field_reads`); a key whose value is read for keys more than once is looked up
        in the same way. `base` must stay the same in the scope."""
        keys = sorted({path[0] for path in reads})
        fields: dict[str, PrefetchedKey] = {}
        for key in keys:
            fields[key] = PrefetchedKey(ir.Variable(self.emit.temp()), ir.Variable(self.emit.temp()))
            self.emit.declare(fields[key].value.name, '""')
            self.emit.declare(fields[key].found.name, "false")
        k, v = self.emit.temp(), self.emit.temp()
        self.emit.if_(go_eq(go_printf("%.3T", base.code), ir.String.of("map")))
        self.emit.keys_scan(
            k,
            v,
            base.code,
            {
                go_string(key): ((known.value.name, ir.Variable(v)), (known.found.name, TRUE))
                for key, known in fields.items()
            },
        )
        self.emit.end()
        for key in keys:
            deeper = {path[1:]: n for path, n in reads.items() if len(path) > 1 and path[0] == key}
            if sum(deeper.values()) > 1:
                scanned = self.prefetch_fields(Value.of(fields[key].value, ANY), deeper)
                fields[key] = replace(fields[key], deeper=scanned.facts.prefetched)
        return Value(base.code, base.kind, base.const, replace(base.facts, prefetched=Prefetched(base.node, fields)))

    def untyped_get(self, base: Value, key: str, default: Value | None, node: nodes.Node) -> Value:
        """`x.get(key[, default])` of an untyped value: the key's value where `x` is a mapping that
        has it, else the default, None without one (Go's nil: `index` of a missing map key)."""
        if default is not None and default.kind in {UNDEF, NONE}:
            default = None
        if default is not None and not (
            default.kind in {STR, CONTENT, ANY} or (default.is_const and isinstance(default.const, (str, int)))
        ):
            raise self.emit.fail(node, f".get() of an untyped value with a {default.kind} default")
        obj, result, k, v = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(obj, base.expr)
        initial = '""' if default is None else self.emit.operand(default, node)
        self.emit.declare(result, initial)
        self.emit.if_(go_eq(go_printf("%.3T", obj), ir.String.of("map")))
        if default is None:
            self.emit.assign(result, ir.command("index", ir.Variable(obj), ir.String.of(key)))
        else:
            self.emit.key_scan(k, v, obj, go_string(key), (result, ir.Variable(v)))
        self.emit.end()
        return Value(result, ANY)

    def untyped_element(self, base: Value, at: int) -> Value:
        """`x[i]` of an untyped value: the element where `x` is a list long enough, else Undefined."""
        seq, value, found = self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(seq, base.expr)
        self.emit.declare(value, '""')
        self.emit.declare(found, "false")
        self.emit.if_(go_eq(go_printf("%.2T", seq), ir.String.of("[]")))
        need = at + 1 if at >= 0 else -at
        self.emit.if_(GoCall("ge", go_len(seq), ir.Number.of(need)))
        from_end = ir.call("len", ir.call("slice", ir.Variable(seq), ir.Number.of(-at)))
        self.emit.assign(value, ir.command("index", ir.Variable(seq), ir.Number.of(at) if at >= 0 else from_end))
        self.emit.assign(found, "true")
        self.emit.end()
        self.emit.end()
        return Value(value, ANY, facts=Facts(maybe_undefined=True, defined_flag=ir.Variable(found)))

    @staticmethod
    def plain_map(value: Value) -> str:
        """Go operand of a mapping `index` and `len` work on (an ordered map made a Go map)."""
        return go_field(value.code, ".ToMap") if value.facts.ordered else value.code

    def argument_named(self, args: Value, key: Value) -> Value:
        """`arguments[key]` with a key known at run time: the argument's value where the call has
        it, else Undefined — found by a scan, as Go's `index` of a missing key gives no value."""
        value, found, k, v = (self.emit.temp() for _ in range(4))
        self.emit.declare(value, '""')
        self.emit.declare(found, "false")
        self.emit.key_scan(k, v, args.code, key.code, (value, ir.Variable(v)), (found, TRUE))
        return Value(value, ANY, facts=Facts(maybe_undefined=True, defined_flag=ir.Variable(found)))

    @staticmethod
    def runtime_count(bound: Value | None) -> bool:
        """A run-time int that cannot be negative (Go's printf-width subtraction fails below zero)."""
        return bound is not None and not bound.is_const and bound.kind == INT and not bound.facts.maybe_negative

    def slice_by_count(self, base: Value, start: Value | None, stop: Value | None, node: nodes.Node) -> Value:
        """`text[a:b]` with run-time bounds that are never negative: `%.*s` keeps the first n
        characters (clamped to the text, as Python clamps)."""
        for bound in (start, stop):
            if (
                bound is not None
                and not self.runtime_count(bound)
                and not (
                    bound.is_const
                    and isinstance(bound.const, int)
                    and not isinstance(bound.const, bool)
                    and bound.const >= 0
                )
            ):
                raise self.emit.fail(node, "string slicing with a bound known only at run time")
        text, head = self.emit.temp(), self.emit.temp()
        self.emit.declare(text, base.expr)
        self.emit.declare(head, text)
        if stop is not None:
            self.emit.assign(head, ir.command("printf", PRECISION, operand_of(stop.code), ir.Variable(text)))
        if start is None:
            return Value(head, STR)
        result = self.emit.temp()
        skipped = ir.call("len", ir.call("printf", PRECISION, operand_of(start.code), ir.Variable(head)))
        self.emit.declare(result, ir.command("slice", ir.Variable(head), skipped))
        return Value(result, STR)

    def neighbour_item(self, loop: Loop, previous: bool) -> Value:
        """loop.previtem / nextitem: the element beside this step, Undefined at the list's ends.

        The Go variable holds `false` at an end, so only a guarded access (`loop.previtem and
        loop.previtem.role`) reads a field, as only a guarded one renders in Jinja.
        """
        item, exists = self.emit.temp(), self.emit.temp()
        self.emit.declare(item, "false")
        self.emit.declare(exists, "false")
        self.emit.if_(loop.index if previous else GoCall("ne", loop.index, loop.ask(loop.last)))
        self.emit.assign(exists, "true")
        self.emit.assign(item, self.kept_neighbour(loop, previous))
        self.emit.end()
        return Value(item, loop.item_kind or ANY, facts=Facts(maybe_undefined=True, defined_flag=ir.Variable(exists)))

    def kept_neighbour(self, loop: Loop, previous: bool) -> str:
        """Go code of the element before or after the step's own in a forward list loop, read
        from what the loop keeps (see Loop.before): no index arithmetic per step. Before the
        first step the previous one is the list's last element, as Python's `xs[-1]`; after the
        last step there is none (`index` fails, as Jinja's `xs[n]` is Undefined)."""
        if previous:
            if loop.before is None:
                loop.before, loop.carried = self.emit.temp(), self.emit.temp()
            return loop.before
        if loop.after is None:
            loop.after = self.emit.temp()
        return GoCall("index", loop.after, loop.index)

    def dict_fields(self, value: Value) -> Mapping[Any, Value]:
        if value.kind == RECORD:
            assert value.facts.fields is not None  # (a RECORD is built with its fields)
            return value.facts.fields
        return {k: const(v) for k, v in value.const.items()}

    def dict_lookup(self, base: Value, key: Value, node: nodes.Node) -> Value:
        """`d[key]` of a dict literal; a run-time key picks among the constant values."""
        fields = self.dict_fields(base)
        if key.is_const:
            return fields.get(key.const, UNDEFINED)
        if key.kind == UNDEF and not key.facts.maybe_undefined:
            return UNDEFINED  # no dict has Undefined as a key
        if key.kind == ANY and all(isinstance(k, str) and k for k in fields):
            # an untyped key (a schema's `type`) matches only when it is a string
            text = go_and(go_eq(go_printf("%T", key.code), ir.String.of("string")), go_printf("%v", key.code))
            key = Value(go_or(text, ir.String.of("")), STR)
        if key.kind not in {STR, CONTENT, INT} or not all(
            v.is_const and isinstance(v.const, (str, int)) and not isinstance(v.const, bool) for v in fields.values()
        ):
            raise self.emit.fail(node, "a dict literal looked up with a run-time key")
        kinds = {type(v.const) for v in fields.values()}
        if len(kinds) > 1:
            raise self.emit.fail(node, "a dict literal of mixed value types looked up with a run-time key")
        result, flag = self.emit.temp(), self.emit.temp()
        self.emit.declare(result, ir.String.of("") if kinds != {int} else ir.Number.of(0))
        self.emit.declare(flag, "false")
        for k, v in fields.items():
            if isinstance(k, str) == (key.kind != INT):
                self.emit.if_(go_eq(key.code, const(k).code))
                self.emit.assign(result, v.expr)
                self.emit.assign(flag, "true")
                self.emit.end()
        kind = INT if kinds == {int} else STR
        return Value(result, kind, facts=Facts(maybe_undefined=True, defined_flag=ir.Variable(flag)))

    @staticmethod
    def empty_list_as(value: Value, other: Value) -> Value:
        """`[]` beside a Go list (`x if c else []`): an empty Go slice, whose element type
        no length or loop can see (a run-time Go list has no literal)."""
        if value.is_const and value.const == [] and other.kind in {MSGS, CALLS} and not other.is_const:
            return Value(GoCall("slice", MESSAGES, ir.Number.of(0), ir.Number.of(0)), other.kind)
        return value
