"""Control flow and variables Go lacks (neighbour items, ranges, tuple and filtered assignments)
render through Ollama's engine exactly as jinja2 renders them."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.translate import core, ranges
from ollama_fc.convert.translate.concat import MARKUP_STORED
from ollama_fc.errors import ConversionError
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders

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


def assert_renders_like_jinja(
    engine: oracle.Oracle,
    template: str,
    messages: list[dict[str, Any]] = MESSAGES,
    tools: list[dict[str, Any]] | None = None,
) -> None:
    expected = reference_render(template, messages, tools=tools, add_generation_prompt=True)
    rendered = engine.render(convert(TemplateSource(template, {}, "construct")).template, messages, tools=tools)
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
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather <now> & 'here'",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": 'a "city"'}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    },
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
        '{% for t in tools %}{{ "Use \'" | safe + t.function.name + "\' to \'" + t.function.description + "\'\\n" | safe + t.function | tojson }}\n'
        "{% set line = t.function.description + ('<b>' | safe) %}{{ line }}{{ t.function.description + '&' }}\n{% endfor %}"
    )
    assert_renders_like_jinja(engine, template, tools=TOOLS)


#: a tool whose JSON holds every character HTML escaping changes, at every depth the writers
#: reach; in the order Ollama writes it (properties sorted, untyped `items` by sorted keys)
MARKUP_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather <now> & 'here' \"quoted\"\nnext — ünïcode",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": 'a "city" <b>'},
                    "days": {"type": "integer", "description": "1 & up"},
                    "filters": {
                        "type": "array",
                        "items": {"properties": {"key": {"enum": [1, "<x>"], "type": "string"}}, "type": "object"},
                    },
                    "mode": {"type": ["string", "null"]},
                    "options": {"type": "object", "properties": {"deep": {"type": "string", "description": "x > y"}}},
                    "unit": {"type": "string", "enum": ["c", "f&k"]},
                },
                "required": ["city"],
            },
        },
    },
    TOOLS[1],
]
MARKUP_CALL = {
    "function": {"name": "get_weather", "arguments": {"city": "Paris <&> 'x'", "n": 3, "tags": ["a", 'b"c']}}
}


def test_safe_string_plus_tojson_prints_escaped_json_through_the_writers(engines: dict[str, oracle.Oracle]) -> None:
    """functionary v3.1: `'...'|safe + name + ... + t['function'] | tojson()` escapes the JSON
    text as Markup does; printed, each piece of it is escaped in turn by the escaping writers
    (indented, with separators, tool call arguments), not the whole text captured first, and
    a concatenation with an operand they do not print is still built as a value."""
    template = (
        "{% for t in tools %}"
        '{{ "Use the function \'"|safe + t["function"]["name"] + "\' to \'"|safe + t["function"]["description"]'
        ' + "\'\\n"|safe + t["function"] | tojson() }}\n'
        '{{ "<t>"|safe + t | tojson(indent=2) + "</t>"|safe + t.function | tojson(separators=(",", ":")) }}\n'
        '{{ "#"|safe + t.function.name + (loop.index|string) + "&" }}{{ "<n>"|safe + t.function.description }}'
        '{% set marked = "<i>"|safe + t.function.name %}{{ "["|safe + marked + "&]" }}{{ "<" + marked }}\n'
        "{% endfor %}"
        "{% for m in messages %}{% if m.tool_calls %}"
        '{{ "<c>"|safe + m.tool_calls[0].function.arguments | tojson + m.role }}{% endif %}{% endfor %}'
    )
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [MARKUP_CALL]},
    ]
    converted = convert(TemplateSource(template, {}, "markup json")).template
    expected = reference_render(template, messages, tools=MARKUP_TOOLS, add_generation_prompt=True)
    assert "&#34;description&#34;: " in expected and "&lt;now&gt; &amp; &#39;here&#39;" in expected
    assert ollama_renders(converted, messages, MARKUP_TOOLS, engines) == {expected}
    assert 'template "ofc_json_html_function"' in converted  # printed by the escaping writers
    assert '= printf "%s%v"' not in converted  # no text captured, the fallback's included


def test_markup_kept_in_a_variable_only_where_every_path_agrees() -> None:
    """A `|safe` concatenation stored on some paths only, or in a namespace, is not tracked as
    Markup: the conversion says that adding it to another `|safe` string escapes it again."""
    template = (
        "{% set ns = namespace(s='') %}{% for t in tools %}"
        "{% if loop.first %}{% set mixed = '<i>'|safe + t.function.name %}{% else %}{% set mixed = t.function.name %}{% endif %}"
        "{{ '['|safe + mixed }}{% set ns.s = '<b>'|safe + t.function.name %}{% endfor %}{{ ns.s }}"
    )
    effects = {(w.construct, w.effect) for w in convert(TemplateSource(template, {}, "markup paths")).warnings}
    assert ("set mixed to a |safe concatenation on some paths", MARKUP_STORED) in effects
    assert ("set ns.s to a |safe concatenation", MARKUP_STORED) in effects


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


def test_range_with_start_and_step_counts_like_python(engine: oracle.Oracle) -> None:
    """`range(a, b)` and `range(a, b, -1)` in a loop (Gemma 4 looks ahead, Kimi scans backwards),
    empty when Python's range is, with loop.* numbering the steps."""
    template = (
        "{% for m in messages %}{% for j in range(loop.index0 + 1, messages | length) %}"
        "{% if loop.first %}{{ j }}:{{ messages[j].role }}{{ loop.length }}{% endif %}{% else %}end{% endfor %};{% endfor %}\n"
        "{% for i in range(messages | length - 1, -1, -1) %}{{ i }}{{ messages[i].role[:1] }}{% if not loop.last %},{% endif %}{% endfor %}\n"
        "{% for i in range(messages | length, 6, -1) %}{{ i }}{% endfor %}|{% for i in range(2, 5) %}{{ i }}{{ loop.index }}{% endfor %}"
        "|{% for i in range(messages | length) %}{{ i }}{{ loop.last }}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


SPLIT_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "plan<sep>a<sep><sep>b"},
    {"role": "assistant", "content": "<think>hmm</think>done</think>"},
    {"role": "user", "content": "no separator"},
    {"role": "assistant", "content": ""},
]


def test_split_results_kept_in_variables_indexed_sliced_and_looped(engine: oracle.Oracle) -> None:
    """A split stored in a variable (Bielik, MiniCPM), `split(sep, 1)[1]` (DeepSeek V3.1), loops
    over split parts (Gemma 4), indexes past the end (Undefined), |length, |join of a tail."""
    template = (
        "{% for m in messages %}{% set parts = m.content.split('<sep>') %}{{ parts | length }}"
        "[{{ parts[0] }}|{{ parts[1] }}|{{ parts[2] is defined }}|{{ parts[-1] }}|{{ parts[1:] | join('+') }}]"
        "{% if '</think>' in m.content %}{{ m.content.split('</think>', 1)[1] }}/{{ m.content.split('</think>', 1) | last }}"
        "/{{ m.content.split('</think>')[-1] }}{% endif %}"
        "{% set ns = namespace(out='') %}{% for p in m.content.split('<sep>') %}{% set ns.out = ns.out + loop.index|string + p %}{% endfor %}"
        "({{ ns.out }}){% for i in range(1, parts | length) %}<{{ parts[i] }}>{% endfor %}\n{% endfor %}"
    )
    assert_renders_like_jinja(engine, template, SPLIT_MESSAGES)


def test_type_tests_on_untyped_argument_values(engine: oracle.Oracle) -> None:
    """`is boolean/none/number/true/false` on argument values decide as in Python (Gemma 4's
    format_argument prints a bool as `true`, not Python's `True`)."""
    call = {
        "function": {
            "name": "book",
            "arguments": {"seat": "window", "meals": True, "bags": 2, "note": None, "vip": False, "price": 9.5},
        }
    }
    messages = [{"role": "user", "content": "Book it"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | dictsort %}"
        "{{ k }}={% if v is boolean %}{{ 'true' if v else 'false' }}{% elif v is none %}null{% else %}{{ v }}{% endif %}"
        "{{ v is number }}{{ v is true }}{{ v is false }}{{ v is none }};{% endfor %}{% endfor %}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template, messages)


def test_replace_filter_is_str_replace(engine: oracle.Oracle) -> None:
    """`text | replace(old, new)` (Glimmer renames a phrase in the system prompt) chained, with a
    run-time replacement, and on a constant."""
    template = (
        "{% for m in messages %}{{ m.content | replace('e', 'E') | replace('a', m.role) | replace('Paris', '') }}"
        "{{ 'x-y-z' | replace('-', '+') }};{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_get_of_a_missing_message_key_is_none(engine: oracle.Oracle) -> None:
    """`message.get('end_turn')` is None (printed `None`, `is none`, falsy), not Undefined; Glimmer
    picks its end token from it."""
    template = (
        "{% for m in messages %}{% set e = m.get('end_turn') %}{{ e }}{{ e is none }}{{ m.get('x', 'd') }}"
        "{% if e is none %}{% set e = not (m.get('recipient') and m.role != 'user') %}{% endif %}{{ 'T' if e else 'M' }};{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_pairs_of_a_constant_dict_literal_unpacked_in_a_loop(engine: oracle.Oracle) -> None:
    """`for k, v in {...} | dictsort` (Seed-OSS's thinking-budget table) and `| items`: the pairs
    are known, sorted as jinja2 sorts them (case-insensitive, reverse)."""
    template = (
        "{% set table = {0: 0, 512: 128, 3: 5} %}{% set ns = namespace(pick=none) %}"
        "{% for k, v in table | dictsort %}{% if ns.pick is none and messages | length <= k %}{% set ns.pick = v %}{% endif %}"
        "{{ k }}={{ v }}{{ loop.index }};{% endfor %}{{ ns.pick }}|{{ table[512] }}"
        "{% for k, v in {'b': 1, 'A': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}{% for k, v in {'b': 1, 'A': 2} | items %}{{ k }}{% endfor %}"
        "{% for k, v in {'b': 1, 'A': 2} | dictsort(reverse=true) %}{{ k }}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_a_negative_namespace_marker_plus_a_constant(engine: oracle.Oracle) -> None:
    """Kimi K2 keeps `namespace(last=-1)` as "not found" and slices `messages[:ns.last + 1]`:
    -1 + 1 is 0, also after a loop that may or may not set it."""
    template = (
        "{% set ns = namespace(last=-1, other=-2) %}{{ ns.last + 1 }}"
        "{% for i in range(messages | length - 1, -1, -1) %}{% if messages[i].role == 'assistant' and not messages[i].tool_calls %}"
        "{% set ns.last = i %}{% endif %}{% endfor %}{{ (messages[:ns.last + 1]) | length }}|{{ ns.other + 5 }}|{{ 1 + ns.last }}"
    )
    assert_renders_like_jinja(engine, template)
    assert_renders_like_jinja(engine, template, MESSAGES[:2])


def test_loop_over_tool_calls_on_one_path_and_text_on_another(engine: oracle.Oracle) -> None:
    """A variable holding a message's tool calls or a string: the loop steps through whichever it holds."""
    template = (
        "{% for m in messages %}{% if m.tool_calls is defined %}{% set items = m.tool_calls %}{% else %}{% set items = m.role %}{% endif %}"
        "{% for c in items %}{% if c.function is defined %}{{ c.function.name }}{% else %}<{{ c }}>{% endif %}{{ loop.index }}{% endfor %};{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_json_and_slices_of_undefined_values_warn_where_jinja_fails() -> None:
    """Jinja raises on `Undefined | tojson` and `Undefined[-2:]`; the converter renders empty text and says so."""
    conversion = convert(
        TemplateSource(
            "{% for m in messages %}{{ m.nothing | tojson }}{{ m.nothing[-2:] }}{% endfor %}", {}, "undefined"
        )
    )
    assert [w.construct for w in conversion.warnings] == ["tojson of an undefined value", "slicing an undefined value"]


def test_tools_replaced_by_an_empty_list_on_some_paths(engine: oracle.Oracle) -> None:
    """Seed-OSS: `if tools is none: set tools = []`, then the list is used as a list; a list
    literal stored on some paths but never read is dropped."""
    template = (
        "{% if not tools is defined or tools is none %}{% set tools = [] %}{% endif %}"
        "{% if messages[0].role == 'nobody' %}{% set unused = [] %}{% endif %}"
        "{{ tools is iterable }}{{ tools | length }}{% for t in tools %}[{{ t.function.name }}]{% endfor %}"
    )
    for tools in (TOOLS, None):
        expected = reference_render(template, MESSAGES, tools=tools, add_generation_prompt=True)
        rendered = engine.render(convert(TemplateSource(template, {}, "emptied")).template, MESSAGES, tools=tools)
        assert rendered.error is None, rendered.error
        assert rendered.prompt == expected
    with pytest.raises(ConversionError, match=r"line 1: `is none` on a list set to \[\] on some paths"):
        convert(TemplateSource("{% if not tools %}{% set tools = [] %}{% endif %}{{ tools is none }}", {}, "t"))


def test_schema_keys_tested_with_in_and_a_tool_unwrapped_to_its_function(engine: oracle.Oracle) -> None:
    """functionary: `if t.get('function')` holds for every Ollama tool (so the unwrapped
    function keeps its type), `'key' in property` asks whether Ollama's field is set, and a
    string repeated a number of times known at run time."""
    tools = [
        *TOOLS,
        {
            "type": "function",
            "function": {
                "name": "pick",
                "description": "Pick",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "array", "items": {"type": "integer"}, "enum": [1, 2]}},
                },
            },
        },
    ]
    template = (
        "{% for t in tools %}{% if t.get('function') %}{% set t = t.get('function') %}{% endif %}{{ t.name }}:"
        "{% for name, p in t.parameters.properties.items() %}{{ name }}{{ 'description' in p }}{{ 'items' in p }}"
        "{{ 'enum' in p }}{{ 'oneOf' in p }}{% endfor %}{{ '-' * loop.index }}{{ 2 * 'ab' }}\n{% endfor %}"
    )
    assert_renders_like_jinja(engine, template, tools=tools)


def test_min_of_numbers_known_at_run_time_and_substring_of_an_argument_value(engine: oracle.Oracle) -> None:
    """MiniCPM 5: `[a, b]|min` of counts, and `'<' in value` of an argument value that is text
    (searched as a substring) or a list (searched for the element)."""
    call = {"function": {"name": "note", "arguments": {"text": "a <b> & c", "tags": ["<", "x"]}}}
    messages = [
        {"role": "user", "content": "a<sep>b<sep>c"},
        {"role": "assistant", "content": "", "tool_calls": [call, call]},
    ]
    template = (
        "{% for m in messages %}{% set parts = m.content.split('<sep>') %}"
        "{{ [parts | length, 2] | min }}{{ [parts | length - 1, m.tool_calls | length if m.tool_calls else 0, 1] | max }}"
        "{{ [4, 2] | min }};{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments | dictsort %}"
        "{{ k }}{{ '<' in v }}{{ '&' in v }}{{ 'zz' in v }};{% endfor %}{% endfor %}{% endfor %}"
    )
    assert_renders_like_jinja(engine, template, messages)


def test_a_check_that_only_raises_and_the_list_only_it_reads_are_dropped(engine: oracle.Oracle) -> None:
    """Mistral Small 3.1: messages gathered into a list read only by a loop that can do nothing
    but raise_exception; the loop renders nothing once the raise is dropped, and is warned."""
    template = (
        "{% set filtered = [] %}{% for m in messages %}{% if m.role != 'tool' %}{% set filtered = filtered + [m] %}{% endif %}{% endfor %}"
        "{% for m in filtered %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}{{- raise_exception('roles must alternate') }}{% endif %}{% endfor %}"
        "{% for m in messages %}[{{ m.content }}]{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    assert_renders_like_jinja(engine, template, messages)
    warnings = convert(TemplateSource(template, {}, "check")).warnings
    assert [w.construct for w in warnings] == ["raise_exception()"]


def test_call_block_title_and_a_tool_unwrapped_inside_a_run_time_if(engine: oracle.Oracle) -> None:
    """MiniCPM 3: `{% call %}` hands a macro its body as `caller()` (printed and used as a value,
    nested in a recursive call); `tool = tool.function` inside a run-time `if` holds for the rest
    of that branch; `|title`; a dict literal looked up with a schema's type; a conditional
    expression evaluates only the branch an absent key selects."""
    tools = [
        *TOOLS,
        {
            "type": "function",
            "function": {
                "name": "pick_one",
                "description": "Pick",
                "parameters": {
                    "type": "object",
                    "properties": {"max_count": {"type": "integer", "description": "how (many) of-them"}},
                    "required": [],
                },
            },
        },
    ]
    template = (
        "{% macro fields(spec, pad) %}{% set ns = namespace(f=caller()) %}"
        "{% for name, p in spec.properties | items %}{% set ns.f = ns.f + pad + name | title + ':' + ({'string': 'str', 'integer': 'int'}[p.type] or '?') %}"
        "{% set ns.f = ns.f + (' = ' + p.pattern | tojson if p.pattern else '') %}{% endfor %}{{ ns.f }}{% endmacro %}"
        "{% macro wrap() %}<{{ caller() }}>{% endmacro %}"
        "{% for tool in tools %}{% if tool.type == 'function' %}{% if tool.function is defined %}{% set tool = tool.function %}{% endif %}"
        "{% call fields(tool.parameters, '  ') %}{% call wrap() %}{{ tool.name | title }}{% endcall %}{{ tool.description }}{% endcall %}"
        "{% set shown = tool.name %}[{{ shown }}]{% endif %}\n{% endfor %}{{ 'a-b c(d' | title }}"
    )
    assert_renders_like_jinja(engine, template, tools=tools)


def test_a_message_or_none_keeps_its_none(engine: oracle.Oracle) -> None:
    """`prev = messages[i - 1] if i > 0 else none`: where the else side is taken, the variable is
    None for `is none`, `is mapping` and truth, not a message."""
    template = (
        "{% for m in messages %}{% set prev = messages[loop.index0 - 1] if loop.index0 > 0 else none %}"
        "{{ prev is mapping }}{{ prev is none }}{{ prev is not none and prev.role == 'tool' }}"
        "{% if prev %}[{{ prev.role }}]{% endif %},{% endfor %}"
    )
    assert_renders_like_jinja(engine, template)


def test_a_message_or_undefined_is_refused_where_definedness_is_asked() -> None:
    template = "{% for m in messages %}{% set prev = messages[loop.index0 - 1] if loop.index0 > 0 %}{{ prev is mapping }}{% endfor %}"
    with pytest.raises(ConversionError, match="`is mapping` of a value left undefined on some paths"):
        convert(TemplateSource(template, {}, "undefined-or-message"))


#: loops that stop once their namespace flag has fallen, and loops that must not
STOPPING_LOOPS = {
    # Qwen3's scan from the end for the last user query: the flag falls in a nested `if`
    "reverse_scan": (
        "{% set ns = namespace(multi=true, last=messages|length - 1) %}"
        "{% for m in messages[::-1] %}{% set index = (messages|length - 1) - loop.index0 %}"
        "{% if ns.multi and m.role == 'user' %}{% set c = m.content|trim %}"
        "{% if not c.startswith('<tool_response>') %}{% set ns.multi = false %}{% set ns.last = index %}{% endif %}"
        "{% endif %}{% endfor %}{{ ns.last }};"
    ),
    # Gemma 4's scan forward for the next message that is not a tool result, printing as it goes
    "forward_range": (
        "{% for m in messages %}{% set nt = namespace(role=none, found=false) %}"
        "{% for j in range(loop.index0 + 1, messages|length) %}{% if not nt.found and messages[j].role != 'tool' %}"
        "{% set nt.role = messages[j].role %}{% set nt.found = true %}({{ j }}){% endif %}{% endfor %}"
        "{{ m.role }}>{{ nt.role or '-' }};{% endfor %}"
    ),
    # constants set when a step passes: a later step could only set them again
    "constant_flags": (
        "{% set ns = namespace(seen=false, n=0) %}{% for m in messages %}{% set r = m.role %}"
        "{% if r == 'tool' or r == 'system' %}{% set ns.seen = true %}{% set ns.n = 1 %}{% endif %}{% endfor %}"
        "{{ ns.seen }}{{ ns.n }}"
    ),
    # granite's test for a system message: a filtered loop with an empty body and an `else`
    "empty_body": "{% for m in messages if m.role == 'tool' %}{% else %}no tool results{% endfor %}|",
}
NOT_STOPPING = {
    # the flag is set to a true value: the test can pass again
    "flag_kept": (
        "{% set ns = namespace(on=true, n=0) %}{% for m in messages %}"
        "{% if ns.on and m.role == 'tool' %}{% set ns.on = 1 %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.n }}"
    ),
    # a statement after the `if` runs at every step
    "after": (
        "{% set ns = namespace(on=true, n=0) %}{% for m in messages %}"
        "{% if ns.on and m.role == 'tool' %}{% set ns.on = false %}{% endif %}{{ m.role }},{% endfor %}"
    ),
    # an `else` runs once the flag has fallen
    "else": (
        "{% set ns = namespace(on=true) %}{% for m in messages %}"
        "{% if ns.on and m.role == 'tool' %}{% set ns.on = false %}{% else %}{{ m.role }},{% endif %}{% endfor %}"
    ),
    # a value of the step kept: a later step sets another
    "varying": (
        "{% set ns = namespace(last='') %}{% for m in messages %}"
        "{% if m.role == 'user' %}{% set ns.last = m.content %}{% endif %}{% endfor %}{{ ns.last }}"
    ),
    # the flag set again in a nested branch
    "set_twice": (
        "{% set ns = namespace(on=true, n=0) %}{% for m in messages %}"
        "{% if ns.on and m.role != 'system' %}{% set ns.on = false %}{% set ns.n = ns.n + 1 %}"
        "{% if m.role == 'user' %}{% set ns.on = true %}{% endif %}{% endif %}{% endfor %}{{ ns.n }}"
    ),
}


@pytest.mark.parametrize("name", sorted({**STOPPING_LOOPS, **NOT_STOPPING}))
@pytest.mark.parametrize("cut", [len(MESSAGES), 7, 3])
def test_loop_stops_once_its_flag_has_fallen(
    name: str, cut: int, engine: oracle.Oracle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop stops at the end of the body that makes its flag fail (no later step can do
    anything), on conversations ending at a tool result, a user turn and an assistant call."""
    template = {**STOPPING_LOOPS, **NOT_STOPPING}[name]
    assert_renders_like_jinja(engine, template, MESSAGES[:cut])
    breaks = convert(TemplateSource(template, {}, name)).template.count("{{break}}")
    monkeypatch.setattr(core, "stopping_bodies", lambda tree: {})
    unstopped = convert(TemplateSource(template, {}, name)).template.count("{{break}}")  # (searches break too)
    assert breaks - unstopped == (1 if name in STOPPING_LOOPS else 0)


def test_printing_what_may_be_none_warns() -> None:
    """A namespace attribute that may still hold None prints as an empty string (None is held
    as ""): said, except in a `+`, where Python refuses None."""
    template = (
        "{% set ns = namespace(role=none) %}{% for m in messages %}{% if m.role == 'tool' %}{% set ns.role = m.role %}"
        "{% endif %}{% endfor %}{{ 'last: ' + ns.role }}"
    )
    assert not convert(TemplateSource(template, {}, "plus")).warnings
    warnings = convert(TemplateSource(template + "{{ ns.role }}", {}, "printed")).warnings
    assert [w.construct for w in warnings] == ["printing a variable that may hold None"]


def assert_exact_on_both(template: str, messages: list[dict[str, Any]], engines: dict[str, oracle.Oracle]) -> str:
    """The conversion, once both Ollama versions rendered it as jinja2 renders the template."""
    converted = convert(TemplateSource(template, {}, "construct")).template
    expected = reference_render(template, messages, add_generation_prompt=True)
    assert ollama_renders(converted, messages, None, engines) == {expected}
    return converted


#: loops whose closing `if loop.last ...` runs once after the loop, and loops where it must not
LAST_STEP_MOVED = {
    "generation_prompt": (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
        "{% if loop.last and add_generation_prompt %}<assistant>{% endif %}{% endfor %}"
    ),
    # the test reads what the body set on the last step (a namespace, not loop-scoped)
    "namespace_read": (
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
        "{% if loop.last %}[{{ ns.n }} {{ messages|length }}]{% endif %}{% endfor %}"
    ),
    "bare_last": "{% for m in messages %}{{ m.role }},{% if loop.last %}end{% endif %}{% endfor %}",
}
LAST_STEP_KEPT = {
    # reads the loop variable and a name the body sets: both are the step's own
    "reads_step": (
        "{% for m in messages %}{% set r = m.role %}{% if loop.last %}{{ m.role }}/{{ r }}{% endif %}{% endfor %}"
    ),
    # a `continue` can skip the last step's end
    "continue": (
        "{% for m in messages %}{% if m.role == 'tool' %}{% continue %}{% endif %}{{ m.role }}"
        "{% if loop.last %}!{% endif %}{% endfor %}"
    ),
    # sets a name: moved out it would leak past the loop's scope
    "sets_name": (
        "{% set x = 'outer' %}{% for m in messages %}{% if loop.last %}{% set x = 'inner' %}{% endif %}{% endfor %}{{ x }}"
    ),
    # runs on other steps too
    "with_else": "{% for m in messages %}{% if loop.last %}L{% else %}-{% endif %}{% endfor %}",
    "filtered": "{% for m in messages if m.role != 'tool' %}{{ m.role }}{% if loop.last %}.{% endif %}{% endfor %}",
    # a selection is a generator in Jinja: true after the loop even where it held nothing
    "selection": (
        "{% set xs = messages|selectattr('role', 'equalto', 'tool') %}"
        "{% for m in xs %}{{ m.content }}{% if loop.last %}.{% endif %}{% endfor %}|"
    ),
}


@pytest.mark.parametrize("name", sorted({**LAST_STEP_MOVED, **LAST_STEP_KEPT}))
@pytest.mark.parametrize("cut", [len(MESSAGES), 7, 1, 0])
def test_a_closing_if_loop_last_runs_once_after_the_loop(
    name: str, cut: int, engines: dict[str, oracle.Oracle], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where nothing can tell, the loop body's closing `if loop.last ...` is tested once after
    the loop (no index comparison per step), on conversations ending at a tool result, a user
    turn, the system message alone and no message at all."""
    template = {**LAST_STEP_MOVED, **LAST_STEP_KEPT}[name]
    converted = assert_exact_on_both(template, MESSAGES[:cut], engines)
    monkeypatch.setattr(core, "hoist_last_steps", lambda tree: tree)
    assert (converted != convert(TemplateSource(template, {}, name)).template) == (name in LAST_STEP_MOVED)


#: loops that keep a flag for `loop.first` (read inside an expression), and loops that need none
FIRST_FLAGGED = {
    # the ChatML default system prompt: tested on every step
    "and_every_step": (
        "{% for m in messages %}{% if loop.first and messages[0]['role'] != 'system' %}<default>{% endif %}"
        "{{ m.role }};{% endfor %}"
    ),
    "printed": "{% for m in messages %}{{ loop.first }}{{ (loop.first and 'F') or '-' }},{% endfor %}",
    # a `continue` on the first step: the next step is not first
    "after_continue": (
        "{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}"
        "{{ m.role }}{{ '*' if loop.first and m.role == 'user' else '' }},{% endfor %}"
    ),
    # the outer loop's flag is its own, whatever the inner loop does
    "nested": (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ (loop.first and '[') or ',' }}"
        "{{ c.function.name }}{% endfor %}{{ (loop.first and '^') or '' }}{% endfor %}"
    ),
}
FIRST_UNFLAGGED = {
    "whole_test": "{% for m in messages %}{% if loop.first %}^{% endif %}{% if not loop.first %},{% endif %}{{ m.role }}{% endfor %}",
    "negated": "{% for m in messages %}{% if m.role == 'user' and not loop.first %}|{% endif %}{{ m.role }}{% endfor %}",
    "filtered": "{% for m in messages if m.role != 'system' %}{{ (loop.first and '^') or '' }}{{ m.role }}{% endfor %}",
}


@pytest.mark.parametrize("name", sorted({**FIRST_FLAGGED, **FIRST_UNFLAGGED}))
@pytest.mark.parametrize("cut", [len(MESSAGES), 3, 1])
def test_loop_first_inside_an_expression_reads_a_flag_the_loop_keeps(
    name: str, cut: int, engines: dict[str, oracle.Oracle], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`loop.first` read inside an expression of an unfiltered loop is a flag set without a
    call at the top of each step; as a whole `if` test or under `not` it stays the index's
    truth, which costs no call either."""
    template = {**FIRST_FLAGGED, **FIRST_UNFLAGGED}[name]
    converted = assert_exact_on_both(template, MESSAGES[:cut], engines)
    monkeypatch.setattr(ranges, "first_read_in_expressions", lambda body: False)
    assert (converted != convert(TemplateSource(template, {}, name)).template) == (name in FIRST_FLAGGED)
