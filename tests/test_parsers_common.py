"""What holds for every format: detection without a format name, streaming equals whole-text
parsing for any chunking, no input makes the parsers raise or hang, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ollama_fc import ParsedCall, parse_tool_calls
from ollama_fc.cli import main
from ollama_fc.parsers import FORMATS, StreamingRecoverer, parsers_for

WEATHER = ParsedCall("get_weather", {"city": "Paris"})
TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]

# One realistic output per format, as the seeds' models print them.
SAMPLES = {
    "hermes": 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "minimax_ts": '<function_call>```typescript\nfunctions.get_weather({"city": "Paris"})\n```',
    "functools": 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "mistral": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    "function_list": '[Function(arguments1={"city": "Paris"}, name1=get_weather)]',
    "pythonic": '[get_weather(city="Paris")]',
    "llama3_json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "json": '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    "wrapped": '<tools>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tools>',
    "gemma4": '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    "harmony": (
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary"
        ' to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
    ),
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "deepseek_v31": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "deepseek_dsml": (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
    ),
    "minimax_m2": (
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        "</invoke>\n</minimax:tool_call>"
    ),
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    "seed_oss": "<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</seed:tool_call>",
    "command_r": (
        '<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather",'
        ' "parameters": {"city": "Paris"}}]<|END_ACTION|>'
    ),
    "functionary": '>>>get_weather\n{"city": "Paris"}',
    "internlm": '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>',
    "step3": (
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>"
    ),
    "longcat": '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>',
    "hunyuan": (
        "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city"
        "</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n</tool_call:opensource>\n"
        "</tool_calls:opensource>"
    ),
    "functiongemma": "<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>",
    "minicpm": '<function name="get_weather"><param name="city">Paris</param></function>',
    "apertus": '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>',
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    ),
}

NOT_CALLS = [
    "The weather tool get_weather needs a city.",
    'In Python: `get_weather(city="Paris")`.',
    '<think><tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call></think>No call needed.',
    '```python\nresult = get_weather(city="Paris")\nprint(result)\n```',
    "Use [brackets] and {braces} freely; it's fine.",
    # a format's inner markers quoted with its block in inline code
    'Calls look like `<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris</parameter></invoke>'
    "</minimax:tool_call>` here.",
    # a call inside Seed-OSS's thinking block
    "<seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n"
    "</seed:tool_call></seed:think>No call.",
    # a placeholder argument: the syntax shown, not a call
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "<city>"}}\n</tool_call>',
]


def test_every_format_has_a_sample() -> None:
    assert set(SAMPLES) == set(FORMATS)


@pytest.mark.parametrize("format_name", sorted(SAMPLES))
def test_named_format_recovers_its_sample(format_name: str) -> None:
    assert parse_tool_calls(SAMPLES[format_name], format=format_name, tools=TOOLS).tool_calls == [WEATHER]


@pytest.mark.parametrize("format_name", sorted(SAMPLES))
def test_no_format_given_tries_them_all(format_name: str) -> None:
    assert parse_tool_calls(SAMPLES[format_name], tools=TOOLS).tool_calls == [WEATHER]


@pytest.mark.parametrize("text", NOT_CALLS)
def test_must_not_be_calls_with_all_formats_active(text: str) -> None:
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_unknown_format_name_is_a_clear_error() -> None:
    from ollama_fc import ToolCallError

    with pytest.raises(ToolCallError, match="unknown tool-call format 'xml'.*hermes"):
        parse_tool_calls("x", format="xml")


def _stream(text: str, cuts: list[int], format_name: str | None) -> tuple[list[ParsedCall], str]:
    recoverer = StreamingRecoverer(parsers_for(format_name), TOOLS)
    pieces = []
    previous = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        pieces += recoverer.feed(text[previous:cut])
        previous = cut
    pieces += recoverer.finish()
    calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
    content = "".join(piece for piece in pieces if isinstance(piece, str))
    return calls, content


STREAM_TEXTS = (
    list(SAMPLES.values())
    + NOT_CALLS
    + [
        "Intro [1] text.\n" + SAMPLES["hermes"] + "\n" + SAMPLES["hermes"],
        SAMPLES["minimax_ts"] + "\nand then " + SAMPLES["functools"],
        "<think>plan [a] {b}</think>" + SAMPLES["function_list"],
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), index=st.integers(0, len(STREAM_TEXTS) - 1), format_name=st.sampled_from([None, *FORMATS]))
def test_any_chunking_gives_the_whole_text_result(data: st.DataObject, index: int, format_name: str | None) -> None:
    text = STREAM_TEXTS[index]
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=len(text)))
    whole = parse_tool_calls(text, format=format_name, tools=TOOLS)
    calls, content = _stream(text, cuts, format_name)
    assert calls == whole.tool_calls
    if whole.tool_calls:
        assert content.strip() == whole.content
    else:
        assert content == text  # nothing recovered: the stream is the text, unchanged


def test_one_character_chunks_release_prose_before_a_marker_completes() -> None:
    recoverer = StreamingRecoverer(parsers_for("hermes"), TOOLS)
    released = "".join(p for ch in "Hello there <tool_" for p in recoverer.feed(ch) if isinstance(p, str))
    assert released == "Hello there "  # the possible start of `<tool_call>` is held back


FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<function_call>",
    "```typescript\n",
    "```",
    "functools[",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|channel|>",
    " to=functions.get_weather",
    "<|message|>",
    "<|call|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    '<invoke name="',
    '<parameter name="',
    "</parameter>",
    "</invoke>",
    "<arg_key>",
    "<arg_value>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<seed:tool_call>",
    "<function=",
    "<parameter=",
    "<|START_ACTION|>",
    ">>>",
    "<|recipient|>",
    "<|content|>",
    "<|action_start|>",
    "<|plugin|>",
    "<｜tool_calls_begin｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_sep｜>",
    "<longcat_tool_call>",
    "<tool_call:opensource>",
    "<tool_sep:opensource>",
    "<tool_sep>",
    "<start_function_call>",
    "<escape>",
    '<function name="',
    '<param name="',
    "<|tools_prefix|>",
    "<TOOLCALL>",
    "<think>",
    "</think>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    "\\",
    ":",
    ",",
    "=",
    "functions.",
    "get_weather",
    "Function",
    "name1=",
    "arguments1=",
    '"name": ',
    '"arguments": ',
    " ",
    "\n",
    "x",
]


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=60), format_name=st.sampled_from([None, *FORMATS]))
def test_no_structured_garbage_makes_a_parser_raise(parts: list[str], format_name: str | None) -> None:
    text = "".join(parts)
    result = parse_tool_calls(text, format=format_name, tools=TOOLS)
    assert all(call.name == "get_weather" for call in result.tool_calls)
    if not result.tool_calls:
        assert result.content == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_no_random_text_makes_a_parser_raise(text: str) -> None:
    result = parse_tool_calls(text)
    assert isinstance(result.content, str)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city":',
        'functools[{"name": "get_weather", "arguments": {"city": \'Par',
    ],
)
def test_a_call_cut_inside_a_value_stays_content(text: str) -> None:
    """A guessed value ("Par" for "Paris") must never reach a tool: the text stays content."""
    result = parse_tool_calls(text, tools=TOOLS)
    assert result.tool_calls == [] and result.content == text


def test_deep_nesting_is_handled_without_error() -> None:
    text = "<tool_call>" + "[" * 5000 + "]" * 5000 + "</tool_call>" + "{" * 3000
    assert parse_tool_calls(text).tool_calls == []


def _cli(args: list[str], text: str) -> Result:
    return CliRunner().invoke(main, ["parse", *args], input=text)


def test_cli_parse_prints_calls_and_content() -> None:
    out = _cli(["--format", "functools"], 'Sure. functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]')
    assert out.exit_code == 0
    assert json.loads(out.stdout) == {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        "content": "Sure.",
    }


def test_cli_parse_tools_file_filters_names(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps([{"type": "function", "function": {"name": "other"}}]))
    out = _cli(["--tools", str(tools_file)], SAMPLES["hermes"])
    assert json.loads(out.stdout) == {"tool_calls": [], "content": SAMPLES["hermes"]}


def test_the_marker_pattern_finds_what_an_alternation_of_the_markers_finds() -> None:
    import random
    import re

    from ollama_fc.parsers import PARSERS
    from ollama_fc.parsers.scan_tables import _trie_pattern

    texts = {
        marker.text.replace("{name}", name)
        for parser in PARSERS.values()
        for marker in parser.markers
        for name in ("get_weather", "g")
    }
    ordered = sorted(texts | {"<think>"}, key=len, reverse=True)
    plain = re.compile("|".join(map(re.escape, ordered)))
    trie = re.compile(_trie_pattern(ordered))
    alphabet = "".join(sorted(set("".join(ordered)))) + " x"
    rnd = random.Random(7)
    for _ in range(2000):
        text = "".join(
            rnd.choice(ordered)
            if rnd.random() < 0.3
            else "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6)))
            for _ in range(8)
        )
        assert [(m.start(), m.group()) for m in trie.finditer(text)] == [
            (m.start(), m.group()) for m in plain.finditer(text)
        ]


def test_every_format_names_its_models_and_public_sources() -> None:
    """docs/FORMATS.md's built-in list is written from these (benchmarks/builtin_formats.py)."""
    import inspect

    from ollama_fc.parsers import PARSERS

    for name, parser in PARSERS.items():
        module = inspect.getmodule(type(parser))
        assert parser.models, name
        assert module is not None and "Sources:" in (module.__doc__ or ""), name


def test_formats_list_names_each_format_and_its_models() -> None:
    from ollama_fc.parsers import PARSERS

    result = CliRunner().invoke(main, ["formats", "list"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == list(PARSERS)
    assert "gpt-oss" in next(line for line in lines if line.startswith("harmony "))
