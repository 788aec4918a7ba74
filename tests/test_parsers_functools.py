"""`functools[...]` lists: the Phi-4-mini seed and Firefunction v2."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


def test_seed_shape_parallel_calls() -> None:
    text = 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"zone": "CET"}}]'
    result = parse_tool_calls(text, format="functools", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Paris"}), ParsedCall("get_time", {"zone": "CET"})]
    assert result.content == ""


def test_closing_bracket_inside_a_string_does_not_end_the_list() -> None:
    text = 'functools[{"name": "get_weather", "arguments": {"city": "Paris [France]"}}]'
    assert parse_tool_calls(text, format="functools").tool_calls == [
        ParsedCall("get_weather", {"city": "Paris [France]"})
    ]


def test_python_dict_arguments_as_the_seed_template_renders_them() -> None:
    text = "functools[{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris', 'metric': True}}]"
    assert parse_tool_calls(text, format="functools").tool_calls == [
        ParsedCall("get_weather", {"city": "Paris", "metric": True})
    ]


def test_unclosed_list_at_the_end() -> None:
    text = 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert parse_tool_calls(text, format="functools").tool_calls == [ParsedCall("get_weather", {"city": "Paris"})]


def test_a_list_cut_off_deep_inside_stays_text() -> None:
    """More closers missing than a model forgets (here six) is a text cut off: nothing is guessed."""
    text = 'functools[{"name": "get_weather", "arguments": {"city": {"near": [[["Paris"'
    result = parse_tool_calls(text, format="functools", tools=TOOLS)
    assert result.tool_calls == []
    assert result.content == text


def test_text_after_the_list_stays_content() -> None:
    text = 'Sure. functools[{"name": "get_time", "arguments": {}}] Done.'
    result = parse_tool_calls(text, format="functools", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_time", {})]
    assert result.content == "Sure.  Done."


def test_prose_mentioning_functools_is_not_a_call() -> None:
    text = "Python's functools[module] has lru_cache."
    result = parse_tool_calls(text, format="functools", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_unoffered_tool_stays_content() -> None:
    text = 'functools[{"name": "format_disk", "arguments": {}}]'
    assert parse_tool_calls(text, format="functools", tools=TOOLS).tool_calls == []
