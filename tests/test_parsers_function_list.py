"""The Typhoon2 seed's `[Function(arguments1={...}, name1=fn), ...]` and near variants."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "get_time")]


def test_seed_shape_with_numbered_keywords() -> None:
    text = '[Function(arguments1={"city": "Bangkok"}, name1=get_weather), Function(arguments2={"zone": "ICT"}, name2=get_time)]'
    result = parse_tool_calls(text, format="function_list", tools=TOOLS)
    assert result.tool_calls == [
        ParsedCall("get_weather", {"city": "Bangkok"}),
        ParsedCall("get_time", {"zone": "ICT"}),
    ]
    assert result.content == ""


def test_doubled_braces_and_bare_keys_as_in_the_prompt() -> None:
    text = '[Function(arguments1={{city: "Bangkok", days: 3}}, name1=get_weather)]'
    assert parse_tool_calls(text, format="function_list").tool_calls == [
        ParsedCall("get_weather", {"city": "Bangkok", "days": 3})
    ]


def test_unnumbered_quoted_name_first() -> None:
    text = "[Function(name='get_time', arguments={'zone': 'UTC'})]"
    assert parse_tool_calls(text, format="function_list").tool_calls == [ParsedCall("get_time", {"zone": "UTC"})]


def test_pythonic_items_are_accepted_too() -> None:
    text = '[get_weather(city="Chiang Mai")]'
    assert parse_tool_calls(text, format="function_list", tools=TOOLS).tool_calls == [
        ParsedCall("get_weather", {"city": "Chiang Mai"})
    ]


def test_leading_prose_then_list_at_the_end() -> None:
    text = 'Calling now.\n[Function(arguments1={"city": "Bangkok"}, name1=get_weather)]\n'
    result = parse_tool_calls(text, format="function_list", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"city": "Bangkok"})]
    assert result.content == "Calling now."


def test_list_followed_by_prose_is_an_example_not_a_call() -> None:
    text = 'The format is [Function(arguments1={"city": "X"}, name1=get_weather)] and nothing else.'
    result = parse_tool_calls(text, format="function_list", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_function_code_is_never_evaluated() -> None:
    text = '[Function(arguments1=__import__("os").system("true"), name1=get_weather)]'
    assert parse_tool_calls(text, format="function_list").tool_calls == []


def test_unoffered_name_stays_content() -> None:
    text = "[Function(arguments1={}, name1=reboot)]"
    assert parse_tool_calls(text, format="function_list", tools=TOOLS).tool_calls == []
