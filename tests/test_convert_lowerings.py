"""The lowerings that keep converted templates small render exactly what Jinja renders.

Each test renders a template through Ollama's template package (both versions) and through the
Hugging Face reference, on values that reach every branch the lowering shares: nested tool
schemas (properties in properties, `items` holding lists and objects, enums), tool call
arguments holding maps, lists, empty ones and scalars.
"""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.hf.reference import render as reference_render

VERSIONS = (oracle.PINNED, oracle.LATEST)


def _function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:  # Ollama leaves an empty list out
        parameters["required"] = required
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": parameters},
    }


#: schemas in the key order Ollama writes them (property names sorted; `items` is untyped
#: there: a Go map, keys sorted)
TOOLS = [
    _function(
        "plan",
        {
            "legs": {
                "type": "array",
                "items": {
                    "items": {"enum": ["a", "b"], "type": "string"},
                    "properties": {"from": {"type": "string"}, "stops": {"type": "array"}},
                    "type": "object",
                },
                "description": 'Legs <in order> & "quoted".',
            },
            "options": {
                "type": "object",
                "properties": {
                    "extras": {
                        "type": "object",
                        "properties": {"meals": {"type": "boolean", "description": "Meals \u00e9."}},
                        "required": ["meals"],
                    },
                    "seat": {"type": "string", "enum": ["aisle", "window"], "description": "Seat."},
                },
                "required": ["seat"],
                "description": "Options.",
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        ["legs"],
    ),
    _function("ping", {}, []),
]

ARGUMENTS: dict[str, Any] = {
    "a": {"e": {}, "k": [1, {"x": None, "y": True, "z": "s"}, [], {}]},
    "b": [],
    "c": 'text <&> \u2028 "q"',
    "d": [[{"z": 1.5}]],
}

MESSAGES = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "plan", "arguments": ARGUMENTS}}]},
    {"role": "tool", "content": "done"},
]


def as_hf(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "tool_calls": [{"type": "function", "function": c["function"]} for c in m["tool_calls"]]}
        if "tool_calls" in m
        else m
        for m in messages
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_captured_tojson_of_nested_schemas_and_arguments(version: str) -> None:
    """JSON written into a variable (no `define` can be captured): every map and list branch of
    an untyped value and every level of a property schema, in both Ollama versions' types (to the
    depth the captured writer unrolls untyped values: three levels)."""
    template = (
        "{% set ns = namespace(text='') %}{% for t in tools %}{% set ns.text = ns.text + '\\n' + (t | tojson) %}{% endfor %}"
        "{% set wide = '[' + (tools | tojson(indent=2)) + ']' %}{{ ns.text }}\n{{ wide }}\n"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{% set args = '<' + (c.function.arguments | tojson) + '>' %}{{ args }}"
        "{% set deep = '<' + (c.function.arguments | tojson(indent=1)) + '>' %}{{ deep }}"
        "{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "captured-json"))
    expected = reference_render(template, as_hf(MESSAGES), TOOLS)
    assert '"stops": {"type": "array"}' in expected and '{"x": null, "y": true, "z": "s"}, [], {}' in expected
    assert oracle.render(conversion.template, MESSAGES, TOOLS, version=version) == expected
