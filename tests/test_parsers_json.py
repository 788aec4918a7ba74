"""Bare or fenced JSON calls (what models fall back to when no format fits)."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("search", "get_weather")]


def test_bare_object() -> None:
    text = '{"name": "search", "arguments": {"query": "ollama"}}'
    assert parse_tool_calls(text, format="json", tools=TOOLS).tool_calls == [ParsedCall("search", {"query": "ollama"})]


def test_fenced_list_after_prose() -> None:
    text = 'Searching.\n```json\n[{"name": "search", "arguments": {"query": "a"}}, {"name": "search", "arguments": {"query": "b"}}]\n```\n'
    result = parse_tool_calls(text, format="json", tools=TOOLS)
    assert [call.arguments["query"] for call in result.tool_calls] == ["a", "b"]
    assert result.content == "Searching."


def test_whitespace_separated_objects_and_openai_shape() -> None:
    text = '{"name": "search", "arguments": {"query": "a"}}\n{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}'
    result = parse_tool_calls(text, format="json", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("search", {"query": "a"}), ParsedCall("get_weather", {"city": "Oslo"})]


def test_tool_calls_wrapper() -> None:
    text = '{"tool_calls": [{"name": "search", "arguments": {"query": "x"}}]}'
    assert parse_tool_calls(text, format="json").tool_calls == [ParsedCall("search", {"query": "x"})]


def test_malformed_json_is_repaired() -> None:
    text = "{'name': 'search', 'arguments': {'query': 'x', 'limit': 5,}"
    assert parse_tool_calls(text, format="json").tool_calls == [ParsedCall("search", {"query": "x", "limit": 5})]


def test_json_sample_followed_by_explanation_is_not_a_call() -> None:
    text = 'Send this:\n```json\n{"name": "search", "arguments": {"query": "x"}}\n```\nThe server replies with results.'
    result = parse_tool_calls(text, format="json", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_json_data_answer_is_not_a_call() -> None:
    text = '[{"name": "Ann", "age": 31}, {"name": "Bo", "age": 4}]'
    assert parse_tool_calls(text, format="json", tools=TOOLS).content == text
