"""Hunyuan HY 3: `<tool_call:opensource>NAME<tool_sep:opensource>` with `<arg_key:opensource>` pairs."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("hunyuan"), ids=record_id)
@pytest.mark.parametrize("format_name", ["hunyuan", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_plain_tokens_need_the_separator() -> None:
    glm = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>"
    assert parse_tool_calls(glm, format="hunyuan", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Oslo"})
    ]
    broken = "<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\nOslo\n</tool_call>"
    assert parse_tool_calls(broken, tools=TOOLS).tool_calls == []
