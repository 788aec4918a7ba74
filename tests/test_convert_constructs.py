"""Each emulated Jinja construct renders through Ollama's engine exactly as jinja2 renders it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from jinja2 import nodes

from ollama_fc import jinja, oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.ops.filters import FILTERS
from ollama_fc.convert.ops.logic import TESTS
from ollama_fc.errors import ConversionError
from ollama_fc.hf.reference import render as reference_render

MESSAGES = [
    {"role": "system", "content": "  Be brief.\n"},
    {"role": "user", "content": " Caf\u00e9 <b> & {{x}} </think>tail "},
    {"role": "assistant", "content": "thought</think> answer  "},
    {"role": "user", "content": "last"},
]


def as_hf(messages: Any) -> list[dict[str, Any]]:
    """The conversation as a Hugging Face template takes it: each tool call wrapped as a function."""
    return [
        {**m, "tool_calls": [{"type": "function", "function": c["function"]} for c in m["tool_calls"]]}
        if "tool_calls" in m
        else m
        for m in messages
    ]


def call_conversation(arguments: dict[str, Any], user: str = "q") -> list[dict[str, Any]]:
    """A user turn, then an assistant turn calling `f` with `arguments`, as Ollama receives it."""
    return [
        {"role": "user", "content": user},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": arguments}}]},
    ]


CONSTRUCTS = {
    "trim": "{% for m in messages %}[{{ m.content | trim }}]{% endfor %}",
    "strip_methods": "{% for m in messages %}[{{ m.content.lstrip() }}|{{ m.content.rstrip() }}]{% endfor %}",
    "startswith_endswith": "{% for m in messages %}{{ m.content.startswith(' Caf') }}{{ m.content.endswith('  ') }}{% endfor %}",
    "split_last_and_first": "{% for m in messages %}<{{ m.content.split('</think>')[-1] }}|{{ m.content.split('</think>')[0] }}>{% endfor %}",
    "substring_in": "{% for m in messages %}{{ '</think>' in m.content }}{% endfor %}",
    "loop_variables": "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}",
    "namespace": "{% set ns = namespace(n=0, seen=false) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.n = ns.n + 1 %}{% set ns.seen = true %}{% endif %}{% endfor %}{{ ns.n }} {{ ns.seen }}",
    "namespace_given_to_macro": "{% macro show(n) %}[{{ n.s }}]{% endmacro %}{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s + m.role %}{% endfor %}{{ show(ns) }}",
    "negative_index_and_slice": "{{ messages[-1].content }}|{% for m in messages[1:] %}{{ m.role }}{% endfor %}|{% for m in messages[:-1] %}{{ m.role }}{% endfor %}",
    "neighbour_index": "{% for m in messages %}{% if not loop.last and messages[loop.index0 + 1].role == 'user' %}!{% endif %}{% if loop.index0 > 0 and messages[loop.index0 - 1].role == 'system' %}^{% endif %}{% endfor %}",
    "inline_if_and_concat": "{% for m in messages %}{{ ('<' + m.role + '>') if m.role != 'system' else 'SYS' }}{% set x = m.role ~ ':' ~ loop.index %}{{ x }}{% endfor %}",
    "literal_braces": "{{ '{{' }} }} {% raw %}{{ raw }}{% endraw %}{",
    "in_list_and_defined": "{% for m in messages %}{{ m.role in ['user', 'system'] }}{{ m.tool_calls is defined }}{% endfor %}{{ foo is defined }}",
    "set_in_if_and_scope": "{% set sys = '' %}{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% set rest = messages[1:] %}{% else %}{% set rest = messages %}{% endif %}[{{ sys }}]{% for m in rest %}{% set sys = 'x' %}{% endfor %}[{{ sys }}]{{ rest | length }}",
    "macro": "{% macro show(c, tag='t') %}<{{ tag }}>{{ c | trim }}</{{ tag }}>{% endmacro %}{% for m in messages %}{{ show(m.content) }}{{ show(m.role, tag='r') }}{% endfor %}",
    "generation_prompt": "{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<start>{% endif %}",
    "redefined_globals": "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% if strftime_now is defined %}[date]{% endif %}{% if add_generation_prompt %}<start>{% endif %}",
    "defined_on_some_paths": "{% for m in messages %}{% if m.role == 'system' %}{% set sys = m.content %}{% endif %}{% endfor %}{% if messages[0].role == 'user' %}{% set first = 1 %}{% endif %}{{ first is defined }}{{ sys is defined }}",
    "strong_update_changes_type": "{% for m in messages %}{% set m = m.content %}[{{ m | trim }}]{% endfor %}",
    "in_undefined": "{{ 'citations' in controls }}{% if builtin_tools is defined and messages[0].content in builtin_tools %}!{% endif %}",
    "literal_lists": "{% set roles = ['system', 'user'] %}{% for m in messages %}{{ m.role in roles }}{% endfor %}{{ roles | join(', ') }}{% for r in ['a', 'b', 'c'] %}{{ r }}{{ loop.index }}{{ loop.last }}{% endfor %}{% for m in messages or [] %}.{% endfor %}",
    "filtered_list_variable": "{% set users = messages | selectattr('role', 'equalto', 'user') | list %}{{ users | length }}{% for u in users %}[{{ u.content }}]{% endfor %}",
    "reverse_loop": "{% for m in messages[::-1] %}{{ loop.index0 }}{{ m.role }}{{ loop.last }};{% endfor %}{{ messages[::-1] | length }}",
    "concat_truth": "{% set ns = namespace(s='') %}{% for m in messages %}{% set x = '<' + m.content %}{% set y = '' ~ m.content ~ '' %}{% if x %}X{% endif %}{% if y %}Y{% endif %}{% set ns.s = ns.s + m.role[:0] %}{% if ns.s %}S{% endif %}{% set ns.s = ns.s + '.' %}{% if ns.s %}T{% endif %}{% endfor %}",
    "reversed_positions": "{% for m in messages[::-1] %}{{ (messages|length - 1) - loop.index0 }}:{{ loop.revindex0 }}:{{ m.role }};{% endfor %}{% for m in messages %}{{ (messages|length - 1) - loop.index0 }}{% endfor %}",
    "lower_upper": "{% for m in messages %}{{ m.role | upper }}{{ m.role | lower }}{{ (m.content | lower) if m.role == 'system' }}{% endfor %}",
    "namespace_new_attribute": "{% set ns = namespace(a=1) %}{% for m in messages %}{% if ns.last %}({{ ns.last }}){% endif %}{% set ns.last = m.role %}{% endfor %}{{ ns.last }}",
    "set_block": "{% set intro %}Roles:{% for m in messages %} {{ m.role }}{% if loop.last %}.{% endif %}{% endfor %}\n{% endset %}{{ intro | trim }}|{{ intro }}",
    "macro_as_value": "{% macro visible(c) %}{{ c.split('</think>')[-1] }}{% endmacro %}{% for m in messages %}{% set v = visible(m.content) %}[{{ v | trim }}]{{ visible(m.content).endswith(' ') }}{% endfor %}",
    "replace": "{% for m in messages %}[{{ m.content.replace('</think>', '').replace('a', m.role).replace(' ', '') }}]{% set r = m.content.replace('{{', '<>') %}{{ r }}{% endfor %}",
    "runtime_string_list": "{% set ns = namespace(seen=[], tags=['<a>']) %}{% set names = [] %}{% for m in messages %}{% if m.role not in ns.seen %}{% set ns.seen = ns.seen + [m.role] %}{% endif %}{% set ns.tags = ns.tags + ['<' + m.role + '>', 'x'] %}{% set names = names + [m.role ~ loop.index] %}{% endfor %}{{ ns.seen | join(', ') }}|{{ ns.seen | length }}|{{ 'user' in ns.seen }}{{ 'use' in ns.seen }}|{{ ns.tags | join }}|{{ names | first }}{{ names[-1] }}{% for n in names %}{{ loop.index0 }}{{ n }}{{ loop.last }}{{ loop.length }};{% endfor %}{% for n in ns.seen if n != 'user' %}[{{ n }}]{% endfor %}{% set e = namespace(l=[]) %}{{ e.l | join('-') }}{{ e.l | length }}{% if not e.l %}empty{% endif %}{% for x in e.l %}?{% else %}none{% endfor %}",
    "loop_over_undefined": "{% for d in extra_items %}{{ d }}{% else %}no items{% endfor %}",
    "dict_literals": "{% set names = {'user': 'U', 'assistant': 'A', 'system': 'S'} %}{% macro turn(msg) %}<{{ msg.role }}:{{ msg['content'] | trim }}>{% endmacro %}{% for m in messages %}{{ names[m.role] }}{% if names[m.role + 'x'] is defined %}!{% endif %}{{ m.role in names }}{{ turn({'role': m.role | upper, 'content': m.content}) }}{% endfor %}{{ names.user }}{{ names.get('tool', '-') }}{{ {'a': 1} | tojson }}",
    "filter_block": "{% filter trim %}\n  {% for m in messages %} {{ m.role }} {% endfor %}\n{% endfilter %}|{% set x %}{% filter upper | trim %} a{{ messages[0].role }} {% endfilter %}{% endset %}[{{ x }}]",
    "selected_element_and_message_equality": "{% set users = messages | selectattr('role', 'equalto', 'user') | list %}{% for m in messages %}{% if m == users[-1] %}<last user>{% endif %}{% if m == users[0] %}<first user>{% endif %}{{ m.role }}{% endfor %}{{ (messages | selectattr('role', 'equalto', 'assistant') | list)[0].content }}",
    "attribute_of_a_string": "{% for m in messages %}{% if m.content.content is defined %}{{ m.content.content }}{% else %}{{ m.content | string }}{% endif %}{% endfor %}",
    "mapping_compared_with_string": "{% if messages[0].role == 'system' %}{% set sys = messages[0] %}{% endif %}{% if sys and sys != '' %}[{{ sys.content }}]{% endif %}{{ messages[0] == 'x' }}{{ messages != '' }}",
    "string_slicing": "{% for m in messages %}[{{ m.content[:-1] }}|{{ m.content[2:] }}|{{ m.content[-3:] }}|{{ m.content[1:-2] }}|{{ m.content[-2:1] }}|{{ m.content[-40:] }}|{{ m.content[5:-40] }}]{% set j = {'r': m.role, 'n': loop.index} | tojson %}{{ j[:-1] }}{% endfor %}",
    "runtime_affixes_lengths_and_slices": "{% set ns = namespace(prev='x') %}{% for m in messages %}{% set tail = m.content[-3:] %}{% set n = (m.content | length) - (tail | length) %}[{{ m.content.endswith(tail) }}{{ m.content.startswith(ns.prev) }}{{ m.role.endswith(ns.prev) }}|{{ m.content | length }}|{{ m.content[:n] }}|{{ m.content[n:] }}|{{ m.content[2:n] }}|{{ m.content[n:2] }}|{{ m.content[:n + 40] }}]{% set ns.prev = m.role[:2] %}{% endfor %}",
    "compared_with_a_bool": "{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% else %}{% set sys = false %}{% endif %}{{ sys != false }}{{ sys == false }}{% for m in messages %}{{ m.content != false }}{{ m.content == true }}{{ (m.content | length) != false }}{{ loop.index0 == false }}{{ loop.first != true }}{% endfor %}",
    "python_title_method": "{% for m in messages %}{{ m.role.title() }}|{{ m.content.title() }}|{{ 'it\\'s 1st-rate o\\'neil'.title() }};{% endfor %}",
    "str_format": "{% set tag = messages[0].role %}{% for m in messages %}{{ '<{}:{}>'.format(tag, loop.index) }}{% set s = '{0}/{0}{{x}}{r}'.format(m.role, r=m.content | trim) %}{{ s }}{% endfor %}{{ 'n={}'.format(messages | length) }}",
    "substring_in_with_a_run_time_needle": "{% set ns = namespace(seen='') %}{% for m in messages %}{{ (',' ~ m.role ~ ',') in ns.seen }}{% set ns.seen = ns.seen ~ ',' ~ m.role ~ ',' %}{{ m.content[2:6] in messages[1].content }}{{ m.content[:0] in m.content }}{{ m.role in 'users' }}{% endfor %}",
    "characters_of_message_text": "{% for m in messages %}{% for c in m.content %}{{ c | tojson }}{{ loop.index }}{% endfor %}|{% endfor %}",
    "filtered_for_else": "{% for m in messages if m.role == 'tool' %}{{ m.content }}{% else %}no tools{% endfor %}|{% for m in messages if m.role == 'user' %}[{{ loop.index }}{{ m.content }}]{% if loop.last %}{% break %}{% endif %}{% else %}none{% endfor %}|{% for m in messages | selectattr('role', 'equalto', 'system') %}S{% else %}no system{% endfor %}{% for m in messages | rejectattr('role', 'ne', 'tool') %}?{% else %}!{% endfor %}",
    "constant_filters": "{{ 'a b' | capitalize }}|{{ 'ab' | center(6) }}|{{ 'a b c' | wordcount }}|{{ 'a\\nb' | indent(2) }}|{{ 'x%sy' | format('-') }}|{{ '12' | int + 1 }}|{{ [3, 1] | max }}{{ [3, 1] | min }}|{% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}|{% for k, v in {'b': 1} | items %}{{ k }}{% endfor %}|{{ 'ab' | replace('a', 'c') }}|{{ 'ab cd' | title }}|{{ '<b>' | safe }}",
    "filters_of_message_fields": "{% for m in messages %}[{{ m.content | replace('a', 'A') }}|{{ m.role | title }}|{{ m.content | default('-') }}{{ unset | default('-') }}|{{ m.content | count }}|{{ m.content.split(' ') | last }}]{% endfor %}{{ messages | map(attribute='role') | list | tojson }}",
    "tests_of_values": "{% for m in messages %}{{ m.content is string }}{{ m is mapping }}{{ m.content is iterable }}{{ m.content is sequence }}{{ m.role is none }}{{ m.role is equalto 'user' }}{{ m.role is eq 'user' }}{{ m.tool_calls is undefined }};{% endfor %}{{ 1 is number }}{{ 1 is integer }}{{ true is boolean }}{{ true is true }}{{ false is false }}{{ none is none }}",
    "selectattr_count": "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}{% for m in messages | rejectattr('role', 'equalto', 'user') %}{{ m.role }}{% endfor %}",
}


#: Registered filters and tests the table above cannot show, and where they are checked instead.
CHECKED_ELSEWHERE = {
    "select": "test_convert_schema.py: keys of a tool schema (the table renders no tools)",
    "reject": "test_convert_schema.py: keys of a tool schema (the table renders no tools)",
    "sameas": "not rendered: Python's `is` on strings depends on interning, so no reference to match",
}


def test_every_registered_filter_and_test_is_in_the_table() -> None:
    """A new filter or test is one registered function (ops/filters.py, ops/logic.py) plus a
    line in CONSTRUCTS rendering it against the reference."""
    used: set[str] = set()
    for template in CONSTRUCTS.values():
        tree = jinja.parse(template)
        used |= {node.name for node in tree.find_all((nodes.Filter, nodes.Test))}
    registered = set(FILTERS) | set(TESTS)
    assert sorted(registered - used - set(CHECKED_ELSEWHERE)) == []


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_construct_renders_like_jinja(name: str, engine: oracle.Oracle) -> None:
    template = CONSTRUCTS[name]
    conversion = convert(TemplateSource(template, {}, name))
    expected = reference_render(template, MESSAGES, add_generation_prompt=True)
    rendered = engine.render(conversion.template, MESSAGES)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_tojson_with_indent_and_python_repr_match_python() -> None:
    from ollama_fc.verify.battery import case_named

    case = case_named("parallel_calls")
    template = (
        "{% for t in tools %}{{ t | tojson }}\n{{ t | tojson(indent=2) }}\n{% endfor %}"
        "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson }} {{ c.function.arguments }}\n{% endfor %}{% endif %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "tojson"))
    hf_messages = as_hf(case.messages)
    expected = reference_render(template, hf_messages, list(case.tools))
    assert oracle.render(conversion.template, list(case.messages), list(case.tools)) == expected
    assert any(w.construct.startswith("tojson") for w in conversion.warnings)


def test_string_arguments_in_plus_and_role_printed_as_is() -> None:
    """`'...' + arguments` only works on a JSON string; a tool `type == 'function'` is no role name."""
    import json

    from ollama_fc.verify.battery import case_named

    case = case_named("tool_call_result")
    template = (
        "{% for t in tools %}{% if t.type == 'function' %}[{{ t.function.name }}]{% endif %}{% endfor %}"
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
        "{% for c in m.tool_calls or [] %}{{ '\\n' + c.function.name + ' ' + c.function.arguments }}{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "string-arguments"))
    hf_messages = [
        {
            **m,
            "tool_calls": [
                {"type": "function", "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
                for c in m["tool_calls"]
            ],
        }
        if "tool_calls" in m
        else m
        for m in case.messages
    ]
    expected = reference_render(template, hf_messages, list(case.tools))
    assert "<tool>" in expected
    assert oracle.render(conversion.template, list(case.messages), list(case.tools)) == expected


def test_untyped_value_prints_like_jinja() -> None:
    """An argument value prints bare when it is a string and as Python repr otherwise."""
    from ollama_fc.verify.battery import case_named

    case = case_named("parallel_calls")
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{{ k }}=<{{ v }}>{{ v | tojson if v is not string else v }};{% endfor %}{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "untyped"))
    hf_messages = as_hf(case.messages)
    expected = reference_render(template, hf_messages, list(case.tools))
    assert oracle.render(conversion.template, list(case.messages), list(case.tools)) == expected


def test_text_plus_an_untyped_value_is_the_string_it_holds() -> None:
    """`str + v` works in Python only when `v` is a string: a value made one (by tojson) or a string argument."""
    template = (
        "{% set open = '[' %}{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{% if v is not string %}{% set v = v | tojson %}{% endif %}{{ open + v }}{% set line = v + open %}{{ line }};{% endfor %}{% endfor %}{% endfor %}"
    )
    arguments = {"flag": True, "list": [1, "a"], "text": "caf\u00e9 'q'"}  # Ollama sorts keys
    messages = call_conversation(arguments)
    conversion = convert(TemplateSource(template, {}, "plus-untyped"))
    hf_messages = as_hf(messages)
    assert oracle.render(conversion.template, messages) == reference_render(template, hf_messages)
    assert "'+' of text and an untyped value" in [w.construct for w in conversion.warnings]


def test_namespace_attribute_set_on_some_paths_and_an_empty_list_beside_tool_calls() -> None:
    """`ns.x is defined` follows whether some `set ns.x` ran; `calls if ... else []` is an empty list."""
    from ollama_fc.verify.battery import case_named

    template = (
        "{% set ns = namespace(n=0) %}{% if messages[0].role == 'system' %}{% set ns.sys = messages[0].content %}{% else %}{% set ns.sys = '' %}{% endif %}"
        "{{ ns.sys is defined }}{% if messages[-1].role == 'assistant' %}{% set ns.last = messages[-1].tool_calls if 'tool_calls' in messages[-1] else [] %}{% endif %}"
        "{% for m in messages %}{% set calls = m.tool_calls if 'tool_calls' in m else [] %}[{{ calls | length }}{% for c in calls %}{{ c.function.name }}{% endfor %}]{% endfor %}"
        "{{ ns.last is defined }}{% if ns.last is defined %}{{ ns.last | length }}{% endif %}"
    )
    conversion = convert(TemplateSource(template, {}, "ns-defined"))
    for name in ("tool_call_result", "single_turn", "prefill", "system_prompt"):
        case = case_named(name)
        hf_messages = as_hf(case.messages)
        expected = reference_render(template, hf_messages, list(case.tools) or None)
        assert oracle.render(conversion.template, list(case.messages), list(case.tools) or None) == expected, name


def test_string_of_an_untyped_value_is_str() -> None:
    """`v | string` of an argument value is Python's str(): bare text, True/False, None, numbers."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{% set s = v | string %}{{ k }}=<{{ s }}>;{% endfor %}{% endfor %}{% endfor %}"
    )
    arguments = {"flag": True, "n": 3, "none": None, "off": False, "text": "caf\u00e9 'q'"}  # Ollama sorts keys
    messages = call_conversation(arguments)
    conversion = convert(TemplateSource(template, {}, "string-of-untyped"))
    hf_messages = as_hf(messages)
    assert oracle.render(conversion.template, messages) == reference_render(template, hf_messages)
    constructs = [w.construct for w in conversion.warnings]
    assert constructs[0] == "iterating tool call arguments"
    assert all(
        c.startswith("repr of a value nested deeper") for c in constructs[1:]
    )  # lists and dicts: repr up to a depth


def test_case_changed_untyped_value_compared_with_text_matches_jinja(engine: oracle.Oracle) -> None:
    """`v | upper == 'STRING'` of an argument value: only a string of that spelling passes (no
    number, None, bool, list or dict prints as it); constants such a str() can spell, such as
    'NONE' or 'TRUE', still compare the str() of the value."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{{ k }}:{{ v | upper == 'STRING' }},{{ v | lower != 'string' }},{{ 'Str' == v | string }},"
        "{{ v | upper == 'NONE' }},{{ v | lower == 'true' }},{{ v | string | upper == '[1]' }};"
        "{% endfor %}{% endfor %}{% endfor %}"
    )
    arguments = {
        "a": "string",
        "b": "String",
        "c": "STRING",
        "d": "strings",
        "e": "str",
        "f": "Str",
        "g": None,
        "h": True,
        "i": 5,
        "j": ["string"],
        "k": {"string": "string"},
        "l": [1],
        "m": "none",
        "n": "",
    }
    messages = call_conversation(arguments)
    conversion = convert(TemplateSource(template, {}, "case-compare"))
    expected = reference_render(template, as_hf(messages))
    assert expected.count("True") >= 8  # (the comparisons do pass for some values)
    assert engine.render(conversion.template, messages).prompt == expected
    # compared byte by byte, either case, without changing the case of the whole value
    assert re.search(r'\(eq \(slice \$\w+ 0 1\) "S" "s"\)', conversion.template), conversion.template


def test_repr_of_strings_printed_or_captured_matches_python(engine: oracle.Oracle) -> None:
    """Python's repr() of each string, printed (the `ofc_repr_str` define) and captured (inline):
    the quote it chooses and what it escapes, for strings written as they are and for others."""
    texts = [
        "plain",
        "it's",
        'say "hi"',
        "both ' and \"",
        "back\\slash",
        "tab\there",
        "caf\u00e9",
        "\u00ad",
        "\u2028",
        "x" * 100,
    ]
    arguments = {f"k{i}": text for i, text in enumerate(texts)}  # (in Ollama's sorted key order)
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments }}|"
        "{% set s = c.function.arguments | string %}{{ s }}{% endfor %}{% endfor %}"
    )
    messages = call_conversation(arguments)
    conversion = convert(TemplateSource(template, {}, "repr-strings"))
    assert engine.render(conversion.template, messages).prompt == reference_render(template, as_hf(messages))


def test_case_change_of_free_text_warns() -> None:
    """Non-ASCII letters keep their case in Go, so `|upper` on message text must say so."""
    conversion = convert(TemplateSource("{% for m in messages %}{{ m.content | upper }}{% endfor %}", {}, "upper"))
    assert [w.construct for w in conversion.warnings] == ["|upper"]


def test_tojson_inside_expressions_matches_python() -> None:
    """`tojson` stored in a variable or concatenated is written inline, as the printing helper writes it."""
    from ollama_fc.verify.battery import case_named

    case = case_named("parallel_calls")
    template = (
        "{% set ns = namespace(text='') %}{% for t in tools %}{% set ns.text = ns.text + '\\n' + (t | tojson) %}{% endfor %}"
        "{% set block = '[TOOLS]' + (tools | tojson(indent=2)) + '[/TOOLS]' %}{{ ns.text }}\n{{ block }}\n"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% set call = c.function | tojson %}{{ call }}"
        "{% set args = c.function.arguments | tojson %}{{ args }}{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "tojson-expressions"))
    hf_messages = as_hf(case.messages)
    expected = reference_render(template, hf_messages, list(case.tools))
    assert oracle.render(conversion.template, list(case.messages), list(case.tools)) == expected


def test_tojson_of_tool_calls_and_absent_tools_match_python() -> None:
    """A whole tool call dumps like the HF dict (id, type, function); no tools dump as `null`."""
    from ollama_fc.verify.battery import case_named

    template = (
        "{% set listing = 'T:' + (tools | tojson) %}{{ listing }}"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}<{{ c | tojson }}>{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "tojson-calls"))
    for name, tools in (("tool_call_result", None), ("single_turn", None)):
        case = case_named(name)
        hf_messages = [
            {
                **m,
                "tool_calls": [
                    {**({"id": c["id"]} if "id" in c else {}), "type": "function", "function": c["function"]}
                    for c in m["tool_calls"]
                ],
            }
            if "tool_calls" in m
            else m
            for m in case.messages
        ]
        expected = reference_render(template, hf_messages, list(case.tools) or tools)
        assert oracle.render(conversion.template, list(case.messages), list(case.tools) or None) == expected


def test_tojson_escapes_strings_like_python_at_any_depth() -> None:
    """Control characters, DEL, no-break spaces, `<>&` and deep nesting come out as json.dumps writes them,
    printed and captured alike (`z` is captured: its length is asked); only the captured copy may warn
    about depth."""
    text = 'a\x07b\x0bc\x1bd\x7fe\u00a0f\u2028g<h>&i"j\\k\nl\tm\x08\x0c\r\U0001f600 caf\u00e9'
    arguments = {"a": [{"b": {"c": [[{"d": {"e": [text, 1.5, True, None]}}]]}}], "z": text}
    # each character on its own too, through each test of a fast path (Ollama sorts the keys)
    arguments = dict(sorted({**arguments, **{f"s{i:02}": f"x{char}y" for i, char in enumerate(text)}}.items()))
    messages = call_conversation(arguments, text)
    template = (
        "{% for m in messages %}{{ m.content | tojson }}{% set kept = m.role | tojson %}{{ kept }}"
        "{% if m.tool_calls %}{{ m.tool_calls | tojson }}{{ m.tool_calls[0].function.arguments | tojson }}"
        "{% set z = '<' + (m.tool_calls[0].function.arguments.z | tojson) + '>' %}{{ z }}{{ z | length }}{% endif %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "json-strings"))
    hf_messages = as_hf(messages)
    assert oracle.render(conversion.template, messages) == reference_render(template, hf_messages)
    assert [w.construct for w in conversion.warnings if "deeper" in w.construct] == [
        "tojson of a captured value nested deeper than 10 levels or 3 levels of arguments"
    ]


def test_captured_repr_of_untyped_values_matches_python_at_any_depth() -> None:
    """An argument value printed inside a capture is Python's repr at any depth: quotes chosen per
    string, escapes, `<>&`, True/False/None, `, ` and `: `; no depth limit, so no warning of one."""
    text = "it's <b>&\x01\x1b\x7f\x08\x0c\n\r\t\\ caf\u00e9 \u2028 \U0001f600 true, null: false"
    nested: object = [text, 'say "hi"', "both ' and \"", 'a "q" \\"', "", 7, -2.5, True, False, None, [], {}]
    for level in range(12):
        nested = [nested, level] if level % 2 else {"k": nested, "n\"'": level}
    arguments = {"a": nested, "b": text, "c": [1, {"x": None}], "d": 3}  # keys sorted, as Ollama sorts them
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": arguments}}]},
    ]
    template = (
        "{% macro show(v) %}<{{ v }}>{% endmacro %}"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{% set kept %}{{ k }}={{ v }}{% endset %}{{ kept }};{% set shown = show(v) %}{{ shown }}|{% endfor %}{% endfor %}{% endfor %}"
    )
    conversion = convert(TemplateSource(template, {}, "captured-repr"))
    hf_messages = as_hf(messages)
    expected = reference_render(template, hf_messages)
    assert "\\u2028" in expected and "\\'" in expected and '"both' not in expected
    for version in (oracle.PINNED, oracle.LATEST):
        assert oracle.render(conversion.template, messages, version=version) == expected, version
    assert not [w for w in conversion.warnings if "deeper" in w.construct]


#: characters Python's repr escapes (categories C and Z but the space) beside ones it prints as they are
NOT_PRINTED = (
    "caf\u00e9 nb\u00a0sp soft\u00adhy c1\u0085 ls\u2028ps\u2029 ideo\u3000 bom\ufeff pua\ue000 zw\u200b"
    " \U0001f600 tag\U000e0001 \u4e2d\u6587 it's \x01\x7f"
)


@pytest.mark.parametrize(
    "template",
    [
        # printed: the ofc_repr helpers
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{{ k }}={{ v }};{% endfor %}{% endfor %}{% endfor %}",
        # captured: rewritten from Go's JSON text
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{% set kept %}{{ k }}={{ v }}{% endset %}{{ kept }};{% endfor %}{% endfor %}{% endfor %}",
        # captured: a typed string of a tool schema
        "{% for t in tools %}{% set s = t | string %}{{ s }}|{{ t }}{% endfor %}",
    ],
    ids=["printed", "captured-json", "captured-schema"],
)
def test_repr_escapes_the_characters_python_does_not_print(template: str) -> None:
    arguments = {"a": [NOT_PRINTED, 'say "hi"', "both ' and \""], "b": NOT_PRINTED}
    messages = [*call_conversation(arguments), {"role": "user", "content": "r"}]
    parameters = {"type": "object", "properties": {"x": {"type": "string", "description": NOT_PRINTED}}}
    tools = [{"type": "function", "function": {"name": "f", "description": NOT_PRINTED, "parameters": parameters}}]
    conversion = convert(TemplateSource(template, {}, "repr"))
    expected = reference_render(template, as_hf(messages), tools)
    assert "\\xa0" in expected and "\\u2028" in expected and "\U0001f600" in expected
    for version in (oracle.PINNED, oracle.LATEST):
        assert oracle.render(conversion.template, messages, tools, version=version) == expected, version


def test_tojson_separators_and_ensure_ascii_match_python() -> None:
    """`tojson(separators=...)` changes every separator (helpers and inline writer alike);
    `ensure_ascii=True` escapes non-ASCII and DEL, astral characters as surrogate pairs."""
    from ollama_fc.verify.battery import case_named

    text = 'caf\u00e9 \x7f \u2028 \U0001f600\U0010fffd\U00010000 "q" <&>'
    case = case_named("parallel_calls")
    arguments = {"n": [1, {"k": text}], "z": text}  # Ollama sorts argument keys
    messages = call_conversation(arguments, text)
    template = (
        "{{ tools | tojson(separators=(',', ':')) }}\n{% set listing = tools | tojson(separators=(';', '=')) %}{{ listing }}\n"
        "{{ tools | tojson(ensure_ascii=True) }}\n{{ tools | tojson(indent=1, separators=(',', ': ')) }}\n"
        "{% for m in messages %}{{ m.content | tojson(ensure_ascii=True) }}{% set j = m.content | tojson(ensure_ascii=True) %}[{{ j }}]"
        "{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson(ensure_ascii=True, separators=(',', ':')) }}"
        "{{ {'k': 'v', 'n': c.function.name} | tojson(separators=(',', ':')) }}{% endfor %}{% endfor %}"
        "{{ {'\u00e9': [1, 2]} | tojson(ensure_ascii=True, separators=(',', ':')) }}"
    )
    conversion = convert(TemplateSource(template, {}, "tojson-layouts"))
    hf_messages = as_hf(messages)
    expected = reference_render(template, hf_messages, list(case.tools))
    assert "\\ud83d\\ude00" in expected and "\\udbff\\udffd" in expected
    assert oracle.render(conversion.template, messages, list(case.tools)) == expected


def test_int_of_a_constant_folds_like_jinja() -> None:
    """`x | default(64, true) | int` of an undefined variable is a constant; `|int` of a number keeps it."""
    template = "{% set n = size | default(64, true) | int %}{% set m = '7' | int %}{{ n }} {{ m }} {{ (messages | length) | int }} {{ 'x' | int(3) }}"
    conversion = convert(TemplateSource(template, {}, "int"))
    assert oracle.render(conversion.template, MESSAGES) == reference_render(template, MESSAGES)


def test_list_append_and_pop_match_unsandboxed_jinja(engine: oracle.Oracle) -> None:
    """transformers' sandbox refuses `.append`/`.pop`; where a runtime allows them, the converted
    template does what Python does (a queue of tool call ids, as Kimi K2 templates keep)."""
    import jinja2

    template = (
        "{% set q = namespace(ids=[]) %}{% for m in messages %}{% set _ = q.ids.append(m.role ~ loop.index) %}"
        "{% if loop.index % 2 == 0 %}[{{ q.ids.pop(0) }}]{% endif %}{% endfor %}{{ q.ids | join(',') }}|{{ q.ids.pop() }}|{{ q.ids | length }}"
    )
    expected = (
        jinja2.Environment(extensions=["jinja2.ext.loopcontrols"]).from_string(template).render(messages=MESSAGES)
    )
    rendered = engine.render(convert(TemplateSource(template, {}, "queue")).template, MESSAGES)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_loop_variables_over_tool_call_arguments(engine: oracle.Oracle) -> None:
    """`loop.*` inside a loop over a mapping is that loop's, not the enclosing one's."""
    template = (
        "{% for m in messages %}{% for tc in m.tool_calls or [] %}{% for k, v in tc.function.arguments | items %}"
        "{% if not loop.first %},{% endif %}{{ loop.index0 }}{{ k }}={{ v }}{{ loop.last }}{% endfor %};{% endfor %}{% endfor %}"
    )
    call = {"function": {"name": "f", "arguments": {"a": 1, "b": "x", "c": True}}}
    messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "", "tool_calls": [call, call]}]
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "args")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_mapping_iterated_as_keys_and_percent_format(engine: oracle.Oracle) -> None:
    """`for k in arguments` yields the keys; `arguments[k]` looks the key up (a missing one is
    Undefined); `'%s'|format(v)` is Python's `%`, str() of each value."""
    template = (
        "{% for m in messages %}{% for tc in m.tool_calls or [] %}{% for k in tc.function.arguments %}"
        "{{ k }}={{ '(%s)%%%s' | format(tc.function.arguments[k], loop.index) }}{{ tc.function.arguments[k ~ 'x'] is defined }}"
        "{{ tc.function.arguments['zz' + k] }}{% if not loop.last %}, {% endif %}{% endfor %};{% endfor %}{% endfor %}"
        "{% for t in tools %}{% for name in t.function.parameters.properties %}[{{ name }}]{% endfor %}{% endfor %}"
    )
    arguments = {"a": 1, "ax": "caf\u00e9 'q'", "b": [True, None, 2.5], "c": {"d": False}}  # Ollama sorts keys
    messages = call_conversation(arguments, "u")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "d",
                "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
            },
        }
    ]
    expected = reference_render(template, messages, tools=tools, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "keys")).template, messages, tools=tools)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_tilde_of_untyped_values_and_or_of_an_unset_name(engine: oracle.Oracle) -> None:
    """`~` takes str() of an argument value; `x or 'd'` of a name not set yet is 'd'."""
    template = (
        "{% set bom = bom or '<b>' %}{% set gone = gone and 'x' %}{{ gone is defined }}"
        "{% for m in messages %}{{ bom + m.role }}{% for tc in m.tool_calls or [] %}"
        "{% for k, v in tc.function.arguments.items() %}{% set s = k ~ '=' ~ v ~ ';' %}{{ s }}{{ '[' ~ v ~ ']' }}{% endfor %}"
        "{% endfor %}{% endfor %}"
    )
    arguments = {"a": 1, "b": "caf\u00e9 <'q'>", "c": [True, None], "d": {"e": 2.5}}  # Ollama sorts keys
    messages = call_conversation(arguments, "u")
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "tilde")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert "<b>user" in expected and "c=[True, None];" in expected


def test_string_plus_arguments_stored_in_a_variable(engine: oracle.Oracle) -> None:
    """`set p = '...' + arguments` only works on a JSON string: stored as that string."""
    import json

    template = (
        "{% for m in messages %}{% for tc in m.tool_calls or [] %}"
        "{% set p = '<' + tc.function.name + '>' + tc.function.arguments %}{{ p }}|{{ tc.function.arguments + '.' }}{% endfor %}{% endfor %}"
    )
    arguments = {"a": 1, "b": "caf\u00e9 <'q'>", "c": [True, None]}  # Ollama sorts keys
    messages = call_conversation(arguments, "u")
    hf_messages = [
        messages[0],
        {
            **messages[1],
            "tool_calls": [{"function": {"name": "f", "arguments": json.dumps(arguments, ensure_ascii=False)}}],
        },
    ]
    expected = reference_render(template, hf_messages, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "plus"))
    rendered = engine.render(conversion.template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert '<f>{"a": 1, "b": "caf\u00e9' in expected
    assert "tojson of tool call arguments" in [w.construct for w in conversion.warnings]


def test_dict_literal_set_on_some_paths(engine: oracle.Oracle) -> None:
    """A variable given a dict literal under an `if`: a Go flag tells which value it holds when it
    is tested or handed to a macro (expanded once for each); any other use is refused."""
    template = (
        "{% macro show(s) %}{% if s is none %}none{% else %}{{ s.get('type', '?') }}{% endif %}{% endmacro %}"
        "{% for m in messages %}{% set x = none %}{% if m.role == 'user' %}{% set x = {'type': 'any'} %}"
        "{% elif m.role == 'assistant' %}{% set x = m %}{% endif %}"
        "[{{ x is none }}{{ x is defined }}{% if x %}T{% endif %}{{ show(x) }}]{% endfor %}"
    )
    expected = reference_render(template, MESSAGES, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "literal")).template, MESSAGES)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert "[FalseTrueTany]" in expected and "[FalseTrueT?]" in expected and "[TrueTruenone]" in expected
    for use in ("{{ x }}", "{{ x is mapping }}", "{% set y = x %}{{ y is none }}"):
        with pytest.raises(ConversionError, match="literal"):
            convert(TemplateSource(template.replace("{{ show(x) }}", use), {}, "literal"))


def test_constants_known_until_the_next_branch(engine: oracle.Oracle) -> None:
    """A variable or namespace attribute set to a constant is that constant until the next run-time
    branch point: a macro's verdict (`ns.found = false`) resolves the `if` that reads it, where the
    dead branch has no Go equivalent; values set under a branch or in a loop stay run-time."""
    template = (
        "{% set ns = namespace(found=false, last='start') %}"
        "{% macro check(p) %}{% set ok = p is defined and p is not none %}{% set ns.found = ok %}{% endmacro %}"
        "{% for m in messages %}{% set _ = check(m.citations) %}{% set f = ns.found %}"
        "{% if m.role == 'user' and f %}{{ m.citations | map(attribute='id') | list }}{% endif %}"
        "[{{ ns.last }}]{% set ns.last = m.role %}{% if m.role == 'user' %}{% set ns.last = 'u' %}{% endif %}{{ ns.last }};{% endfor %}{{ ns.last }}"
    )
    expected = reference_render(template, MESSAGES, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "known")).template, MESSAGES)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert expected.startswith("[start]system;[system]u;")


def test_int_of_a_string(engine: oracle.Oracle) -> None:
    """`text | int`: the number plain digits spell (whitespace around them), else 0; a macro's
    printed index read back as a number."""
    template = (
        "{% macro last_user() %}{% set ns = namespace(i=0) %}{% for m in messages %}{% if m.role == 'user' %}"
        "{% set ns.i = loop.index0 %}{% endif %}{% endfor %}{{ ns.i }}{% endmacro %}{% set last = last_user() | int %}"
        "{% for m in messages %}{{ m.content | int }},{{ (m.content | int) + 1 }}{% if loop.index0 == last %}*{% endif %};{% endfor %}"
    )
    contents = [" 42\n", "7x", "1 2", "000123", "", "\t9", "999999"]
    messages = [{"role": "assistant" if i % 2 else "user", "content": c} for i, c in enumerate(contents)]
    expected = reference_render(template, messages, add_generation_prompt=False)
    conversion = convert(TemplateSource(template, {}, "int"))
    rendered = engine.render(conversion.template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected
    assert expected == "42,43;0,1;0,1;123,124;0,1;9,10;999999,1000000*;"
    assert [w.construct for w in conversion.warnings] == ["|int of a string"]


def test_format_with_other_conversions_is_refused() -> None:
    """Only `%s` and `%%` map onto str(); `%d`, `%r` and a missing argument are refused."""
    for template in (
        "{{ '%d' | format(messages | length) }}",
        "{{ '%r' | format(messages[0].content) }}",
        "{{ '%s %s' | format(messages[0].role) }}",
    ):
        with pytest.raises(ConversionError, match="format"):
            convert(TemplateSource(template, {}, "format"))


def test_in_on_a_schema_list(engine: oracle.Oracle) -> None:
    """`name in parameters.required` and `x in enum` test Ollama's lists element by element."""
    template = (
        "{% for t in tools %}{% for name, p in t.function.parameters.properties | items %}"
        "{{ name }}{% if name in t.function.parameters.required %}*{% endif %}{% if 'c' in p.enum %}+{% endif %};{% endfor %}{% endfor %}"
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "d",
                "parameters": {
                    "type": "object",
                    "required": ["a", "c"],
                    "properties": {
                        "a": {"type": "string", "enum": ["b", "c"]},
                        "b": {"type": "integer"},
                        "c": {"type": "string", "enum": ["cc"]},
                    },
                },
            },
        }
    ]
    messages = [{"role": "user", "content": "u"}]
    expected = reference_render(template, messages, tools=tools, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "required")).template, messages, tools=tools)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_equal_messages_compare_equal_like_python_dicts(engine: oracle.Oracle) -> None:
    """Two identical user messages are `==` in Python: both count as the last user message."""
    template = "{% set users = messages | selectattr('role', 'equalto', 'user') | list %}{% for m in messages %}{{ m.content }}{% if m == users[-1] %}*{% endif %};{% endfor %}"
    messages = [
        {"role": "user", "content": "same"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "same"},
    ]
    expected = reference_render(template, messages, add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "equal")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def test_warnings_come_in_source_order() -> None:
    """A macro defined late but expanded early still reports its line in source order."""
    template = (
        "{% macro shout(x) %}{{ x | upper }}{% endmacro %}\n"
        "{{ messages[0].content | lower }}\n"
        "{{ shout(messages[0].content) }}"
    )
    lines = [w.line for w in convert(TemplateSource(template, {}, "order")).warnings]
    assert lines == sorted(lines) and len(lines) == 2


@pytest.mark.parametrize("system", ["", "Be brief."])
def test_not_equal_to_false_is_no_truth_test(system: str, engine: oracle.Oracle) -> None:
    """`x != false` holds for every string, the empty one too (DBRX keeps an empty system turn):
    only False and 0 equal False in Python."""
    template = (
        "{% if messages[0]['role'] == 'system' %}{% set system_message = messages[0]['content'] %}"
        "{% set loop_messages = messages[1:] %}{% else %}{% set system_message = false %}"
        "{% set loop_messages = messages %}{% endif %}"
        "{% if system_message != false %}<|im_start|>system\n{{ system_message }}<|im_end|>\n{% endif %}"
        "{% for m in loop_messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    )
    for messages in ([{"role": "system", "content": system}, {"role": "user", "content": "hi"}], MESSAGES[1:]):
        expected = reference_render(template, messages, add_generation_prompt=False)
        rendered = engine.render(convert(TemplateSource(template, {}, "dbrx-like")).template, messages)
        assert rendered.error is None, rendered.error
        assert rendered.prompt == expected


def test_indent_of_runtime_json_leaves_the_first_line_unless_asked(engine: oracle.Oracle) -> None:
    """`tojson(indent=4) | indent(8)` (Command R's tool_use template): `first` defaults to false,
    so only the lines after the first gain the indent; `indent(2, true)` indents the first too."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}<{{ c.function.arguments | tojson(indent=4) | indent(8) }}>"
        "<{{ c.function.arguments | tojson | indent(2, true) }}><{{ c.function.arguments | tojson(indent=1) | indent(first=true) }}>"
        "{% endfor %}{% endfor %}<{{ messages[0].content | tojson | indent(3) }}>"
    )
    messages = call_conversation({"a": 1, "b": {"c": [1, 2]}}, user="a\nb")
    expected = reference_render(template, as_hf(messages), add_generation_prompt=False)
    rendered = engine.render(convert(TemplateSource(template, {}, "indent")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


@pytest.mark.parametrize("text", ["line\u2028sep", "para\u2029sep <&>", "\u2028", "", 'plain ascii \\ "q"'])
def test_tojson_keeps_line_and_paragraph_separators_raw(text: str, engine: oracle.Oracle) -> None:
    """Go's `%q` and `json` both escape U+2028/U+2029; transformers' `tojson` writes them raw."""
    messages = call_conversation({"text": text}, text)
    template = (
        "{% for m in messages %}{{ m.content | tojson }}"
        "{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}"
    )
    rendered = engine.render(convert(TemplateSource(template, {}, "separators")).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == reference_render(template, as_hf(messages), add_generation_prompt=False)


def test_inline_if_evaluates_only_the_branch_taken(engine: oracle.Oracle) -> None:
    """`v if v is string else v | string` of argument values of every JSON type: the str() of
    a string is never built (its code runs in the `else` block), and the result is a string,
    printed as it is; branches with code of their own on both sides and on one."""
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{% set v = v if v is string else v | string %}{{ k }}={{ v }};"
        "{{ (k | trim | upper) if loop.first else (k | trim | lower) }}|"
        "{{ (v | trim) if v | length > 3 else 'short' }}|{{ 'none' if not v else (v | lower) }};"
        "{% endfor %}{% endfor %}{% endfor %}"
    )
    arguments = {" a ": "text", "b": 5, "c": 2.5, "d": None, "e": True, "f": [1, "x"], "g": {"k": "v"}, "h": " hi "}
    messages = call_conversation(arguments)
    conversion = convert(TemplateSource(template, {}, "lazy-if"))
    assert engine.render(conversion.template, messages).prompt == reference_render(template, as_hf(messages))
    go = conversion.template
    assert 'template "ofc_str"' not in go  # the chosen value is known to be a string
    test = go.index('{{if eq (printf "%T" $')
    assert go.index("(json $", test) > go.index("{{else}}", test)  # str() built only in the else
