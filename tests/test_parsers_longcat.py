"""LongCat-Flash: `<longcat_tool_call>{"name": ..., "arguments": ...}</longcat_tool_call>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("longcat"), ids=record_id)
@pytest.mark.parametrize("format_name", ["longcat", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_a_call_quoted_in_inline_code_is_not_a_call() -> None:
    text = (
        'Write `<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</longcat_tool_call>` to call it.'
    )
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []


def test_a_call_inside_think_is_not_a_call() -> None:
    text = (
        '<think><longcat_tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</longcat_tool_call></think>No.'
    )
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []
