"""Properties over random texts and random chunkings: streaming gives the whole-text result for
every format setting, no input raises, and argument checking fails only with InvalidToolCall."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ollama_fc import InvalidToolCall, validate_arguments
from ollama_fc.parsers import FORMATS, PARSERS, ParsedCall, StreamingRecoverer, parse_tool_calls, parsers_for
from ollama_fc.parsers.base import CALL_END_TOKENS
from ollama_fc.parsers.scan_memo import ScanMemo

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "search")]

# Every marker any parser declares (per-tool ones filled in), the tokens that close calls, and
# the pieces calls are made of: random joins of these reach the scanner's corners.
MARKERS = sorted(
    {marker.text.replace("{name}", "get_weather") for parser in PARSERS.values() for marker in parser.markers}
    | {closer for parser in PARSERS.values() for marker in parser.markers for closer, _ in marker.closers}
)
FRAGMENTS = [
    *MARKERS,
    *CALL_END_TOKENS,
    "<think>",
    "</think>",
    "```",
    "\n",
    " ",
    '"name": "get_weather"',
    '"arguments": {"city": "Paris"}',
    '{"name": "search", "arguments": {"query": "x"}}',
    'get_weather(city="Paris")',
    "[ARGS]",
    "Action Input: ",
    '"',
    "'",
    "\\",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "=",
    "//",
    "/*",
    "9" * 5000,
    "\ud800",
    "x",
]

# Whole calls in many shapes, to be mixed with prose and fragments.
CALLS = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    '{"name": "search", "arguments": {"query": "x"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '[get_weather(city="Paris"), search(query="y")]',
    'get_weather(city="Paris")',
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    'functools[{"name": "search", "arguments": {"query": "z"}}]',
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
    '<function_call>```typescript\nfunctions.search({"query": "q"})\n```',
    '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
    '<tools>{"tool": "search", "tool_input": {"query": "t"}}</tools>',
    'Action: search\nAction Input: {"query": "a"}',
    '[Function(arguments1={"city": "Paris"}, name1=get_weather)]',
]

texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(CALLS), st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=8).map(
        "".join
    ),
    st.text(max_size=300),
    st.text(alphabet="[]{}()\"'`\\:,=<>|/ \nax", max_size=300),
)
format_names = st.sampled_from([None, *FORMATS])


def _stream(text: str, cuts: list[int], format_name: str | None) -> tuple[list[ParsedCall], str]:
    recoverer = StreamingRecoverer(parsers_for(format_name), TOOLS)
    pieces = []
    previous = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        pieces += recoverer.feed(text[previous:cut])
        previous = cut
    pieces += recoverer.finish()
    calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
    return calls, "".join(piece for piece in pieces if isinstance(piece, str))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), text=texts, format_name=format_names)
def test_streamed_equals_whole_for_any_chunking(data: st.DataObject, text: str, format_name: str | None) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    whole = parse_tool_calls(text, format=format_name, tools=TOOLS)
    calls, content = _stream(text, cuts, format_name)
    assert calls == whole.tool_calls
    if whole.tool_calls:
        assert content.strip() == whole.content
    else:
        assert content == text == whole.content  # nothing recovered: the text comes back unchanged


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, format_name=format_names)
def test_one_character_chunks_equal_the_whole_text(text: str, format_name: str | None) -> None:
    whole = parse_tool_calls(text, format=format_name, tools=TOOLS)
    calls, content = _stream(text, list(range(len(text))), format_name)
    assert calls == whole.tool_calls
    assert (content.strip() if calls else content) == whole.content


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, format_name=format_names)
def test_no_text_raises_without_tools_either(text: str, format_name: str | None) -> None:
    result = parse_tool_calls(text, format=format_name)
    assert isinstance(result.content, str)
    if not result.tool_calls:
        assert result.content == text


# Calls cut inside a string behind markers: the texts where bracket scans run to the end of the
# output again and again, and later scans stop early where they meet a kept one in step.
CUT_CALLS = st.lists(
    st.tuples(
        st.sampled_from(["", *MARKERS]),
        st.sampled_from(
            [
                '{"name": "get_weather", "arguments": {"city": "Pa',
                '{"name": "search", "arguments": {"query": "x"}}',
                "{'a': [\"b",
                '[{"name": "get_weather", "arguments": {"city": "Paris"}',
                "]",
                "}",
                " ",
                '"',
            ]
        ),
    ).map("".join),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, 600), max_size=6), text=st.one_of(CUT_CALLS, texts), format_name=format_names)
@example(  # the second scan meets the first in step and ends one bracket short: a call
    cuts=[9], text='{"x": "a {"name": "get_weather", "arguments": {"city": "Paris"}', format_name=None
)
@example(
    cuts=[50, 51, 400],
    text=" ".join(marker + '{"name": "get_weather", "arguments": {"city": "Pa' for marker in MARKERS) * 3,
    format_name=None,
)
def test_stopping_a_scan_where_it_meets_a_kept_one_changes_no_result(
    cuts: list[int], text: str, format_name: str | None
) -> None:
    whole = parse_tool_calls(text, format=format_name, tools=TOOLS)
    streamed = _stream(text, cuts, format_name)
    with patch.object(ScanMemo, "meet", lambda *_: None):
        assert parse_tool_calls(text, format=format_name, tools=TOOLS) == whole
        assert _stream(text, cuts, format_name) == streamed


def test_deep_nesting_of_every_bracket_does_not_raise() -> None:
    for opener, closer in ("[]", "{}", "()"):
        for text in (opener * 20000, opener * 20000 + closer * 20000, "get_weather" + opener * 20000):
            parse_tool_calls(text, tools=TOOLS)
            parse_tool_calls(text)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.just("9" * 5000)
    | st.just("\ud800"),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "pattern": "^[A-Z]", "maxLength": 20},
            "days": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "number"}},
            "where": {"$ref": "#/$defs/Place"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}}}},
    },
    {"type": "object", "properties": {"x": {"type": ["string", "boolean"], "enum": ["a", True]}}},
    {"type": "object", "properties": {"n": {"$ref": "#"}}},
]


@settings(max_examples=300, deadline=None)
@given(
    arguments=st.dictionaries(
        st.sampled_from(["city", "days", "when", "tags", "where", "either", "x", "n", "zz"]), json_values, max_size=6
    ),
    schema=st.sampled_from(SCHEMAS),
)
def test_argument_checking_fails_only_with_invalid_tool_call(arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    try:
        checked = validate_arguments("get_weather", schema, arguments)
    except InvalidToolCall as error:
        assert error.problems and str(error)
    else:
        assert isinstance(checked, dict)
