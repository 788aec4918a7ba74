"""What the translator knows about a value: its kind in Ollama's data model.

Each Jinja expression becomes a `Value`: Go operand code tagged with the kind of thing it holds
(a message, the tool list, a string...). The kind decides how attributes, tests and filters map
onto Ollama's fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, cast

from jinja2 import nodes

from ...errors import ConversionError
from ..go import ir
from ..go.calls import GoOperand, read_operand
from ..go.tree import Act

NOT_CONST = object()


class Kind(str, Enum):
    """What a value is in Ollama's data model; decides how attributes, tests and filters map.

    A kind is also the string it names (`Kind.STR == "str"`), so it prints as that string in
    messages. Every Value has one; what else is known of it is in its `Facts`.
    """

    STR = "str"
    INT = "int"
    BOOL = "bool"
    NONE = "none"
    UNDEF = "undef"
    #: a value of unknown Go type (an argument value, a schema's `items`), tested at run time
    ANY = "any"
    MSGS = "msgs"
    MSG = "msg"
    CALLS = "calls"
    CALL = "call"
    FUNC = "func"
    ARGS = "args"
    TOOLS = "tools"
    TOOL = "tool"
    TFUNC = "tfunc"
    PARAMS = "params"
    PROPS = "props"
    PROP = "prop"
    CONTENT = "content"
    PART = "part"
    PARTS = "parts"
    NS = "ns"
    LIST = "list"
    #: a property's `anyOf`: a list of properties
    ANYOF = "anyof"
    #: a list of strings built at run time, held in one Go string (see go/strlists.py)
    STRLIST = "strlist"
    #: a dict literal: DICT when wholly constant (`const` holds it), RECORD when some value is not
    #: (`facts.fields` maps each constant key to its Value); keys are always resolved statically
    DICT = "dict"
    RECORD = "record"
    FUNCTION = "function"
    #: a variable holding a dict literal on some paths and a run-time value on others (a Go flag tells)
    LITERAL_OR = "literal_or"
    #: a dict's method looked up as an attribute (`schema.items`), not called
    BOUND_METHOD = "bound_method"
    #: `text.split(sep)` before it is used: indexed, it needs no list at all
    SPLIT = "split"
    #: a list filtered by `selectattr`/`rejectattr` (`facts.base`, `facts.filters`)
    SELECT = "select"
    #: `map(attribute=...)` of a list or a selection (`facts.path`)
    MAPPED = "mapped"
    #: `seq[::-1]` of a list (`facts.base`)
    REVERSED = "reversed"
    #: the `loop` variable of a for loop
    LOOP = "loop"
    #: a string's method looked up but not called (`text.strip`): `facts.method` names it,
    #: `facts.receiver` is the string
    METHOD = "method"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return self.value.__format__(spec)


STR, INT, BOOL, NONE, UNDEF, ANY = Kind.STR, Kind.INT, Kind.BOOL, Kind.NONE, Kind.UNDEF, Kind.ANY
MSGS, MSG, CALLS, CALL, FUNC, ARGS = Kind.MSGS, Kind.MSG, Kind.CALLS, Kind.CALL, Kind.FUNC, Kind.ARGS
TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP = Kind.TOOLS, Kind.TOOL, Kind.TFUNC, Kind.PARAMS, Kind.PROPS, Kind.PROP
CONTENT, PART, PARTS, NS, LIST = Kind.CONTENT, Kind.PART, Kind.PARTS, Kind.NS, Kind.LIST
ANYOF, STRLIST, DICT, RECORD, FUNCTION = Kind.ANYOF, Kind.STRLIST, Kind.DICT, Kind.RECORD, Kind.FUNCTION
LITERAL_OR, BOUND_METHOD = Kind.LITERAL_OR, Kind.BOUND_METHOD
SPLIT, SELECT, MAPPED, REVERSED, LOOP = Kind.SPLIT, Kind.SELECT, Kind.MAPPED, Kind.REVERSED, Kind.LOOP
METHOD = Kind.METHOD
#: Callables the reference environment defines (`strftime_now is defined` is true).
GLOBAL_FUNCTIONS = {"strftime_now", "raise_exception", "namespace", "range", "dict", "lipsum", "cycler", "joiner"}

#: kinds that are Python dicts on the Hugging Face side, and the methods such a dict has
DICT_KINDS: set[Kind] = {MSG, CALL, FUNC, ARGS, TOOL, TFUNC, PARAMS, PROPS, PROP, DICT, RECORD}
DICT_METHODS = {"items", "keys", "values", "get", "pop", "copy", "update", "setdefault", "clear", "popitem", "fromkeys"}

MAPPINGS: set[Kind] = {MSG, CALL, FUNC, ARGS, TOOL, TFUNC, PARAMS, PROPS, PROP, PART, NS, DICT, RECORD}
SEQUENCES: set[Kind] = {MSGS, CALLS, TOOLS, PARTS, LIST, ANYOF}
ELEMENT: dict[Kind, Kind] = {MSGS: MSG, CALLS: CALL, TOOLS: TOOL, PARTS: PART, ANYOF: PROP}

MESSAGE_FIELDS: dict[str, tuple[str, Kind]] = {
    "role": ("Role", STR),
    "content": ("Content", CONTENT),
    "tool_calls": ("ToolCalls", CALLS),
    "name": ("ToolName", STR),
    "tool_name": ("ToolName", STR),
    "tool_call_id": ("ToolCallID", STR),
    "reasoning_content": ("Thinking", STR),
    "thinking": ("Thinking", STR),
    "reasoning": ("Thinking", STR),
}
#: Message keys a Hugging Face message has only when Ollama's field is non-empty.
OPTIONAL_MESSAGE_KEYS = {
    "tool_calls",
    "name",
    "tool_name",
    "tool_call_id",
    "reasoning_content",
    "thinking",
    "reasoning",
}
FIELDS: dict[Kind, dict[str, tuple[str, Kind]]] = {
    MSG: MESSAGE_FIELDS,
    CALL: {"function": ("Function", FUNC), "id": ("ID", STR)},
    FUNC: {"name": ("Name", STR), "arguments": ("Arguments", ARGS)},
    TOOL: {"type": ("Type", STR), "function": ("Function", TFUNC)},
    TFUNC: {"name": ("Name", STR), "description": ("Description", STR), "parameters": ("Parameters", PARAMS)},
    PARAMS: {"type": ("Type", STR), "properties": ("Properties", PROPS), "required": ("Required", LIST)},
    PROP: {"description": ("Description", STR), "enum": ("Enum", LIST), "items": ("Items", ANY)},
}

STRFTIME = {"%Y": (0, 4), "%m": (5, 7), "%d": (8, 10), "%y": (2, 4)}
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


@dataclass(frozen=True)
class LiteralChoice:
    """What a LITERAL_OR value holds: the dict `literal` where the Go flag `flag` is on, the
    run-time value `other` elsewhere. One fact, so none of the three is known without the others."""

    flag: ir.Variable
    literal: Value
    other: Value


@dataclass(frozen=True)
class PrefetchedKey:
    """A key looked up in a prefetching scan: the Go variables of its value and of whether it
    was found, and its own keys looked up the same way (`deeper`), where it has some."""

    value: ir.Variable
    found: ir.Variable
    deeper: Prefetched | None = None


@dataclass(frozen=True)
class Prefetched:
    """An untyped mapping's keys looked up in one scan: the operand scanned (they hold only
    for it) and each key's variables; the mapping given is copied, read-only."""

    scanned: ir.Operand | None
    keys: Mapping[str, PrefetchedKey]

    def __post_init__(self) -> None:
        if isinstance(self.keys, dict):
            object.__setattr__(self, "keys", MappingProxyType(dict(self.keys)))


@dataclass(frozen=True)
class Facts:
    """What the translator knows of a value beyond its kind and constant, one typed field a fact.

    A field is None (False for a flag) where nothing is known. Facts are never changed in place:
    a value learns one by getting new facts (`replace(value.facts, ...)`), so no two values share
    what one of them learns; the containers they hold are tuples and read-only mappings (a
    mapping given is copied), so nothing holding them can change them either.
    """

    # -- whether it may be undefined or None, and the Go code that tells where
    #: Jinja's value may be undefined on some path (Go holds "" or nothing there)
    maybe_undefined: bool = False
    #: a Go flag true where the value is defined (with `maybe_undefined`)
    defined_flag: ir.Variable | None = None
    #: Jinja's value may be None on some path (Go holds "" there)
    maybe_none: bool = False
    #: a Go condition true where Jinja's value is None (a message's content beside its calls)
    none_when: ir.Operand | None = None
    #: a message's or a schema's key that Hugging Face leaves out where Ollama's field is empty
    optional: bool = False
    #: an optional key read with `.get` (`message.get('tool_calls')`): None where it is empty
    or_method: bool = False
    #: a list variable set to `[]` somewhere: no longer None where Ollama's list is empty
    emptied: bool = False
    #: `tools`, which transformers passes as None when the request has none
    nullable: bool = False

    # -- text: where it comes from and how it prints
    #: a Go condition true where the text may hold the final message's (a prefilled answer)
    final: ir.Operand | None = None
    #: Markup (`|safe`, or built from it): printed as is, other text joined to it is escaped;
    #: "mixed" where a print plan's branches differ
    markup: bool | Literal["mixed"] | None = None
    #: text `tojson` wrote (a constant `indent` re-indents it as JSON)
    json_text: bool = False
    #: surely not empty (it holds constant text)
    nonempty: bool = False
    #: the flow epoch at which a namespace attribute was last set to surely non-empty text
    known_nonempty: int | None = None
    #: a `+` concatenation: its Go operand and its parts (constant text, or the Value of an
    #: operand), spliced where it prints the final message's text
    concat: tuple[ir.Operand | None, tuple[str | Value, ...]] | None = None
    #: the Go operand of a message's single content part's text (a `PART`)
    content: ir.Operand | None = None
    #: a print plan (translate/plans.py): text built only to be printed, printed where read
    plan: tuple[Any, ...] | None = None

    # -- numbers, mappings and their keys
    #: an int that may be negative (Go's printf width arithmetic needs to know)
    maybe_negative: bool = False
    #: `range(start, stop, step)`: the Go operand of its start and its constant step
    start: ir.Operand | None = None
    step: int | None = None
    #: a mapping's `(key, value)` pairs (`.items()`, `|items`, `|dictsort`); `sorted` by key
    items: bool = False
    sorted: bool = False
    #: a property map Ollama keeps in order (*api.ToolPropertiesMap), ranged through `.All`
    ordered: bool = False
    #: `|select`/`|reject` of a schema's keys: (filter, test, arguments), applied where ranged
    key_tests: tuple[tuple[str, str, tuple[Any, ...]], ...] | None = None
    #: a property's `type` read as its first type: the Go operand of the whole list of types
    types: ir.Operand | None = None
    #: a RECORD's fields: each constant key's Value
    fields: Mapping[Any, Value] | None = None
    #: an untyped mapping's keys looked up in one scan (see `Access.prefetch_fields`)
    prefetched: Prefetched | None = None

    # -- views: a list seen through filters, a map or a reversal, or a text's split, held
    # statically until used (kinds SELECT, MAPPED, REVERSED, SPLIT)
    #: the list seen (a SELECT's, MAPPED's or REVERSED's); also a filtered variable's own list
    base: Value | None = None
    #: the `selectattr`/`rejectattr` filters applied to `base`'s elements
    filters: tuple[SelectionFilter, ...] | None = None
    #: `map(attribute=...)`: the attribute path read of each element
    path: tuple[str, ...] | None = None
    #: a MAPPED view not yet made a list (`|list` makes it one: False)
    lazy: bool | None = None
    #: a loop's sequence that is a REVERSED view
    reversed: bool = False
    #: `text.split(sep[, maxsplit])`: the constant separator and the maxsplit kept (>= 0)
    sep: str | None = None
    limit: int | None = None
    #: a Go flag a variable's filters apply under, where it is filtered on some paths only
    filter_flag: ir.Variable | None = None

    # -- variables: what a `set` name or a namespace holds, as the translation goes
    #: a Go variable the template declared (`$x`), not an expression
    var: bool = False
    #: the variable was given a value on some path (False: declared, holding its outer value)
    assigned: bool | None = None
    #: a namespace's attributes, each a variable's Value (the namespace gets new ones as `set ns.x` runs)
    attrs: Mapping[str, Value] | None = None
    #: the attributes of a namespace that may hold a message's text (each with a `final` flag)
    text_attrs: tuple[str, ...] | None = None
    #: the constant a variable was last set to and the flow epoch then: it is that constant
    #: until the next branch point
    known: tuple[int, Any] | None = None
    #: a variable holding a list on some paths and text on others: the two kinds
    list_or_text: tuple[Kind, Kind] | None = None
    #: a variable given a dict literal on some paths: the literal and the Go flag that tells;
    #: read as a LITERAL_OR value, whose `choice` tells the two apart
    literal: Value | None = None
    literal_flag: ir.Variable | None = None
    choice: LiteralChoice | None = None
    #: a METHOD: the value it is a method of, and the method's name
    receiver: Value | None = None
    method: str | None = None

    def __post_init__(self) -> None:
        for name in ("fields", "attrs"):
            if isinstance(mapping := getattr(self, name), dict):
                object.__setattr__(self, name, MappingProxyType(dict(mapping)))

    def present(self) -> dict[str, Any]:
        """The facts that are known, by name: what a macro's `define` is keyed on."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not f.default}

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) is not f.default for f in fields(self))

    def join(self, other: Facts) -> Facts:
        """The facts of a value that holds `self` on some paths and `other` on the others (a
        variable set in one branch): what may be so on either path (undefined, None, negative)
        may be so of the join; what is known of this side stays."""
        return replace(
            self,
            maybe_undefined=self.maybe_undefined or other.maybe_undefined,
            maybe_none=self.maybe_none or other.maybe_none,
            maybe_negative=self.maybe_negative or other.maybe_negative,
        )

    def only(self, names: set[str]) -> Facts:
        """These facts, and no other."""
        return Facts(**{name: v for name, v in self.present().items() if name in names})


NO_FACTS = Facts()


@dataclass(frozen=True)
class Value:
    """A translated expression: Go operand code, what it holds, and its value if constant.

    Frozen but for `take`: an operation on values returns a new one (`replace(value, ...)`).
    The code is IR (`node`) where the value was made as IR (`Value.of`); `code` is its text,
    for what still composes Go as text. A value made from text reads it into IR when asked."""

    code: str
    kind: Kind
    const: Any = NOT_CONST
    facts: Facts = NO_FACTS
    #: the Go operand as IR, where the value was made as IR (see `node`)
    written: ir.Operand | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, node: ir.Operand, kind: Kind, const: Any = NOT_CONST, facts: Facts = NO_FACTS) -> Value:
        """The value whose Go code is the operand `node`."""
        return cls(GoOperand(node), kind, const, facts, node)

    @property
    def is_const(self) -> bool:
        return self.const is not NOT_CONST

    @property
    def node(self) -> ir.Operand | None:
        """The Go operand as IR; None where the code is no one operand (a constant list, nothing)."""
        if self.written is None and self.code:
            node = read_operand(self.code)  # (the node composed code carries, other text read)
            object.__setattr__(self, "written", node)  # (a cache: the same code as IR)
        return self.written

    def reads_field(self, name: str) -> bool:
        """Is the value one operand read through fields ending in `name` (`$m.Role` for `Role`)?"""
        node = self.node
        return isinstance(node, (ir.Variable, ir.Field, ir.Chain)) and node.fields[-1:] == (name,)

    @property
    def expr(self) -> ir.Operand | str:
        """The Go operand as IR for a verb (`Emit.assign`...), its text where it is not one."""
        node = self.node
        return self.code if node is None else node

    def join(self, new: Value) -> Value:
        """A variable holding this value on some paths and `new` on the others, in this one's Go
        variable: of the kind both are, text where both are text, a function where both are a
        call or its function, else untyped; this value as it is where `new` is nothing, and no
        facts otherwise (the caller joins the facts that hold, `Facts.join`)."""
        if self.kind in {UNDEF, NONE} or self.kind == new.kind:
            return Value(self.code, new.kind)
        if new.kind in {NONE, UNDEF}:
            return self
        if {self.kind, new.kind} <= {STR, CONTENT}:
            return Value(self.code, STR)
        if {self.kind, new.kind} <= {CALL, FUNC}:
            return Value(self.code, FUNC)
        return Value(self.code, ANY)

    def take(self, new: Value) -> None:
        """A variable's slot takes what `new` holds: the one change a Value undergoes in place.
        A slot is known by its identity (print plans are keyed on it, and a view of a variable
        reads its Go variable, which the assignment changes too), so `set` changes what the
        slot holds instead of binding the name to another Value. Every field is taken, so one
        added to Value is taken too."""
        for each in fields(self):
            object.__setattr__(self, each.name, getattr(new, each.name))

    def is_operand(self, stamp: ir.Operand | None) -> bool:
        """Is this value the Go operand `stamp` (what a fact was found for: a concatenation, a
        prefetched scan, a loop's list)? A value that is no one operand never is."""
        return stamp is not None and stamp == self.node


def const(value: Any) -> Value:
    if value is None:
        return Value("", NONE, None)
    if isinstance(value, bool):
        return Value.of(ir.Bool(value), BOOL, value)
    if isinstance(value, int):
        return Value.of(ir.Number.of(value), INT, value)
    if isinstance(value, str):
        return Value.of(ir.String.of(value), STR, value)
    if isinstance(value, (list, tuple)):
        return Value("", LIST, list(value))
    if isinstance(value, dict):
        return Value("", DICT, dict(value))
    raise ConversionError(f"unsupported constant {value!r}")


UNDEFINED = Value("", UNDEF)


def final_of(value: Value) -> Facts:
    """The `final` mark of a value from a message's text: a Go condition true for the final message."""
    return Facts(final=value.facts.final) if value.facts.final else NO_FACTS


def py_str(value: Any) -> str:
    """How Jinja prints a constant."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


@dataclass
class Loop:
    index: str
    seq: str
    last: str
    #: (index0, length) when the iteration is known statically: a message's single content
    #: part, or one unrolled step over a literal list
    fixed: tuple[int, int] | None = None
    #: Go operand for `loop.length` when `seq` is not a Go list
    length: str | None = None
    #: the kind of `seq`'s elements when `loop.previtem`/`nextitem` can index it (a forward loop)
    item_kind: Kind | None = None
    #: Go operand for `loop.revindex0` where the loop has it at hand: a loop over a reversed
    #: list, whose step takes the element at that position of the list (`list_node`, as IR)
    revindex0: str | None = None
    list_node: ir.Operand | None = None
    #: the neighbours a forward list loop keeps when its body reads them (`loop.previtem`,
    #: `nextitem`, and `xs[loop.index0 - 1]` / `+ 1` of its list): `before`, carried over from
    #: the previous step through `carried`; `after`, the list from its second element; set up
    #: once the body is written
    before: str | None = None
    carried: str | None = None
    after: str | None = None
    #: the Go operand of that list where it stays the same value and the loop is unfiltered:
    #: what `xs` must be for `xs[loop.index0 - 1]` to be the neighbour
    source: ir.Operand | None = None
    #: a Go flag true on the first step only, where an unfiltered list loop reads `loop.first`
    #: inside an expression (`loop.first and ...`): set without a call at the top of each step
    first_flag: str | None = None
    #: the action declaring `last` in each step, where one was written (the translator's
    #: output piece, dropped once the body is written if nothing reads `last`)
    last_declared: Act | None = None
    #: the per-step variables (`last`, `first_flag`) some expression of the body was given:
    #: what the body may read, so what is declared or set up for it (see `translate/steps.py`)
    asked: set[str] = field(default_factory=set)

    def ask(self, var: str) -> str:
        """`var`, one of the loop's per-step variables, noted as read by the body."""
        self.asked.add(var)
        return var


#: Evaluates an expression in the scope it was written in: how an operation that evaluates
#: arguments later (a selection's test) or only some of them (`tojson`'s options) gets them
#: without holding the scope itself.
ValueOf = Callable[[nodes.Expr], Value]


class SelectionFilter(NamedTuple):
    """One `selectattr`/`rejectattr` of a selection, tested on each element when it is used."""

    node: nodes.Filter
    #: evaluates the filter's arguments in the scope it was written in
    value_of: ValueOf
    #: a Go flag when the filter applies on some paths only (a variable filtered in an `if`)
    when: ir.Variable | None


def attrs_of(namespace: Value) -> Mapping[str, Value]:
    """A namespace's attributes (the namespace gets new ones as `set ns.x` runs)."""
    assert namespace.facts.attrs is not None, "a namespace without its attributes"
    return namespace.facts.attrs


def literal_choice(value: Value) -> LiteralChoice:
    """A LITERAL_OR value's Go flag, the dict literal it holds where the flag is on, and the
    run-time value it holds elsewhere."""
    choice = value.facts.choice
    assert choice is not None, "a LITERAL_OR without its choice"
    return choice


def view_of(value: Value) -> tuple[Value, tuple[SelectionFilter, ...]]:
    """A view's list (of a SELECT, MAPPED or REVERSED value) and the filters its elements pass."""
    base = value.facts.base
    assert base is not None, f"{value.kind} without its list"
    return base, value.facts.filters or ()


def separator_of(value: Value) -> str:
    """A SPLIT's constant separator."""
    assert value.facts.sep is not None, "a split without its separator"
    return value.facts.sep


def keyword_arguments(node: nodes.Filter | nodes.Test) -> list[nodes.Keyword]:
    """A filter's or test's keyword arguments (jinja2 annotates them as plain expressions)."""
    return cast("list[nodes.Keyword]", node.kwargs)
