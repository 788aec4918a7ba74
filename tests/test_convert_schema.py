"""Templates that walk tool schemas render through Ollama's engine as jinja2 renders them."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.errors import ConversionError
from ollama_fc.hf.reference import render as reference_render

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


def render_both(template: str, engine: oracle.Oracle) -> tuple[str, str]:
    expected = reference_render(template, MESSAGES, tools=TOOLS, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "schema"))  # within the default output limit
    rendered = engine.render(conversion.template, MESSAGES, tools=TOOLS)
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


def one_function(properties: dict[str, Any], required: list[str]) -> list[dict[str, Any]]:
    """The tools of a request offering one function `f` with these parameters."""
    parameters = {"type": "object", "properties": properties, "required": required}
    return [{"type": "function", "function": {"name": "f", "description": "d", "parameters": parameters}}]


@pytest.mark.parametrize("name", sorted(LOOPS_OVER_SCHEMA_DICTS))
def test_loop_over_a_schema_dict_renders_like_jinja(name: str, engine: oracle.Oracle) -> None:
    rendered, expected = render_both(LOOPS_OVER_SCHEMA_DICTS[name], engine)
    assert rendered == expected


def test_key_in_a_property_and_a_tool_unwrapped_only_if_it_has_a_function(engine: oracle.Oracle) -> None:
    """`'description' in p` tests the field Ollama fills; `if t.function` is always true, so the
    `set t = t.function` under it always runs and `t` stays a tool's function."""
    template = (
        "{% for t in tools %}{% if t.function %}{% set t = t.function %}{% endif %}"
        "{% if t.get('description') %}{{ t['description'].split('.')[0] }}{% endif %}{{ t.name }}:"
        "{% for name, p in t.parameters.properties.items() %}{{ name }}{{ 'description' in p }}{{ 'enum' in p }}"
        "{{ 'items' in p }}{{ 'default' in p }}{% if 'properties' in p %}{% for n, q in p.properties.items() %}"
        "({{ n }}{{ 'enum' in q }}){% endfor %}{% endif %};{% endfor %}\n{% endfor %}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected
    assert "Plan a trip" in expected and "TrueTrueFalse" in expected  # `mode` has both keys
    warnings = convert(TemplateSource(template, {}, "in-property")).warnings
    assert [w.construct for w in warnings if "in a tool schema property" in w.construct] == [
        "'default' in a tool schema property"
    ]


def test_nested_properties_stored_on_some_paths_and_string_methods_of_untyped_values(engine: oracle.Oracle) -> None:
    """A nested property map set under an `if` is still ranged in order; `.split()` of an untyped
    value (a schema's `items`) is the string's (warned: Jinja fails on anything else)."""
    template = (
        "{% for t in tools %}{% for name, p in t.function.parameters.properties.items() %}"
        "{% if p.type == 'object' %}{% set inner = p.get('properties', {}) %}"
        "{% for n, q in inner.items() %}({{ n }}){% endfor %}{% endif %}"
        "{% if 'items' in p %}{{ p['items'].get('type').strip('g') }}|{{ p['items']['type'].split('r') | join('-') }}{% endif %};"
        "{% endfor %}{% endfor %}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected
    assert "(pets)(seat)" in expected and "strin|st-ing;" in expected
    warnings = convert(TemplateSource(template, {}, "untyped-split")).warnings
    assert {w.construct for w in warnings} >= {".strip() of an untyped value", ".split() of an untyped value"}


def test_method_of_a_variable_only_ever_none_warns(engine: oracle.Oracle) -> None:
    """Jinja fails calling `.get` on None: a path that would do so (never taken here) is warned
    about rather than refused."""
    template = (
        "{% macro show(s) %}{{ s.get('type') }}{% endmacro %}{% for m in messages %}{% set x = none %}"
        "{% if m.role == 'user' %}{% set x = {'type': 'any'} %}{% endif %}{% if x is not none %}{{ show(x) }}{% endif %};{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "none-get"))
    assert [w.construct for w in conversion.warnings] == ["calling .get() of None"]
    rendered = engine.render(conversion.template, MESSAGES)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == reference_render(template, MESSAGES, add_generation_prompt=False) == "any;"


def test_loop_over_a_schema_dict_warns_about_key_order() -> None:
    template = "{% for t in tools %}{% for k in t.function %}{{ k }}{% endfor %}{% endfor %}"
    warnings = convert(TemplateSource(template, {}, "order")).warnings
    assert any("schema dict" in w.construct and "get_json_schema" in w.effect for w in warnings)


def test_recursive_macro_over_a_schema_is_expanded_until_its_arguments_are_static(engine: oracle.Oracle) -> None:
    """hermes' json_to_python_type: recursion through `|items`, dict literals and a type's characters."""
    template = (
        '{% macro py(s) %}{% set m = {"string": "str", "integer": "int", "boolean": "bool"} %}'
        "{% if m[s.type] is defined %}{{ m[s.type] }}"
        '{% elif s.type == "array" %}{{ "list[" + py(s|items) + "]" }}'
        '{% elif s.type == "object" %}{% if s.additionalProperties is defined %}{{ py(s.additionalProperties) }}{% else %}dict{% endif %}'
        "{% elif s.type is iterable %}Union[{% for t in s.type %}{{ py({'type': t}) }}{% if not loop.last %},{% endif %}{% endfor %}]"
        "{% else %}Any{% endif %}{% endmacro %}"
        "{% for t in tools %}{% for n, p in t.function.parameters.properties | items %}{{ n }}: {{ py(p) }};{% endfor %}{% endfor %}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected
    assert "list[Union[]]" in expected  # the reference really went through the recursion


def test_recursion_cut_at_the_bound_warns() -> None:
    template = (
        "{% macro f(s) %}{% for c in s %}{{ f({'type': c}.type) }}{% endfor %}{% endmacro %}{{ f(messages[0].role) }}"
    )
    warnings = convert(TemplateSource(template, {}, "deep")).warnings
    assert any(w.construct.startswith("recursive macro f()") and "renders nothing" in w.effect for w in warnings)


def test_loop_over_a_string_steps_through_characters(engine: oracle.Oracle) -> None:
    template = "{% for m in messages %}{% for c in m.role ~ '\u00e9x' %}{{ loop.index0 }}{{ c }}{{ loop.last }}|{% endfor %}{% endfor %}"
    rendered, expected = render_both(template, engine)
    assert rendered == expected


def test_tojson_of_a_dict_literal_and_undefined_values_like_jinja(engine: oracle.Oracle) -> None:
    """A dict literal of run-time values as JSON; Undefined iterates as empty and has length 0."""
    template = (
        "{% for t in tools %}{{ {'name': t.function.name, 'type': t.function.parameters.type, 'n': 1} | tojson }}"
        "{{ t.nothing is iterable }}{{ t.nothing | length }}{% for k, v in t.nothing | items %}?{% endfor %}\n"
        "{{ {'p': t.function.parameters.properties} | tojson(indent=2) | indent(4, first=true) }}{% endfor %}"
    )
    with pytest.raises(ConversionError, match="indent"):
        convert(TemplateSource(template, {}, "record"))  # a dict literal cannot be indented (refused loudly)
    template = template.replace("tojson(indent=2)", "tojson")
    rendered, expected = render_both(template, engine)
    assert rendered == expected


def test_string_of_a_tool_is_python_repr_printed_or_captured(engine: oracle.Oracle) -> None:
    """`tool | string` / `{{ tools }}`: Python's repr of the dicts, in get_json_schema key order."""
    template = (
        "{% set ns = namespace(s='') %}{% for t in tools %}{% set ns.s = ns.s ~ (t | string) ~ '\\n' %}{% endfor %}"
        "{{ ns.s }}{{ tools }}\n{{ tools[0].function.parameters.properties | string }}"
    )
    tools = [{**TOOLS[0], "function": {**TOOLS[0]["function"], "description": 'It\'s "quoted" \\ here.'}}]
    expected = reference_render(template, MESSAGES, tools=tools, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "repr"))
    rendered = engine.render(conversion.template, MESSAGES, tools=tools)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert any(w.construct.startswith("repr of a") for w in conversion.warnings)


def test_elif_test_is_computed_only_where_it_is_reached(engine: oracle.Oracle) -> None:
    """An elif whose test needs statements (a substring search) after a run-time if."""
    template = (
        "{% for m in messages %}{% if 'go' in m.content %}A{% elif 'o' in m.content %}B{% elif m.nothing %}C"
        "{% else %}D{% endif %}{% endfor %}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected


def test_schema_dict_methods_and_key_filters(engine: oracle.Oracle) -> None:
    """`.items()` with a filtered loop and loop.last, `.keys() | reject('in', ...)`, constant filters."""
    template = (
        "{% for t in tools %}{% set f = t.function %}{% for k, v in f.items() if k != 'name' %}{{ k }}"
        "{% if not loop.last %},{% endif %}{% endfor %};{% for name, p in f.parameters.properties | items %}"
        "{% for k in p.keys() | reject('in', ['type', 'description']) %}<{{ k | replace('e', '3') | title }}>"
        "{{ p[k] | string }}{% endfor %}{% endfor %}\n{% endfor %}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected


def test_string_of_argument_values_is_python_str_stored_or_printed(engine: oracle.Oracle) -> None:
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | items %}"
        "{% set s = v if v is string else v | string %}{{ k }}={{ s }}|{{ v | string }};{% endfor %}{% endfor %}{% endfor %}"
    )
    args = {"a": "it's", "b": {"x": [1, True, None], "y": "q\"'"}, "c": [True, "s"], "d": 2}
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": args}}]},
    ]
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "str")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_untyped_values_are_looked_into_like_python(engine: oracle.Oracle) -> None:
    """Argument values and schema `items` (decoded JSON): keys, elements, length, join, in, loops."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | items %}"
        "{{ k }}:{{ v.x is defined }}{{ v['x'] }}|{{ v | length }}|{% if v is not string %}{{ v[0] is defined }}{{ v[-1] }}"
        "|{{ 'x' in v }}{{ 'b' in (v or []) }}{% endif %}|{% if v is sequence and v is not string %}{{ v | join('+') }}"
        "{% for e in v %}[{{ e }}]{% endfor %}{% endif %}"
        "|{% if v is mapping %}{% for kk, vv in v | dictsort %}{{ kk }}={{ vv | upper }},{% endfor %}{% endif %};{% endfor %}{% endfor %}{% endfor %}"
        "{% for t in tools %}{% for n, p in t.function.parameters.properties | items %}"
        "{% if p['items'] is defined %}{{ n }}:{{ p['items'].type }}{{ p['items'].missing is defined }}{% endif %}{% endfor %}{% endfor %}"
    )
    args = {"a": {"x": None, "y": "b"}, "b": ["a", "b", 3], "c": "xyz", "d": {"b": True}}
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": args}}]},
    ]
    expected = reference_render(template, messages, tools=TOOLS, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "untyped"))
    rendered = engine.render(conversion.template, messages, tools=TOOLS)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_namespace_attribute_set_to_none_tests_as_none(engine: oracle.Oracle) -> None:
    template = (
        "{% set ns = namespace(fmt=none) %}{% for m in messages %}{{ ns.fmt is none }}"
        "{% if m.role == 'assistant' %}{% set ns.fmt = 'text' %}{% endif %}{% endfor %}{{ ns.fmt is none }}"
    )
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "v"},
    ]
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "ns-none")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_gemma_style_type_lists_and_missing_attributes(engine: oracle.Oracle) -> None:
    """`|map('upper') | list` of an untyped list, attributes of lists and |upper of Undefined."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | items %}"
        "{% if v is sequence and v is not string and v is not mapping %}{% set up = v | map('upper') | list %}"
        "{% for u in up %}{{ u }}{% if not loop.last %},{% endif %}{% endfor %}{{ up | length }}{{ up is sequence }}{% endif %}"
        "[{{ v.description | upper }}];{% endfor %}{% endfor %}{% endfor %}"
        "{% for t in tools %}{% for n, p in t.function.parameters.properties | items %}{% if p.enum %}{{ p.enum.description | upper }}.{% endif %}{% endfor %}{% endfor %}"
    )
    args = {"n": "x", "types": ["string", "null"]}  # Ollama sorts keys; case changes are ASCII-only (warned)
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": args}}]},
    ]
    expected = reference_render(template, messages, tools=TOOLS, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "gemma")).template, messages, tools=TOOLS)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_map_attribute_of_a_selection_as_json(engine: oracle.Oracle) -> None:
    """`tools | selectattr(..) | map(attribute=..) | list | tojson`, printed, indented and captured;
    an empty selection is `[]`, and `dict(k=v)` is a dict literal."""
    template = (
        "{{ tools | map(attribute='function') | list | tojson(indent=2) }}\n"
        "{% set ns = namespace(f='') %}{% set ns.f = tools | selectattr('type', 'eq', 'function') | map(attribute='function') | list | tojson %}"
        "{% if ns.f %}[{{ ns.f }}]{% endif %}\n{{ tools | map(attribute='function.name') | list | tojson }}"
        "{{ tools | map(attribute='function') | list | length }}"
        "{{ tools | selectattr('type', 'eq', 'none') | map(attribute='function') | list | tojson }}"
        "{% if tools | selectattr('type', 'eq', 'none') | map(attribute='function') | list %}!{% endif %}"
        "{{ messages | map(attribute='role') | list | tojson }}{{ dict(role=messages[0].role, n=1) | tojson }}"
    )
    rendered, expected = render_both(template, engine)
    assert rendered == expected


def test_map_attribute_without_list_warns_where_jinja_fails() -> None:
    """Jinja's `map` is a generator, which json.dumps refuses: the converter renders the list and says so."""
    conversion = convert(TemplateSource("{{ tools | map(attribute='function') | tojson }}", {}, "lazy-map"))
    assert "tojson of |map(...) without |list" in [w.construct for w in conversion.warnings]
    with pytest.raises(ConversionError, match="map"):
        convert(
            TemplateSource("{% set fs = tools | map(attribute='function') | list %}{{ fs | tojson }}", {}, "stored-map")
        )


def test_type_lists_in_tool_json_follow_the_layout(engine: oracle.Oracle) -> None:
    """A property's `type` list is written with the separators and indentation of the rest of the
    JSON, printed (the helpers) and captured (the inline writer) alike."""
    tools = one_function(
        {
            "a": {"type": ["string", "null"], "description": "x"},
            "b": {"type": "array", "items": {"type": ["integer", "string"]}},
        },
        ["a"],
    )
    template = (
        "{{ tools | tojson }}{% set x = tools | tojson %}{{ x }}{{ tools | tojson(separators=(';', '=')) }}"
        "{{ tools | tojson(indent=2) }}{% set y = tools | tojson(indent=3) %}{{ y }}"
        "{{ tools[0].function.parameters.properties.a | tojson(indent=1) }}"
    )
    messages = [{"role": "user", "content": "u"}]
    expected = reference_render(template, messages, tools=tools)
    rendered = engine.render(convert(TemplateSource(template, {}, "type-lists")).template, messages, tools=tools)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_get_of_untyped_values_gives_none_or_the_default_for_a_missing_key(engine: oracle.Oracle) -> None:
    """`v.get(k)` of an argument value is None where the key is missing, `v.get(k, d)` is `d`:
    printed, tested and stored, as Python's dict.get gives them."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | items %}"
        "{% if v is mapping %}{{ k }}:{{ v.get('x') }}|{{ v.get('x') is none }}|{{ v.get('x') is defined }}"
        "|{{ v.get('x', 'dflt') }}|{{ v.get('x', 7) }}{% set got = v.get('y', '-') %}|{{ got }};{% endif %}"
        "{% endfor %}{% endfor %}{% endfor %}"
    )
    args = {"a": {"x": None, "y": "b"}, "b": {"x": [1, "s"]}, "c": {}, "d": {"x": "q", "y": 2}}
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": args}}]},
    ]
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "get")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_get_of_untyped_values_with_an_empty_container_default_warns(engine: oracle.Oracle) -> None:
    """Go has no empty-dict literal: `.get(k, {})` gives Undefined for a missing key, which loops
    and counts like `{}` (rendered alike here) but would print differently, so it is warned."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | items %}"
        "{% if v is mapping %}{{ k }}:{{ v.get('x', {}) | length }}{% for i in v.get('x', []) %}[{{ i }}]{% endfor %};{% endif %}"
        "{% endfor %}{% endfor %}{% endfor %}"
    )
    args = {"a": {"x": ["p", "q"]}, "b": {}}
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": args}}]},
    ]
    conversion = convert(TemplateSource(template, {}, "get-empty"))
    assert {".get(key, {}) of an untyped value", ".get(key, []) of an untyped value"} <= {
        w.construct for w in conversion.warnings
    }
    rendered = engine.render(conversion.template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == reference_render(template, messages, add_generation_prompt=False)


def test_optional_schema_keys_tested_with_in_follow_ollamas_fields(engine: oracle.Oracle) -> None:
    """A tool sent without a description (or without required parameters) has no such key in
    the dict transformers passes, and Ollama leaves the field empty: `in` agrees with both."""
    template = (
        "{% for t in tools %}{{ t.function.name }}:{{ 'description' in t.function }}"
        "{{ 'required' in t.function.parameters }}{{ t.function.description is defined }};{% endfor %}"
    )
    tools = [
        {"type": "function", "function": {"name": "bare", "parameters": {"type": "object", "properties": {}}}},
        TOOLS[0],
    ]
    expected = reference_render(template, MESSAGES, tools=tools, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "optional-in")).template, MESSAGES, tools=tools)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_a_property_with_only_any_of_has_no_type(engines: dict[str, oracle.Oracle]) -> None:
    """A property without `type` (only `anyOf`): its `type` is Undefined, falsy and not defined,
    where reading the first of Ollama's type names failed the render."""
    tools = one_function({"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "b": {"type": "string"}}, ["a"])
    template = (
        "{% for t in tools %}{% for k, p in t.function.parameters.properties.items() %}{{ k }}:"
        "{% if p.type %}{{ p.type }}{% else %}-{% endif %}{{ p.type is defined }}{{ p['type'] == 'string' }};"
        "{% endfor %}{% endfor %}"
    )
    messages = [{"role": "user", "content": "hi"}]
    go_template = convert(TemplateSource(template, {}, "any-of")).template
    expected = reference_render(template, messages, tools)
    for version, engine in engines.items():
        assert engine.render(go_template, messages, tools).prompt == expected, version
