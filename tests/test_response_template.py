"""A model's declarative `response_template` (transformers >= 5.13): read as the model's format,
and written from a learned one, checked against transformers' own `parse_response`.

The chat templates are real ones from the corpus next to the repository (Qwen2.5's Hermes JSON,
Qwen3-Coder's XML parameters, Gemma 4's `<|"|>`-quoted values). For each, the learned format is
written as a response_template; transformers parses sample replies with it, and our parser reads
the same replies with the learned format and with the format read back from the template. All
three must give the same calls and content.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ollama_fc.cli import main
from ollama_fc.convert.sources import load_source
from ollama_fc.learn import FormatNotLearned, learn_format
from ollama_fc.learn.response_template import from_response_template, start_anchor, to_response_template
from ollama_fc.parsers import parse_tool_calls
from tests.shared_data import shared_path

chat_parsing = pytest.importorskip("transformers.utils.chat_parsing")

REPLIES: dict[str, list[str]] = {
    "qwen2.5-7b-instruct.jinja": [
        'I\'ll check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>',
        "No tool is needed: it is sunny.",
    ],
    "qwen3-coder-30b-a3b-instruct.jinja": [
        "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=get_time>\n<parameter=zone>\nEurope/Paris\n</parameter>\n</function>\n</tool_call>",
    ],
    "gemma-4-e2b-it.jinja": [
        '<|tool_call>call:get_weather{city:<|"|>Paris, France<|"|>,days:3}<tool_call|>',
        'Checking both.<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>'
        '<|tool_call>call:get_time{zone:<|"|>UTC<|"|>}<tool_call|>',
    ],
}


def template_path(name: str) -> Path:
    return shared_path("corpus", "templates", name)


def theirs(reply: str, template: dict[str, Any]) -> tuple[list[tuple[str, Any]], str]:
    message = chat_parsing.parse_response(reply, template, prefix="")
    calls = [(call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls") or []]
    return calls, message.get("content") or ""


def ours(reply: str, format_name: str) -> tuple[list[tuple[str, Any]], str]:
    result = parse_tool_calls(reply, format=format_name)
    return [(call.name, call.arguments) for call in result.tool_calls], result.content


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_learned_format_written_as_a_response_template_parses_as_ours_does(name: str) -> None:
    source = load_source(template_path(name))
    learned = learn_format(source)
    template = to_response_template(learned, start_anchor(source))
    read_back = from_response_template(template)
    for reply in REPLIES[name]:
        their_calls, their_content = theirs(reply, template)
        for format_name in (learned.format_name(), read_back.format_name()):
            our_calls, our_content = ours(reply, format_name)
            assert our_calls == their_calls, reply
            assert our_content.split() == their_content.split(), reply
        assert their_calls or reply == their_content  # a reply without calls stays whole


def test_the_start_anchor_is_the_turn_the_chat_template_opens() -> None:
    assert start_anchor(load_source(template_path("qwen2.5-7b-instruct.jinja"))) == "<|im_start|>assistant\n"
    assert start_anchor(load_source(template_path("gemma-4-e2b-it.jinja"))) == "<|turn>model\n"


# The Qwen-family response_template as transformers publishes it (its fallback for qwen2/qwen3
# models that ship none), and a bare-JSON one whose call is not between texts of its own.
PUBLISHED_QWEN = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"], "content": "text"},
    },
}
BARE_JSON = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "close": "<|im_end|>",
            "content": "json",
            "transform": [{"type": "function", "function": "{content}"}],
        }
    },
}


def test_a_published_response_template_is_read_as_the_models_format() -> None:
    learned = from_response_template(PUBLISHED_QWEN)
    reply = 'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>'
    assert ours(reply, learned.format_name()) == ([("get_weather", {"city": "Lima"})], "Let me look.")
    assert theirs(reply, PUBLISHED_QWEN)[0] == [("get_weather", {"city": "Lima"})]


def test_a_response_template_without_a_learned_form_says_which_part() -> None:
    with pytest.raises(FormatNotLearned, match="tool_calls field has no open_pattern"):
        from_response_template(BARE_JSON)
    with pytest.raises(FormatNotLearned, match="no tool_calls field"):
        from_response_template({"fields": {"content": {"content": "text"}}})


def test_a_response_template_outranks_the_format_learned_from_the_chat_template(tmp_path: Path) -> None:
    """The chat template writes Qwen3-Coder's XML; the model's authors declare Hermes JSON in its
    tokenizer_config.json: the declared format is the one the model is read with."""
    chat_template = template_path("qwen3-coder-30b-a3b-instruct.jinja").read_text(encoding="utf-8")
    config = {"chat_template": chat_template, "response_template": PUBLISHED_QWEN}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert learn_format(tmp_path) == learn_format(tmp_path / "tokenizer_config.json")
    learned = learn_format(tmp_path)
    assert learned.style == "json" and learned.call_open == "<tool_call>"
    del config["response_template"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert learn_format(tmp_path).style == "tagged"


def test_an_unreadable_response_template_warns_and_the_chat_template_is_learned(tmp_path: Path) -> None:
    chat_template = template_path("qwen2.5-7b-instruct.jinja").read_text(encoding="utf-8")
    config = {"chat_template": chat_template, "response_template": BARE_JSON}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.warns(UserWarning, match="response_template not read"):
        assert learn_format(tmp_path).style == "json"


def test_cli_writes_a_learned_format_as_a_response_template() -> None:
    result = CliRunner().invoke(
        main, ["formats", "learn", "--response-template", str(template_path("gemma-4-e2b-it.jinja"))]
    )
    assert result.exit_code == 0, result.output
    template = json.loads(result.output)
    assert template["start_anchor"] == "<|turn>model\n"
    reply = '<|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|>'
    assert theirs(reply, template)[0] == [("get_weather", {"city": "Rome"})]
