"""Llama 3.x JSON calls, with `parameters`, optionally after `<|python_tag|>`."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "now")]


def test_bare_object_with_parameters() -> None:
    text = '{"name": "get_weather", "parameters": {"city": "Austin"}}'
    assert parse_tool_calls(text, format="llama3_json", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Austin"})
    ]


def test_python_tag_and_semicolon_separated_calls() -> None:
    text = '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"city": "Austin"}}; {"name": "now", "parameters": {}}'
    result = parse_tool_calls(text, format="llama3_json", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Austin"}), ParsedCall("now", {})]
    assert result.content == ""


def test_json_answer_that_is_not_a_call_stays_content() -> None:
    text = '{"temperature": 21, "unit": "C"}'
    assert parse_tool_calls(text, format="llama3_json", tools=TOOLS).content == text


def test_object_followed_by_prose_is_not_a_call() -> None:
    text = '{"name": "get_weather", "parameters": {"city": "Austin"}} is what I would send.'
    assert parse_tool_calls(text, format="llama3_json", tools=TOOLS).tool_calls == []
