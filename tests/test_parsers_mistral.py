"""Mistral `[TOOL_CALLS]` in both tokenizer generations."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "now")]


def test_json_list_after_the_marker() -> None:
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Lyon"}, "id": "abc123def"}]'
    assert parse_tool_calls(text, format="mistral", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Lyon"})
    ]


def test_name_args_form_repeated() -> None:
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Lyon"}[TOOL_CALLS]now[ARGS]{}'
    result = parse_tool_calls(text, format="mistral", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Lyon"}), ParsedCall("now", {})]


def test_call_id_between_name_and_args() -> None:
    text = '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Lyon"}'
    assert parse_tool_calls(text, format="mistral").tool_calls == [ParsedCall("get_weather", {"city": "Lyon"})]


def test_marker_followed_by_prose_stays_content() -> None:
    text = "[TOOL_CALLS] is the token that starts calls."
    assert parse_tool_calls(text, format="mistral", tools=TOOLS).content == text
