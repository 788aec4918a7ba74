"""MiniMax-Text-01: `<function_call>` + a ```typescript block of `functions.NAME({...})`."""

from __future__ import annotations

from ollama_fc import ParsedCall, parse_tool_calls

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_current_weather", "search")]


def test_seed_shape_with_the_special_token() -> None:
    text = '<function_call>```typescript\nfunctions.get_current_weather({"location": "Shanghai"})\n```'
    result = parse_tool_calls(text, format="minimax_ts", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_current_weather", {"location": "Shanghai"})]
    assert result.content == ""


def test_without_the_special_token_when_special_tokens_are_not_printed() -> None:
    text = 'Let me check.\n```typescript\nfunctions.get_current_weather({"location": "Shanghai"})\n```'
    result = parse_tool_calls(text, format="minimax_ts", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_current_weather", {"location": "Shanghai"})]
    assert result.content == "Let me check."


def test_several_blocks_and_several_calls_in_one_block() -> None:
    text = (
        '<function_call>```typescript\nfunctions.get_current_weather({"location": "Paris"})\n'
        'functions.search({"query": "Paris events"})\n```\n'
        '<function_call>```typescript\nfunctions.get_current_weather({"location": "Lyon"})\n```'
    )
    result = parse_tool_calls(text, format="minimax_ts", tools=TOOLS)
    assert [call.arguments for call in result.tool_calls] == [
        {"location": "Paris"},
        {"query": "Paris events"},
        {"location": "Lyon"},
    ]


def test_brackets_and_quotes_inside_string_values_are_safe() -> None:
    text = '```typescript\nfunctions.search({"query": "f(x) = {a}) \\"quoted\\" ```"})\n```'
    result = parse_tool_calls(text, format="minimax_ts", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("search", {"query": 'f(x) = {a}) "quoted" ```'})]


def test_python_style_arguments() -> None:
    text = "```typescript\nfunctions.search({'query': 'weather', 'exact': False})\n```"
    assert parse_tool_calls(text, format="minimax_ts").tool_calls == [
        ParsedCall("search", {"query": "weather", "exact": False})
    ]


def test_typescript_code_sample_is_not_a_call() -> None:
    text = "Here is how:\n```typescript\nconst w = await getWeather('Paris');\nconsole.log(w);\n```"
    result = parse_tool_calls(text, format="minimax_ts", tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_prose_naming_the_function_is_not_a_call() -> None:
    text = 'I would call functions.get_current_weather({"location": "Paris"}) if you asked.'
    assert parse_tool_calls(text, format="minimax_ts", tools=TOOLS).tool_calls == []


def test_unoffered_function_stays_content() -> None:
    text = '```typescript\nfunctions.launch_rocket({"target": "moon"})\n```'
    assert parse_tool_calls(text, format="minimax_ts", tools=TOOLS).content == text
