"""Command R7B / Command A: `<|START_ACTION|>[{"tool_name": ..., "parameters": ...}]<|END_ACTION|>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("command_r"), ids=record_id)
@pytest.mark.parametrize("format_name", ["command_r", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_an_action_holding_prose_is_not_a_call() -> None:
    text = "<|START_ACTION|>I will search the web.<|END_ACTION|>"
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_the_plan_stays_content() -> None:
    text = '<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}]<|END_ACTION|>'
    result = parse_tool_calls(text, format="command_r", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Oslo"})]
    assert result.content == "<|START_THINKING|>Look it up.<|END_THINKING|>"
