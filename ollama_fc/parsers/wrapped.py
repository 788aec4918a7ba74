"""Calls inside a wrapper that belongs to another model's format, or printed as plain text.

A Hermes-trained model may write `<tools>...</tools>` or a fenced block, a Llama 4 model
`<|python_start|>...<|python_end|>`, Nemotron Nano v2 `<TOOLCALL>[...]</TOOLCALL>`, a ReAct
agent `Action: name` / `Action Input: {...}`.
Each wrapper is a row of data below (its opening marker and its closers); its body is scanned
with every active format, and it is a call when the body holds nothing but calls, in any shape.

Sources: Qwen3-Coder's chat template and vLLM's `test_qwen3coder_tool_parser.py`, llama.cpp's
Granite and functionary v3.1 chat parser tests, Nemotron Nano v2's chat template.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser, calls_from_value, reading_context
from .lenient import NotALiteral, read_value, scan_balanced, strip_fence
from .pythonic import read_call_lines, read_call_list
from .streaming import calls_only

# (opening marker, closing marker): tag-like wrappers, closed or running to the next one.
TAG_WRAPPERS = (
    ("<tools>", "</tools>"),
    ("<function_call>", "</function_call>"),
    ("<function_calls>", "</function_calls>"),
    ("<tool_calls>", "</tool_calls>"),
    ("<|tool_call|>", "<|/tool_call|>"),
    ("<|tool_calls|>", "<|/tool_calls|>"),
    ("<|python_start|>", "<|python_end|>"),
    ("<|tool_call_start|>", "<|tool_call_end|>"),
    ("<tool_code>", "</tool_code>"),
    ("<tool>", "</tool>"),
    ("<function_invocation>", "</function_invocation>"),
    ("<TOOLCALL>", "</TOOLCALL>"),
)
# Fenced blocks that are calls only as the last thing printed (a code sample is followed by prose).
FENCES = ("```tool_call", "```tool_code", "```python", "```py\n", "```")
# Wrappers inside wrappers are read this many levels deep (each level scans the body again).
MAX_DEPTH = 3
ACTION = "Action:"
FUNCTION_TAG = "<function="
FUNCTION_CLOSE = "</function>"
FUNCTION_NAME = re.compile(r"<function=([A-Za-z_][\w\-.]*)>")
PARAMETER = re.compile(r"\s*<parameter=([A-Za-z_][\w\-.]*)>(.*?)</parameter>", re.S)
LAST_PARAMETER = re.compile(r"\s*<parameter=([A-Za-z_][\w\-.]*)>(.*)", re.S)
# The XML a `<function_invocation>` wrapper may hold instead (`<function_name>` and named arguments).
INVOCATION = re.compile(
    r"\s*<function_name>\s*([A-Za-z_][\w\-.]*)\s*</function_name>\s*<arguments>(.*)</arguments>\s*", re.S
)
ARGUMENT = re.compile(
    r"\s*<argument>\s*<name>\s*([A-Za-z_][\w\-.]*)\s*</name>\s*<value>(.*?)</value>\s*</argument>", re.S
)
ACTION_INPUT = re.compile(r"\s*([A-Za-z_][\w\-.]*)\s*\n\s*Action Input:\s*")


class WrappedParser(ToolCallParser):
    name = "wrapped"
    models = "Qwen3-Coder, Qwen3.5, Nemotron 3 Nano, Step-3.5 (`<function=...>`), Granite 3 (`<|tool_call|>`), Llama 4 (`<|python_start|>`), Jamba / Hunyuan A13B / Apriel (`<tool_calls>`), Nemotron Nano v2 (`<TOOLCALL>`), MiniCPM3, functionary v3.1, ReAct agents"
    markers = (
        *(Marker(opener, "tag", closers=((closer, True),)) for opener, closer in TAG_WRAPPERS),
        *(Marker(fence, "fence", must_end=True) for fence in FENCES),
        Marker(ACTION, "tag", closers=(("Observation:", False),)),
        Marker(FUNCTION_TAG, "tag", closers=((FUNCTION_CLOSE, True),)),
    )
    # Call tags a template may write before its calls (`<tools>` wraps the tool list instead).
    tags = (
        "<|tool_call|>",
        "<|tool_calls|>",
        "<tool_calls>",
        FUNCTION_TAG,
        "<function_calls>",
        "<|python_start|>",
        "<|tool_call_start|>",
        "<TOOLCALL>",
    )

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        if region.startswith(ACTION):
            return _read_action(region)
        if region.startswith(FUNCTION_TAG):
            return _read_function_tag(region)
        if region.startswith("```"):
            calls = read_body(strip_fence(region))
            return (calls, len(region)) if calls else None
        for opener, closer in TAG_WRAPPERS:
            if region.startswith(opener):
                body = region[len(opener) :]
                closed = body.endswith(closer)
                calls = read_body(body.removesuffix(closer)) or _read_invocation(body.removesuffix(closer))
                if calls:
                    return calls, len(region)
                if closed:
                    return None
                return _read_prefix_body(body, len(opener))
        return None

    def read_region(self, region: str) -> list[ParsedCall] | None:
        found = self.read_prefix(region)
        return found[0] if found and found[1] == len(region) else None


def read_body(body: str) -> list[ParsedCall] | None:
    """The calls of a wrapper's body if it holds nothing but calls (in any active shape)."""
    reading = reading_context()
    if not body.strip() or reading.depth > MAX_DEPTH:
        return None
    if reading.parsers:
        calls = calls_only(body, reading.parsers, None if reading.names is None else sorted(reading.names))
        if calls:
            return calls
    return read_call_lines(body)


def _read_prefix_body(body: str, offset: int) -> tuple[list[ParsedCall], int] | None:
    """An unclosed wrapper: the one value or pythonic call list right after it; prose may follow."""
    start = len(body) - len(body.lstrip())
    if start >= len(body) or body[start] not in "{[":
        return None
    end = scan_balanced(body, start)
    if end is None:
        return None
    calls = read_body(body[start:end])
    return (calls, offset + end) if calls else None


def _read_function_tag(region: str) -> tuple[list[ParsedCall], int] | None:
    """`<function=name>{...}</function>` (Llama 3.1's custom tool format) or the XML parameters
    of Qwen3-Coder, `<function=name><parameter=city>Paris</parameter></function>`."""
    match = FUNCTION_NAME.match(region)
    if match is None:
        return None
    body = region[match.end() :]
    closed = body.endswith(FUNCTION_CLOSE)
    body = body.removesuffix(FUNCTION_CLOSE)
    start = len(body) - len(body.lstrip())
    if body[start : start + 1] == "{":
        end = scan_balanced(body, start)
        if end is None or (closed and body[end:].strip()):
            return None
        try:
            arguments = read_value(body[start:end])
        except NotALiteral:
            return None
        if not isinstance(arguments, dict):
            return None
        return [ParsedCall(match.group(1), arguments)], len(region) if closed else match.end() + end
    parameters: dict[str, object] = {}
    index = 0
    for parameter in PARAMETER.finditer(body):
        if body[index : parameter.start()].strip():
            return None
        parameters[parameter.group(1)] = _parameter_value(parameter.group(2))
        index = parameter.end()
    last = LAST_PARAMETER.match(body, index) if closed else None
    if last is not None and "<parameter=" not in last.group(2):  # its `</parameter>` left out before `</function>`
        parameters[last.group(1)] = _parameter_value(last.group(2))
        index = len(body)
    if not closed or body[index:].strip():
        return None
    return [ParsedCall(match.group(1), parameters)], len(region)


def _parameter_value(text: str) -> object:
    text = text.strip("\n")
    try:
        return read_value(text)
    except NotALiteral:
        return text


def _read_invocation(body: str) -> list[ParsedCall] | None:
    """`<function_name>get_weather</function_name><arguments><argument><name>city</name>
    <value>Paris</value></argument></arguments>`, the body of a `<function_invocation>`."""
    match = INVOCATION.fullmatch(body)
    if match is None:
        return None
    arguments: dict[str, object] = {}
    index = 0
    inner = match.group(2)
    for argument in ARGUMENT.finditer(inner):
        if inner[index : argument.start()].strip():
            return None
        arguments[argument.group(1)] = _parameter_value(argument.group(2))
        index = argument.end()
    if inner[index:].strip():
        return None
    return [ParsedCall(match.group(1), arguments)]


def _read_action(region: str) -> tuple[list[ParsedCall], int] | None:
    """ReAct: `Action: name` then `Action Input: {...}` (or a plain string), or `Action:` followed
    by a JSON call (`{"action": ..., "action_input": ...}`) or a pythonic call."""
    index = len(ACTION)
    match = ACTION_INPUT.match(region, index)
    if match is not None:
        start = match.end()
        if start < len(region) and region[start] in "{[":
            end = scan_balanced(region, start) or len(region)
            try:
                arguments = read_value(region[start:end])
            except NotALiteral:
                return None
        else:
            newline = region.find("\n", start)
            end = len(region) if newline < 0 else newline
            arguments = region[start:end].strip().strip('"')
        if not isinstance(arguments, (dict, str)):
            return None
        if isinstance(arguments, str):
            arguments = {"input": arguments} if arguments else {}
        return [ParsedCall(match.group(1), arguments)], end
    while index < len(region) and region[index].isspace():
        index += 1
    if region.startswith("```", index):
        close = region.find("```", region.find("\n", index) + 1)
        end = len(region) if close < 0 else close + 3
        calls = read_body(strip_fence(region[index:end]))
        return (calls, end) if calls else None
    if index < len(region) and region[index] in "{[":
        end = scan_balanced(region, index) or len(region)
        try:
            value = read_value(region[index:end])
        except NotALiteral:
            return None
        calls = calls_from_value(value)
        return (calls, end) if calls else None
    newline = region.find("\n", index)
    end = len(region) if newline < 0 else newline
    calls = read_call_list(region[index:end], function_wrappers=True)
    return (calls, end) if calls else None
