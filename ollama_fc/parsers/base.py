"""What every tool-call format shares: the result types, how a call region is delimited, and the
reading of a `{"name": ..., "arguments": ...}` object.

A format is described by its markers (where a call can begin and how its region ends), by the
Ollama tool tags it answers to, and by `read_region` (or `read_prefix`), which turns one region's
text into calls or says it is not a call. The scanner in `streaming.py` finds the regions, the
same way for a whole text and for a stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

from .lenient import NotALiteral, read_value

ToolsArg = Union[Sequence[Mapping[str, Any] | Any | Callable[..., Any]], None]


@dataclass(frozen=True)
class ParsedCall:
    """One tool call recovered from text: the tool's name and its arguments as a dict."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass
class ParseResult:
    """The calls found in a model's text, and the text left once the call text is removed."""

    tool_calls: list[ParsedCall]
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"tool_calls": [call.to_dict() for call in self.tool_calls], "content": self.content}


RegionKind = Literal["tag", "fence", "bracket", "rest"]


@dataclass(frozen=True)
class Marker:
    """Where a call region starts and how it ends.

    kind: "tag" ends at the first closer (`consume` says whether the closer belongs to the
    region), "fence" at the Markdown fence that closes the block, "bracket" where the bracket
    that ends the marker (or the first one after it) closes, "rest" at the end of the output.
    Every region also ends where its own marker appears again, so one marker repeated never
    makes a region that spans the others. With `must_end` the region is a call only if nothing
    but whitespace, separators and other calls follow it (for shapes with no marker of their
    own, where a call is the last thing a model prints). With `per_tool` the text is a pattern
    whose `{name}` stands for each offered tool's name (a bare `get_weather(` has no other
    marker); such markers count only when tools are offered and only at the start of a word.
    With `quoted`, a "tag" closer inside a quoted string does not count (a JSON value may hold
    the format's own tags). `ends_at_own_marker=False` is for a model's own learned format, whose
    values may quote its opener raw (`<parameter=text>write <tool_call> to start`): the region
    then runs to its closer. That gives up the guard against a repeated opener, so such a marker
    costs time quadratic in the number of unclosed openers. With `in_thinking` the marker is
    read inside an open thinking block too, for a model that calls tools in the middle of its
    reasoning with its own special tokens (Kimi K2 Thinking): its calls stand when nothing but
    whitespace and end tokens follows them; otherwise they are thinking text again.
    """

    text: str
    kind: RegionKind
    closers: tuple[tuple[str, bool], ...] = ()
    must_end: bool = False
    per_tool: bool = False
    quoted: bool = False
    ends_at_own_marker: bool = True
    in_thinking: bool = False

    def for_tool(self, name: str) -> Marker:
        """This marker with `{name}` filled in (only for `per_tool` markers)."""
        return Marker(
            self.text.replace("{name}", name),
            self.kind,
            self.closers,
            self.must_end,
            quoted=self.quoted,
            ends_at_own_marker=self.ends_at_own_marker,
            in_thinking=self.in_thinking,
        )


class ToolCallParser:
    """A tool-call format: its markers, the Ollama tags it answers to, and how to read a region.

    `tags` are texts Ollama derives as a template's tool tag (the first text of its `.ToolCalls`
    block) that mean this format; the client's tag-to-format map and the converter's known
    markers are built from them.
    """

    name: ClassVar[str]
    markers: ClassVar[tuple[Marker, ...]]
    tags: ClassVar[tuple[str, ...]] = ()
    models: ClassVar[str] = ""  # the models known to write this format (docs/FORMATS.md lists them)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        """The calls written in `region` (which starts with one of the markers), or None.

        By default the calls `read_prefix` reads, when only whitespace follows them: a format
        defines one of the two.
        """
        found = self.read_prefix(region)
        return found[0] if found and not region[found[1] :].strip() else None

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        """The calls at the start of `region` and where their text ends, or None.

        The text after that end is scanned again (prose after a call stays content). By default
        the calls must fill the whole region.
        """
        calls = self.read_region(region)
        return (calls, len(region)) if calls else None


# Tokens a model prints right after its calls to close them; they are dropped, not content.
CALL_END_TOKENS = (
    "<|eom_id|>",
    "<|eot_id|>",
    "<|end|>",
    "</s>",
    "<|im_end|>",
    "<|python_end|>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
    "<｜tool▁calls▁end｜>",
    "<｜hy_eos:opensource｜>",
    "<|END_OF_TURN_TOKEN|>",
)


def tool_name(tool: Any) -> str | None:
    """The name of an offered tool: a tool dict, an ollama Tool, a callable, or a plain name."""
    if isinstance(tool, str):
        return tool
    if callable(tool) and hasattr(tool, "__name__"):
        return str(tool.__name__)
    function = tool.get("function") if isinstance(tool, Mapping) else getattr(tool, "function", None)
    if isinstance(function, Mapping):
        name = function.get("name")
    else:
        name = getattr(function, "name", None)
    return name if isinstance(name, str) else None


def offered_names(tools: ToolsArg | Iterable[str]) -> frozenset[str] | None:
    """Names of the offered tools; None when no tools were given (then any name counts)."""
    if tools is None:
        return None
    return frozenset(name for name in map(tool_name, tools) if name)


def required_arguments(tools: ToolsArg) -> dict[str, frozenset[str]]:
    """The arguments each offered tool's schema lists as required (tools without a schema, or
    whose schema requires nothing, are left out)."""
    required: dict[str, frozenset[str]] = {}
    for tool in tools or ():
        name = tool_name(tool)
        function = tool.get("function") if isinstance(tool, Mapping) else getattr(tool, "function", None)
        parameters = (
            function.get("parameters") if isinstance(function, Mapping) else getattr(function, "parameters", None)
        )
        names = parameters.get("required") if isinstance(parameters, Mapping) else getattr(parameters, "required", None)
        if name and isinstance(names, (list, tuple)) and names:
            required[name] = frozenset(item for item in names if isinstance(item, str))
    return required


def commits(call: ParsedCall, required: Mapping[str, frozenset[str]]) -> bool:
    """Whether a call names every argument its tool requires (with a value other than null): a
    call that leaves one out has not committed to the call, and is never taken for one."""
    return all(call.arguments.get(name) is not None for name in required.get(call.name, ()))


# A value that stands for one the model was to fill in: `...`, `<city>`, `<args-json-object>`.
PLACEHOLDER = re.compile(r"\.\.\.|…|<[A-Za-z][\w\- ]*>")


def shows_placeholder(call: ParsedCall) -> bool:
    """Whether an argument of the call is a placeholder (`{"city": "<city>"}`, `"path": "..."`):
    the call is an example of the syntax, shown, not made."""
    return any(isinstance(value, str) and PLACEHOLDER.fullmatch(value.strip()) for value in call.arguments.values())


NAME_KEYS = ("name", "function", "tool", "tool_name", "action", "function_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "params", "tool_input", "action_input", "input", "kwargs")
ENVELOPE_KEYS = ("function_call", "tool_call", "function", "call")
LIST_ENVELOPE_KEYS = ("tool_calls", "function_calls", "calls", "tool_uses")


@dataclass(frozen=True)
class Reading:
    """What the scanner knows while a parser reads a region: the offered names, the active
    parsers, and how many wrapper bodies deep the read is."""

    names: frozenset[str] | None = None
    parsers: tuple[ToolCallParser, ...] = ()
    depth: int = 0


_READING: ContextVar[Reading | None] = ContextVar("ollama_fc_reading", default=None)
_NOT_READING = Reading()


@contextmanager
def reading_for(names: frozenset[str] | None, parsers: tuple[ToolCallParser, ...]) -> Iterator[None]:
    """While the scanner reads a region: the offered names and active parsers, for readers of a
    wrapper's body (`<tools>...</tools>`, a fenced block) that scan it for calls in any shape."""
    token = _READING.set(Reading(names, parsers, reading_context().depth + 1))
    try:
        yield
    finally:
        _READING.reset(token)


def reading_context() -> Reading:
    """The offered names, active parsers and depth of the region being read (see `reading_for`)."""
    return _READING.get() or _NOT_READING


CALL_KEYS = frozenset({*NAME_KEYS, *ARGUMENT_KEYS, "id", "type", "call_id", "index", "tool_call_id"})


def call_from_object(obj: Any, depth: int = 0) -> ParsedCall | None:
    """Read `{"name": ..., "arguments": {...}}` and its common variants, or None if it is not one.

    Accepted: `function`, `tool`, `tool_name` (or `action`) for the name; `parameters`, `args`,
    `params`, `tool_input` (or `action_input`, `input`) for `arguments`; arguments as a JSON
    string; no arguments at all (a call without parameters); envelopes such as the OpenAI shape
    `{"type": "function", "function": {...}}` or `{"function_call": {...}}`; a name or arguments
    wrapped twice. An object with keys that calls do not have (`{"name": "Ann", "age": 3}`) is
    data.
    """
    if not isinstance(obj, dict) or depth > 4:
        return None
    if len(obj) <= 2 and set(obj) - {"type", "id"}:
        for key in ENVELOPE_KEYS:
            if isinstance(obj.get(key), dict) and set(obj) <= {key, "type", "id"}:
                return call_from_object(obj[key], depth + 1)
    if isinstance(obj.get("function"), dict) and not any(key in obj for key in ARGUMENT_KEYS):
        return call_from_object(obj["function"], depth + 1)
    if not set(obj) <= CALL_KEYS:
        return None
    name = next((obj[key] for key in NAME_KEYS if isinstance(obj.get(key), str)), None)
    if name is None:
        wrapped = next((obj[key] for key in NAME_KEYS if isinstance(obj.get(key), dict)), None)
        inner = wrapped.get("name") if isinstance(wrapped, dict) and len(wrapped) == 1 else None
        name = inner if isinstance(inner, str) else None
    if name is None or not name.strip() or not _is_name(name.strip()):
        return None
    arguments: Any = {}
    for key in ARGUMENT_KEYS:
        if key in obj:
            arguments = obj[key]
            break
    arguments = arguments_dict(arguments)
    if arguments is None:
        return None
    inner_call = call_from_object(arguments, depth + 1) if arguments.get("name") == name else None
    if inner_call is not None:  # the whole call repeated as its own arguments
        return inner_call
    if len(arguments) == 1:
        only = next(iter(arguments))
        if only in ("arguments", "parameters") and isinstance(arguments[only], dict):
            arguments = arguments[only]
    return ParsedCall(name.strip(), arguments)


def _is_name(name: str) -> bool:
    """Whether a text can be a tool's name (no spaces or punctuation beyond `_-.:/`)."""
    return len(name) <= 128 and all(char.isalnum() or char in "_-.:/" for char in name)


def arguments_dict(arguments: Any) -> dict[str, Any] | None:
    """A call's arguments as a dict: a JSON (or Python literal) string is read, a missing or
    empty one is no arguments; None when they are not a mapping."""
    if isinstance(arguments, str):
        try:
            arguments = read_value(arguments) if arguments.strip() else {}
        except NotALiteral:
            return None
    if arguments is None:
        return {}
    return arguments if isinstance(arguments, dict) else None


def calls_from_value(value: Any) -> list[ParsedCall] | None:
    """A call object, a list of them, or an envelope such as `{"tool_calls": [...]}`; None if
    any element is not a call."""
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        if key in LIST_ENVELOPE_KEYS and isinstance(value[key], list):
            value = value[key]
    items = value if isinstance(value, list) else [value]
    calls = [call_from_object(item) for item in items]
    if not calls or any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


def calls_from_values(values: Iterable[Any]) -> list[ParsedCall] | None:
    """The calls of a run of values, each a call or a list of them; None if any is not."""
    calls: list[ParsedCall] = []
    for value in values:
        found = calls_from_value(value)
        if found is None:
            return None
        calls.extend(found)
    return calls
