"""A tokenizer_config.json listing named templates: `tool_use` with tools, `default` without."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ollama_fc import oracle
from ollama_fc.convert import convert, load_source
from ollama_fc.hf.reference import render as reference_render
from ollama_fc.verify.battery import CASES, case_named
from ollama_fc.verify.runner import compare, open_oracles

DEFAULT = (
    "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
TOOL_USE = (
    "{{ bos_token }}<|system|>Tools:\n{% for t in tools %}{{ t.function.name }}: {{ t.function.description }}\n{% endfor %}<|end|>\n"
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<call>{{ c.function | tojson }}</call>{% endfor %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "tokenizer_config.json"
    named = [{"name": "default", "template": DEFAULT}, {"name": "tool_use", "template": TOOL_USE}]
    path.write_text(json.dumps({"chat_template": named, "bos_token": "<s>", "eos_token": "</s>"}))
    return path


def test_the_tool_use_template_is_loaded_beside_the_default(config: Path) -> None:
    source = load_source(config)
    assert (source.template, source.tool_use) == (DEFAULT, TOOL_USE)
    assert source.chosen(tools=True) == TOOL_USE and source.chosen(tools=False) == DEFAULT


def test_the_converted_template_chooses_on_tools_as_transformers_does(config: Path) -> None:
    """With tools the prompt is the tool_use template's, without them the default's, on every
    battery case and both Ollama versions (transformers picks `tool_use` whenever tools are given)."""
    source = load_source(config)
    conversion = convert(source)
    assert conversion.capabilities.tools and conversion.capabilities.tool_calls
    with open_oracles((oracle.PINNED, oracle.LATEST)) as engines:
        _, results = compare(source, conversion.template, engines)
        assert {r.name: r.status for r in results} == {case.name: "exact" for case in CASES}
        case = case_named("tool_call_result")
        rendered = engines[oracle.PINNED].render(conversion.template, list(case.messages), list(case.tools))
    hf_messages = [
        {**m, "tool_calls": [{"type": "function", "function": c["function"]} for c in m["tool_calls"]]}
        if "tool_calls" in m
        else m
        for m in case.messages
    ]
    expected = reference_render(TOOL_USE, hf_messages, list(case.tools), special_tokens={"bos_token": "<s>"})
    assert rendered.prompt == expected.removeprefix("<s>")  # Ollama's runner adds the BOS itself
    assert "<call>" in (rendered.prompt or "")


def test_helpers_both_templates_need_are_defined_once_outside_the_choice(engine: oracle.Oracle) -> None:
    """Go allows `define` only at the top: helpers move before the `.Tools` choice, shared ones once."""
    from ollama_fc.convert import TemplateSource

    uses_json = "{% for m in messages %}{{ m.content | tojson }}{% endfor %}"
    source = TemplateSource(uses_json + "|plain", {}, "named", tool_use=uses_json + "|tools")
    conversion = convert(source)
    assert conversion.template.count('define "ofc_json_str"') == 1
    messages = [{"role": "user", "content": 'say "}}" {{ x }}'}]
    for tools in (None, list(case_named("tools").tools)):
        rendered = engine.render(conversion.template, messages, tools)
        expected = reference_render(source.chosen(bool(tools)), messages, tools, add_generation_prompt=False)
        assert rendered.error is None, rendered.error
        assert rendered.prompt == expected
