"""Step-3: `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=...>` calls."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("step3"), ids=record_id)
@pytest.mark.parametrize("format_name", ["step3", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_a_call_without_the_block_tokens_is_not_read() -> None:
    text = '<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Oslo</steptml:parameter></steptml:invoke><｜tool_call_end｜>'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []


def test_the_layout_without_function_and_separator_between_calls() -> None:
    one = '<｜tool_call_begin｜><steptml:invoke name="{}"><steptml:parameter name="city">{}</steptml:parameter></steptml:invoke><｜tool_call_end｜>'
    text = (
        "<｜tool_calls_begin｜>"
        + one.format("get_weather", "Oslo")
        + "<｜tool_sep｜>"
        + one.format("get_weather", "Bergen")
        + "<｜tool_calls_end｜>"
    )
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Oslo"}),
        ParsedCall("get_weather", {"city": "Bergen"}),
    ]


def test_a_call_without_its_closing_token_is_not_read() -> None:
    text = '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Oslo</steptml:parameter></steptml:invoke> and so on'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []
