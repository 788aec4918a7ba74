"""The targets for learned formats over the reference corpus and the seeds (not timed).

A format is learned for every template that renders tool calls, and every round trip (render
calls with the template, read them back with the learned format) is exact. On the seed templates that write Hermes calls, the learned format and the built-in
`hermes` parser agree. docs/FORMATS.md has the per-template table (benchmarks/learned_formats.py).
"""

from __future__ import annotations

import pytest

from ollama_fc.convert import load_source
from ollama_fc.learn import learn_format
from ollama_fc.learn.survey import Evaluation, evaluate
from ollama_fc.parsers import StreamingRecoverer, parse_tool_calls
from ollama_fc.parsers.learned import LearnedParser
from ollama_fc.parsers.registry import parsers_for
from ollama_fc.parsers.streaming import result_from_pieces
from ollama_fc.verify.runner import with_stand_in_tokens
from tests.shared_data import shared_path

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_weather", "get_time")
]


@pytest.fixture(scope="module")
def evaluations() -> list[Evaluation]:
    paths = sorted(shared_path("corpus", "templates").glob("*.jinja")) + sorted(
        shared_path("seeds", "templates").glob("*.jinja")
    )
    return [evaluate(path.name, with_stand_in_tokens(load_source(path))) for path in paths]


def test_a_format_is_learned_for_every_template_that_renders_calls(evaluations: list[Evaluation]) -> None:
    rendering = [e for e in evaluations if e.renders_calls]
    assert len(rendering) >= 130  # the corpus is there, and its tool templates render calls
    assert {e.name: e.reason for e in rendering if e.spec is None} == {}


def test_every_round_trip_is_exact(evaluations: list[Evaluation]) -> None:
    reports = [e.report for e in evaluations if e.report is not None]
    assert all(report.measured >= 16 for report in reports)
    misses = {
        (e.name, o.probe): o.detail
        for e in evaluations
        if e.report
        for o in e.report.outcomes
        if o.status == "mismatch"
    }
    assert misses == {}


@pytest.mark.parametrize("seed", ["qwen2.5-hermes.jinja", "gemma3-tools.jinja"])
def test_learned_and_builtin_hermes_agree_on_the_hermes_seeds(seed: str) -> None:
    source = with_stand_in_tokens(load_source(shared_path("seeds", "templates", seed)))
    evaluation = evaluate(seed, source, parsers_for("hermes"))
    assert evaluation.report is not None
    pairs = list(zip(evaluation.report.outcomes, evaluation.report.builtin))
    assert len(pairs) >= 20
    # strings holding `<tool_call>` or `</tool_call>` are where they differ: the built-in cuts the
    # block at the tag, the learned format (told by the scanner which tags are inside strings) does not
    ordinary = [(mine, theirs) for mine, theirs in pairs if not mine.probe.startswith("value holding")]
    assert all(mine.status == theirs.status == "exact" for mine, theirs in ordinary)
    assert all(mine.status == "exact" for mine, _ in pairs)


@pytest.mark.parametrize("seed", ["minimax-text-01.jinja", "typhoon2-llama3.1-function-list.jinja"])
def test_seeds_that_render_no_calls_fall_back_to_the_builtin_formats(seed: str) -> None:
    evaluation = evaluate(seed, with_stand_in_tokens(load_source(shared_path("seeds", "templates", seed))))
    assert evaluation.spec is None and evaluation.reason == "the template renders no tool calls"


# A reply as the model writes it: what follows its generation prompt (the prompt's own text, such
# as gpt-oss's `<|start|>assistant` or Functionary's `>>>`, is not in it), then prose after calls.
REPLIES = [
    (
        "gpt-oss-120b.jinja",
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
        "",
    ),
    (
        "solar-open-100b.jinja",
        '<|tool_calls|><|tool_call:begin|>a1b2c3d4e<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Oslo"}'
        '<|tool_call:end|><|tool_call:begin|>f5g6h7i8j<|tool_call:name|>get_time<|tool_call:args|>{"zone": "UTC"}'
        "<|tool_call:end|><|calls|>",
        "",
    ),
    (
        "command-r7b-12-2024-tool_use.jinja",
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}\n]'
        "<|END_ACTION|>",
        "",
    ),
    (
        "glimmer.jinja",  # the name in the message's header and in its invoke
        ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">Oslo</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
        "",
    ),
    (
        "mistral-nemo-instruct-2407.jinja",  # it refuses call ids that are not nine characters long
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "a1b2c3d4e"}, '
        '{"name": "get_time", "arguments": {"zone": "UTC"}, "id": "f5g6h7i8j"}]',
        "",
    ),
    (
        "mistral-small-3.2-24b-instruct-2506.jinja",
        '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Oslo"}',
        "",
    ),
    (
        "nemotron-nano-9b-v2.jinja",  # the turn's end, <SPECIAL_12>, stops the model: not in its reply
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</TOOLCALL>',
        "",
    ),
    ("functionary-medium-v3.2.jinja", 'get_weather\n{"city": "Oslo"}>>>get_time\n{"zone": "UTC"}', ""),
    (
        "functionary-medium-v2.2.jinja",
        'get_weather\n<|content|>{"city": "Oslo"}\n<|from|>assistant\n<|recipient|>get_time\n<|content|>{"zone": "UTC"}',
        "",
    ),
    (
        "functionary-medium-v2.2.jinja",
        'Checking.\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Oslo"}',
        "Checking.",
    ),
]


@pytest.mark.parametrize(("template", "reply", "content"), REPLIES)
def test_the_learned_format_reads_the_reply_after_the_generation_prompt(
    template: str, reply: str, content: str
) -> None:
    spec = learn_format(with_stand_in_tokens(load_source(shared_path("corpus", "templates", template))))
    result = parse_tool_calls(reply, format=spec.format_name(), tools=TOOLS)
    want = [call for call in [("get_weather", {"city": "Oslo"}), ("get_time", {"zone": "UTC"})] if call[0] in reply]
    assert [(call.name, call.arguments) for call in result.tool_calls] == want
    assert result.content.strip() == content
    streamed = StreamingRecoverer([LearnedParser(spec)], TOOLS)
    pieces = [piece for at in range(0, len(reply), 7) for piece in streamed.feed(reply[at : at + 7])]
    assert result_from_pieces(reply, pieces + streamed.finish()) == result


def test_a_name_at_the_start_of_a_reply_is_a_call_only_with_its_arguments() -> None:
    spec = learn_format(
        with_stand_in_tokens(load_source(shared_path("corpus", "templates", "functionary-medium-v3.2.jinja")))
    )
    result = parse_tool_calls("get_weather\nis the tool I would use.", format=spec.format_name(), tools=TOOLS)
    assert result.tool_calls == [] and result.content == "get_weather\nis the tool I would use."


@pytest.mark.parametrize("template", ["gguf-deepseek-v3-671b.jinja", "deepseek-r1-distill-llama-8b.jinja"])
def test_calls_after_a_block_closed_after_every_call_but_the_first_belong_to_the_turn(template: str) -> None:
    # these templates write the second call's block closer and an end of sentence before the third
    spec = learn_format(with_stand_in_tokens(load_source(shared_path("corpus", "templates", template))))
    call = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{}\n```json\n{}\n```<｜tool▁call▁end｜>"
    reply = (
        "<｜tool▁calls▁begin｜>"
        + call.format("get_weather", '{"city": "Lima"}')
        + "\n"
        + call.format("get_weather", '{"city": "Quito"}')
        + "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>\n"
        + call.format("get_time", '{"zone": "UTC"}')
        + "<｜tool▁calls▁end｜>"
    )
    result = parse_tool_calls(reply, format=spec.format_name(), tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("get_weather", {"city": "Lima"}),
        ("get_weather", {"city": "Quito"}),
        ("get_time", {"zone": "UTC"}),
    ]
    assert result.content.strip() == ""
    streamed = StreamingRecoverer([LearnedParser(spec)], TOOLS)
    pieces = [piece for at in range(0, len(reply), 5) for piece in streamed.feed(reply[at : at + 5])]
    assert result_from_pieces(reply, pieces + streamed.finish()) == result


def test_the_end_of_sentence_after_a_learned_deepseek_block_is_not_content() -> None:
    # `<｜end▁of▁sentence｜>` opens the calls after a closed block in this format, and ends the reply
    spec = learn_format(
        with_stand_in_tokens(load_source(shared_path("corpus", "templates", "gguf-deepseek-v3-671b.jinja")))
    )
    call = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Lima"}\n```<｜tool▁call▁end｜>'
    reply = f"<｜tool▁calls▁begin｜>{call}<｜tool▁calls▁end｜><｜end▁of▁sentence｜>\nDone."
    result = parse_tool_calls(reply, format=spec.format_name(), tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Lima"})]
    assert result.content.strip() == "Done."
    streamed = StreamingRecoverer([LearnedParser(spec)], TOOLS)
    pieces = [piece for at in range(0, len(reply), 5) for piece in streamed.feed(reply[at : at + 5])]
    assert result_from_pieces(reply, pieces + streamed.finish()) == result


# Pythonic templates that write what Python would not read: strings unescaped in their quotes
# (LFM2.5-VL), no quotes at all (vLLM's Llama 3.2 example), an `r` after every value (vLLM's
# ToolACE example), no comma between arguments (vLLM's Gemma 3 example).
PYTHONIC_REPLIES = [
    (
        "lfm2.5-vl-450m.jinja",
        '<|tool_call_start|>[get_weather(city="Oslo "old town"", days=3), get_time(zone="UTC")]<|tool_call_end|>',
        [("get_weather", {"city": 'Oslo "old town"', "days": 3}), ("get_time", {"zone": "UTC"})],
    ),
    (
        "vllm-llama3.2-pythonic.jinja",
        "[get_weather(city=Saint-Étienne, le centre, days=3, filters={'tags': ['a']}), get_time(zone=UTC)]",
        [
            ("get_weather", {"city": "Saint-Étienne, le centre", "days": 3, "filters": {"tags": ["a"]}}),
            ("get_time", {"zone": "UTC"}),
        ],
    ),
    (
        "vllm-toolace.jinja",
        "[get_weather(city=Oslor, days=3r), get_time(zone=UTCr)]",
        [("get_weather", {"city": "Oslo", "days": 3}), ("get_time", {"zone": "UTC"})],
    ),
    (
        "vllm-gemma3-pythonic.jinja",
        '[get_weather(city="Oslo \\"old\\""days=3metric=true), get_time(zone="UTC")]',
        [("get_weather", {"city": 'Oslo "old"', "days": 3, "metric": True}), ("get_time", {"zone": "UTC"})],
    ),
]


@pytest.mark.parametrize(("template", "reply", "calls"), PYTHONIC_REPLIES)
def test_pythonic_calls_are_read_as_their_template_writes_them(template: str, reply: str, calls: list[object]) -> None:
    spec = learn_format(with_stand_in_tokens(load_source(shared_path("corpus", "templates", template))))
    result = parse_tool_calls(reply, format=spec.format_name(), tools=TOOLS)
    assert [(call.name, call.arguments) for call in result.tool_calls] == calls
    assert result.content == ""
    streamed = StreamingRecoverer([LearnedParser(spec)], TOOLS)
    pieces = [piece for at in range(0, len(reply), 6) for piece in streamed.feed(reply[at : at + 6])]
    assert result_from_pieces(reply, pieces + streamed.finish()) == result
