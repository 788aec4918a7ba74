"""DeepSeek V3.2 / V4 DSML: `<｜DSML｜invoke name=...>` with `<｜DSML｜parameter ... string=...>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "update",
            "parameters": {"type": "object", "properties": {"tags": {"type": "array"}, "meta": {"type": "object"}}},
        },
    }
]


@pytest.mark.parametrize("record", format_records("deepseek_dsml"), ids=record_id)
@pytest.mark.parametrize("format_name", ["deepseek_dsml", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_json_values_marked_string_false() -> None:
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="update">\n'
        '<｜DSML｜parameter name="tags" string="false">["a", "b"]</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="meta" string="false">{"k": 1}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    result = parse_tool_calls(text, format="deepseek_dsml", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("update", {"tags": ["a", "b"], "meta": {"k": 1}})]


def test_a_block_with_prose_inside_is_not_a_call() -> None:
    text = '<｜DSML｜function_calls>\nI would call <｜DSML｜invoke name="update"> here.\n</｜DSML｜function_calls>'
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text
