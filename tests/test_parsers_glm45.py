"""GLM-4.5 / 4.6 / 4.7: `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("glm45"), ids=record_id)
@pytest.mark.parametrize("format_name", ["glm45", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_a_hermes_block_is_still_hermes() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert parse_tool_calls(text, format="glm45", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Paris"})
    ]


def test_a_value_holding_markup_is_kept_as_written() -> None:
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>a <b>bold</b> city</arg_value>\n</tool_call>"
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [ParsedCall("get_weather", {"city": "a <b>bold</b> city"})]


def test_prose_inside_the_block_is_not_a_call() -> None:
    text = "<tool_call>get_weather is what I would use</tool_call>"
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []
