"""Learning a tool-call format from a chat template, and reading calls with it.

The templates here are small ones written for these tests, each writing calls in one style;
the corpus-wide measurement is in test_learn_corpus.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ollama_fc import oracle
from ollama_fc.cli import main
from ollama_fc.convert import TemplateSource
from ollama_fc.errors import ToolCallError
from ollama_fc.learn import FormatNotLearned, LearnedFormat, convert_with_format, learn_format
from ollama_fc.parsers import StreamingRecoverer, parse_tool_calls
from ollama_fc.parsers.learned import LearnedParser
from ollama_fc.parsers.learned_format import UNPRINTED_TAG
from ollama_fc.parsers.streaming import result_from_pieces
from ollama_fc.recovery import format_from_template

HEAD = (
    "{% if tools %}<|system|>Tools:{% for t in tools %} {{ t.function.name }}{% endfor %}<|end|>{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content or '' }}"
)
TAIL = "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"

HERMES = (
    HEAD + "{% for c in m.tool_calls or [] %}\n<tool_call>\n"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call>'
    "{% endfor %}" + TAIL
)
XML = (
    HEAD + "{% for c in m.tool_calls or [] %}\n<tool_call>\n<function={{ c.function.name }}>\n"
    "{% for k, v in c.function.arguments.items() %}<parameter={{ k }}>\n"
    "{{ v if v is string else v | tojson }}\n</parameter>\n{% endfor %}</function>\n</tool_call>"
    "{% endfor %}" + TAIL
)
KIMI_LIKE = (
    HEAD + "{% if m.tool_calls %}<|calls_begin|>{% for c in m.tool_calls %}<|call_begin|>functions."
    "{{ c.function.name }}:{{ loop.index0 }}<|args|>{{ c.function.arguments | tojson }}<|call_end|>"
    "{% endfor %}<|calls_end|>{% endif %}" + TAIL
)
PYTHONIC = (
    HEAD + "{% if m.tool_calls %}<|tool_call_start|>[{% for c in m.tool_calls %}{{ c.function.name }}("
    "{% for k, v in c.function.arguments.items() %}{{ k }}={{ v | tojson }}{{ ', ' if not loop.last }}{% endfor %})"
    "{{ ', ' if not loop.last }}{% endfor %}]<|tool_call_end|>{% endif %}" + TAIL
)
NO_CALLS = HEAD + TAIL

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_weather", "get_time")
]


def learned(template: str) -> LearnedFormat:
    return learn_format(TemplateSource(template, {}, "test.jinja"))


@pytest.mark.parametrize(
    ("template", "style", "text"),
    [
        (HERMES, "json", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'),
        (
            XML,
            "tagged",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            KIMI_LIKE,
            "name_json",
            '<|calls_begin|><|call_begin|>functions.get_weather:0<|args|>{"city": "Oslo"}<|call_end|><|calls_end|>',
        ),
        (PYTHONIC, "pythonic", '<|tool_call_start|>[get_weather(city="Oslo")]<|tool_call_end|>'),
    ],
)
def test_each_style_is_learned_and_reads_its_calls(template: str, style: str, text: str) -> None:
    spec = learned(template)
    assert spec.style == style
    result = parse_tool_calls("Let me see. " + text, format=spec.format_name(), tools=TOOLS)
    assert [call.to_dict() for call in result.tool_calls] == [{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    assert result.content == "Let me see."


def test_the_learned_markers_are_the_templates_own() -> None:
    spec = learned(KIMI_LIKE)
    assert spec.block_open == "<|calls_begin|>" and spec.block_close == "<|calls_end|>"
    assert spec.call_open == "<|call_begin|>functions." and spec.call_close == "<|call_end|>"
    assert spec.name_close == ":{index}<|args|>"  # the call's position varies from call to call
    assert spec.special_tokens == ["<|calls_begin|>", "<|call_begin|>", "<|args|>", "<|call_end|>", "<|calls_end|>"]
    xml = learned(XML)
    assert (xml.param_open.strip(), xml.param_mid.strip(), xml.param_close.strip()) == (
        "<parameter=",
        ">",
        "</parameter>",
    )
    assert xml.raw_strings


# DeepSeek R1's distilled templates: the block's closer is written only after a second call, and
# a turn without calls ends in a token that shares its last characters with the call's closer
CLOSER_AFTER_SECOND = (
    "{% for m in messages %}<｜{{ m.role }}｜>{% if m.tool_calls %}{% for c in m.tool_calls %}"
    "{% if loop.first %}<｜calls▁begin｜>{% else %}\n{% endif %}<｜call▁begin｜>{{ c.function.name }}<｜sep｜>"
    "{{ c.function.arguments | tojson }}<｜call▁end｜>{% if not loop.first %}<｜calls▁end｜>{% endif %}"
    "{% endfor %}{% else %}{{ m.content }}<｜turn▁end｜>{% endif %}{% endfor %}"
)


def test_a_block_closer_written_only_after_a_second_call_is_learned() -> None:
    spec = learned(CLOSER_AFTER_SECOND)
    assert (spec.block_open, spec.call_open) == ("<｜calls▁begin｜>", "<｜call▁begin｜>")
    assert (spec.call_close, spec.block_close) == ("<｜call▁end｜>", "<｜calls▁end｜>")
    call = '<｜calls▁begin｜><｜call▁begin｜>get_weather<｜sep｜>{"city": "Oslo"}<｜call▁end｜>'
    for text in (call, call + "<｜calls▁end｜>"):  # as the template writes one call, and as a block
        result = parse_tool_calls(text, format=spec.format_name(), tools=TOOLS)
        assert [c.to_dict() for c in result.tool_calls] == [{"name": "get_weather", "arguments": {"city": "Oslo"}}]
        assert result.content == ""
    # a third call comes after the block the second one closed, as the template writes it
    one = '<｜call▁begin｜>get_time<｜sep｜>{"zone": "UTC"}<｜call▁end｜>'
    three = call + "\n" + one + "<｜calls▁end｜>\n" + one + "<｜calls▁end｜>"
    result = parse_tool_calls(three, format=spec.format_name(), tools=TOOLS)
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_time", "get_time"]
    assert result.content.strip() == ""


def test_parallel_calls_and_awkward_values() -> None:
    spec = learned(XML)
    arguments = {
        "text": 'a "quoted"\nline </parameter> ✓',
        "n": -2.5,
        "ok": True,
        "none": None,
        "deep": {"a": [1, {"b": "c"}]},
    }
    body = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    text = f"<tool_call>\n<function=get_weather>\n{body}</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>"
    result = parse_tool_calls(text, format=spec.format_name(), tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", arguments), ("get_time", {})]


def test_streaming_gives_what_the_whole_text_gives() -> None:
    spec = learned(KIMI_LIKE)
    text = (
        "Checking. <|calls_begin|><|call_begin|>functions.get_weather:0<|args|>"
        '{"city": "<|call_end|> in a value"}<|call_end|><|call_begin|>functions.get_time:1<|args|>{}<|call_end|><|calls_end|> done'
    )
    whole = parse_tool_calls(text, format=spec.format_name(), tools=TOOLS)
    recoverer = StreamingRecoverer([LearnedParser(spec)], TOOLS)
    pieces = [piece for char in text for piece in recoverer.feed(char)] + recoverer.finish()
    streamed = result_from_pieces(text, pieces)
    assert streamed == whole
    assert [c.name for c in whole.tool_calls] == ["get_weather", "get_time"]
    assert whole.tool_calls[0].arguments == {"city": "<|call_end|> in a value"}  # a closer inside a string
    assert whole.content == "Checking.  done"


def test_only_offered_tools_and_lenient_whitespace() -> None:
    spec = learned(XML)
    unoffered = "<tool_call>\n<function=rm_rf>\n<parameter=path>\n/\n</parameter>\n</function>\n</tool_call>"
    assert parse_tool_calls(unoffered, format=spec.format_name(), tools=TOOLS).tool_calls == []
    squeezed = "<tool_call><function=get_weather><parameter=city>Oslo</parameter></function></tool_call>"
    result = parse_tool_calls(squeezed, format=spec.format_name(), tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Oslo"})]
    unclosed = '<|calls_begin|><|call_begin|>functions.get_weather:0<|args|>{"city": "Oslo"}'  # cut after the value
    kimi_name = learned(KIMI_LIKE).format_name()
    assert [c.name for c in parse_tool_calls(unclosed, format=kimi_name, tools=TOOLS).tool_calls] == ["get_weather"]
    cut = '<|calls_begin|><|call_begin|>functions.get_weather:0<|args|>{"city": "Os'
    kimi = learned(KIMI_LIKE)
    assert parse_tool_calls(cut, format=kimi.format_name(), tools=TOOLS).tool_calls == []  # no guessed value


def test_a_template_that_renders_no_calls_says_so() -> None:
    with pytest.raises(
        FormatNotLearned, match="test.jinja: tool-call format not learned: the template renders no tool calls"
    ):
        learned(NO_CALLS)


def test_the_format_travels_as_json_and_as_a_compact_token() -> None:
    spec = learned(XML)
    assert LearnedFormat.model_validate_json(spec.model_dump_json()) == spec
    token = spec.token()
    assert "*/" not in token and " " not in token and len(token) < 400
    assert LearnedFormat.from_token(token) == spec
    with pytest.raises(ToolCallError, match="damaged"):
        LearnedFormat.from_token(token[:-10])


def test_convert_records_the_format_and_the_client_reads_it() -> None:
    conversion, spec, _ = convert_with_format(TemplateSource(XML, {}, "test.jinja"))
    assert spec is not None
    assert conversion.template.startswith("{{/* ollama-fc family=auto format=learned:")
    assert format_from_template(conversion.template) == spec.format_name()
    assert conversion.tool_call_tag == UNPRINTED_TAG  # Ollama cannot read XML calls: it must leave them
    hermes, hermes_spec, _ = convert_with_format(TemplateSource(HERMES, {}, "test.jinja"))
    assert hermes_spec is not None and hermes_spec.ollama_reads_it
    assert hermes.tool_call_tag == "<tool_call>"  # Ollama reads these itself


def test_cli_formats_learn_parse_template_and_convert(tmp_path: Path) -> None:
    source = tmp_path / "chat_template.jinja"
    source.write_text(XML, encoding="utf-8")
    runner = CliRunner()
    shown = runner.invoke(main, ["formats", "learn", str(source)])
    assert shown.exit_code == 0, shown.output
    payload = json.loads(shown.output)
    assert payload["style"] == "tagged" and payload["name"].startswith("learned:")

    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
    parsed = runner.invoke(main, ["parse", "--template", str(source)], input=text)
    assert parsed.exit_code == 0, parsed.output
    assert json.loads(parsed.output)["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Oslo"}}]

    converted = runner.invoke(main, ["convert", str(source)])
    assert converted.exit_code == 0 and f"format={payload['name']} */" in converted.output

    bare = tmp_path / "plain.jinja"
    bare.write_text(NO_CALLS, encoding="utf-8")
    refused = runner.invoke(main, ["formats", "learn", str(bare)])
    assert refused.exit_code == 1
    assert refused.output.strip().count("\n") == 0 and "renders no tool calls" in refused.output


def test_a_template_that_writes_calls_but_no_tool_list_still_takes_tools() -> None:
    """DeepSeek V3/R1 templates write calls but leave the tool list to a system message: the
    converted template names `.Tools` (in a block that never renders) so that Ollama accepts
    requests with tools, and renders exactly what it rendered before."""
    no_list = '{% for m in messages %}<|{{ m.role }}|>{{ m.content or \'\' }}{% for c in m.tool_calls or [] %}<tool_call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>{% endfor %}<|end|>{% endfor %}'
    conversion, spec, _ = convert_with_format(TemplateSource(no_list, {}, "test.jinja"))
    assert spec is not None and conversion.capabilities.tool_calls and not conversion.capabilities.tools
    assert "{{- if and false .Tools}}{{- end}}" in conversion.template
    messages = [{"role": "user", "content": "hi"}]
    assert oracle.render(conversion.template, messages) == "<|user|>hi<|end|>"
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    assert oracle.render(conversion.template, messages, tools) == "<|user|>hi<|end|>"
