"""Apertus: `<|tools_prefix|>[{"NAME": {...}}]<|tools_suffix|>`, the tool's name as the key."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("apertus"), ids=record_id)
@pytest.mark.parametrize("format_name", ["apertus", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_a_list_holding_data_is_not_a_call() -> None:
    text = '<|tools_prefix|>[{"get_weather": "sunny"}, 3]<|tools_suffix|>'
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text
