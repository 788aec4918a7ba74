"""One recovery policy for every call shape: the model's own format first, then every other shape.

Texts marked "reported" are model outputs quoted in public issues (cited beside them); the rest
are constructed in the same shapes.
"""

from __future__ import annotations

import pytest

from ollama_fc import ParsedCall, parse_tool_calls
from ollama_fc.parsers import FORMATS, KNOWN_TAGS, PARSERS, format_for_tag

NAMES = (
    "get_weather",
    "get_time",
    "calculator",
    "read_file",
    "get_current_temperature",
    "brave_search",
    "list_directory",
    "search",
)
TOOLS = [{"type": "function", "function": {"name": name}} for name in NAMES]
WEATHER = ParsedCall("get_weather", {"city": "Paris"})


RECOVERED: list[tuple[str, str | None, list[ParsedCall], str]] = [
    # reported: qwen2.5-coder:14b on Ollama answers with bare JSON (ollama/ollama#12174)
    (
        '{"name": "calculator", "arguments": {"expr": "17 * 23"}}',
        "hermes",
        [ParsedCall("calculator", {"expr": "17 * 23"})],
        "",
    ),
    # reported: qwen2.5-coder:7b, pretty-printed JSON without a fence (selfagency/opilot#149)
    (
        '{\n"name": "read_file",\n"arguments": {\n"filePath": "/my/code/test-project/AGENTS.md"\n}\n}',
        "hermes",
        [ParsedCall("read_file", {"filePath": "/my/code/test-project/AGENTS.md"})],
        "",
    ),
    # reported: one object per line (selfagency/opilot#149, arguments filled in)
    (
        '{"name": "read_file", "arguments": {"filePath": "a.py"}}\n{"name": "search", "arguments": {"query": "x"}}',
        "hermes",
        [ParsedCall("read_file", {"filePath": "a.py"}), ParsedCall("search", {"query": "x"})],
        "",
    ),
    # Qwen2.5-Coder prints ```json blocks under a Hermes template (vllm-project/vllm#32926)
    ('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', "hermes", [WEATHER], ""),
    # ... and follows a <tools> wrapper when shown one (vllm-project/vllm#32926)
    ('<tools>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tools>', "hermes", [WEATHER], ""),
    # reported: LFM2 pythonic list in its special tokens, printed as text (vllm-project/vllm#39243)
    (
        '<|tool_call_start|>[get_current_temperature(location="Tokyo")] <|tool_call_end|>',
        None,
        [ParsedCall("get_current_temperature", {"location": "Tokyo"})],
        "",
    ),
    # reported: LFM2.5 (lmstudio-ai/lmstudio-bug-tracker#1979)
    (
        '<|tool_call_start|>[list_directory(path="desktop")]<|tool_call_end|>',
        "pythonic",
        [ParsedCall("list_directory", {"path": "desktop"})],
        "",
    ),
    # reported: Llama 4 Scout prints Llama 3.1 JSON with "type" (vllm-project/vllm#46863, shortened)
    (
        '{"type": "function", "name": "search", "parameters": {"query": "echo hello"}}',
        "pythonic",
        [ParsedCall("search", {"query": "echo hello"})],
        "",
    ),
    # Llama 4's own framing
    ('<|python_start|>[get_weather(city="Paris")]<|python_end|>', None, [WEATHER], ""),
    # Llama 3.1 built-in tool after <|python_tag|>
    (
        '<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>',
        "llama3_json",
        [ParsedCall("brave_search", {"query": "weather in Paris"})],
        "",
    ),
    ('<|python_tag|>[get_weather(city="Paris")]', "llama3_json", [WEATHER], ""),
    ('{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>', "llama3_json", [WEATHER], ""),
    # Phi-4-mini's token printed as text
    ('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>', None, [WEATHER], ""),
    (
        '<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>',
        "mistral",
        [WEATHER],
        "",
    ),
    (
        '<function_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</function_calls>',
        None,
        [WEATHER],
        "",
    ),
    (
        'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "pythonic",
        [WEATHER],
        "Let me check.",
    ),
    ('```tool_call\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', None, [WEATHER], ""),
    ('```python\nget_weather(city="Paris")\n```', "hermes", [WEATHER], ""),
    ('I will call the tool now.\nget_weather(city="Paris")', "hermes", [WEATHER], "I will call the tool now."),
    ('get_weather(city="Paris")\nget_time(zone="UTC")', "json", [WEATHER, ParsedCall("get_time", {"zone": "UTC"})], ""),
    ('Function(arguments1={"city": "Paris"}, name1=get_weather)', "function_list", [WEATHER], ""),
    ('get_weather[ARGS]{"city": "Paris"}', "hermes", [WEATHER], ""),
    ('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>', "mistral", [WEATHER], ""),
    (
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} I asked for the forecast.',
        "mistral",
        [WEATHER],
        "I asked for the forecast.",
    ),
    # Llama 3.1's custom-tool format, and Qwen3-Coder's XML parameters inside a Hermes block
    ('<function=get_weather>{"city": "Paris"}</function>', None, [WEATHER], ""),
    (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        "hermes",
        [WEATHER],
        "",
    ),
    # LangChain's ReAct agent text
    (
        'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris"}',
        None,
        [WEATHER],
        "Thought: I need the weather.",
    ),
    (
        'Action:\n```json\n{"action": "get_weather", "action_input": {"city": "Paris"}}\n```',
        "hermes",
        [WEATHER],
        "",
    ),
    # key aliases, envelopes, double wrapping, arguments as a JSON string
    ('{"tool": "get_weather", "tool_input": {"city": "Paris"}}', None, [WEATHER], ""),
    ('{"tool_name": "get_weather", "params": {"city": "Paris"}}', "hermes", [WEATHER], ""),
    ('{"function": "get_weather", "args": {"city": "Paris"}}', "hermes", [WEATHER], ""),
    ('{"function_call": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}', "hermes", [WEATHER], ""),
    (
        '{"tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}',
        "hermes",
        [WEATHER],
        "",
    ),
    (
        '{"name": "get_weather", "arguments": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
        "hermes",
        [WEATHER],
        "",
    ),
    ('{"function": {"name": "get_weather"}, "arguments": {"city": "Paris"}}', "hermes", [WEATHER], ""),
    ('{"name": "get_weather", "arguments": {"arguments": {"city": "Paris"}}}', "hermes", [WEATHER], ""),
    # JSON5 and Python literals
    ('{name: "get_weather", arguments: {city: "Paris",}, // the forecast\n}', "hermes", [WEATHER], ""),
    (
        "{'name': 'get_weather', 'arguments': {'city': 'Paris', 'metric': True, 'note': None}}",
        None,
        [ParsedCall("get_weather", {"city": "Paris", "metric": True, "note": None})],
        "",
    ),
    # prose after a tagged call; a control token closing it
    (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\nI will report back.',
        "hermes",
        [WEATHER],
        "I will report back.",
    ),
    (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
        "hermes",
        [WEATHER],
        "",
    ),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}\nDone.', "hermes", [WEATHER], "Done."),
    ('[get_weather(city="Paris")]<|eot_id|>', "pythonic", [WEATHER], ""),
    ('{"name": "get_weather", "arguments": {"city": "Paris"}}<|end|>', "functools", [WEATHER], ""),
]


@pytest.mark.parametrize(("text", "format_name", "calls", "content"), RECOVERED)
def test_every_shape_is_recovered_whatever_the_format(
    text: str, format_name: str | None, calls: list[ParsedCall], content: str
) -> None:
    result = parse_tool_calls(text, format=format_name, tools=TOOLS)
    assert result.tool_calls == calls
    assert result.content == content


NOT_CALLS: list[str] = [
    # prose naming a tool
    "I could call get_weather for Paris if you want.",
    "The get_weather(city) function returns the forecast.",
    # code samples
    '```python\nresult = get_weather(city="Paris")\nprint(result)\n```',
    'Example:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nThat is the request format.',
    'In JavaScript: `tools.get_weather({"city": "Paris"})` returns a promise.',
    # format explanations with placeholders
    'To call a tool, write <tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call>.',
    '{"name": "function_name", "arguments": {"arg": "value"}}',
    "Respond with [func_name1(params_name1=params_value1)] to call a function.",
    # calls inside thinking
    '<think>Maybe get_weather(city="Paris")? {"name": "get_weather", "arguments": {"city": "Paris"}}</think>It is sunny.',
    # tools that were not offered
    '{"name": "delete_all_files", "arguments": {}}',
    '<tools>{"name": "rm", "arguments": {"path": "/"}}</tools>',
    # truncated calls: cut inside a string, after a key, inside a number
    '{"name": "get_weather", "arguments": {"city": "Par',
    '<tool_call>{"name": "get_weather", "arguments": {"city":',
    '{"name": "get_weather", "arguments": {"days": 1',
    # data that only looks like a call
    '[{"name": "Ann", "age": 31}]',
    "See [1], [2] and {3}.",
    "[TOOL_CALLS] is the token that starts Mistral's calls.",
    "Action: none needed, the answer is 4.",
]


@pytest.mark.parametrize("text", NOT_CALLS)
@pytest.mark.parametrize("format_name", [None, "hermes", "pythonic"])
def test_negatives_stay_content_unchanged(text: str, format_name: str | None) -> None:
    result = parse_tool_calls(text, format=format_name, tools=TOOLS)
    assert result.tool_calls == []
    assert result.content == text


def test_a_named_format_orders_the_shapes_but_keeps_them_all() -> None:
    for format_name in FORMATS:
        result = parse_tool_calls(
            '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', format=format_name, tools=TOOLS
        )
        assert result.tool_calls == [WEATHER], format_name


def test_the_shapes_of_one_marker_agree_on_how_its_region_ends() -> None:
    """Two formats declaring one marker text must declare the same region kind (the scanner
    keeps one end detector per marker)."""
    seen: dict[str, tuple[str, bool]] = {}
    for parser in PARSERS.values():
        for marker in parser.markers:
            kind = (marker.kind, marker.must_end)
            assert seen.setdefault(marker.text, kind) == kind, marker.text


@pytest.mark.parametrize(
    ("tag", "format_name"),
    [
        ("<tool_call>", "hermes"),
        ("<function_call>", "minimax_ts"),
        ("```typescript", "minimax_ts"),
        ("functools[", "functools"),
        ("[TOOL_CALLS]", "mistral"),
        ("<|python_tag|>", "llama3_json"),
        ("<|tool_call_start|>", "wrapped"),
        ("<tools>", None),
        ("<function=", "wrapped"),
        ("{", None),
    ],
)
def test_the_tag_map_comes_from_the_parsers(tag: str, format_name: str | None) -> None:
    assert format_for_tag(tag) == format_name


def test_the_declared_tags_cover_the_converters_known_markers() -> None:
    from ollama_fc.markers import KNOWN_MARKERS

    assert set(KNOWN_MARKERS) <= set(KNOWN_TAGS)


def test_every_declared_tag_maps_to_its_parser() -> None:
    for tag in KNOWN_TAGS:
        owner = format_for_tag(tag)
        assert owner is not None and tag in PARSERS[owner].tags


def test_streaming_finds_a_call_when_the_chunk_boundary_splits_the_think_close() -> None:
    from ollama_fc.parsers import StreamingRecoverer, parsers_for

    text = '<think>plan</think>\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    cut = text.index(">\n<tool_call>")
    recoverer = StreamingRecoverer(parsers_for("hermes"), TOOLS)
    pieces = recoverer.feed(text[:cut]) + recoverer.feed(text[cut:]) + recoverer.finish()
    assert [call for piece in pieces if not isinstance(piece, str) for call in piece] == [WEATHER]


def test_an_integer_of_any_length_is_read_without_error() -> None:
    digits = "9" * 5000
    result = parse_tool_calls('{"name": "get_weather", "arguments": {"days": ' + digits + "}}", tools=TOOLS)
    assert result.tool_calls == [ParsedCall("get_weather", {"days": digits})]  # kept as its text


def test_lone_surrogates_and_deep_nesting_do_not_raise() -> None:
    assert parse_tool_calls('{"name": "get_weather", "arguments": {"city": "\\ud800"}}', tools=TOOLS).tool_calls
    deep = '{"name": "get_weather", "arguments": ' + "[" * 3000 + "]" * 3000 + "}"
    assert parse_tool_calls(deep, tools=TOOLS).tool_calls == []


REQUIRING = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {"type": "function", "function": {"name": "get_time"}},
]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "get_weather", "arguments": {"unit": "c"}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": null}}</tool_call>',
        "[get_weather(unit='c')]",
        '[get_time(), get_weather(unit="c")]',
        'I could call get_weather or get_time: {"name": "get_weather", "arguments": {}}',
    ],
)
def test_a_call_missing_a_required_argument_is_never_a_call(text: str) -> None:
    """Precision first: a call that leaves out what its tool requires has not committed to the
    call; its text stays content, word for word, streamed or whole."""
    result = parse_tool_calls(text, tools=REQUIRING)
    assert result.tool_calls == [] and result.content == text


def test_a_call_with_its_required_arguments_and_an_optional_null_is_a_call() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "unit": null}}</tool_call>'
    assert parse_tool_calls(text, tools=REQUIRING).tool_calls == [
        ParsedCall("get_weather", {"city": "Oslo", "unit": None})
    ]
