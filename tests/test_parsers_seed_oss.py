"""Seed-OSS: `<seed:tool_call>` around `<function=NAME>` and `<parameter=KEY>` elements."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


@pytest.mark.parametrize("record", format_records("seed_oss"), ids=record_id)
@pytest.mark.parametrize("format_name", ["seed_oss", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_a_parameter_closer_left_out_before_the_function_closer() -> None:
    text = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</seed:tool_call>"
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [ParsedCall("get_weather", {"city": "Paris"})]


def test_a_function_left_open_inside_the_block_is_not_a_call() -> None:
    text = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</seed:tool_call>"
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text
