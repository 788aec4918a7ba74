"""FunctionGemma: `<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("functiongemma"), ids=record_id)
@pytest.mark.parametrize("format_name", ["functiongemma", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_gemma4_calls_still_read_with_functiongemma_named() -> None:
    text = '<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>'
    assert parse_tool_calls(text, format="functiongemma", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Oslo"})
    ]
