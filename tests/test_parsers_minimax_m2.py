"""MiniMax M2: `<minimax:tool_call>` around `<invoke name=...>` and `<parameter name=...>`."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from tests.format_records import check_record, format_records, record_id

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_web",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}},
        },
    }
]


@pytest.mark.parametrize("record", format_records("minimax_m2"), ids=record_id)
@pytest.mark.parametrize("format_name", ["minimax_m2", None])
def test_records(record: dict[str, Any], format_name: str | None) -> None:
    check_record(record, format_name)


def test_values_are_typed_by_the_schema() -> None:
    text = (
        '<minimax:tool_call>\n<invoke name="search_web">\n<parameter name="query">42</parameter>\n'
        '<parameter name="limit">5</parameter>\n</invoke>\n</minimax:tool_call>'
    )
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [ParsedCall("search_web", {"query": "42", "limit": 5})]


def test_without_a_schema_json_looking_values_are_read() -> None:
    text = '<minimax:tool_call><invoke name="f"><parameter name="n">5</parameter><parameter name="s">x</parameter></invoke></minimax:tool_call>'
    assert parse_tool_calls(text).tool_calls == [ParsedCall("f", {"n": 5, "s": "x"})]


def test_claude_style_function_calls_block_is_read() -> None:
    text = '<function_calls>\n<invoke name="search_web">\n<parameter name="query">news</parameter>\n</invoke>\n</function_calls>'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [ParsedCall("search_web", {"query": "news"})]


def test_an_invoke_quoted_in_inline_code_is_not_a_call() -> None:
    text = 'Write `<invoke name="search_web"><parameter name="query">x</parameter></invoke>` to call it.'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == []
