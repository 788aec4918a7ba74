"""MiniCPM 5: `<function name="NAME"><param name="KEY">VALUE</param></function>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("minicpm"), ids=record_id)
@pytest.mark.parametrize("format_name", ["minicpm", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_prose_between_the_parameters_is_not_a_call() -> None:
    text = '<function name="get_weather">for <param name="city">Paris</param></function>'
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text
