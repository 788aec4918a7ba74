"""`tojson` of tools, their parts and tool calls renders through Ollama's template package (both
versions) as jinja2 renders it, printed through the JSON writer `define`s and captured alike.

The writers write each struct field, list element and map value by its Go type where Ollama's
data model makes the type certain, and test the type at run time only for untyped values (argument
values, a schema's `items` and `enum` members): the schemas below hold every kind of field they
write (nested and ordered properties, `anyOf`, `items` holding an object, enums of strings and of
numbers, a `type` list, several required fields, an object property with no properties of its
own, which Ollama holds as a non-nil empty map), and the arguments every JSON type.
"""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.go import ir, tree
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders


def _nested(levels: int) -> dict[str, Any]:
    """An object property holding an object property... `levels` deep (Ollama keeps their order)."""
    if levels == 0:
        return {"type": "string", "description": "The innermost value."}
    return {
        "type": "object",
        "properties": {"inner": _nested(levels - 1), "note": {"type": "string"}},
        "required": ["inner", "note"],
        "description": f"Level {levels}.",
    }


#: top-level properties in sorted order (Ollama holds them in a Go map); nested ones in any order
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": 'Get the "current" weather.\nIn °C, or — if asked — °F.',
            "parameters": {
                "type": "object",
                "properties": {
                    "choice": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "object", "properties": {"k": {"type": "string", "description": "K."}}},
                        ],
                        "description": "Either.",
                    },
                    "days": {"type": ["integer", "null"], "description": "Days ahead."},
                    "level": {"type": "integer", "enum": [1, 2, 3]},
                    "location": {"type": "string", "description": "City"},
                    "meta": {"type": "object", "properties": {}, "description": "No properties of its own."},
                    "nested": _nested(2),
                    "points": {
                        "type": "array",
                        "items": {"properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "type": "object"},
                    },
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."},
                    "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit."},
                    "when": {"type": 'date "ISO"', "description": "A type name JSON Schema lacks."},
                    'wind "gust"': {"type": "number", "description": "A name to escape."},
                },
                "required": ["location", "unit", "days"],
            },
        },
    },
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {
        "type": "function",
        "function": {
            "name": "legacy",
            "description": "An older schema's parameters type.",
            "parameters": {"type": "dict", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    },
]
#: argument keys in sorted order (Ollama passes a map); key and string value that print as they
#: are (one test for both), and either one with text to escape
ARGUMENTS = {
    "a": "x",
    "b": True,
    "f": 1.5,
    "l": [1, "two", None, {"k": "v"}, []],
    "n": 5,
    "o": {"e": {}, "p": {"q": [False]}},
    "q": 'He said "hi".\nBye ✓',
    'q"k': "v",
    "z": None,
    "ünï": "çödé ✓",
}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": 'Be "brief".'},
    {"role": "user", "content": "Weather?\nIn Zürich ✓"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}],
    },
    {"role": "tool", "content": '{"ok": true}'},
    {"role": "assistant", "content": "Sunny."},
    {"role": "user", "content": "Thanks."},
]

TEMPLATES = {
    "tools": "{{ tools | tojson }}",
    "tools indented": "{{ tools | tojson(indent=4) }}",
    "each tool indented": "{% for t in tools or [] %}{{ t | tojson(indent=2) }}\n{% endfor %}",
    "parts": (
        "{% for t in tools or [] %}{{ t.function | tojson }}|{{ t.function.parameters | tojson(indent=4) }}|"
        "{{ t.function.parameters.properties | tojson }}|"
        "{% for k, p in t.function.parameters.properties.items() %}{{ k }}={{ p | tojson }}"
        "{% if p.properties %}<{{ p.properties | tojson(indent=2) }}>{% endif %}"
        "{% if p.anyOf %}<{{ p.anyOf | tojson }}>{% endif %}{% if 'items' in p %}<{{ p['items'] | tojson }}>{% endif %}"
        "{% if p.enum %}<{{ p.enum | tojson }}>{% endif %}{% if p.required %}<{{ p.required | tojson }}>{% endif %}"
        "{% endfor %}{% endfor %}"
    ),
    "tool calls": (
        "{% for m in messages %}{{ m.content | tojson }}{% for c in m.tool_calls or [] %}"
        "{{ c.function.arguments | tojson }}{{ c.function.arguments | tojson(indent=2) }}{{ c | tojson }}"
        "{{ m.tool_calls | tojson(indent=1) }}"
        "{% for k, v in c.function.arguments.items() %}{{ v | tojson }};{% endfor %}{% endfor %}{% endfor %}"
    ),
    "separators": "{{ tools | tojson(separators=(',', ':')) }}{{ tools | tojson(indent=2, separators=(',', ': ')) }}",
    "ascii only": "{{ tools | tojson(ensure_ascii=True) }}",
    "captured": "{% set x = tools | tojson(indent=2) %}{{ x }}{% set y = tools | tojson %}[{{ y }}]",
    "python repr": "{% for t in tools or [] %}{{ t }}{% set r = t | string %}[{{ r }}]{% endfor %}",
}


@pytest.mark.parametrize("tools", [TOOLS, None], ids=["tools", "no tools"])
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_tojson_renders_like_jinja(
    name: str, tools: list[dict[str, Any]] | None, engines: dict[str, oracle.Oracle]
) -> None:
    template = TEMPLATES[name]
    expected = reference_render(template, MESSAGES, tools=tools, add_generation_prompt=False)
    go_template = convert(TemplateSource(template, {}, name)).template
    assert ollama_renders(go_template, MESSAGES, tools, engines) == {expected}


def defines_of(template: str) -> dict[str, str]:
    """The converted template's `define` blocks by name, read off its text."""
    return {
        node.node.name: tree.render([node])
        for node in tree.parse(template)
        if isinstance(node, tree.Block) and isinstance(node.node, ir.Define)
    }


def test_only_untyped_values_have_their_go_type_tested() -> None:
    """A tool's fields, a property's, and the members of lists and maps of a known type are
    written by their type's writer: only the writers of untyped values test `printf "%T"`, and
    a template holds only the writers its `tojson`s reach."""
    defines = defines_of(convert(TemplateSource(TEMPLATES["each tool indented"], {}, "tools")).template)
    dispatching = sorted(name for name, code in defines.items() if 'printf "%T"' in code)
    assert dispatching and all(name.endswith("_value") for name in dispatching), dispatching
    assert "ofc_json2_0_tool" in defines and "ofc_json2_1_function" in defines
    assert "ofc_json2_0" not in defines  # the value of any type: no `tojson` here needs it
    assert not any(name.endswith("_tool") and name != "ofc_json2_0_tool" for name in defines)
