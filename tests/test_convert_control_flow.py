"""Control flow and variables Go lacks (neighbour items, ranges, tuple and filtered assignments)
render through Ollama's engine exactly as jinja2 renders them."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.verify.reference import render as reference_render

CALL = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
#: two tool results in a row, then one alone: neighbours differ in role at every boundary
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL, CALL]},
    {"role": "tool", "content": "18C"},
    {"role": "tool", "content": "21C"},
    {"role": "assistant", "content": "Warm."},
    {"role": "user", "content": "And Oslo?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "content": "4C"},
]


@pytest.fixture(scope="module")
def engine():
    with oracle.Oracle() as pinned:
        yield pinned


def assert_renders_like_jinja(engine: oracle.Oracle, template: str, messages: list[dict[str, Any]] = MESSAGES) -> None:
    expected = reference_render(template, messages, add_generation_prompt=True)
    rendered = engine.render(convert(TemplateSource(template, {}, "construct")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_previtem_and_nextitem_group_consecutive_tool_results(engine: oracle.Oracle) -> None:
    """The Qwen pattern: open a user turn before the first of several tool results, close it after the last."""
    template = (
        "{% for m in messages %}{% if m.role == 'tool' %}"
        "{% if loop.previtem and loop.previtem.role != 'tool' %}<user>{% endif %}[{{ m.content }}]"
        "{% if not loop.last and loop.nextitem.role != 'tool' %}</user>{% elif loop.last %}</user>{% endif %}"
        "{% else %}{{ m.role }};{% endif %}"
        "{{ loop.previtem is defined }}{{ loop.nextitem is defined }}{% if loop.nextitem %}>{{ loop.nextitem.role }}{% endif %}\n"
        "{% endfor %}{% for c in messages[2].tool_calls %}{% if loop.previtem %}{{ loop.previtem.function.name }}<{% endif %}{{ c.function.name }}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_or_and_of_texts_is_text(engine: oracle.Oracle) -> None:
    """`content or ''` (and `a and b`) yield one of the strings, which `+` then joins like Python."""
    template = (
        "{% set ns = namespace(text='') %}{% for m in messages %}"
        "{% set ns.text = ns.text + (m.content or '-') + '|' + (m.content and m.role) %}{% endfor %}{{ ns.text }}"
        "{{ messages[-1].content or 'empty' }}"
    )
    messages = [*MESSAGES, {"role": "assistant", "content": "Cold."}, {"role": "user", "content": ""}]
    assert_renders_like_jinja(engine, template, messages)


#: in the key order transformers' get_json_schema writes (the order Ollama's JSON is written in)
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather <now> & 'here'", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "description": "a \"city\""}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}},
]


def test_list_filtered_on_some_paths_and_chained_filters(engine: oracle.Oracle) -> None:
    """functionary: `set tools = tools | rejectattr(..)` inside an `if` filters only on that path;
    chained selectattr/rejectattr filters and a selection's truth count the passing elements."""
    template = (
        "{% set many = tools | length > 1 %}{% if many %}{% set tools = tools | rejectattr('function.name', 'equalto', 'search') | list %}{% endif %}"
        "{% if tools %}{% for t in tools %}[{{ t.function.name }}]{% endfor %}{{ tools | length }}{% endif %}"
        "{% set users = messages | rejectattr('role', 'equalto', 'system') | selectattr('role', 'equalto', 'user') %}"
        "{% for m in users %}<{{ m.content }}>{% endfor %}{% if messages | selectattr('role', 'equalto', 'nobody') | list %}!{% endif %}"
    )
    for tools in (TOOLS, TOOLS[:1]):
        expected = reference_render(template, MESSAGES, tools=tools, add_generation_prompt=True)
        rendered = engine.render(convert(TemplateSource(template, {}, "filtered")).template, MESSAGES, tools=tools)
        assert rendered.error is None, rendered.error
        assert rendered.prompt == expected


def test_safe_string_plus_text_is_html_escaped_like_markup(engine: oracle.Oracle) -> None:
    """`'...'|safe + value` is a Markup concatenation in Python: the plain operands come out HTML-escaped."""
    template = (
        "{% for t in tools %}{{ \"Use '\" | safe + t.function.name + \"' to '\" + t.function.description + \"'\\n\" | safe + t.function | tojson }}\n"
        "{% set line = t.function.description + ('<b>' | safe) %}{{ line }}{{ t.function.description + '&' }}\n{% endfor %}"
    )
    expected = reference_render(template, MESSAGES, tools=TOOLS, add_generation_prompt=True)
    rendered = engine.render(convert(TemplateSource(template, {}, "markup")).template, MESSAGES, tools=TOOLS)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_loop_variables_count_only_the_elements_a_filter_lets_through(engine: oracle.Oracle) -> None:
    """In `for x in xs if ...` and `for x in xs | selectattr(..)`, loop.index/first/last/length
    number the passing elements (the `if` on the loop is not an `if` in its body)."""
    template = (
        "{% for m in messages if m.role != 'tool' %}{{ loop.index }}/{{ loop.length }}{{ m.role }}{% if loop.first %}^{% endif %}{% if loop.last %}${% endif %};{% endfor %}\n"
        "{% for m in messages | selectattr('role', 'equalto', 'tool') %}{{ loop.index0 }}{{ m.content }}{{ loop.last }};{% endfor %}\n"
        "{% for m in messages | rejectattr('role', 'equalto', 'tool') if m.content %}{{ loop.index }}:{{ m.content }}{% if not loop.last %}, {% endif %}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_tuple_assignment_sets_each_name(engine: oracle.Oracle) -> None:
    """`set a, b, c = x, y, z` (Apriel) assigns pairwise, also on one path only."""
    template = (
        "{% set sep, role, flag = ', ', messages[0].role, true %}{{ role }}{{ sep }}{{ flag }}"
        "{% for m in messages %}{% if m.role == 'tool' %}{% set sep, flag = ' | ', false %}{% endif %}{{ m.role }}{{ sep }}{% endfor %}{{ flag }}"
    )
    assert_renders_like_jinja(engine, template)
