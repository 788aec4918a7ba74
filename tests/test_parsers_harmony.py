"""gpt-oss harmony messages to a function recipient (`<|channel|>commentary to=functions.NAME`)."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

RECORDS = format_records("harmony")
TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]
ANALYSIS = "<|channel|>analysis<|message|>The user wants the weather.<|end|>"


@pytest.mark.parametrize("record", RECORDS, ids=record_id)
@pytest.mark.parametrize("format_name", ["harmony", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_analysis_stays_content_and_the_call_token_is_dropped() -> None:
    text = (
        ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}<|call|>'
    )
    result = parse_tool_calls(text, format="harmony", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Paris"})]
    assert result.content == ANALYSIS


def test_a_recipient_named_in_prose_is_not_a_call() -> None:
    text = "<|channel|>final<|message|>Send it to=functions.get_weather with a city.<|return|>"
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []


def test_text_sent_to_a_function_is_not_a_call() -> None:
    text = "<|channel|>commentary to=functions.get_weather<|message|>Paris, please<|call|>"
    result = parse_tool_calls(text, format="harmony", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_a_header_holding_other_text_is_not_a_call() -> None:
    text = '<|channel|>final<|message|>Use <|channel|>commentary to=functions.get_weather (see docs) <|message|>{"city": "X"}'
    assert parse_tool_calls(text, format="harmony", tools=TOOLS).tool_calls == []


def test_no_arguments_only_with_the_call_token() -> None:
    closed = "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|><|call|>"
    assert parse_tool_calls(closed, tools=TOOLS).tool_calls == [ParsedCall("get_time", {})]
    cut = "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>"
    assert parse_tool_calls(cut, tools=TOOLS).tool_calls == []


def test_prose_after_the_call_stays_content() -> None:
    text = '<|channel|>commentary to=functions.get_weather<|message|>{"city": "Rome"}<|call|> Done.'
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Rome"})] and result.content == "Done."
