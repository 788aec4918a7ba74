"""Where Hugging Face's inputs and Ollama's data model differ in meaning, the converted template
still renders what transformers renders: checked through Ollama's engine (both oracle versions)
against the reference renderer, on battery conversations in each side's own shape."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ollama_fc.convert import TemplateSource, convert
from ollama_fc.hf.reference import render as reference_render
from ollama_fc.verify.battery import case_named
from tests.renders import ollama_renders
from tests.shared_data import shared_path


@pytest.mark.parametrize(
    "template",
    [
        "{{ tools | tojson }}|{% if tools is none %}none{% endif %}",
        "{% set t = tools %}{{ t | tojson }}",
        "{{ tools | tojson(indent=2) }}",
    ],
)
@pytest.mark.parametrize("case_name", ["single_turn", "tools"])
def test_absent_tools_print_as_json_null(template: str, case_name: str, engines: dict) -> None:
    """transformers passes `tools=None` when there are none; `tojson` writes `null`, not `[]`."""
    case = case_named(case_name)
    tools = list(case.tools) or None
    conversion = convert(TemplateSource(template, {}, "tools-null"))
    expected = reference_render(template, list(case.messages), tools)
    assert ollama_renders(conversion.template, list(case.messages), tools, engines) == {expected}


def test_capabilities_are_what_the_template_renders() -> None:
    """phi4-mini renders tool results under its `tools` role; Gemma 2 refuses a system message."""
    phi4 = convert(shared_path("seeds", "templates", "phi4-mini-functools.jinja")).capabilities
    assert phi4.tools and phi4.tool_calls and phi4.tool_results
    gemma2 = convert(shared_path("corpus", "templates", "gemma-2-2b-it.jinja")).capabilities
    assert not gemma2.system_role and not gemma2.tools


PREFILL_TEMPLATES = {
    "printed": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    "trimmed": "{% for m in messages %}[{{ m.role }}]{{ m.content | trim }}</s>{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}",
    "concatenated": "{% for m in messages %}{{ '<' + m.role + '>' + m.content.strip() + '<end>' }}{% endfor %}",
    "variable": "{% for m in messages %}{% set c = m.content %}{% if '</think>' in c %}{% set c = c.split('</think>')[-1] %}{% endif %}"
    "<{{ m.role }}>{{ c }}<end>{% endfor %}",
    "macro": "{% macro turn(role, text) %}<{{ role }}>{{ text }}<end>{% endmacro %}{% for m in messages %}{{ turn(m.role, m.content) }}{% endfor %}",
    "last_message": "{% for m in messages[:-1] %}<{{ m.role }}>{{ m.content }}<end>{% endfor %}<{{ messages[-1].role }}>{{ messages[-1].content }}<end>",
    "set_block": "{% for m in messages %}{% set turn %}<{{ m.role }}>{{ m.content }}{% endset %}{{ turn }}<end>{% endfor %}",
    "macro_value": "{% macro text(c) %}{% if c is string %}{{ c }}{% endif %}{% endmacro %}"
    "{% for m in messages %}{% set c = text(m.content) %}<{{ m.role }}>{{ c | trim }}<end>{% endfor %}",
    "namespace": "{% for m in messages %}{% set ns = namespace(val='') %}{% set ns.val = ns.val + m.content %}<{{ m.role }}>{{ ns.val }}<end>{% endfor %}",
    "macro_parameter_split_into_a_namespace": "{% macro visible(text) %}{% set ns = namespace(result='') %}{% for part in text.split('</think>') %}"
    "{% set ns.result = ns.result + part %}{% endfor %}{{ ns.result | trim }}{% endmacro %}{% for m in messages %}<{{ m.role }}>{{ visible(m.content) }}<end>{% endfor %}",
    "tool_calls_after_text": "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% for c in m.tool_calls or [] %}<call>{{ c.function.name }}</call>{% endfor %}<end>{% endfor %}",
}
PREFILLS = ["Soft rain on the roof,", "  both sides \n", "trailing \n", "", "Hi", "x</think>y"]


@pytest.mark.parametrize("name", sorted(PREFILL_TEMPLATES))
@pytest.mark.parametrize("final", PREFILLS)
def test_assistant_prefill_is_continued_like_continue_final_message(name: str, final: str, engines: dict) -> None:
    """A final assistant message is left open exactly where transformers' continue_final_message cuts."""
    from ollama_fc.hf.reference import ReferenceRenderError

    template = PREFILL_TEMPLATES[name]
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": final}]
    try:
        expected = reference_render(template, messages, add_generation_prompt=False, continue_final_message=True)
    except ReferenceRenderError:
        pytest.skip("the template drops this text, so transformers refuses to continue it")
    conversion = convert(TemplateSource(template, {}, name))
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}
    # the same template still closes earlier turns and opens a new one after a user message
    answered = messages[:1]
    assert ollama_renders(conversion.template, answered, None, engines) == {reference_render(template, answered)}


@pytest.mark.parametrize("final", ["Soft rain on the roof,", "  both sides \n", "x</think>y"])
def test_message_texts_gathered_in_a_list_are_printed_and_the_prefill_cut_in_it(final: str, engines: dict) -> None:
    """Solar Open: system texts gathered in a namespace list, printed later; a final assistant
    text stored there too is continued where transformers cuts (it occurs once here)."""
    template = (
        "{% set ns = namespace(texts=[]) %}{% for m in messages %}{% if m.role == 'system' %}"
        "{% set ns.texts = ns.texts + [m.content] %}{% endif %}{% endfor %}"
        "{% if ns.texts %}<sys>{% for t in ns.texts %}{{ t }};{% endfor %}</sys>{% endif %}"
        "{% set log = namespace(turns=[]) %}{% for m in messages %}{% set log.turns = log.turns + ['<' + m.role + '>', m.content] %}{% endfor %}"
        "{% for t in log.turns %}{{ t }}|{% endfor %}"
    )
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": final},
    ]
    conversion = convert(TemplateSource(template, {}, "listed"))
    assert any(w.construct == "a message's text stored in a list" for w in conversion.warnings)
    expected = reference_render(template, messages, add_generation_prompt=False, continue_final_message=True)
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}
    answered = messages[:2]
    assert ollama_renders(conversion.template, answered, None, engines) == {reference_render(template, answered)}


@pytest.mark.parametrize("case_name", ["single_turn", "system_prompt"])
def test_a_message_that_may_be_none_is_tested_at_run_time(case_name: str, engines: dict) -> None:
    """`set x = none` then a message on some paths: `x and x.content` must not read a missing message."""
    template = (
        "{% macro show(s) %}{% if s and s.content %}[{{ s.content }}]{% else %}[none]{% endif %}{% endmacro %}"
        "{% set sm = none %}{% if messages[0].role == 'system' %}{% set sm = messages[0] %}{% endif %}"
        "{{ show(sm) }}{% if sm %}!{% endif %}"
    )
    case = case_named(case_name)
    expected = reference_render(template, list(case.messages))
    conversion = convert(TemplateSource(template, {}, "maybe-none"))
    assert ollama_renders(conversion.template, list(case.messages), None, engines) == {expected}


@pytest.mark.parametrize("tool_role", ["tool", "tools", "function"])
def test_a_role_printed_as_is_matches_the_role_the_reference_is_given(tool_role: str, engines: dict) -> None:
    """Ollama's `tool` prints as the role name the template compares with, the one HF callers send it."""
    from ollama_fc.verify.runner import compare

    template = (
        "{% for m in messages %}<|{{ m.role }}|>{% if m.role == '" + tool_role + "' %}[result]{% endif %}"
        "{{ m.content }}{% for c in m.tool_calls or [] %}{{ c.function.name }}{% endfor %}<|end|>{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "generic-role"))
    shape, results = compare(TemplateSource(template, {}, "generic-role"), conversion.template, engines)
    assert shape.tool_role == tool_role
    tool_cases = [r for r in results if "tool_results" in r.needs]
    assert tool_cases and all(r.status == "exact" for r in tool_cases), [(r.name, r.detail) for r in tool_cases]


def test_conversion_is_the_same_on_every_run() -> None:
    """Checked-in Modelfiles must not change from one run to the next: nothing in the output may
    follow Python's per-process string hashing (set order)."""
    template = (
        "{% set ns = namespace(a='', b='', c='', d='') %}{% for m in messages %}{% set ns.a = m.content %}"
        "{% set ns.b = m.content %}{% set ns.c = m.content %}{% set ns.d = m.content %}{% endfor %}{{ ns.a }}{{ ns.b }}{{ ns.c }}{{ ns.d }}"
    )
    script = "import sys; from ollama_fc.convert import TemplateSource, convert; print(convert(TemplateSource(sys.argv[1], {}, 'x')).template)"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, template],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }
    assert len(outputs) == 1
