"""Strings built only to be printed (a namespace accumulator, a `{% set %}` block) are printed
where the Jinja prints them instead of being captured (`translate/printplan.py`).

Each template is rendered by the Hugging Face reference and by the conversion through both
Ollama versions' template package, with and without tools, a system message and an assistant
prefill. Where the plan applies, the captured JSON writer must be gone (the tools' JSON goes
through the printed `ofc_json` define); where it does not (what the string reads changes
before it is printed, it is changed in a loop, filtered or captured), the conversion falls back
to capturing, and renders what the reference renders all the same.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.go.tree import Act, Mark, Text, build, render
from ollama_fc.convert.translate import Translator
from ollama_fc.convert.translate.planfallback import PlanFallback
from ollama_fc.convert.translate.plans import plan_marks, unsound_use
from ollama_fc.hf.reference import render as reference_render
from tests.renders import ollama_renders


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:  # Ollama leaves an empty list out
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


#: in the key order Ollama writes them
TOOLS = [
    _function(
        "get_weather",
        'Weather <now> & "later" \u00e9\u00a0\u2028',
        {"city": {"type": "string", "description": "City."}, "unit": {"type": "string", "enum": ["c", "f"]}},
        ["city"],
    ),
    _function("ping", "Ping.", {}, []),
]

SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Hi <there>"}
CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "user": [USER],
    "system": [SYSTEM, USER],
    "empty system": [{"role": "system", "content": ""}, USER],
    "prefill": [SYSTEM, USER, {"role": "assistant", "content": "Sure, "}],
    "system with markers": [{"role": "system", "content": "A<tool_def_sep>B <tool_def_sep>"}, USER],
    "markers, then a prefill": [
        {"role": "system", "content": "<tool_def_sep>A"},
        {"role": "user", "content": "x<tool_def_sep>y"},
        {"role": "assistant", "content": "Sure, "},
    ],
}
TOOL_SETS: dict[str, list[dict[str, Any]] | None] = {"no tools": None, "one tool": TOOLS[:1], "two tools": TOOLS}

MESSAGES = "{% for m in messages %}{% if m.role != 'system' %}<{{ m.role }}>{{ m.content }}{% endif %}{% endfor %}"

#: templates whose string is only concatenated, assigned, tested and printed: planned
PLANNED = {
    # laguna: a namespace accumulator made inside `if tools`, extended into another variable
    "accumulator": (
        "{%- if tools %}<tools>{% set ns = namespace(s='Functions:\\n') %}"
        "{% for t in tools %}{% set ns.s = ns.s ~ (t | tojson) ~ '\\n' %}{% endfor %}"
        "{% set s = ns.s + '</tools>' %}{{ s }}{% endif %}" + MESSAGES
    ),
    # granite4: a prefix reset on the other path, flowing into the system message, which is
    # tested and printed; the tool list printed a second time at the end
    "system message": (
        "{%- set ns = namespace(tsm='Tools:', sm='') %}"
        "{%- if tools %}{% for t in tools %}{% set ns.tsm = ns.tsm + '\\n' + (t | tojson) %}{% endfor %}"
        "{% set ns.tsm = ns.tsm + '\\nEnd.' %}{% else %}{% set ns.tsm = '' %}{% endif %}"
        "{%- if messages[0].role == 'system' %}{% set ns.sm = messages[0].content %}"
        "{% if tools %}{% set ns.sm = ns.sm + '\\n\\n' + ns.tsm %}{% endif %}"
        "{%- else %}{% if tools %}{% set ns.sm = ns.tsm %}{% endif %}{% endif %}"
        "{%- if ns.sm %}[SYS]{{ ns.sm }}[/SYS]{% endif %}" + MESSAGES + "{% if ns.tsm %}|{{ ns.tsm }}|{% endif %}"
    ),
    # rnj-1: a `{% set %}` block, `and`/`or` choosing the text, a flag set in the branch that tests it
    "set block": (
        "{%- set emit = namespace(started=false) %}"
        "{%- if tools %}{% set pre %}# Tools\n{% for tool in tools %}{{ '\\n' ~ (tool | tojson) }}{% endfor %}\n"
        "{% endset %}"
        "{%- set has_sys = (messages and messages[0].role == 'system') and (messages[0].content is string) %}"
        "{%- set sys = (has_sys and (messages[0].content ~ '\\n\\n' ~ pre)) or pre %}"
        "{%- set content = '<S>' ~ sys ~ '</S>' %}"
        "{%- if not emit.started %}{% set content = '^' ~ content %}{% set emit.started = true %}{% endif %}"
        "{{- content }}{% endif %}" + MESSAGES
    ),
    # deepseek-v3.2: appends under an `if` in the loop, the choice made on another variable's truth
    "schemas": (
        "{%- set ns = namespace(sp='') %}"
        "{%- for m in messages %}{% if m.role == 'system' %}{% set ns.sp = ns.sp + m.content %}{% endif %}{% endfor %}"
        "{%- if tools is defined and tools %}{% set ts = namespace(schemas='') %}"
        "{% for tool in tools %}{% if tool['type'] == 'function' %}"
        "{% set ts.schemas = ts.schemas + (tool['function'] | tojson) + '\\n' %}{% endif %}{% endfor %}"
        "{%- if ns.sp %}{% set ns.sp = ns.sp + '\\n\\n' + 'H:' + ts.schemas + ':F' %}"
        "{% else %}{% set ns.sp = 'H:' + ts.schemas + ':F' %}{% endif %}{% endif %}"
        "{{- ns.sp }}" + MESSAGES
    ),
    # a `{% set %}` block inside the message loop, printed in the same pass
    "loop-local block": (
        "{% for m in messages %}{% set calls %}{% for t in tools or [] %}{{ t | tojson }};{% endfor %}{% endset %}"
        "<{{ m.role }}>[{{ calls }}]{{ m.content }}{% endfor %}"
    ),
    # set on each path of an `if` / `elif` / `else`, tested and printed after it
    "elif chain": (
        "{% set ns = namespace(s='A') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
        "{% if messages[0].role == 'system' %}{% set x = 'S' ~ ns.s %}{% elif messages | length > 1 %}"
        "{% set x = ns.s ~ 'M' %}{% else %}{% set x = '' %}{% endif %}[{{ x }}]{% if x %}yes{% endif %}" + MESSAGES
    ),
    # magistral, devstral: the tools' JSON stored with text around it, printed once
    "stored tojson": (
        "{%- set d = '' %}{% if tools is defined and tools is not none and tools | length > 0 %}"
        "{% set d = '[TOOLS]' + (tools | tojson) + '[/TOOLS]' %}{{ d }}{% endif %}" + MESSAGES + "{{ d }}"
    ),
    # mistral (cisc): a selection's JSON stored in a namespace, printed at the last user turn
    "stored selection": (
        "{%- set ns = namespace(f=false, last=-1) %}{% for m in messages %}{% if m.role == 'user' %}"
        "{% set ns.last = loop.index0 %}{% endif %}{% endfor %}"
        "{%- if tools %}{% set ns.f = tools | selectattr('type', 'eq', 'function') | map(attribute='function')"
        " | list | tojson %}{% endif %}"
        "{%- for m in messages %}{% if loop.index0 == ns.last and ns.f %}[T]{{ ns.f }}[/T]{% endif %}"
        "<{{ m.role }}>{{ m.content }}{% endfor %}"
    ),
    # lfm2: the loop sets a value of its own pass (the tool's JSON) before appending it, after
    # a prefix holding constant text, so the string is surely not empty where it is tested
    "pass value": (
        "{%- set ns = namespace(s='') %}{% if messages[0].role == 'system' %}{% set ns.s = messages[0].content %}"
        "{% endif %}{% if tools %}{% set ns.s = ns.s + ('\\n' if ns.s else '') + 'Tools: [' %}"
        "{% for t in tools %}{% if t is not string %}{% set t = t | tojson %}{% endif %}{% set ns.s = ns.s + t %}"
        "{% if not loop.last %}{% set ns.s = ns.s + ', ' %}{% endif %}{% endfor %}{% set ns.s = ns.s + ']' %}{% endif %}"
        "{% if ns.s %}<S>{{ ns.s }}</S>{% endif %}" + MESSAGES
    ),
    # lfm2.5-vl: a value computed inside the `if` (the separator) joins the tools' JSON
    "block value": (
        "{%- set ns = namespace(s='') %}{% if messages[0].role == 'system' %}{% set ns.s = messages[0].content %}"
        "{% endif %}{% if tools %}{% set ns.s = ns.s + ('\\n\\n' if ns.s else '') + 'Tools: ' + (tools | tojson) %}"
        "{% endif %}{% if ns.s %}<S>{{ ns.s }}</S>{% endif %}" + MESSAGES
    ),
    # apriel: `tool | string` (Python's repr) accumulated, printed through the repr helpers
    "repr": (
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | string) ~ '\\n' %}"
        "{% endfor %}<T>{{ ns.s }}</T>" + MESSAGES
    ),
}

PLANNED |= {
    # minicpm5: a `{% set %}` block replacing a marker in the system message (in every message
    # here, the prefilled one too), else stripped where it already starts and ends with text
    "replaced and stripped": (
        "{%- if tools %}{% set defs %}# Tools\n{% for t in tools %}{{ '\\n' ~ (t | tojson) }}{% endfor %}\n</tools>{% endset %}"
        "{%- if messages[0].role == 'system' %}[{{ messages[0].content.replace('<tool_def_sep>', defs) }}]"
        "{%- else %}[{{ defs.lstrip() }}|{{ defs | trim }}|{{ defs.strip() }}]{% endif %}"
        "{% for m in messages[1:] %}<{{ m.role }}>{{ m.content | replace('<tool_def_sep>', defs) }}{% endfor %}<end>"
        "{% else %}" + MESSAGES + "{% endif %}"
    ),
}

PLANNED |= {
    # an inline `if` choosing the tools' JSON or a text
    "inline if": "{%- set d = (tools | tojson) if tools else 'none' %}[{{ d }}]" + MESSAGES,
    # marked |safe, then printed joined to text, which Markup escapes: the text printed escaped
    "safe joined": "{%- set d = tools | tojson | safe %}[{{ '<s>' + d + '&' }}]" + MESSAGES,
}

#: templates where the plan cannot stand for the string: captured, as before
CAPTURED = {
    # what the loop reads changes between the build and the print
    "input changed": (
        "{%- set sep = '|' %}{% set ns = namespace(s='') %}"
        "{% for t in tools or [] %}{% set ns.s = ns.s ~ sep ~ (t | tojson) %}{% endfor %}"
        "{% set sep = ';' %}{{ ns.s }}{{ sep }}" + MESSAGES
    ),
    # appended to again in a loop that does something else too
    "extended in a loop": (
        "{%- set ns = namespace(s='T:') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
        "{% for m in messages %}{% set ns.s = ns.s ~ m.role %}{% set ns.k = loop.index %}{% endfor %}{{ ns.s }}"
        + MESSAGES
    ),
    # used other than printed or tested
    "filtered": (
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) ~ ' ' %}"
        "{% endfor %}[{{ ns.s | trim }}]" + MESSAGES
    ),
    # tested for emptiness, which only running its loop would tell
    "tested for emptiness": (
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
        "{% for m in messages %}<{{ m.role }}>{{ ns.s }}{% if ns.s %}!{% endif %}{{ m.content }}{% endfor %}"
    ),
    # stored, then filtered
    "stored tojson filtered": (
        "{%- if tools %}{% set d = '[' + (tools | tojson) + ']' %}{{ d | length }}:{{ d }}{% endif %}" + MESSAGES
    ),
    # a tool's JSON stored in a loop that prints too, into a namespace that outlives it
    "stored in a loop": (
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) ~ ';' %}"
        "<{{ t.type }}>{% endfor %}[{{ ns.s }}]" + MESSAGES
    ),
    # stripped where it starts (or ends) with whitespace
    "padded": (
        "{%- if tools %}{% set defs %} T{% for t in tools %}{{ t | tojson }}{% endfor %}{% endset %}"
        "[{{ defs.lstrip() }}]{% endif %}" + MESSAGES
    ),
    # printed into a captured string
    "captured again": (
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
        "{% set wrap %}[{{ ns.s }}]{% endset %}{{ wrap | trim }}" + MESSAGES
    ),
}


def expected(template: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    prefill = messages[-1]["role"] == "assistant"
    return reference_render(
        template, messages, tools, add_generation_prompt=not prefill, continue_final_message=prefill
    )


def check_renders(go_template: str, template: str, engines: dict[str, oracle.Oracle]) -> None:
    for messages in CONVERSATIONS.values():
        for tools in TOOL_SETS.values():
            assert ollama_renders(go_template, messages, tools, engines) == {expected(template, messages, tools)}


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_string_built_only_to_be_printed_is_printed_in_place(name: str, engines: dict[str, oracle.Oracle]) -> None:
    template = PLANNED[name]
    go_template = convert(TemplateSource(template, {}, name)).template
    assert 'template "ofc_json' in go_template or 'template "ofc_repr"' in go_template  # printed, not captured
    assert "ofc-plan" not in go_template and "$ofc_plan" not in go_template
    check_renders(go_template, template, engines)


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_string_the_plan_cannot_stand_for_is_captured(name: str, engines: dict[str, oracle.Oracle]) -> None:
    template = CAPTURED[name]
    go_template = convert(TemplateSource(template, {}, name)).template
    assert 'template "ofc_json' not in go_template  # the JSON is written into a variable
    assert "ofc-plan" not in go_template and "$ofc_plan" not in go_template
    check_renders(go_template, template, engines)


def test_planned_conversions_are_smaller() -> None:
    """The captured JSON writer is most of such a conversion: without it, a fraction of the size."""
    planned = convert(TemplateSource(PLANNED["accumulator"], {}, "planned")).template
    captured = convert(TemplateSource(PLANNED["accumulator"].replace("{{ s }}", "{{ s | trim }}"), {}, "c")).template
    assert 'template "ofc_json' not in captured
    assert len(planned) * 3 < len(captured)


def test_stored_tool_call_json_is_printed_in_place(engines: dict[str, oracle.Oracle]) -> None:
    """A tool call's JSON stored by a `set` and printed (xlam, jamba, rnj-1), or printed without
    its closing brace (`out[:-1]`: Mistral, Cogito): printed through the JSON writer where the
    variable is printed; sliced past the constant text it surely ends with, captured as before;
    the render is the reference's either way."""
    calls = [
        {"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2, "units": ["c"]}}},
        {"function": {"name": "ping", "arguments": {}}},
    ]
    messages = [USER, {"role": "assistant", "content": "", "tool_calls": calls}, {"role": "user", "content": "ok"}]
    hf_messages = [
        {**m, "tool_calls": [{"type": "function", "function": c["function"]} for c in m["tool_calls"]]}
        if "tool_calls" in m
        else m
        for m in messages
    ]
    printed = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% for c in m.tool_calls or [] %}"
        "{% set out = c.function | tojson %}{% set args = 'args=' ~ (c.function.arguments | tojson) %}"
        "[{{ out }}|{{ args }}]{% endfor %}{% endfor %}"
    )
    sliced = printed.replace("[{{ out }}|", "[{{ out[:-1] }}|")
    too_far = printed.replace("[{{ out }}|{{ args }}]", "[{{ out[:-2] }}|{{ args[:-1] }}]")
    for template in (printed, sliced, too_far):
        go_template = convert(TemplateSource(template, {}, "calls")).template
        captured = '= printf "%s%v"' in go_template
        assert captured == (template is too_far), template
        expected = reference_render(template, hf_messages, None, add_generation_prompt=True)
        assert ollama_renders(go_template, messages, None, engines) == {expected}


#: the test of a byte only the captured JSON string writer makes (the printed one looks it up)
CAPTURED_STRING = re.compile(r"if or \(lt \$_\d+ 32\) \(eq \$_\d+ 34 92\)")


def test_argument_value_json_chosen_inline_is_printed_in_place(engines: dict[str, oracle.Oracle]) -> None:
    """Qwen 3.5, Qwen3-Coder, Nemotron 3: `set v = v | tojson | safe if v is mapping or (v is
    sequence and v is not string) else v | string`, then `{{ v }}`: a plan branching on the
    test, the JSON of an argument value printed by the writer at any depth, not captured."""
    arguments = {"city": "Paris", "days": 2, "flag": True, "opts": {"a": [1, {"b": None}], "q": 'x"y'}, "units": ["c"]}
    messages = [
        USER,
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": arguments}}]},
    ]
    hf_messages = [
        USER,
        {**messages[1], "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": arguments}}]},
    ]
    template = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% for c in m.tool_calls or [] %}"
        "{% for k, v in c.function.arguments | items %}"
        "{% set v = v | tojson | safe if v is mapping or (v is sequence and v is not string) else v | string %}"
        "<{{ k }}={{ v }}>{% endfor %}{% endfor %}{% endfor %}"
    )
    go_template = convert(TemplateSource(template, {}, "arguments")).template
    assert 'template "ofc_json' in go_template
    assert not CAPTURED_STRING.search(go_template)  # no JSON string written into a variable
    expected = reference_render(template, hf_messages, None, add_generation_prompt=True)
    assert ollama_renders(go_template, messages, None, engines) == {expected}


def test_plan_failing_its_check_translates_exactly_as_captured() -> None:
    """A plan whose check on the written tree fails (what it reads is set again before it is
    printed) is left out: the translation is byte for byte the one that plans nothing."""
    template = CAPTURED["input changed"]
    planned = Translator(template, {})
    captured = Translator(template, {})
    captured.plans_off = None  # no plans at all
    assert planned.translate().text == captured.translate().text
    planless = Translator(PLANNED["accumulator"], {})
    planless.plans_off = None
    assert Translator(PLANNED["accumulator"], {}).translate().text != planless.translate().text


def test_json_stored_in_a_loop_is_captured_without_translating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `tojson` a `set` in a loop stores into a variable that outlives the loop (which a plan
    cannot stand for: one copy of the body stands for every pass) is left captured before
    anything is written for it, not found out later and the template translated again."""
    template = CAPTURED["stored in a loop"]
    captured = Translator(template, {})
    captured.plans_off = None
    expected = captured.translate().text

    def again(*args: object, **kwargs: object) -> None:
        raise AssertionError("translated again")

    monkeypatch.setattr(PlanFallback, "without", again)
    assert Translator(template, {}).translate().text == expected


def _marked(*uses: Act | Mark | Text) -> list[Act | Mark | Text]:
    """`$x` declared, a part reading it made, then `uses`."""
    return [Act("$x := 1"), Mark("made", 1, frozenset({"x"})), *uses]


@pytest.mark.parametrize(
    ("pieces", "unsound"),
    [
        (_marked(Text("a"), Mark("used", 1)), None),
        (_marked(Act("if $y"), Mark("used", 1), Act("end")), None),
        (_marked(Act("$y := 2"), Mark("used", 1)), None),  # another variable set: sound
        (_marked(Act("$x = 2"), Mark("used", 1)), 1),  # what the part read set again
        (_marked(Act("if $y"), Act("$x := 2"), Act("end"), Mark("used", 1)), 1),  # declared again
        ([Mark("used", 1), Act("$x := 1"), Mark("made", 1, frozenset({"x"}))], 1),  # used before made
        ([Mark("used", 2)], 2),  # made nowhere
        (  # made where the variable it reads is in scope, used after that scope ends
            [Act("if $y"), Act("$x := 1"), Mark("made", 1, frozenset({"x"})), Act("end"), Mark("used", 1)],
            1,
        ),
        (  # in an `else`, what the `if` branch declared is not in scope
            [Act("if $y"), Act("$x := 1"), Mark("made", 1, frozenset({"x"})), Act("else"), Mark("used", 1), Act("end")],
            1,
        ),
    ],
)
def test_plan_soundness_is_checked_on_the_marks_in_the_tree(pieces: list[str], unsound: int | None) -> None:
    """The marks are nodes of the written tree, never printed; the check reads where each part
    was made and used, and the Go scopes around them, from the tree alone."""
    top = build(pieces)
    assert "ofc" not in render(top) and render(top) == "".join(p for p in pieces if not isinstance(p, Mark))
    assert unsound_use(plan_marks(top)) == unsound
