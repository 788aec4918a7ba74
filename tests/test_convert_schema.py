"""Templates that walk tool schemas render through Ollama's engine as jinja2 renders them."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.verify.reference import render as reference_render

#: written as transformers' get_json_schema writes schemas (the key order a template can see)
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "plan",
            "description": "Plan a trip.",
            "parameters": {
                "type": "object",
                "properties": {
                    "days": {"type": "integer", "description": "How many days."},
                    "mode": {"type": "string", "enum": ["car", "train"], "description": "How to travel."},
                    "options": {
                        "type": "object",
                        "properties": {"pets": {"type": "boolean"}, "seat": {"type": "string", "enum": ["aisle"]}},
                        "required": ["seat"],
                        "description": "Extras.",
                    },
                    "stops": {"type": "array", "items": {"type": "string"}, "description": "Cities on the way."},
                },
                "required": ["days"],
            },
        },
    },
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
]
MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def engine():
    with oracle.Oracle() as pinned:
        yield pinned


def render_both(template: str, engine: oracle.Oracle) -> tuple[str, str]:
    expected = reference_render(template, MESSAGES, tools=TOOLS, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "schema")).template, MESSAGES, tools=TOOLS)
    assert rendered.error is None, rendered.error
    return rendered.prompt, expected


LOOPS_OVER_SCHEMA_DICTS = {
    "keys_with_filter_and_lookup": (
        "{% macro extra(d, handled) %}{% for k in d if k not in handled %}"
        "{% if d[k] is mapping or (d[k] is sequence and d[k] is not string) %}<{{ k }}>{{ d[k] | tojson | safe }}"
        "{% else %}<{{ k }}>{{ d[k] | string }}{% endif %}{% endfor %}{% endmacro %}"
        "{% for t in tools %}{% set f = t.function %}{{ extra(t, ['function']) }}{{ extra(f, ['parameters']) }}"
        "{{ extra(f.parameters, []) }}{% for name, p in f.parameters.properties | items %}"
        "[{{ name }}{{ extra(p, ['description']) }}]{% endfor %}\n{% endfor %}"
    ),
    "items_with_loop_variables": (
        "{% for t in tools %}{% for name, p in t.function.parameters.properties | items %}"
        "{% for k, v in p | items %}{{ loop.index0 }}/{{ loop.length }}{{ k }}{% if loop.last %}.{% else %},{% endif %}{% endfor %};"
        "{% endfor %}{% endfor %}"
    ),
    "dictsort_and_defined_keys": (
        "{% for t in tools %}{% for k, v in t.function | dictsort %}{{ k }} {% endfor %}"
        "{% for name, p in t.function.parameters.properties | items %}"
        "{{ p.enum is defined }}{{ p.items is defined }}{{ p.properties is defined }}{{ p.required is defined }}"
        "{% if p.properties is defined %}{% for n, q in p.properties | items %}({{ n }}:{{ q.type }}){% endfor %}{% endif %}"
        "{% endfor %}|{{ t.function.description is defined }}\n{% endfor %}"
    ),
}


@pytest.mark.parametrize("name", sorted(LOOPS_OVER_SCHEMA_DICTS))
def test_loop_over_a_schema_dict_renders_like_jinja(name: str, engine: oracle.Oracle) -> None:
    rendered, expected = render_both(LOOPS_OVER_SCHEMA_DICTS[name], engine)
    assert rendered == expected


def test_loop_over_a_schema_dict_warns_about_key_order() -> None:
    template = "{% for t in tools %}{% for k in t.function %}{{ k }}{% endfor %}{% endfor %}"
    warnings = convert(TemplateSource(template, {}, "order")).warnings
    assert any("schema dict" in w.construct and "get_json_schema" in w.effect for w in warnings)
