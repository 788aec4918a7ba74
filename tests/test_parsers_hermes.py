"""Hermes `<tool_call>` blocks (Qwen2/2.5, Hermes, the Gemma 3 tools template)."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


def test_qwen_single_call_is_recovered_and_removed_from_content() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>'
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Paris", "unit": "celsius"})]
    assert result.content == ""


def test_parallel_calls_keep_order_and_leading_text_stays_content() -> None:
    text = (
        'I\'ll look both up.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"zone": "Europe/Oslo"}}\n</tool_call>'
    )
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert [call.name for call in result.tool_calls] == ["get_weather", "get_time"]
    assert result.tool_calls[1].arguments == {"zone": "Europe/Oslo"}
    assert result.content == "I'll look both up."


def test_unclosed_last_block_and_truncated_json() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"'
    result = parse_tool_calls(text, format="hermes")
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Paris"}), ParsedCall("get_time", {"zone": "UTC"})]


def test_fenced_json_inside_the_block() -> None:
    text = '<tool_call>\n```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```\n</tool_call>'
    assert parse_tool_calls(text, format="hermes").tool_calls == [ParsedCall("get_weather", {"city": "Rome"})]


def test_arguments_given_as_a_json_string() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Lima\\"}"}\n</tool_call>'
    assert parse_tool_calls(text, format="hermes").tool_calls == [ParsedCall("get_weather", {"city": "Lima"})]


def test_python_literals_and_trailing_commas() -> None:
    text = "<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'Nice', 'detailed': True, 'days': None,},}\n</tool_call>"
    result = parse_tool_calls(text, format="hermes")
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Nice", "detailed": True, "days": None})]


def test_raw_newlines_inside_string_values() -> None:
    text = '<tool_call>\n{"name": "write_file", "arguments": {"text": "line one\nline two"}}\n</tool_call>'
    assert parse_tool_calls(text, format="hermes").tool_calls[0].arguments == {"text": "line one\nline two"}


def test_call_without_arguments() -> None:
    assert parse_tool_calls('<tool_call>{"name": "get_time"}</tool_call>', format="hermes").tool_calls == [
        ParsedCall("get_time", {})
    ]


def test_prose_about_the_tag_is_not_a_call() -> None:
    text = "Wrap each call in <tool_call></tool_call> tags, then get_weather will run."
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_call_inside_think_is_not_a_call() -> None:
    text = '<think>Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>? No.</think>It is sunny.'
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_call_after_think_is_recovered() -> None:
    text = (
        '<think>I need the weather.</think>\n<tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>'
    )
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "X"})]
    assert result.content == "<think>I need the weather.</think>"


def test_tool_not_offered_stays_content() -> None:
    text = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>'
    result = parse_tool_calls(text, format="hermes", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_block_that_is_not_json_stays_content() -> None:
    text = "<tool_call>I cannot call tools today.</tool_call>"
    assert parse_tool_calls(text, format="hermes").tool_calls == []


def test_data_object_with_a_name_is_not_a_call() -> None:
    text = '<tool_call>{"name": "Ann", "age": 31}</tool_call>'
    assert parse_tool_calls(text, format="hermes").tool_calls == []
