"""What every tool-call format shares: the result types, how a call region is delimited, and the
reading of a `{"name": ..., "arguments": ...}` object.

A format is described by its markers (where a call can begin and how its region ends) and by
`read_region`, which turns one region's text into calls or says it is not a call. The scanner in
`streaming.py` finds the regions, the same way for a whole text and for a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
    that starts at or after the marker closes, "rest" at the end of the output. With `must_end`
    the region is a call only if nothing but whitespace follows it (for formats with no marker
    of their own, where a call is the last thing a model prints). With `quoted`, a "tag"
    closer inside a quoted string does not count (a JSON value may hold the format's own tags).
    """

    text: str
    kind: RegionKind
    closers: tuple[tuple[str, bool], ...] = ()
    must_end: bool = False
    quoted: bool = False


class ToolCallParser:
    """A tool-call format: its markers and how to read one call region."""

    name: ClassVar[str]
    markers: ClassVar[tuple[Marker, ...]]

    def read_region(self, region: str) -> list[ParsedCall] | None:
        """The calls written in `region` (which starts with one of the markers), or None."""
        raise NotImplementedError


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


CALL_KEYS = frozenset({"name", "arguments", "parameters", "args", "id", "type", "call_id", "index"})
ARGUMENT_KEYS = ("arguments", "parameters", "args")


def call_from_object(obj: Any) -> ParsedCall | None:
    """Read `{"name": ..., "arguments": {...}}` and its common variants, or None if it is not one.

    Accepted: `parameters` or `args` for `arguments`; arguments as a JSON string; no arguments
    at all (a call without parameters); the OpenAI shape `{"type": "function", "function": {...}}`.
    An object with keys that calls do not have (e.g. `{"name": "Ann", "age": 3}`) is data.
    """
    if not isinstance(obj, dict):
        return None
    if "name" not in obj and isinstance(obj.get("function"), dict):
        return call_from_object(obj["function"])
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip() or not set(obj) <= CALL_KEYS:
        return None
    arguments: Any = {}
    for key in ARGUMENT_KEYS:
        if key in obj:
            arguments = obj[key]
            break
    if isinstance(arguments, str):
        try:
            arguments = read_value(arguments) if arguments.strip() else {}
        except NotALiteral:
            return None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return None
    return ParsedCall(name.strip(), arguments)


def calls_from_value(value: Any) -> list[ParsedCall] | None:
    """A call object or a list of them; None if any element is not a call."""
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
