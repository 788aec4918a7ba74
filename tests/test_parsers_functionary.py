"""functionary v3.2 (`>>>NAME` + JSON) and v2 (`<|recipient|>NAME` + `<|content|>` JSON)."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("functionary"), ids=record_id)
@pytest.mark.parametrize("format_name", ["functionary", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_the_all_recipient_is_never_a_call() -> None:
    text = '>>>all\n{"city": "Paris"}'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []


def test_a_python_prompt_is_not_a_call() -> None:
    text = "In the REPL:\n>>> get_weather\n{'city': 'Paris'}\nshows the dict."
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []
