"""Shape probing finds each seed template's input contract, as documented for those templates."""

from __future__ import annotations

import json

import pytest

from ollama_fc.hf.shapes import Shape, probe, role_names, to_hf
from ollama_fc.verify.battery import CASES, case_named, render_case
from tests.shared_data import seed_template, shared_path


def test_minimax_wants_parts_content_and_function_role_and_drops_calls() -> None:
    shape = probe(seed_template("minimax-text-01.jinja"))
    assert shape.content == "parts"
    assert shape.tool_role == "function"
    assert shape.tools and shape.tool_results and shape.system_role
    assert not shape.tool_calls  # it never renders an assistant's earlier tool calls


def test_minimax_renders_a_tool_result_as_a_function_response() -> None:
    template = seed_template("minimax-text-01.jinja")
    prompt = render_case(template, case_named("tool_call_result"), probe(template))
    assert (
        "<beginning_of_sentence>system function_response=functions\n"
        '{"name": "get_weather", "response": {"temperature": 18, "condition": "sunny"}}<end_of_sentence>\n'
    ) in prompt
    assert prompt.endswith("<beginning_of_sentence>ai name=assistant\n")


def test_phi4_mini_names_tool_results_tools() -> None:
    template = seed_template("phi4-mini-functools.jinja")
    assert "tools" in role_names(template)
    shape = probe(template)
    assert shape.tool_role == "tools"
    assert shape.content == "string" and shape.arguments == "object"
    prompt = render_case(template, case_named("tool_call_result"), shape)
    assert '<|tools|>{"result": {"temperature": 18, "condition": "sunny"}}<|end|>' in prompt
    # arguments are printed as a Python dict, not JSON
    assert "{'location': 'Paris', 'unit': 'celsius'}" in prompt


@pytest.mark.parametrize("name", ["qwen2.5-hermes.jinja", "gemma3-tools.jinja"])
def test_hermes_style_seeds_render_everything_in_the_standard_shape(name: str) -> None:
    shape = probe(seed_template(name))
    assert shape == Shape(
        empty_call_content="none",  # a text-less call renders with content None, as OpenAI sends it
        content="string",
        tool_role="tool",
        arguments="object",
        call_wrapper="function",
        system_role=True,
        tools=True,
        tool_calls=True,
        tool_results=True,
        parallel_calls=True,
    )


def test_typhoon2_does_not_render_tool_calls() -> None:
    shape = probe(seed_template("typhoon2-llama3.1-function-list.jinja"))
    assert shape.tools and shape.tool_results and not shape.tool_calls


def test_string_arguments_and_flat_calls_are_detected() -> None:
    string_args = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{{ c.function.name + ' ' + c.function.arguments }}{% endfor %}{% endfor %}"
    )
    assert probe(string_args).arguments == "string"
    flat = "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.name }}{% endfor %}{% endfor %}"
    assert probe(flat).call_wrapper == "flat"


def test_system_needing_parts_makes_parts_content() -> None:
    # Gemma 3's template takes string user content but indexes the system message's parts
    template = shared_path("corpus", "templates", "gguf-gemma3-1b.jinja").read_text(encoding="utf-8")
    assert probe(template).content == "parts"


def test_to_hf_rewrites_the_ollama_shape() -> None:
    shape = Shape(content="parts", tool_role="function", arguments="string", call_wrapper="flat")
    messages = to_hf(case_named("tool_call_result").messages, shape)
    assert messages[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "What's the weather like in Paris today?"}],
    }
    call = messages[1]["tool_calls"][0]
    assert call == {"id": "call0001a", "name": "get_weather", "arguments": '{"location": "Paris", "unit": "celsius"}'}
    assert json.loads(call["arguments"]) == {"location": "Paris", "unit": "celsius"}
    assert messages[2]["role"] == "function"
    assert messages[2]["name"] == messages[2]["tool_name"] == "get_weather"
    assert messages[2]["tool_call_id"] == "call0001a"


def test_prefill_is_continued_without_a_generation_prompt() -> None:
    template = seed_template("qwen2.5-hermes.jinja")
    prompt = render_case(template, case_named("prefill"), probe(template))
    assert prompt.endswith(
        "<|im_start|>user\nWrite a haiku about rain.<|im_end|>\n<|im_start|>assistant\nSoft rain on the roof,"
    )
    answered = render_case(template, case_named("single_turn"), probe(template))
    assert answered.endswith("<|im_start|>user\nHello! How are you?<|im_end|>\n<|im_start|>assistant\n")


def test_battery_covers_the_issue_list() -> None:
    names = {case.name for case in CASES}
    assert {
        "single_turn",
        "system_prompt",
        "multi_turn",
        "tools",
        "tool_call_result",
        "parallel_calls",
        "tool_call_with_text",
        "prefill",
        "unicode",
        "special_chars",
        "surrounding_whitespace",
        "empty_content",
    } <= names
    properties = (
        case_named("tools").tools[0]["function"]["parameters"]["properties"]
        | case_named("tools").tools[1]["function"]["parameters"]["properties"]
    )
    kinds = {prop["type"] for prop in properties.values()} | {"enum" for prop in properties.values() if "enum" in prop}
    assert {"integer", "array", "object", "enum"} <= kinds
    specials = " ".join(m["content"] for m in case_named("special_chars").messages)
    for needle in ('"', "\\", "<", ">", "&", "{{", "}}"):
        assert needle in specials


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (
            "{% for m in messages %}{% if m.content is none %}{{ m.tool_calls[0].function.name }}{% endif %}{% endfor %}",
            "none",
        ),
        ("{% for m in messages %}{% if m.content is not none %}[{{ m.content }}]{% endif %}{% endfor %}", "none"),
        ("{% for m in messages %}[{{ m.content }}]{% endfor %}", "string"),  # None would show as "None"
        ("{% for m in messages %}[{{ m.content | tojson }}]{% endfor %}", "string"),  # or as null
        ("{% for m in messages %}[{{ m.content | trim }}]{% endfor %}", "string"),
    ],
)
def test_a_text_less_call_gets_content_none_where_the_template_takes_it(template: str, expected: str) -> None:
    assert probe(template).empty_call_content == expected
