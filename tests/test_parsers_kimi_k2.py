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
