"""DeepSeek V3 / R1 (`function<｜tool▁sep｜>NAME` and a fenced JSON block) and V3.1
(`NAME<｜tool▁sep｜>{...}`) calls between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]
BEGIN, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"


@pytest.mark.parametrize("record", format_records("deepseek_v3"), ids=record_id)
@pytest.mark.parametrize("format_name", ["deepseek_v3", None])
def test_v3_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


@pytest.mark.parametrize("record", format_records("deepseek_v31"), ids=record_id)
@pytest.mark.parametrize("format_name", ["deepseek_v31", None])
def test_v31_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_both_layouts_in_one_block() -> None:
    text = (
        BEGIN
        + '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>'
        '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"zone": "CET"}<｜tool▁call▁end｜>' + END
    )
    assert parse_tool_calls(text, format="deepseek_v31", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Oslo"}),
        ParsedCall("get_time", {"zone": "CET"}),
    ]


def test_a_name_cut_before_its_arguments_is_content() -> None:
    text = "Let me look that up." + BEGIN + "get_weather"
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_a_v3_call_cut_anywhere_before_its_arguments_is_content() -> None:
    call = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}'
    for cut in range(1, call.index("{")):
        text = BEGIN + call[:cut]
        for format_name in ("deepseek_v3", None):
            result = parse_tool_calls(text, format=format_name, tools=TOOLS)
            assert result.tool_calls == [] and result.content == text, (cut, format_name)


def test_a_later_bad_call_keeps_the_earlier_ones_and_leaves_its_text() -> None:
    text = (
        BEGIN
        + '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"zone": "UTC"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>oops'
        + END
    )
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_time", {"zone": "UTC"})]
    assert "oops" in result.content
