"""Where Hugging Face's inputs and Ollama's data model differ in meaning, the converted template
still renders what transformers renders: checked through Ollama's engine (both oracle versions)
against the reference renderer, on battery conversations in each side's own shape."""

from __future__ import annotations

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.verify.battery import case_named
from ollama_fc.verify.reference import render as reference_render
from shared_data import shared_path


@pytest.fixture(scope="module")
def engines():
    with oracle.Oracle(oracle.PINNED) as pinned, oracle.Oracle(oracle.LATEST) as latest:
        yield {oracle.PINNED: pinned, oracle.LATEST: latest}


def ollama_renders(template: str, messages: list, tools: list | None, engines: dict) -> set[str]:
    """The prompt each Ollama version renders (one element when they agree)."""
    prompts = set()
    for version, engine in engines.items():
        rendered = engine.render(template, messages, tools)
        assert rendered.error is None, f"{version}: {rendered.error}"
        prompts.add(rendered.prompt)
    return prompts


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
