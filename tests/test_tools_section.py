"""A tools section for a template that has none (`--tools-format`): what the extended template
shows the model, that the client parses what it asks for, and that the converted Go renders
exactly what the extended Jinja renders, on both Ollama versions."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc.convert.sources import TemplateSource
from ollama_fc.errors import SourceError
from ollama_fc.hf.reference import render
from ollama_fc.markers import read_marker
from ollama_fc.parsers import parse_tool_calls
from ollama_fc.tools_section import TOOLS_FORMATS, convert_with_tools_section, extend, tool_capable
from ollama_fc.verify.runner import compare
from tests.shared_data import shared_path

#: SmolLM2-135M-Instruct's GGUF special tokens (bos is <|im_start|>, its tokenizer adds none)
SMOLLM2_TOKENS = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
QUESTION = {"role": "user", "content": "What's the weather like in Paris?"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
ROUND = [
    SYSTEM,
    QUESTION,
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "content": '{"temperature": 21}'},
    {"role": "assistant", "content": "It is 21 degrees."},
]

#: what each format shows the model an earlier call as, and the tool result as it is sent
WRITTEN = {
    "hermes": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '<tool_response>\n{"temperature": 21}\n</tool_response>',
    ),
    "llama3_json": ('{"name": "get_weather", "parameters": {"city": "Paris"}}', '{"temperature": 21}'),
    "pythonic": ('[get_weather(city="Paris")]', '{"temperature": 21}'),
    "mistral": (
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        '[TOOL_RESULTS]{"temperature": 21}[/TOOL_RESULTS]',
    ),
}


@pytest.fixture(scope="module")
def smollm2() -> TemplateSource:
    path = shared_path("corpus", "templates", "gguf-smollm2-135m.jinja")
    return TemplateSource(path.read_text(encoding="utf-8"), dict(SMOLLM2_TOKENS), origin="SmolLM2-135M-Instruct")


def _render(source: TemplateSource, messages: list[dict[str, Any]], tools: Any = None) -> str:
    return render(source.template, messages, tools, add_generation_prompt=True, special_tokens=source.special_tokens)


def test_every_tools_format_is_a_registry_format() -> None:
    from ollama_fc.parsers.registry import FORMATS

    assert set(WRITTEN) == set(TOOLS_FORMATS)
    assert set(TOOLS_FORMATS) <= set(FORMATS)


def test_tool_capable_tells_a_template_with_tools_from_one_without(smollm2: TemplateSource) -> None:
    qwen = TemplateSource(shared_path("seeds", "templates", "qwen2.5-hermes.jinja").read_text(encoding="utf-8"))
    assert not tool_capable(smollm2)
    assert tool_capable(qwen)


@pytest.mark.parametrize("tools_format", TOOLS_FORMATS)
def test_without_tools_the_extended_template_renders_as_the_model_s_own(
    smollm2: TemplateSource, tools_format: str
) -> None:
    extended = extend(smollm2, tools_format)
    for messages in ([QUESTION], [SYSTEM, QUESTION], ROUND[:2] + [{"role": "assistant", "content": "Hi"}, QUESTION]):
        assert _render(extended, messages) == _render(smollm2, messages)


@pytest.mark.parametrize("tools_format", TOOLS_FORMATS)
def test_the_tools_are_listed_in_the_system_turn_and_the_round_in_the_format(
    smollm2: TemplateSource, tools_format: str
) -> None:
    prompt = _render(extend(smollm2, tools_format), ROUND, [WEATHER])
    system_turn = prompt.split("<|im_end|>")[0]
    assert system_turn.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n")
    assert '"name": "get_weather"' in system_turn and "The current weather in a city" in system_turn
    assert prompt.count("get_weather") == 2  # listed once, called once
    call, result = WRITTEN[tools_format]
    assert f"<|im_start|>assistant\n{call}<|im_end|>\n" in prompt
    assert f"<|im_start|>user\n{result}<|im_end|>\n" in prompt


@pytest.mark.parametrize("tools_format", TOOLS_FORMATS)
def test_the_client_parses_the_calls_the_section_shows_the_model(tools_format: str) -> None:
    """What the prompt teaches the model to write is what the client reads back in that format."""
    call, _ = WRITTEN[tools_format]
    parsed = parse_tool_calls(call, format=tools_format, tools=[WEATHER])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert parsed.content == ""


def test_without_a_system_message_the_tools_lead_the_first_message(smollm2: TemplateSource) -> None:
    prompt = _render(extend(smollm2, "hermes"), [QUESTION], [WEATHER])
    default_system = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    )
    assert prompt.startswith(default_system + "<|im_start|>user\n# Tools\n")
    assert prompt.endswith("</tool_call>\n\nWhat's the weather like in Paris?<|im_end|>\n<|im_start|>assistant\n")


def test_the_format_is_recorded_as_a_normal_build_records_it(smollm2: TemplateSource) -> None:
    conversion = convert_with_tools_section(smollm2, "hermes")
    assert read_marker(conversion.template) == ("auto", "hermes")
    assert conversion.capabilities.tools and conversion.capabilities.tool_calls
    assert conversion.tool_call_tag == "<tool_call>"
    assert "<|im_end|>" in conversion.parameters["stop"]


def test_a_template_with_tools_is_refused_in_one_line() -> None:
    qwen = TemplateSource(
        shared_path("seeds", "templates", "qwen2.5-hermes.jinja").read_text(encoding="utf-8"), origin="qwen"
    )
    with pytest.raises(SourceError, match=r"^qwen: the chat template has tools of its own; .*build without it$"):
        convert_with_tools_section(qwen, "hermes")


def test_an_unknown_format_is_one_line_naming_the_formats(smollm2: TemplateSource) -> None:
    with pytest.raises(SourceError, match=r"give --tools-format one of: hermes, llama3_json, pythonic, mistral$"):
        convert_with_tools_section(smollm2, "xml")


def test_a_template_the_rewrite_cannot_follow_is_one_line() -> None:
    """Content read as a list of parts: the section cannot be added there; said, not guessed."""
    parts = TemplateSource(
        "{% for m in messages %}<{{ m.role }}>{% for p in m.content %}{{ p.text }}{% endfor %}{% endfor %}",
        origin="parts.jinja",
    )
    with pytest.raises(SourceError, match=r"^parts\.jinja: cannot add a hermes tools section to this chat template \("):
        extend(parts, "hermes")


@pytest.mark.parametrize("tools_format", TOOLS_FORMATS)
def test_the_converted_template_renders_exactly_what_the_extended_jinja_renders(
    smollm2: TemplateSource, tools_format: str, engines: dict[str, Any]
) -> None:
    """The battery (tools, calls, parallel calls, results, unicode...) on both Ollama versions."""
    extended = extend(smollm2, tools_format)
    conversion = convert_with_tools_section(smollm2, tools_format)
    _, results = compare(extended, conversion.template, engines)
    rendered = [case for case in results if case.status != "cannot-render"]
    assert len(rendered) >= 10
    assert {case.name: case.detail for case in rendered if case.status != "exact"} == {}


def _cli(*args: str) -> Any:
    from click.testing import CliRunner

    from ollama_fc import cli

    return CliRunner().invoke(cli.main, list(args))


def _one_line_error(result: Any) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ollama-fc: "), result.stderr
    return str(lines[0])


@pytest.fixture
def smollm2_jinja(tmp_path: Any) -> str:
    path = tmp_path / "smollm2.jinja"
    path.write_text(shared_path("corpus", "templates", "gguf-smollm2-135m.jinja").read_text(encoding="utf-8"))
    return str(path)


def test_convert_says_in_one_line_that_a_template_has_no_tools(smollm2_jinja: str) -> None:
    result = _cli("convert", smollm2_jinja)
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {smollm2_jinja}: its chat template has no tools (it lists no tools and writes no calls), so "
        "the model sees none; to try it with tools, add a tools section with --tools-format FORMAT "
        "(hermes, llama3_json, pythonic, mistral), e.g. --tools-format hermes"
    ]
    assert "format=" not in result.stdout.split("\n")[1]


@pytest.mark.parametrize("tools_format", TOOLS_FORMATS)
def test_convert_with_a_tools_format_writes_the_section_and_records_the_format(
    smollm2_jinja: str, tools_format: str
) -> None:
    result = _cli("convert", smollm2_jinja, "--tools-format", tools_format)
    assert result.exit_code == 0, result.output
    assert f"{{{{/* ollama-fc family=auto format={tools_format} */}}}}" in result.stdout
    assert "PARSER passthrough" in result.stdout
    assert "no tools" not in result.stderr


def test_tools_format_is_refused_in_one_line_where_the_template_has_tools(tmp_path: Any) -> None:
    qwen = tmp_path / "qwen.jinja"
    qwen.write_text(shared_path("seeds", "templates", "qwen2.5-hermes.jinja").read_text(encoding="utf-8"))
    line = _one_line_error(_cli("convert", str(qwen), "--tools-format", "hermes"))
    assert "has tools of its own" in line
    line = _one_line_error(_cli("build", "qwen2.5", "--from", str(qwen), "--tools-format", "hermes"))
    assert line == "ollama-fc: family qwen2.5 has its own tools section; --tools-format is for a template without one"


def test_where_the_template_drops_the_system_message_the_tools_lead_the_first_message_after_it(
    engines: dict[str, Any],
) -> None:
    """Phi-3's template prints no system message: the tools then lead the user's text, once."""
    phi3 = TemplateSource(
        shared_path("corpus", "templates", "gguf-phi3-14b.jinja").read_text(encoding="utf-8"),
        {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
    )
    extended = extend(phi3, "hermes")
    for messages in ([QUESTION], [SYSTEM, QUESTION]):
        prompt = _render(extended, messages, [WEATHER])
        assert prompt.startswith("<|user|>\n# Tools\n")
        assert prompt.endswith("</tool_call>\n\nWhat's the weather like in Paris?<|end|>\n<|assistant|>\n")
        assert prompt.count('"name": "get_weather"') == 1
    _, results = compare(extended, convert_with_tools_section(phi3, "hermes").template, engines)
    assert {case.name: case.detail for case in results if case.status not in ("exact", "cannot-render")} == {}
