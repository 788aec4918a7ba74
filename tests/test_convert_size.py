"""What keeps conversions small renders what transformers renders: the JSON writers' literal
separators and field tests, and long string constants (scan tables) declared once. Checked
through Ollama's engine (both oracle versions) against the reference renderer."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.go import tree
from ollama_fc.convert.go.irread import read_action
from ollama_fc.convert.go.sharing import SHARED_CONSTANT_CHARS
from ollama_fc.convert.go.tree import ACTION_SPAN
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders

#: every optional field of a property on some path, and none on others: type lists, nested
#: objects and arrays, enums, a property with only a type, descriptions with characters JSON
#: escapes, a function without description and one without required parameters; properties
#: in key order (Ollama sorts them) and no empty description (Ollama drops it)
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "plan",
            "description": 'Plan a "trip" <fast> & cheap\n\u00e9\u2028',
            "parameters": {
                "type": "object",
                "properties": {
                    "days": {"type": "integer", "description": "How many days."},
                    "mode": {"type": "string", "enum": ["car", "train"], "description": "How to travel."},
                    "options": {
                        "type": "object",
                        "properties": {
                            "deep": {
                                "type": "object",
                                "properties": {"x": {"type": "array", "items": {"type": "object"}}},
                                "required": ["x"],
                            },
                            "pets": {"type": "boolean"},
                            "seat": {"type": "string", "enum": ["aisle", "window"]},
                        },
                        "required": ["seat"],
                        "description": "Extras.",
                    },
                    "stops": {"type": "array", "items": {"type": "string"}, "description": "Cities on the way."},
                    "when": {"type": ["string", "null"]},
                },
                "required": ["days", "mode"],
            },
        },
    },
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {
        "type": "function",
        "function": {
            "name": "one",
            "parameters": {"type": "object", "properties": {"q": {"type": "string", "description": "Query"}}},
        },
    },
]

#: in sorted key order: Ollama passes arguments as a Go map, ranged in key order (the
#: conversion warns)
CALL_ARGUMENTS = {
    "city": 'Paris "FR"',
    "empty": {},
    "list": [1, "two", [], {}, {"a": [True, None]}],
    "n": 3,
    "nested": {"b": {"c": {"d": ["\u00e9", "\t"]}}},
    "none": None,
    "ok": True,
    "x": 1.5,
}
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": "plan", "arguments": CALL_ARGUMENTS}}],
    },
    {"role": "tool", "content": "done"},
    {"role": "user", "content": "thanks"},
]

JSON_TEMPLATES = {
    "compact": "{{ tools | tojson }}",
    "indent2": "{{ tools | tojson(indent=2) }}",
    "indent4_each": "{% for t in tools %}{{ t | tojson(indent=4) }}\n{% endfor %}",
    "function_only": "{% for t in tools %}{{ t.function | tojson(indent=2) }}\n{% endfor %}",
    "separators": "{{ tools | tojson(separators=(',', ':')) }}",
    "indent_separators": "{{ tools | tojson(indent=1, separators=(';', '= ')) }}",
    "literal_dict": "{{ {'tools': tools, 'n': 1} | tojson }}",
    "arguments": (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}\n"
        "{{ c.function.arguments | tojson(indent=2) }}\n{% endfor %}{% endfor %}"
    ),
}


@pytest.mark.parametrize("name", sorted(JSON_TEMPLATES))
def test_json_writers_render_what_transformers_renders(name: str, engines: dict) -> None:
    template = JSON_TEMPLATES[name]
    expected = reference_render(template, MESSAGES, tools=TOOLS, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, name))
    assert ollama_renders(conversion.template, MESSAGES, TOOLS, engines) == {expected}


def test_json_writer_separators_are_text_not_actions() -> None:
    """The indented writer's separators are literal text: no action prints a constant."""
    template = convert(TemplateSource("{{ tools | tojson(indent=4) }}", {}, "indent")).template
    # (a `{` just before an action stays one: the lexer would read `{{{`)
    assert re.search(r'\{\{"(?:[,:\[\]} ]|\\n)+"\}\}', template) is None
    assert '"type": {{if eq .Type "function"}}"function"{{else}}{{template "ofc_json_str" .Type}}{{end}},\n' in template


#: long constants several scans share (strip tables, case tables) and texts at their edges
SCAN_TEMPLATE = (
    "{% for m in messages %}[{{ m.content | trim }}|{{ m.content.lstrip() }}|{{ m.content.rstrip() }}"
    "|{{ m.content | upper }}|{{ m.content | lower }}|{{ m.content.strip(' x') }}|{{ m.content.strip(' x') }}]\n"
    "{% endfor %}"
)
#: (the case changes are ASCII-only, which the conversion warns about: no cased letters beyond)
SCAN_TEXTS = ["", " ", " a ", "\u3000\u65e5\u672c\u00a0", "x x", "\tMiXeD case\n", "\u2003\u2028"]


def string_literals(template: str) -> list[str]:
    """The Go string literals (double-quoted) the template's actions hold, as written."""
    literals = (literal.quoted for action in ACTION_SPAN.findall(template) for literal in read_action(action).strings())
    return [literal for literal in literals if literal.startswith('"')]


def test_long_constants_are_declared_once_and_render_the_same(engines: dict) -> None:
    roles = ("user", "assistant")
    messages = [{"role": roles[n % 2], "content": text} for n, text in enumerate(SCAN_TEXTS)]
    conversion = convert(TemplateSource(SCAN_TEMPLATE, {}, "scans"))
    body = conversion.template
    declared = re.findall(r'\{\{(\$ofc_k\d+) := "', body)
    assert declared, "no shared constant declared"
    literals = [literal for literal in string_literals(body) if len(literal) >= SHARED_CONSTANT_CHARS]
    assert len(literals) == len(set(literals))  # each written once: in its declaration or its one use
    assert len(declared) >= 2  # the strip table and the case tables
    assert ollama_renders(body, messages, None, engines) == {reference_render(SCAN_TEMPLATE, messages)}


def test_constants_are_shared_within_each_define(engines: dict) -> None:
    """A macro written as a define declares its own: the template's variables are not
    visible there."""
    template = (
        "{% macro show(p) %}{{ p.description | trim }}|{{ (' ' ~ p.description) | trim }}|"
        "{% for n, q in (p.properties or {}) | items %}"
        "{{ show(q) }}{% endfor %}{% endmacro %}"
        "{% for t in tools %}{{ show(t.function.parameters) }}{{ t.function.description | trim }}"
        "{{ t.function.name | trim }}\n{% endfor %}"
    )
    expected = reference_render(template, MESSAGES, tools=TOOLS, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "define-strip"))
    defines = re.findall(r'\{\{define "ofc_macro_show\w*"\}\}(\{\{\$ofc_k1 := ")?', conversion.template)
    assert any(defines)  # the define that strips twice opens with its own table
    literals = string_literals(conversion.template)
    # the strip table once in each of the two defines (one strips twice, one once) and in the template
    assert len([literal for literal in literals if len(literal) >= SHARED_CONSTANT_CHARS]) == 3
    assert ollama_renders(conversion.template, MESSAGES, TOOLS, engines) == {expected}


PREFILL_TEMPLATES = {
    "raw": "{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}",
    "system": (
        "{% if messages[0].role == 'system' %}{{ messages[0].content | trim }}{% endif %}{% for m in messages %}"
        "{% if m.role != 'system' %}<{{ m.role }}>{{ m.content.strip() }}</s>{% endif %}{% endfor %}"
    ),
    "trimmed": "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}\n</s>{% endfor %}",
}
#: where the cut falls: text with and without space at either end (the whole text follows the
#: cut only when it has none at its start), a text found earlier in the prompt, Unicode spaces
PREFILL_FINALS = ["Sure", "Sure  \n", "  Sure", " Sure ", "a a", "a", "\u3000x\u00a0", "x\n\n"]


@pytest.mark.parametrize("name", sorted(PREFILL_TEMPLATES))
@pytest.mark.parametrize("final", PREFILL_FINALS, ids=repr)
def test_prefill_cut_after_the_last_occurrence(name: str, final: str, engines: dict) -> None:
    """The prefill bookkeeping (`$ofc_go`, `$ofc_n`, `$ofc_tail`) cuts where transformers cuts."""
    template = PREFILL_TEMPLATES[name]
    messages = [
        {"role": "system", "content": final},
        {"role": "user", "content": final.strip() + " a"},
        {"role": "assistant", "content": final},
    ]
    expected = reference_render(template, messages, add_generation_prompt=False, continue_final_message=True)
    conversion = convert(TemplateSource(template, {}, name))
    assert ollama_renders(conversion.template, messages, None, engines) == {expected}


@pytest.mark.parametrize(
    ("spaced", "compact"),
    [
        ("{{ if $x }}a{{ else }}b{{ end }}", "{{if $x}}a{{else}}b{{end}}"),
        ("{{- if and false .Messages }}{{- end }}", "{{- if and false .Messages}}{{- end}}"),  # trim markers
        ("{{ x -}} y {{- z }}", "{{x -}} y {{- z}}"),
        ('{{/* a comment */}}{{ "}} {{ " }}}', '{{/* a comment */}}{{"}} {{ "}}}'),  # strings and text kept
        ("{{ -1 }}", "{{-1}}"),  # the number -1 to Go, not a trim marker
        ("a }} b {{ `raw }}` }}", "a }} b {{`raw }}`}}"),
    ],
)
def test_actions_lose_only_the_spaces_inside_their_delimiters(spaced: str, compact: str) -> None:
    assert tree.render(tree.parse(spaced), compact=True) == compact


def test_conversions_are_written_compact_and_render_the_same(engines: dict) -> None:
    """Every action of a conversion is written without the spaces Go's lexer would make tokens
    of; trim markers, which need theirs, appear only in the header."""
    conversion = convert(TemplateSource(SCAN_TEMPLATE, {}, "scans"))
    actions = ACTION_SPAN.findall(conversion.template)
    assert len(actions) > 50
    spaced = re.findall(r"\{\{ |[^-] \}\}", conversion.template)
    assert spaced == []
    roles = ("user", "assistant")
    messages = [{"role": roles[n % 2], "content": text} for n, text in enumerate(SCAN_TEXTS)]
    assert ollama_renders(conversion.template, messages, None, engines) == {reference_render(SCAN_TEMPLATE, messages)}
