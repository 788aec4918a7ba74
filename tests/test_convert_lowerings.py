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
    depth the captured writer unrolls untyped values: three levels). `ns.text` is filtered, so it
    is captured rather than printed where it is read (see test_convert_printplan.py)."""
    template = (
        "{% set ns = namespace(text='') %}{% for t in tools %}{% set ns.text = ns.text + '\\n' + (t | tojson) %}{% endfor %}"
        "{% set wide = '[' + (tools | tojson(indent=2)) + ']' %}{{ ns.text | trim }}\n{{ wide }}\n"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{% set args = '<' + (c.function.arguments | tojson) + '>' %}{{ args }}"
        "{% set deep = '<' + (c.function.arguments | tojson(indent=1)) + '>' %}{{ deep }}"
        "{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "captured-json"))
    expected = reference_render(template, as_hf(MESSAGES), TOOLS)
    assert '"stops": {"type": "array"}' in expected and '{"x": null, "y": true, "z": "s"}, [], {}' in expected
    assert oracle.render(conversion.template, MESSAGES, TOOLS, version=version) == expected


#: a recursive macro printed (its output never captured): the schema walk reads `tools` only
#: through the macro's argument, and message text never enters it
SCHEMA_MACRO = (
    "{% macro schema(props, required, strict=false) %}{% for k, v in props | dictsort %}"
    "{{ k }}{{ '!' if k in required else '' }}{{ '=' if strict else ':' }}"
    "{% if v.properties is defined %}{ {{- schema(v.properties, v.required | default([]), strict) -}} }"
    "{% elif v['items'] is mapping %}[{{ v['items'].type | default('?') }}]{% else %}{{ v.type }}{% endif %};"
    "{% endfor %}{% endmacro %}"
    "{% macro value(x) %}{% if x is mapping %}({% for k, v in x | dictsort %}{{ k }}={{ value(v) }},{% endfor %})"
    "{% elif x is sequence and x is not string %}[{% for i in x %}{{ value(i) }};{% endfor %}]"
    "{% else %}{{ x }}{% endif %}{% endmacro %}"
    "{% macro declaration(t) %}<{{ t.function.name }}|{{ schema(t.function.parameters.properties, t.function.parameters.required | default([])) }}"
    "|{{ schema(t.function.parameters.properties, [], strict=true) }}>{% endmacro %}"
    "{% for t in tools or [] %}{{ declaration(t) | trim }}\n{% endfor %}"
    "{% for m in messages %}{{ m.role }}: {{ m.content }}"
    "{% for c in m.tool_calls or [] %}{{ value(c.function.arguments) }}{% endfor %}\n{% endfor %}"
)


#: a recursive macro whose second parameter is only passed on to itself (gpt-oss's
#: `required_params`): the call sites' two varying arguments come from two variables
DEAD_PARAMETER_MACRO = (
    "{% macro walk(spec, required, depth=0) %}{% if spec.type == 'object' and spec.properties %}<"
    "{% for k, v in spec.properties | dictsort %}{{ k }}:{{ walk(v, spec.required or [], depth) }};{% endfor %}>"
    "{% elif spec.type == 'array' and spec['items'] is mapping %}{{ spec['items'].type }}[]"
    "{% else %}{{ spec.type | default('any') }}{% endif %}{% endmacro %}"
    "{% for t in tools or [] %}{% for k, p in t.function.parameters.properties | dictsort %}"
    "{{ k }}={{ walk(p, t.function.parameters.required or []) }}\n{% endfor %}{% endfor %}"
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
)


@pytest.mark.parametrize("version", VERSIONS)
def test_recursive_macro_with_a_parameter_only_passed_on_is_a_define(version: str) -> None:
    """A parameter read only as its own argument of the macro's recursive calls never reaches
    the output: it does not count as varying, so the call becomes a define that recurses as
    deep as the schema, and renders what transformers renders."""
    conversion = convert(TemplateSource(DEAD_PARAMETER_MACRO, {}, "dead-parameter"))
    assert not conversion.warnings  # (expanded inline, the recursion would stop at 3 levels)
    nested: dict[str, Any] = {"type": "string"}
    for level in range(6):
        nested = {"type": "object", "properties": {f"k{level}": nested}, "required": [f"k{level}"]}
    tools = [*TOOLS, _function("deep", {"root": nested, "list": {"type": "array", "items": nested}}, ["root"])]
    expected = reference_render(DEAD_PARAMETER_MACRO, as_hf(MESSAGES), tools)
    assert "k0:string;" in expected and "tags=string[]" in expected
    assert oracle.render(conversion.template, MESSAGES, tools, version=version) == expected


@pytest.mark.parametrize("version", VERSIONS)
def test_recursive_macro_is_one_define_per_constant_arguments(version: str) -> None:
    """Each recursive macro becomes `define`s called with the caller's variable as dot (one per
    combination of constant arguments, here strict true and false), recursing as deep as the
    data goes; `|trim` of a macro whose output starts and ends with text is not captured."""
    conversion = convert(TemplateSource(SCHEMA_MACRO, {}, "recursive-macro"))
    template = conversion.template
    assert template.count('{{define "ofc_macro_schema_') >= 2 and '{{define "ofc_macro_value_' in template
    expected = reference_render(SCHEMA_MACRO, as_hf(MESSAGES), TOOLS)
    assert "extras:{meals!:boolean;}" in expected and "a=(e=(),k=[1;(x=None,y=True,z=s,);[];();],)" in expected
    assert oracle.render(template, MESSAGES, TOOLS, version=version) == expected
    assert oracle.render(template, MESSAGES, None, version=version) == reference_render(SCHEMA_MACRO, as_hf(MESSAGES))


def test_trim_of_a_macro_that_may_print_edge_whitespace_is_captured() -> None:
    """`|trim` is left out only where it cannot change the text: a macro that may print
    whitespace at either end is still captured and trimmed."""
    template = (
        "{% macro item(x) %} {{ x }}{% endmacro %}{% macro tail(x) %}[{{ x }}{% if x %} {% endif %}{% endmacro %}"
        "{% for m in messages %}<{{ item(m.role) | trim }}|{{ tail(m.content) | trim }}>{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "x"},
    ]
    expected = reference_render(template, messages)
    assert "<user|[hi>" in expected
    assert oracle.render(convert(TemplateSource(template, {}, "trim")).template, messages) == expected


@pytest.mark.ollama
def test_tools_read_only_inside_defines_keep_the_tool_capability(scripted_model, ollama_host: str) -> None:
    """Ollama decides a model's tool capability from the identifiers its template reads
    (`Template.Vars`, which walks every `define` too); a conversion whose tool schemas are
    written by `define`s still reads `.Tools` where it calls them, so `ollama show` lists tools."""
    import ollama

    conversion = convert(TemplateSource(SCHEMA_MACRO, {}, "recursive-macro"))
    assert '{{template "ofc_macro_schema_' in conversion.template
    model = scripted_model("Hello.", template=conversion.template)
    assert "tools" in (ollama.Client(host=ollama_host).show(model).capabilities or [])
