"""Mistral `[TOOL_CALLS]` in both tokenizer generations."""

from __future__ import annotations

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from ollama_fc.parsers import StreamingRecoverer, parsers_for
from ollama_fc.parsers.streaming import result_from_pieces

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


NESTED = [
    {
        "type": "function",
        "function": {"name": "test", "parameters": {"type": "object", "properties": {"a": {"type": "object"}}}},
    }
]


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS]test[ARGS]{"a": {',  # Ollama's ministral parser tests: the stream ends here
        '[TOOL_CALLS]test[ARGS]{"a": [',
        '[TOOL_CALLS]test[ARGS]{"a": {"b": {',
        '[TOOL_CALLS]test[ARGS]{"a": {"b": [1], "c": {',
        'test[ARGS]{"a": {',
        '[TOOL_CALLS][{"name": "test", "arguments": {"a": {',
    ],
)
def test_arguments_cut_right_after_an_opened_value_stay_text(text: str) -> None:
    """`{"a": {` closed into `{"a": {}}` would send the tool a value the model never wrote."""
    whole = parse_tool_calls(text, format="mistral", tools=NESTED)
    assert whole.tool_calls == []
    assert whole.content == text
    for size in (1, 3, 7):
        recoverer = StreamingRecoverer(parsers_for("mistral"), NESTED)
        pieces = [piece for at in range(0, len(text), size) for piece in recoverer.feed(text[at : at + size])]
        streamed = result_from_pieces(text, pieces + recoverer.finish())
        assert (streamed.tool_calls, streamed.content) == ([], text)


def test_a_forgotten_closer_after_a_complete_value_is_still_read() -> None:
    """Only closers are missing, every value is whole: the call is what the model wrote."""
    text = '[TOOL_CALLS]test[ARGS]{"a": {"b": "x"}'
    assert parse_tool_calls(text, format="mistral", tools=NESTED).tool_calls == [ParsedCall("test", {"a": {"b": "x"}})]
