"""Pythonic call lists `[f(a=1), g()]` (Llama 3.2 style)."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "now")]


def test_parallel_calls_with_nested_literals() -> None:
    text = '[get_weather(city="Paris", days=[1, 2], opts={"metric": True}), now()]'
    result = parse_tool_calls(text, format="pythonic", tools=TOOLS)
    assert result.tool_calls == [
        ParsedCall("get_weather", {"city": "Paris", "days": [1, 2], "opts": {"metric": True}}),
        ParsedCall("now", {}),
    ]


def test_negative_numbers_and_json_names() -> None:
    text = "[get_weather(lat=-33.9, lon=18.4, cached=false, note=null)]"
    assert parse_tool_calls(text, format="pythonic").tool_calls == [
        ParsedCall("get_weather", {"lat": -33.9, "lon": 18.4, "cached": False, "note": None})
    ]


def test_truncated_list_is_closed() -> None:
    assert parse_tool_calls('[get_weather(city="Paris"', format="pythonic").tool_calls == [
        ParsedCall("get_weather", {"city": "Paris"})
    ]


def test_text_cut_inside_a_value_is_not_a_call() -> None:
    for text in ('[get_weather(city="Par', "[get_weather(city="):
        result = parse_tool_calls(text, format="pythonic")
        assert result.tool_calls == [] and result.content == text


def test_inline_code_in_prose_is_not_a_call() -> None:
    text = 'Call it like `get_weather(city="Paris")` in your code.'
    assert parse_tool_calls(text, format="pythonic", tools=TOOLS).content == text


def test_markdown_link_and_citation_are_not_calls() -> None:
    text = "See [the docs](https://example.org) and [1]."
    result = parse_tool_calls(text, format="pythonic", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_expressions_are_not_literals() -> None:
    assert parse_tool_calls("[get_weather(city=open('x').read())]", format="pythonic").tool_calls == []


def test_unoffered_tool_stays_content() -> None:
    assert parse_tool_calls("[shutdown(now=True)]", format="pythonic", tools=TOOLS).tool_calls == []


def test_call_lines_in_a_python_block_may_follow_comment_lines() -> None:
    text = '```python\n# the forecast first\n  # then the time\nget_weather(city="Paris")\nnow()\n```'
    assert parse_tool_calls(text, tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Paris"}),
        ParsedCall("now", {}),
    ]
