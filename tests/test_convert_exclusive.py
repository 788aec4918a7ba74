"""Sibling `if`s on tests that cannot both hold are one if/elif chain in the Go template
(ollama_fc/convert/exclusive.py): rendered against the Hugging Face reference through both Ollama
versions, and left apart wherever joining them could change what renders."""

from __future__ import annotations

import pytest
from jinja2 import nodes

from ollama_fc import jinja
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.exclusive import join_exclusive_ifs
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders

TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}

#: DeepSeek's shape: user, assistant without content, assistant with content, tool
ROLE_ROW = (
    "{%- set ns = namespace(tool=false) %}{%- for message in messages %}"
    "{%- if message['role'] == 'user' %}{%- set ns.tool = false %}<U>{{ message['content'] }}{%- endif %}"
    "{%- if message['role'] == 'assistant' and message['content'] is none %}"
    "{%- for call in message['tool_calls'] %}<C>{{ call['function']['name'] }}{%- endfor %}{%- endif %}"
    "{%- if message['role'] == 'assistant' and message['content'] is not none %}"
    "{%- if ns.tool %}<E>{%- endif %}<A>{{ message['content'] }}{%- set ns.tool = false %}{%- endif %}"
    "{%- if message.role == 'tool' %}{%- set ns.tool = true %}<T>{{ message.content }}{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}<A>{%- endif %}"
)

#: rows that must stay apart: each pair of tests may both hold, or a branch changes what the next reads
KEPT_APART = {
    "same role twice": (
        "{%- for m in messages %}{%- if m.role == 'user' %}[u]{%- endif %}"
        "{%- if m.role == 'user' and m.content %}{{ m.content }}{%- endif %}{%- endfor %}"
    ),
    "a branch reassigns the message": (
        "{%- for m in messages %}{%- if m.role == 'user' %}{%- set m = {'role': 'tool', 'content': 'x'} %}"
        "{%- endif %}{%- if m.role == 'tool' %}[t]{{ m.content }}{%- endif %}{%- endfor %}"
    ),
    "the first has an else": (
        "{%- for m in messages %}{%- if m.role == 'user' %}[u]{%- else %}[other]{%- endif %}"
        "{%- if m.role == 'assistant' %}[a]{{ m.content }}{%- endif %}{%- endfor %}"
    ),
    "the second has an else": (
        "{%- for m in messages %}{%- if m.role == 'user' %}[u]{%- endif %}"
        "{%- if m.role == 'assistant' %}[a]{%- else %}[not a]{%- endif %}{%- endfor %}"
    ),
    "a branch changes the dict in place": (
        "{%- for m in messages %}{%- if m.role == 'user' %}{%- set _ = m.update({'role': 'tool'}) %}{%- endif %}"
        "{%- if m.role == 'tool' %}[t]{%- endif %}{%- endfor %}"
    ),
}

CALL = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
CONVERSATION = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u1"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "u2"},
]


def hf_messages(messages: list[dict]) -> list[dict]:
    """As transformers users pass them: a call's missing text is None."""
    return [{**m, "content": None} if m.get("tool_calls") and not m["content"] else m for m in messages]


def elifs(template: str) -> int:
    tree = join_exclusive_ifs(jinja.parse(template))
    return sum(len(node.elif_) for node in tree.find_all(nodes.If))


def test_a_row_of_role_tests_is_one_chain() -> None:
    assert elifs(ROLE_ROW) == 3
    template = convert(TemplateSource(ROLE_ROW, TOKENS, "row")).template
    # each later test sits in the `else` of the one before (`else if`, or `else` then `if`)
    assert template.count("{{else if ") + template.count("{{else}}{{if ") >= 3


@pytest.mark.parametrize("end", range(2, len(CONVERSATION) + 1))
def test_the_chain_renders_what_transformers_renders(end: int, engines: dict) -> None:
    messages = CONVERSATION[:end]
    if messages[-1]["role"] == "assistant":
        messages = [*messages, {"role": "user", "content": "next"}]
    conversion = convert(TemplateSource(ROLE_ROW, TOKENS, "row"))
    expected = reference_render(ROLE_ROW, hf_messages(messages), special_tokens=TOKENS)
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}


@pytest.mark.parametrize("name", sorted(KEPT_APART))
def test_tests_that_may_both_hold_or_may_change_stay_apart(name: str) -> None:
    assert elifs(KEPT_APART[name]) == 0


@pytest.mark.parametrize("name", ["same role twice", "the first has an else", "the second has an else"])
def test_rows_kept_apart_render_what_transformers_renders(name: str, engines: dict) -> None:
    template = KEPT_APART[name]
    messages = [m for m in CONVERSATION if not m.get("tool_calls")]
    conversion = convert(TemplateSource(template, TOKENS, name))
    expected = reference_render(template, messages, special_tokens=TOKENS)
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}
