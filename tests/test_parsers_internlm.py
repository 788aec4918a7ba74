"""InternLM2: `<|action_start|><|plugin|>{"name": ..., "parameters": ...}<|action_end|>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("internlm"), ids=record_id)
@pytest.mark.parametrize("format_name", ["internlm", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_text_after_the_call_inside_the_action_is_not_a_call() -> None:
    text = '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "X"}} maybe<|action_end|>'
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text
