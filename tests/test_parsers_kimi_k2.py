"""Kimi K2: `<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("kimi_k2"), ids=record_id)
@pytest.mark.parametrize("format_name", ["kimi_k2", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_two_sections_and_prose_between() -> None:
    call = "<|tool_calls_section_begin|><|tool_call_begin|>functions.{}:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
    text = call.format("get_weather", '{"city": "Oslo"}') + " then " + call.format("get_time", '{"zone": "CET"}')
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Oslo"}), ParsedCall("get_time", {"zone": "CET"})]
    assert result.content == "then"


def test_an_id_without_its_index_is_not_a_call() -> None:
    text = '<|tool_call_begin|>functions.get_weather<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|>'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []


CALL = "<|tool_call_begin|>functions.{}:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
SECTION = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"
WEATHER = CALL.format("get_weather", '{"city": "Oslo"}')
TIME = CALL.format("get_time", '{"zone": "CET"}')
OSLO = {"name": "get_weather", "arguments": {"city": "Oslo"}}
CET = {"name": "get_time", "arguments": {"zone": "CET"}}


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        # Kimi K2 Thinking calls in the middle of its reasoning: the calls end the output
        ("<think>Let me look." + SECTION.format(WEATHER) + "\n<|im_end|>", [OSLO], "<think>Let me look."),
        ("<think>Both." + SECTION.format(WEATHER) + " \n" + SECTION.format(TIME), [OSLO, CET], "<think>Both."),
        # the reasoning goes on after them: they were thinking text
        ("<think>I could " + WEATHER + " but no.</think>Hi!", [], "<think>I could " + WEATHER + " but no.</think>Hi!"),
        (
            "<think>Maybe " + SECTION.format(WEATHER) + "\nno.</think>" + SECTION.format(TIME),
            [CET],
            "<think>Maybe " + SECTION.format(WEATHER) + "\nno.</think>",
        ),
        # a tool not offered is not a call, and the thinking goes on
        (
            "<think>" + CALL.format("get_news", "{}") + " hm " + WEATHER + " end</think>" + SECTION.format(TIME),
            [CET],
            "<think>" + CALL.format("get_news", "{}") + " hm " + WEATHER + " end</think>",
        ),
    ],
)
def test_calls_inside_thinking_stand_only_as_its_last_words(text: str, calls: list[Any], content: str) -> None:
    tools = [{"name": name, "parameters": {"type": "object", "properties": {}}} for name in ("get_weather", "get_time")]
    record = {"text": text, "tools": tools, "expected": {"calls": calls, "content": content}}
    for format_name in ("kimi_k2", None):
        check_record(record, format_name)
