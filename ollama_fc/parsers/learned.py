"""A tool-call format learned from a chat template (see `ollama_fc.learn`), read like any other.

The learned format is data; this parser turns it into markers for the one scanner and reads a
region by walking the format's fixed texts. Whitespace inside a fixed text is matched exactly
when it is there and skipped when a model leaves it out; JSON is read by bracket scanning and
the lenient literal reader; a raw (XML-style) value ends at the first parameter closer that is
followed by the next parameter or the end of the call. Work is linear in the region.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from .base import Marker, ParsedCall, ToolCallParser, arguments_dict, call_from_object
from .learned_format import CALL_ID, CALL_NAME, INDEX, LEARNED_PREFIX, LearnedFormat, unquote
from .lenient import NotALiteral, read_value, scan_balanced
from .pythonic import read_call_list

NAME = r"(?P<name>[A-Za-z_][\w\-.]*)"
_LITERALS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}


@functools.lru_cache(maxsize=512)
def fixed(text: str) -> re.Pattern[str]:
    """A pattern for a fixed text: exact whitespace preferred, any (or none) accepted."""
    out: list[str] = []
    for piece in re.split(r"(\s+|\{index\}|\{id\}|\{name\})", text):
        if not piece:
            continue
        if piece == INDEX:
            out.append(r"\d+")
        elif piece == CALL_NAME:
            out.append(r"[A-Za-z_][\w\-.]*")
        elif piece == CALL_ID:
            out.append(r"[^\s<>|]*?")
        elif piece.isspace():
            out.append(f"(?:{re.escape(piece)}|\\s*)")
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out))


class LearnedParser(ToolCallParser):
    """Reads the calls of one learned format."""

    name = "learned"
    markers: tuple[Marker, ...] = ()  # type: ignore[misc]  # each instance has its format's own

    def __init__(self, spec: LearnedFormat) -> None:
        self.spec = spec
        self.name = spec.format_name()  # type: ignore[misc]
        self.markers = self._markers()
        self._head = re.compile(
            fixed(spec.call_open).pattern + NAME + fixed(spec.name_close).pattern
            if spec.style in ("name_json", "tagged")
            else fixed(spec.call_open).pattern
        )
        mids = [m for m in (spec.param_mid_string, spec.param_mid) if m]
        self._param = re.compile(
            r"\s*"
            + fixed(spec.param_open).pattern
            + r"(?P<key>[^\s<>=\"'/]+?)"
            + "(?:"
            + "|".join(f"(?P<m{i}>{fixed(m).pattern})" for i, m in enumerate(mids))
            + ")"
        )
        self._string_mid = 0 if spec.param_mid_string else -1
        self._param_close = fixed(spec.param_close) if spec.param_close else None
        self._param_close_exact = re.compile(re.escape(spec.param_close)) if spec.param_close else None
        self._after_value = re.compile(
            r"\s*(?:"
            + "|".join(p for p in (fixed(spec.param_open).pattern, fixed(spec.call_close).pattern) if p)
            + "|$)"
        )

    @classmethod
    def from_name(cls, format_name: str) -> LearnedParser:
        return cls(LearnedFormat.from_token(format_name[len(LEARNED_PREFIX) :]))

    def _markers(self) -> tuple[Marker, ...]:
        spec = self.spec
        if not spec.name_first:
            marker = self._marker()
            if spec.block_rejoin is None:
                return (marker,)
            # calls written after a closed block and its rejoin text: a block of their own
            first = (spec.block_rejoin.strip() or spec.call_open.strip()).split()[0]
            return marker, Marker(first, marker.kind, marker.closers, quoted=marker.quoted, ends_at_own_marker=False)
        # the prompt opens the reply's first call: the name and what follows it mark a call, the
        # separator (its opener after the prompt's) the calls after content
        follows = spec.name_close + ("{" if spec.style == "name_json" else "")
        markers = [Marker("{name}" + follows, "rest", per_tool=True, ends_at_own_marker=False)]
        if spec.call_separator.strip():
            markers.append(Marker(spec.call_separator.split()[0], "rest", ends_at_own_marker=False))
        return tuple(markers)

    def _marker(self) -> Marker:
        spec = self.spec
        opener, closer = spec.opener, spec.closer
        quoted = (spec.style in ("json", "name_json") or not spec.raw_strings) and not spec.string_quote
        if opener and opener not in ("{", "["):
            if closer in ("]", "}") and opener.endswith("[{"[closer == "}"]):
                # `[TOOL_CALLS] [...]`: the block ends where its bracket closes
                return Marker(opener, "bracket")
            if len(closer) > 1:
                return Marker(opener, "tag", closers=((closer, True),), quoted=quoted, ends_at_own_marker=False)
            return Marker(opener, "rest", ends_at_own_marker=False)
        return Marker(opener or ("[" if spec.style == "pythonic" else "{"), "bracket", must_end=True)

    # --- reading one region ---

    def read_region(self, region: str) -> list[ParsedCall] | None:
        spec = self.spec
        body = unquote(region.strip(), spec.string_quote)
        if spec.block_open.strip():
            match = fixed(spec.block_open.strip()).match(body)
            if match is None and spec.block_rejoin is not None:
                match = fixed(spec.block_rejoin.strip()).match(body)
            if match is None:
                return None
            body = body[match.end() :]
        closer = spec.block_close.strip()
        if closer and body.rstrip().endswith(closer):
            body = body.rstrip()[: -len(closer)]
        try:
            if spec.style == "pythonic":
                calls = self._pythonic(body)
            elif spec.style == "json" and spec.list_wrapped:
                calls = self._json_list(body)
            else:
                found = self._sequence(body)
                calls = found[0] if found else None
        except NotALiteral:
            return None
        return calls or None

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        """A reply that starts with a call's name runs to the end of the output: its calls are
        read as far as they go, and what follows them is scanned again."""
        if not self.spec.name_first or self.spec.string_quote:
            return super().read_prefix(region)
        try:
            found = self._sequence(region, prefix=True)
        except NotALiteral:
            return None
        return found if found and found[0] else None

    def _sequence(self, body: str, prefix: bool = False) -> tuple[list[ParsedCall], int] | None:
        """Calls one after another: call_open, the call, call_close, a separator; and where the
        last one ends. Unless `prefix`, the calls must fill `body`."""
        spec = self.spec
        calls: list[ParsedCall] = []
        close = fixed(spec.call_close.strip()) if spec.call_close.strip() else None
        separator = fixed(spec.call_separator.strip()) if spec.call_separator.strip() else None
        index = _skip_space(body, 0)
        last_end = index
        while index < len(body):
            if (calls or prefix) and separator is not None:  # a prefix may start at a separator
                found = separator.match(body, index)
                if found:
                    index = _skip_space(body, found.end())
            head = self._head.match(body, index)
            if head is None:
                return (calls, last_end) if prefix and calls else None
            index = head.end()
            if spec.style == "json":
                call, index = self._json_call(body, index)
            elif spec.style == "name_json":
                call, index = self._named_json(body, index, head.group("name"))
            else:
                call, index = self._tagged(body, index, head.group("name"))
            if call is None:
                return (calls, last_end) if prefix and calls else None
            calls.append(call)
            last_end = index
            index = _skip_space(body, index)
            if close is not None:
                found = close.match(body, index)
                if found:
                    last_end = found.end()
                    index = _skip_space(body, found.end())
                elif prefix:
                    return calls, last_end
                elif index < len(body):
                    return None
        return calls, last_end if prefix else len(body)

    def _json_value(self, body: str, index: int) -> tuple[Any, int]:
        index = _skip_space(body, index)
        if index >= len(body) or body[index] not in "{[":
            raise NotALiteral("no JSON value")
        end = scan_balanced(body, index) or len(body)
        return read_value(body[index:end]), end

    def _json_call(self, body: str, index: int) -> tuple[ParsedCall | None, int]:
        value, end = self._json_value(body, index)
        return self._call_from_value(value), end

    def _call_from_value(self, value: Any) -> ParsedCall | None:
        spec = self.spec
        if not isinstance(value, dict):
            return None
        if spec.name_is_key:
            if len(value) != 1:
                return None
            ((name, arguments),) = value.items()
            return ParsedCall(name, arguments) if isinstance(arguments, dict) else None
        name = _at(value, spec.name_key)
        arguments = _at(value, spec.arguments_key)
        if not isinstance(name, str):
            return call_from_object(value)
        arguments = arguments_dict(arguments)
        return ParsedCall(name.strip(), arguments) if arguments is not None else None

    def _json_list(self, body: str) -> list[ParsedCall] | None:
        values: list[Any] = []
        index = _skip_space(body, 0)
        while index < len(body):
            value, index = self._json_value(body, index)
            values.extend(value if isinstance(value, list) else [value])
            index = _skip_space(body, index)
            while index < len(body) and body[index] in ",;":
                index = _skip_space(body, index + 1)
        calls = [self._call_from_value(value) for value in values]
        if not calls or any(call is None for call in calls):
            return None
        return [call for call in calls if call is not None]

    def _named_json(self, body: str, index: int, name: str) -> tuple[ParsedCall | None, int]:
        start = _skip_space(body, index)
        if start >= len(body) or body[start] not in "{[":
            if self.spec.name_first:  # a name at the start of a reply is a call only with arguments
                return None, start
            return ParsedCall(name, {}), start  # a call without arguments
        value, end = self._json_value(body, start)
        if self.spec.arguments_as_string and isinstance(value, str):
            value = read_value(value)
        return (ParsedCall(name, value), end) if isinstance(value, dict) else (None, end)

    def _tagged(self, body: str, index: int, name: str) -> tuple[ParsedCall | None, int]:
        arguments: dict[str, Any] = {}
        close = self._param_close
        while True:
            param = self._param.match(body, index)
            if param is None or close is None:
                break
            raw_string = param.group("m0") is not None and self._string_mid == 0
            found = self._value_end(body, param.end(), self._param_close_exact) or self._value_end(
                body, param.end(), close
            )
            if found is None:
                return None, index
            arguments[param.group("key")] = self._value(body[param.end() : found.start()], raw_string)
            index = found.end()
        return ParsedCall(name, arguments), index

    def _value_end(self, body: str, start: int, close: re.Pattern[str] | None) -> re.Match[str] | None:
        """The parameter closer that ends a raw value: the first one followed by the next
        parameter or the end of the call (a value may hold the closer's text itself)."""
        if close is None:
            return None
        search_from = start
        while True:
            found = close.search(body, search_from)
            if found is None or self._after_value.match(body, found.end()):
                return found
            search_from = found.start() + 1

    def _value(self, text: str, raw_string: bool) -> Any:
        if text.startswith("<![CDATA[") and text.endswith("]]>"):  # XML's own quoting (MiniCPM)
            return text[len("<![CDATA[") : -len("]]>")]
        if raw_string:
            return text
        if not self.spec.raw_strings:
            return read_value(text)
        stripped = text.strip()
        if stripped in _LITERALS:
            return _LITERALS[stripped]
        if stripped[:1] in "{[-0123456789" and stripped:
            try:
                return json.loads(stripped)
            except ValueError:
                if stripped[0] in "{[":
                    try:
                        return read_value(stripped)
                    except NotALiteral:
                        return text
        return text

    def _pythonic(self, body: str) -> list[ParsedCall] | None:
        calls = self._python_calls(body)
        if calls is None and (self.spec.raw_strings or self.spec.param_close or "=" in body):
            return self._arguments_one_by_one(body)
        return calls

    def _python_calls(self, body: str) -> list[ParsedCall] | None:
        spec = self.spec
        text = body.strip()
        if spec.list_wrapped or text.startswith("["):
            return read_call_list(text if text.startswith("[") else f"[{text}]", function_wrappers=False)
        pieces: list[str] = []
        index = 0
        call_start = re.compile(r"[\s,;]*" + NAME + r"\s*\(")
        while index < len(text):
            match = call_start.match(text, index)
            if match is None:
                if text[index:].strip(" \t\r\n,;"):
                    return None
                break
            end = scan_balanced(text, match.end() - 1) or len(text)
            pieces.append(text[match.start("name") : end])
            index = end
        return read_call_list("[" + ", ".join(pieces) + "]", function_wrappers=False) if pieces else None

    def _arguments_one_by_one(self, body: str) -> list[ParsedCall] | None:
        """`name(key=value, ...)` as the template writes it where Python would not read it: no
        comma between arguments (a JSON value then the next key), each value followed by
        `param_close` (`city=Parisr`), or, with `raw_strings`, strings written as they are, quoted
        or not, up to the next `key=` or the call's end."""
        spec = self.spec
        text = body.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        close = re.escape(spec.param_close)
        raw_end = re.compile(close + r"(?=,\s*[A-Za-z_]\w*\s*=|\)\s*(?:[,;]\s*" + r"[A-Za-z_][\w\-.]*\s*\(|$))")
        calls: list[ParsedCall] = []
        index = 0
        while True:
            index = _skip(text, index, " \t\r\n,;")
            if index >= len(text):
                return calls or None
            head = _CALL_HEAD.match(text, index)
            if head is None:
                return None
            index, arguments = head.end(), {}
            while True:
                index = _skip(text, index, " \t\r\n,")
                if text.startswith(")", index):
                    index += 1
                    break
                key = _KEY.match(text, index)
                if key is None:
                    return None
                index = key.end()
                if spec.raw_strings:
                    end = raw_end.search(text, index)
                    if end is None:
                        return None
                    arguments[key.group(1)] = self._raw_value(text[index : end.start()])
                    index = end.end()
                    continue
                value_end = _literal_end(text, index)
                arguments[key.group(1)] = read_value(text[index:value_end])
                index = value_end + len(spec.param_close) if text.startswith(spec.param_close, value_end) else value_end
            calls.append(ParsedCall(head.group("name"), arguments))

    def _raw_value(self, text: str) -> Any:
        if len(text) >= 2 and text[0] in "\"'" and text[-1] == text[0]:
            return text[1:-1]  # quoted, not escaped
        try:
            return self._value(text, raw_string=False)
        except NotALiteral:
            return text


_CALL_HEAD = re.compile(NAME + r"\s*\(")
_KEY = re.compile(r"([A-Za-z_]\w*)\s*=\s*")
_BARE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|True|False|None|[^\s,()\[\]{}]+")


def _skip(text: str, index: int, chars: str) -> int:
    while index < len(text) and text[index] in chars:
        index += 1
    return index


def _literal_end(text: str, index: int) -> int:
    """Where the literal starting at `index` ends: a quoted string (escapes followed), a
    bracketed value, or a bare word or number."""
    if index >= len(text):
        raise NotALiteral("no value")
    first = text[index]
    if first in "\"'":
        at = index + 1
        while at < len(text) and text[at] != first:
            at += 2 if text[at] == "\\" else 1
        return min(at + 1, len(text))
    if first in "{[(":
        end = scan_balanced(text, index)
        if end is None:
            raise NotALiteral("unclosed value")
        return end
    bare = _BARE.match(text, index)
    if bare is None:
        raise NotALiteral("no value")
    return bare.end()


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index].isspace():
        index += 1
    return index


def _at(value: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


@functools.lru_cache(maxsize=64)
def learned_parser(format_name: str) -> LearnedParser:
    """The parser of a `learned:<token>` format name, built once per name (the scanner caches
    its tables per parser)."""
    return LearnedParser.from_name(format_name)
