"""What the formats of the current generation share: a JSON object at a position, a value written
as the text between two tags, and the `invoke` / `parameter` elements several of them write.

`<invoke name="get_weather"><parameter name="city">Paris</parameter></invoke>` is MiniMax M2's
call; DeepSeek V3.2 writes the same elements as `<｜DSML｜invoke name=...>`, Step 3 as
`<steptml:invoke name=...>`. One reader, given the element names, reads them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .base import ParsedCall, _is_name, calls_from_values
from .lenient import NotALiteral, read_value, read_values_prefix, scan_balanced
from .raw_values import RawText


def json_object_at(text: str, index: int) -> tuple[dict[str, Any], int] | None:
    """The JSON (or Python literal) object starting at `text[index]` after any whitespace, and
    where it ends; its closing brackets may be missing at the end of the text. None when no
    object starts there."""
    while index < len(text) and text[index].isspace():
        index += 1
    if not text.startswith("{", index):
        return None
    end = scan_balanced(text, index)
    if end is None:
        end = len(text)
    try:
        value = read_value(text[index:end])
    except NotALiteral:
        return None
    return (value, end) if isinstance(value, dict) else None


CDATA = "<![CDATA["
CDATA_END = "]]>"


def tag_value(text: str, json_value: bool = False) -> Any:
    """A value written between two tags: RawText, typed by the tool's schema once the call is
    read (see raw_values.py); with `json_value` (the format marks the value as JSON), the JSON
    value itself, or NotALiteral. One newline around the value is the format's layout."""
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    if text.startswith(CDATA) and text.endswith(CDATA_END):  # XML's own quoting (MiniCPM)
        return RawText(text[len(CDATA) : -len(CDATA_END)])
    if not json_value:
        return RawText(text)
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        return read_value(stripped)


@dataclass(frozen=True)
class InvokeSyntax:
    """The element names of one `invoke` / `parameter` format."""

    invoke: str  # `<invoke name="`
    invoke_close: str  # `</invoke>`
    parameter: str  # `<parameter name="`
    parameter_close: str  # `</parameter>`
    wrappers: tuple[str, ...] = ()  # tags a model may put around the parameters (`<arguments>`)


_ATTRIBUTE_END = re.compile(r'"?\s*(?:string="(true|false)")?\s*>')


def _name_at(text: str, index: int) -> tuple[str, str | None, int] | None:
    """The name written after `name="` at `index`, its `string="..."` flag, and where the tag
    ends."""
    close = text.find(">", index)
    if close < 0:
        return None
    quote = text.find('"', index, close)
    end = quote if quote >= 0 else close
    name = text[index:end].strip()
    match = _ATTRIBUTE_END.match(text, end)
    if not name or not _is_name(name) or match is None:
        return None
    return name, match.group(1), match.end()


def read_invokes(text: str, index: int, syntax: InvokeSyntax, stop: str = "") -> tuple[list[ParsedCall], int] | None:
    """The `invoke` elements from `index` on (whitespace between them), and where the last one
    ends; None when there is none, or one is broken. Reported drift is read: a parameter whose
    closer is left out before `</invoke>`, and an invoke whose closer is left out before `stop`
    (the block's closer) or the end of the text."""
    calls: list[ParsedCall] = []
    end = index
    # The next invoke closer and stop found so far (-1: none is left); each search starts past
    # the last one, so a block costs its length however many invokes it holds.
    closed, stopped = len(text) + 1, (len(text) + 1 if stop else -1)
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if not text.startswith(syntax.invoke, index):
            break
        head = _name_at(text, index + len(syntax.invoke))
        if head is None:
            return None
        name, _, index = head
        if closed > len(text) or 0 <= closed < index:
            closed = text.find(syntax.invoke_close, index)
        if stopped > len(text) or 0 <= stopped < index:
            stopped = text.find(stop, index)
        invoke_end = min(position for position in (closed, stopped, len(text)) if position >= 0)
        arguments: dict[str, Any] = {}
        while True:
            while index < invoke_end and text[index].isspace():
                index += 1
            if index >= invoke_end:
                break
            wrapper = next((tag for tag in syntax.wrappers if text.startswith(tag, index)), None)
            if wrapper is not None:
                index += len(wrapper)
                continue
            if not text.startswith(syntax.parameter, index):
                return None
            parameter = _name_at(text, index + len(syntax.parameter))
            if parameter is None or parameter[2] > invoke_end:
                return None
            key, string_flag, start = parameter
            close = text.find(syntax.parameter_close, start, invoke_end)
            value_end = invoke_end if close < 0 else close
            try:
                arguments[key] = tag_value(text[start:value_end], json_value=string_flag == "false")
            except NotALiteral:
                return None
            index = invoke_end if close < 0 else close + len(syntax.parameter_close)
        if invoke_end == closed:
            index = closed + len(syntax.invoke_close)
        elif invoke_end == len(text):
            return None  # the text ends inside the invoke: it may have been cut
        calls.append(ParsedCall(name, arguments))
        end = index
    return (calls, end) if calls else None


def read_invoke_block(
    region: str, opener: str, closer: str, syntax: InvokeSyntax
) -> tuple[list[ParsedCall], int] | None:
    """A block `opener` + `invoke` elements + `closer` at the start of `region` (or the elements
    alone when `region` starts with one), and where it ends. The closer may be missing when the
    reply ends after the last element; prose after the block stays content."""
    index = len(opener) if region.startswith(opener) else 0
    found = read_invokes(region, index, syntax, closer)
    if found is None:
        return None
    calls, end = found
    after = end
    while after < len(region) and region[after].isspace():
        after += 1
    if region.startswith(closer, after):
        end = after + len(closer)
    return calls, end


FUNCTION_OPEN = re.compile(r"\s*<function=([A-Za-z_][\w\-.]*)>")
PARAMETER_OPEN = re.compile(r"\s*<parameter=([^<>\s]+)>")
FUNCTION_CLOSE = "</function>"
PARAMETER_CLOSE = "</parameter>"


def read_function_tags(text: str, index: int) -> tuple[list[ParsedCall], int] | None:
    """`<function=NAME><parameter=KEY>VALUE</parameter></function>` elements from `index` on
    (Qwen3-Coder's layout, which Seed-OSS wraps in its own tag), and where the last one ends;
    None when there is none or one is not closed. A parameter's closer left out before
    `</function>` is reported drift, and read."""
    calls: list[ParsedCall] = []
    end = index
    while True:
        head = FUNCTION_OPEN.match(text, index)
        if head is None:
            break
        close = text.find(FUNCTION_CLOSE, head.end())
        if close < 0:
            return None
        arguments: dict[str, Any] = {}
        index = head.end()
        while True:
            parameter = PARAMETER_OPEN.match(text, index, close)
            if parameter is None:
                break
            value_end = text.find(PARAMETER_CLOSE, parameter.end(), close)
            stop = close if value_end < 0 else value_end
            arguments[parameter.group(1)] = tag_value(text[parameter.end() : stop])
            index = close if value_end < 0 else value_end + len(PARAMETER_CLOSE)
        if text[index:close].strip():
            return None
        calls.append(ParsedCall(head.group(1), arguments))
        index = end = close + len(FUNCTION_CLOSE)
    return (calls, end) if calls else None


def json_block(
    region: str,
    opener: str,
    closer: str,
    to_calls: Callable[[Iterable[Any]], list[ParsedCall] | None] = calls_from_values,
) -> tuple[list[ParsedCall], int] | None:
    """The calls of a block written as JSON values (an object or a list of them) between
    `opener`, where `region` starts, and `closer`, and where the block ends (`through_closer`)."""
    try:
        values, end = read_values_prefix(region[len(opener) :])
    except NotALiteral:
        return None
    calls = to_calls(values)
    if not calls:
        return None
    through = through_closer(region, end + len(opener), closer)
    return None if through is None else (calls, through)


def through_closer(region: str, end: int, closer: str) -> int | None:
    """Where a block's calls end once its `closer` is taken in: past the closer when only
    whitespace comes before it, `end` when the region has no closer (the reply ended first),
    None when the block is closed with other text after its calls (then it is not a call)."""
    after = end
    while after < len(region) and region[after].isspace():
        after += 1
    if region.startswith(closer, after):
        return after + len(closer)
    return None if region.endswith(closer) else end


@dataclass(frozen=True)
class PairSyntax:
    """The tags of a format that writes a call as its name, then `<arg_key>` / `<arg_value>`
    pairs (GLM-4.5; Hunyuan with its own spellings)."""

    key: str  # `<arg_key>`
    key_close: str  # `</arg_key>`
    value: str  # `<arg_value>`
    value_close: str  # `</arg_value>`
    separator: str = ""  # written between the name and the pairs (`<tool_sep>`), if any


_PAIR_NAME = re.compile(r"\s*([A-Za-z_][\w\-.]*)\s*")


def read_pairs_call(body: str, syntax: PairSyntax) -> ParsedCall | None:
    """The call a block's body writes as its name and key/value pairs (whitespace between them),
    or None when anything else is in it."""
    name = _PAIR_NAME.match(body)
    if name is None:
        return None
    index = name.end()
    if syntax.separator and body.startswith(syntax.separator, index):
        index += len(syntax.separator)
    arguments: dict[str, Any] = {}
    while True:
        while index < len(body) and body[index].isspace():
            index += 1
        if index >= len(body):
            break
        if not body.startswith(syntax.key, index):
            return None
        key_end = body.find(syntax.key_close, index)
        key = body[index + len(syntax.key) : key_end].strip() if key_end >= 0 else ""
        if not key or "<" in key or ">" in key:
            return None
        index = key_end + len(syntax.key_close)
        while index < len(body) and body[index].isspace():
            index += 1
        if not body.startswith(syntax.value, index):
            return None
        close = body.find(syntax.value_close, index)
        if close < 0:
            return None
        arguments[key] = tag_value(body[index + len(syntax.value) : close])
        index = close + len(syntax.value_close)
    return ParsedCall(name.group(1), arguments)
