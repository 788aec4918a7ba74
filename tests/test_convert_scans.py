"""The string scans a conversion emits (strip from either end, title case, substring search,
JSON escaping) render what transformers renders on the texts where a scan is easiest to get
wrong: empty, all-space, Unicode spaces and multi-byte text at either end, needles that overlap
or sit at the very end. Checked through Ollama's engine (both oracle versions) against the
reference renderer; every edge text is one message of a single conversation."""

from __future__ import annotations

import pytest

from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.go.textops import PY_WHITESPACE
from ollama_fc.hf.reference import ReferenceRenderError
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders

#: every character str.strip() removes that is more than one byte in UTF-8
WIDE_SPACES = [char for char in PY_WHITESPACE if ord(char) >= 0x80]

EDGE_TEXTS = [
    "",
    " ",
    " \t\n\r\x0b\x0c ",
    "\x1c\x1d\x1e\x1f",
    "a",
    " a ",
    "日本語",
    "  日本語\u3000",
    "é",
    "\u00a0é\u00a0",
    "😀",
    " 😀 x 😀 ",
    "\u2019quoted\u2019",  # a lead byte (0xE2) that Unicode spaces share, ending the scan
    "dash\u2014",
    "\u2026",
    "\u00a0\u00a0",
    "x</think>y",
    "</think>",
    "a</think>b</think>c",
    "<</think>>",
    'it\'s "q" <b>&amp;',
    "aaaa",
    "abab",
    "ctrl\x01\x1f\x7f\tend",
    "back\\slash\n",
    "\u00c9COLE \u00e9t\u00e9-\u00e9t\u00e9 the-quick brown(fox)",
    # longer than the pieces a search tests with `html`, needles across their ends
    "x" * 62 + "</think>" + "y" * 70,
    "'" * 64 + "</think>" + '"' * 64,
    "<" * 130 + "</think>",
    'it\'s a "test" ' * 10 + "</think>" + "more & more " * 8 + "</think>end",
    "\u00e9" * 40 + "</think>" + "ab" * 40,
    "</think>" * 20,
    # longer than the largest pieces, needles across their ends and after clean pieces
    "a" * 1020 + "</think>" + "b" * 1000,
    "x" * 1023 + "</think>" + "y" * 64,
    "'" * 1030 + "</think>" + "z" * 3000 + "</think>",
    "q" * 3000 + "<" + "w" * 1100 + "</think>",
    "e" * 2048 + "</think>",
    "r" * 2100,
    # quotes (which `html` escapes) everywhere: skipped only where no `<`, `>`, `&` or NUL is
    '{"a": "b", \'c\': 1}' * 10 + "</think>" + '"' * 70,
    '"' * 63 + "</think>",
    '"' * 1100 + "&" + "'" * 10 + "</think>" + '"',
    "\x00" + '"' * 70 + "</think>",
    "a>b" + '"' * 80 + "</think>",
    '"' * 2000,
    # stripped runs longer than the bytes a strip scans before it may break, across their end
    " " * 20 + "a b" + "\n" * 20,
    " " * 7 + "\u3000" + "x" + "\u3000" + " " * 7,
    " " * 6 + "\u3000" + "x" + "\u3000" + " " * 6,
    "\u3000" * 9 + "\u00e9" + "\u3000" * 9,
    " " * 8 + "y" + " " * 8,
    " " * 9,
    "\t" * 30,
]
for space in WIDE_SPACES:
    EDGE_TEXTS += [space, space + "a", "a" + space, space + "日本" + space, "é" + space + space]

TEMPLATES = {
    "trim": "{{ m.content | trim }}",
    "strip": "{{ m.content.strip() }}",
    "lstrip": "{{ m.content.lstrip() }}",
    "rstrip": "{{ m.content.rstrip() }}",
    "strip_chars": "{{ m.content.strip(' \\n\u3000x') }}",
    "lstrip_chars": "{{ m.content.lstrip('\u00a0a') }}",
    "rstrip_chars": "{{ m.content.rstrip('\u00e9 ') }}",
    "trim_chars": "{{ m.content | trim('ab\u2003') }}",
    "strip_nothing": "{{ m.content.strip('') }}",
    "title": "{{ m.role.title() }}|{{ m.content | title }}",
    "case": "{{ m.content | upper }}|{{ m.content | lower }}",
    "in": "{{ '</think>' in m.content }}|{{ '\u00e9' in m.content }}|{{ 'ab' in m.content }}",
    "in_text": "{% set n = m.content[:2] %}{{ m.role in m.content }}|{{ n in 'xaby' }}|{{ m.content[-2:] in m.content[:-1] }}",
    "split": "{{ m.content.split('</think>')[-1] }}|{{ m.content.split('</think>')[0] }}|{{ m.content.split('ab')[-1] }}",
    "split_list": "{% set parts = m.content.split('a') %}{{ parts | length }}:{{ parts | join('+') }}:{{ 'b' in parts }}",
    "replace": "{{ m.content.replace('</think>', '#') }}|{{ m.content.replace('a', 'AA') }}|{{ m.content.replace('\u00e9', '<e>') }}",
    "slicing": "{{ m.content[-3:] }}|{{ m.content[1:-2] }}|{{ m.content[:5] }}|{{ m.content[-100:-1] }}",
    "tojson": "{{ m.content | tojson }}",
    "tojson_value": "{% set x = 'p' ~ (m.content | tojson) %}{{ x }}",
}


#: these change the case of ASCII letters only and start words after ASCII whitespace only (the
#: conversion warns): compared on texts whose other characters have no case and are no space
CASE_CHANGES = {"title", "case"}


def caseless_beyond_ascii(text: str) -> bool:
    return all(ord(char) < 128 or (char.upper() == char.lower() and not char.isspace()) for char in text)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_scans_render_what_transformers_renders_on_edge_texts(name: str, engines: dict) -> None:
    template = "{% for m in messages %}[" + TEMPLATES[name] + "]\n{% endfor %}"
    # roles alternate (Ollama joins consecutive messages of one role) and a user message ends it
    # (a final assistant message is continued, not closed)
    roles = ("user", "assistant")
    texts = EDGE_TEXTS if name not in CASE_CHANGES else [text for text in EDGE_TEXTS if caseless_beyond_ascii(text)]
    messages = [{"role": roles[n % 2], "content": text} for n, text in enumerate(texts)]
    messages += [{"role": "user", "content": "end"}] if messages[-1]["role"] == "assistant" else []
    conversion = convert(TemplateSource(template, {}, name))
    assert ollama_renders(conversion.template, messages, None, engines) == {reference_render(template, messages)}


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool", "moderator"])
def test_role_title_is_exact_for_common_and_other_roles(role: str, engines: dict) -> None:
    """Common roles take a lookup, any other the byte loop: both give str.title()."""
    template = "{% for m in messages %}{{ m.role.title() }}: {{ m.content }}\n{% endfor %}"
    messages = [{"role": role, "content": "x"}] + ([{"role": "user", "content": "hi"}] if role != "user" else [])
    conversion = convert(TemplateSource(template, {}, "role-title"))
    assert ollama_renders(conversion.template, messages, None, engines) == {reference_render(template, messages)}


PREFILLED = [text for text in EDGE_TEXTS if "</think>" not in text]


@pytest.mark.parametrize("final", PREFILLED, ids=[repr(text) for text in PREFILLED])
def test_prefill_is_cut_where_transformers_cuts_with_unicode_spaces(final: str, engines: dict) -> None:
    """The final assistant message is stripped by the same scans to find where the prompt ends."""
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</s>{% endfor %}"
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": final}]
    try:
        expected = reference_render(template, messages, add_generation_prompt=False, continue_final_message=True)
    except ReferenceRenderError:
        pytest.skip("the template drops this text, so transformers refuses to continue it")
    conversion = convert(TemplateSource(template, {}, "prefill"))
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}
