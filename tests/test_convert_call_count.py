"""Fewer function calls per message in converted templates, with the same bytes rendered.

Each lowering (prefill bookkeeping behind `$ofc_open`, `if` conditions folded, `loop.last`
computed once or not at all) is checked against the Hugging Face reference through Ollama's own
template package, both versions, on conversations that do and do not continue an assistant
message; and the emitted template is checked for the calls the lowering removes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from ollama_fc import oracle
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.convert.go import tree
from ollama_fc.convert.go.calls import GoCall, go_and, go_eq, go_field, go_not, go_or
from ollama_fc.convert.ops.conditions import invert_negated_ifs, simplify_condition
from ollama_fc.hf.reference import render as reference_render

CALLS = [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
HF_CALLS = [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "answered": [
        {"role": "system", "content": " Be brief. "},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": CALLS},
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "user", "content": " thanks "},
    ],
    "prefill": [
        {"role": "user", "content": "Write a haiku."},
        {"role": "assistant", "content": "  Soft rain on the roof,"},
    ],
    "prefill_repeated_text": [
        {"role": "system", "content": "same"},
        {"role": "user", "content": "same"},
        {"role": "assistant", "content": "same"},
    ],
    "no_system": [{"role": "user", "content": "hi"}],
    "blank": [
        {"role": "user", "content": " \n"},
        {"role": "assistant", "content": "\u00e9"},
        {"role": "user", "content": "x"},
    ],
}

TEMPLATES = {
    # the final message's text printed directly, stripped, and through a variable set in a branch
    "content_paths": (
        "{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% set rest = messages[1:] %}"
        "{% else %}{% set sys = '' %}{% set rest = messages %}{% endif %}"
        "{% if sys %}<s>{{ sys | trim }}</s>{% endif %}"
        "{% for m in rest %}{% set c = m.content %}"
        "{% if m.role == 'user' %}<u>{{ c | trim }}</u>"
        "{% elif m.role == 'assistant' %}<a>{{ c }}{% if not loop.last %}</a>{% endif %}"
        "{% else %}<t>{{ m.content }}</t>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<a>{% endif %}"
    ),
    # text captured by `set` blocks and a namespace before it is printed
    "captured_text": (
        "{% set ns = namespace(sys='') %}"
        "{% for m in messages %}{% if m.role == 'system' %}{% set ns.sys = m.content %}{% endif %}{% endfor %}"
        "<{{ ns.sys }}>{% for m in messages %}{% set turn %}[{{ m.role }}] {{ m.content }}{% endset %}"
        "{% if m.role != 'system' %}{{ turn }};{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    ),
    # the conditions the translator composes from `not`, `and`, `or`, `==`, `!=`, `in`
    "conditions": (
        "{% for m in messages %}"
        "{% if not (m.role == 'tool' or m.role == 'ipython' or m.role == 'tool_results' or (m.tool_calls is defined and m.tool_calls)) %}A{% endif %}"
        "{% if not not m.content %}B{% endif %}"
        "{% if m.role != 'user' and true %}C{% endif %}"
        "{% if not (m.role != 'assistant') %}D{% endif %}"
        "{% if m.role in ['user', 'system'] or m.role == 'tool' %}E{% endif %}"
        "{% if (m.content == '' or m.content == 'sunny') and not loop.first %}F{% endif %}"
        "{% if m.role == 'user' or false %}G{% endif %}"
        "{{ m.role }};{{ m.content }}{% endfor %}"
    ),
    # loop.last read (once per loop, not per step), and loop variables read without loop.last
    "loop_last": (
        "{% for m in messages %}{% if loop.last %}L{% endif %}{{ loop.index }}"
        "{% for c in m.tool_calls or [] %}{{ loop.index0 }}{{ c.function.name }}{% if not loop.last %},{% endif %}{% endfor %}"
        "{% endfor %}{% for m in messages %}{{ loop.first }}{% endfor %}"
        "{% for i in range(3) %}{{ i }}{{ loop.last }}{% endfor %}"
        "{% for m in messages if m.role == 'user' %}{{ loop.index }}{{ loop.last }}{% endfor %}"
        "{% for m in messages %}{{ m.content }}{% endfor %}"
    ),
    # `+` and `~` chains, nested through variables, with `%` in the constant text and numbers
    "concatenation": (
        "{% set head = '<%v 100%%>' + messages[0].role %}"
        "{% for m in messages %}{% set turn = '[' + m.role + '|' ~ loop.index ~ '] ' + m.content | trim + '%s' %}"
        "{% if loop.index0 == 0 %}{% set turn = '<s>' + turn %}{% endif %}"
        "{% set both = head + turn + '%' %}{{ ('(' ~ m.role ~ ')') + (loop.length ~ '!') }}{{ both }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '%d' + head }}{% endif %}"
    ),
    # the element before and after the step's own in a loop over that list: Python's `xs[-1]`
    # at the first step (unguarded), `loop.index` spelling `loop.index0 + 1`; an inner loop's
    # `loop` and a filtered loop's index do not count positions in the messages
    "neighbours": (
        "{% for m in messages %}[{{ messages[loop.index0 - 1].role }}>{{ m.role }}"
        "{% if not loop.last %}>{{ messages[loop.index0 + 1].role }}|{{ messages[loop.index].role }}{% endif %}"
        "{% if loop.first or messages[loop.index - 2].role != m.role %}*{% endif %}"
        "{% for c in m.tool_calls or [] %}{% if not loop.first %}{{ messages[loop.index0 - 1].role }}{% endif %}{{ c.function.name }}{% endfor %}]"
        "{{ m.content }}{% endfor %}{% for m in messages[1:] %}{{ messages[1:][loop.index0 - 1].role }}{% endfor %}"
        "{% for m in messages if m.role != 'system' %}{% if not loop.first %}{{ messages[loop.index0 - 1].role }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}A{% endif %}"
    ),
    # a loop index compared with 0, and `if not` with and without an `else`
    "loop_first": (
        "{% for m in messages %}{% if loop.first %}F{% endif %}{% if loop.index0 == 0 %}Z{% else %}N{% endif %}"
        "{% if not loop.first and m.content %}+{% endif %}{% if loop.index0 != 0 %}!{% endif %}"
        "{% for c in m.tool_calls or [] %}{% if not loop.first %},{% endif %}{{ c.function.name }}{% endfor %}"
        "{% for i in range(2) %}{% if loop.first %}<{{ i }}>{% endif %}{% endfor %}"
        "{% if not m.content %}-{% endif %}{% if not m.content %}({% else %}){% endif %}{{ m.content }}{% endfor %}"
        "{% for w in messages[0].role.split('e') %}{% if loop.index0 == 0 %}{{ w }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}A{% endif %}"
    ),
    # the final message's text in a concatenation: printed piece by piece where nothing is cut
    "final_concat": (
        "{% set eos, pct = '</s>', '%' %}{% for m in messages %}{% if m.role == 'assistant' %}{{ m.content + eos + ' ' }}"
        "{% else %}[{{ m.role }}] {{ pct + m.content + pct }}{% endif %}{% endfor %}"
    ),
    # blocks printing several pieces after the final message's text may have been printed
    "guarded_blocks": (
        "{% for m in messages %}[{{ m.role }}]{{ m.content }}"
        "{% if m.role != 'assistant' %}<{{ loop.index }}{% if m.content %}!{% endif %}|{{ m.role }}>{% endif %}"
        "{% for c in m.tool_calls or [] %}({{ c.function.name }}{% if loop.first %}*{% endif %},{{ loop.index }})"
        "{% endfor %}{% endfor %}"
        "{% if add_generation_prompt %}<a>{% endif %}"
    ),
    # `|length` compared with 0 or 1, either way round: a string's, a list's, a map's (the
    # truth of each), an untyped value's and `> 1` (counted)
    "lengths": (
        "{% for m in messages %}{% if m.content | length > 0 %}a{% endif %}"
        "{% if 0 < m.content | trim | length %}b{% endif %}{% if m.content | trim | length == 0 %}c{% endif %}"
        "{% if m.content | length >= 1 %}d{% endif %}{% if m.content | length < 1 %}e{% endif %}"
        "{% if m.content | length <= 0 %}f{% endif %}{% if 0 != m.content | length %}g{% endif %}"
        "{% if 1 > m.content | count %}h{% endif %}{% if m.content | length > 1 %}l{% endif %}"
        "{% if m.tool_calls is defined and m.tool_calls | length > 0 %}i{% endif %}"
        "{% for c in m.tool_calls or [] %}{% if c.function.arguments | length != 0 %}j{% endif %}"
        "{% for k, v in c.function.arguments.items() %}{% if v | length > 0 %}k{% endif %}{% endfor %}{% endfor %}"
        "{{ m.role }}:{{ m.content }};{% endfor %}{% if messages | length == 0 %}Z{% endif %}"
        "{% if add_generation_prompt %}A{% endif %}"
    ),
}


@pytest.fixture(scope="module", params=[oracle.PINNED, oracle.LATEST])
def engines(request: pytest.FixtureRequest) -> Iterator[oracle.Oracle]:
    with oracle.Oracle(request.param) as engine:
        yield engine


def as_hf(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "tool_calls": HF_CALLS} if "tool_calls" in m else m for m in messages]


@pytest.mark.parametrize("template_name", sorted(TEMPLATES))
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
def test_renders_like_jinja(template_name: str, conversation: str, engines: oracle.Oracle) -> None:
    template = TEMPLATES[template_name]
    messages = CONVERSATIONS[conversation]
    prefill = messages[-1]["role"] == "assistant"
    expected = reference_render(
        template, as_hf(messages), add_generation_prompt=not prefill, continue_final_message=prefill
    )
    rendered = engines.render(convert(TemplateSource(template, {}, template_name)).template, messages)
    assert rendered.error is None, rendered.error
    assert rendered.prompt == expected


def calls_outside_prefill(go_template: str) -> list[str]:
    """The actions that call `not` on the prefill flags, or compute the final message's flag
    outside a block entered only when an assistant message is continued."""
    found, depth_open, stack = [], 0, []
    for action in re.findall(r"\{\{(?:- )?(.*?)(?: -)?\}\}", go_template):
        word = action.split(" ", 1)[0]
        if word in {"if", "range", "with", "define"}:
            stack.append(action == "if $ofc_open")
            depth_open += stack[-1]
        elif word == "end" and stack:
            depth_open -= stack.pop()
        if "not $ofc_go" in action or (not depth_open and "$ofc_final)" in action and "eq " in action):
            found.append(action)
    return found


def test_prefill_bookkeeping_costs_no_call_per_message() -> None:
    go = convert(TemplateSource(TEMPLATES["content_paths"], {}, "content_paths")).template
    assert "if $ofc_go" in go and "if $ofc_open" in go
    assert calls_outside_prefill(go) == []


def test_conditions_are_folded() -> None:
    go = convert(TemplateSource(TEMPLATES["conditions"], {}, "conditions")).template
    conditions = re.findall(r"\{\{(?:else )?if (.*?)\}\}", go)
    for folded_away in ("not (not", "(not (eq", " true)", " false)", "(or (or", "(and (and"):
        assert not any(folded_away in c for c in conditions), folded_away
    assert any("eq $" in c and '"tool" "ipython" "tool_results"' in c for c in conditions), conditions


def test_concatenation_is_one_printf() -> None:
    go = convert(TemplateSource(TEMPLATES["concatenation"], {}, "concatenation")).template
    nested = re.findall(r'\(printf "(?:[^"\\]|\\.)*"(?: [^ ()]+)* \(printf', go)
    assert not nested, nested  # no printf among another printf's operands
    assert '(printf "[%v|%v] %v%%s" $' in go, go  # constant text in the format, `%` doubled


def test_loop_index_tested_without_a_call() -> None:
    go = convert(TemplateSource(TEMPLATES["loop_first"], {}, "loop_first")).template
    conditions = re.findall(r"\{\{(?:else )?if (.*?)\}\}", go)
    assert not any(re.search(r"\b(?:eq|ne) \$_\d+ 0\b", c) for c in conditions), conditions
    assert re.search(r"\{\{if \$_\d+\}\}\{\{else\}\}F", go), go  # loop.first: no call at all


def test_neighbours_in_a_loop_are_kept_not_computed() -> None:
    go = convert(TemplateSource(TEMPLATES["neighbours"], {}, "neighbours")).template
    # the message loops carry the element over; the filtered one computes index0 - 1 as before
    # (after the `loop.first` flag's two assignments, where the loop keeps one)
    carried = (
        r"\{\{range \$_\d+, (\$_\d+) := \$_\d+\}\}(?:\{\{\$_\d+ := \$_\d+\}\}\{\{\$_\d+ = false\}\})?"
        r"\{\{\$_\d+ := (\$_\d+)\}\}\{\{\2 = \1\}\}"
    )
    assert len(re.findall(carried, go)) == 2, go
    assert len(re.findall(r'index \$\.Messages \(len \(slice \(printf "%\*s"', go)) == 2, go


def test_loop_last_is_computed_once_and_only_when_read() -> None:
    go = convert(TemplateSource(TEMPLATES["loop_last"], {}, "loop_last")).template
    hoisted = re.findall(r"\{\{if (\$_\d+)\}\}\{\{\$_\d+ = len \(slice \1 1\)\}\}\{\{end\}\}\{\{range ", go)
    assert len(hoisted) == 2, go  # the message loop and the tool call loop, before their `range`
    assert not re.search(r":= len \(slice \$_\d+ 1\)", go)  # no step computes it again
    no_last = convert(TemplateSource("{% for m in messages %}{{ loop.index }}{{ m.role }}{% endfor %}", {}, "x"))
    assert "len (slice" not in no_last.template


@pytest.mark.parametrize(
    ("condition", "folded"),
    [
        ("(not (not $x))", "$x"),
        ("and $x true", "$x"),
        ('(or (or (eq $r "a") (eq $r "b")) (eq $r "c"))', 'eq $r "a" "b" "c"'),
        ('not (eq $a "x")', 'ne $a "x"'),
        ("not (ne $a $b)", "eq $a $b"),
        ('not (eq $a "x" "y")', 'not (eq $a "x" "y")'),  # `ne` takes two arguments only
        ('or (eq $a "x") (eq $b "y")', 'or (eq $a "x") (eq $b "y")'),
        ('or (eq $a $b) (eq $a "y")', 'or (eq $a $b) (eq $a "y")'),  # only constants merge
        ('eq (index $m 0).Role "system"', 'eq (index $m 0).Role "system"'),
        ("and $ofc_open (not $ofc_stop) $x", "and $ofc_open (not $ofc_stop) $x"),
        ('(and (eq $x ")") true)', 'eq $x ")"'),
        ("$x | len", "$x | len"),
    ],
)
def test_simplify_condition(condition: str, folded: str) -> None:
    assert simplify_condition(condition) == folded


@pytest.mark.parametrize(
    ("composed", "folded"),
    [
        (go_not(go_not("$x")), "$x"),
        (go_and("$x", "true"), "$x"),
        (go_or(go_or(go_eq("$r", '"a"'), go_eq("$r", '"b"')), go_eq("$r", '"c"')), 'eq $r "a" "b" "c"'),
        (go_not(go_eq("$a", '"x"')), 'ne $a "x"'),
        (
            go_and("$ofc_open", go_not(GoCall("eq", "(index $m 0).Role", '"a"'))),
            'and $ofc_open (ne (index $m 0).Role "a")',
        ),
        (go_not(go_eq(go_field(GoCall("index", "$m", "0"), ".Role"), '"a"')), 'ne (index $m 0).Role "a"'),
        (
            go_and(go_not(go_and(go_eq("$c", '""'), "$t")), "$c"),
            'and (not (and (eq $c "") $t)) $c',
        ),  # `and` in `and`: read
        (go_eq("$a", '"x"'), 'eq $a "x"'),  # nothing folds: written without its parentheses
        (go_or(go_eq("$a", "$b"), go_eq("$c", "$d")), "or (eq $a $b) (eq $c $d)"),  # read, as its text is
        (GoCall("lt", "$b", "32", parenthesised=False), "lt $b 32"),
        ("true", "true"),
    ],
)
def test_composed_conditions_fold_as_their_text(composed: str, folded: str) -> None:
    """A condition composed of calls folds from them exactly as its text would be read."""
    assert simplify_condition(composed) == folded == simplify_condition(str(composed))


#: operands for random conditions: variables, constants, words the text fold looks for inside a
#: string, and operands given as text (parsed where they are composed in)
OPERANDS = ["$x", "$i", "$m.Content", '"a"', "0", "1", "true", "false", '"true or x"', '"x and y"']
OPERANDS += ["(len $x)", "(not $x)", "(and $x $y)", "(eq $i 0)", "(index $m 0).Role", '(or (eq $x "a") (eq $x "b"))']


def random_condition(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(OPERANDS)
    below = [random_condition(rng, depth - 1) for _ in range(rng.randint(1, 3))]
    return rng.choice(
        [
            go_not(below[0]),
            go_and(*below),
            go_or(*below),
            go_eq(below[0], *rng.sample(OPERANDS, rng.randint(1, 2))),
            go_eq(rng.choice(["$i", "$x"]), "0"),
            GoCall("ne", rng.choice(["$i", "$x"]), "0"),
            go_field(GoCall("index", "$m", below[0]), ".Role"),
        ]
    )


def test_random_composed_conditions_fold_as_their_text() -> None:
    """Which composed conditions fold, and into what, is what reading their text gives."""
    rng = random.Random(7)
    for _ in range(3000):
        condition = random_condition(rng, 4)
        for ints in (frozenset(), frozenset({"$i"})):
            assert simplify_condition(condition, ints) == simplify_condition(str(condition), ints), condition


@pytest.mark.parametrize(
    ("condition", "folded"),
    [
        ("(eq $i 0)", "not $i"),
        ("not (eq $i 0)", "$i"),
        ("ne $i 0", "$i"),
        ("and (ne $i 0) $x", "and $i $x"),
        ("or (eq $i 0) (eq $j 0)", "or (not $i) (eq $j 0)"),  # $j is not known to be an int
        ("eq $i 1", "eq $i 1"),
        ("eq $i 0 1", "eq $i 0 1"),
        ("eq (eq $i 0) true", "eq (eq $i 0) true"),  # a value, not a truth: left as it is
    ],
)
def test_simplify_int_conditions(condition: str, folded: str) -> None:
    assert simplify_condition(condition, {"$i"}) == folded


INT_CONDITIONS = ["eq $i 0", "not (eq $i 0)", "ne $i 0", "and (ne $i 0) $m.Content", "or (eq $i 0) $m.Content"]


@pytest.mark.parametrize("condition", INT_CONDITIONS)
def test_int_conditions_have_the_same_truth_in_ollama(condition: str, engines: oracle.Oracle) -> None:
    """A list index and an integer range's index: the folded condition is true where the original is."""
    folded = simplify_condition(condition, {"$i"})
    assert folded != condition
    messages = [{"role": r, "content": c} for r, c in (("user", "a"), ("assistant", ""), ("user", "b"))]
    outputs = []
    for code in (condition, folded):
        template = (
            "{{ range $i, $m := .Messages }}{{ if " + code + " }}1{{ else }}0{{ end }}{{ end }};"
            "{{ range $i := 3 }}{{ $m := index $.Messages $i }}{{ if " + code + " }}1{{ else }}0{{ end }}{{ end }}"
        )
        rendered = engines.render(template, messages)
        assert rendered.error is None, (code, rendered.error)
        outputs.append(rendered.prompt)
    assert outputs[0] == outputs[1] and "1" in outputs[0] and "0" in outputs[0], outputs


NEGATED = (
    "{{ range $i, $m := .Messages }}{{ if not $i }}first{{ end }}{{ if not $m.Content }}empty{{ else }}full{{ end }}"
    '{{ if not $m.Role }}{{ "{{ end }}" }}{{ else if $i }}later{{ end }}{{ if not $m.Content }}[{{ if not $i }}'
    "{{ range $m.Role }}{{ end }}0{{ end }}]{{ end }}{{ end }}"
)


def inverted_ifs(template: str) -> str:
    top = tree.parse(template)
    invert_negated_ifs(top)
    return tree.render(top)


def test_invert_negated_ifs() -> None:
    inverted = inverted_ifs(NEGATED)
    assert inverted.count("{{ if not ") == 1, inverted  # the `else if` chain is left
    assert "{{ if $m.Content }}full{{ else }}empty{{ end }}" in inverted, inverted
    assert "{{ if $i }}{{ else }}first" in inverted and "{{ if $m.Content }}{{ else }}[" in inverted, inverted
    assert "{{ if $i }}{{ else }}{{ range" in inverted, inverted
    assert inverted_ifs("{{ if (not $x) }}a{{ else }}b{{ end }}") == "{{ if $x }}b{{ else }}a{{ end }}"
    chain = "{{ if not $x }}a{{ else if $y }}b{{ else }}c{{ end }}"
    assert inverted_ifs(chain) == chain
    # a trim marker trims the text beside it, which the swap would change: such a block is left
    for trimmed in ("{{ if not $x -}} a{{ else }}b{{ end }}", "{{ if not $x }}a {{- else }}b{{ end }}"):
        assert inverted_ifs(trimmed) == trimmed
    assert inverted_ifs("{{ if not $x }}a{{ else }}b {{- end }}") == "{{ if not $x }}a{{ else }}b {{- end }}"


def test_inverted_ifs_render_the_same_in_ollama(engines: oracle.Oracle) -> None:
    messages = [{"role": ("user", "assistant")[n % 2], "content": c} for n, c in enumerate(("a", "", "b", ""))]
    original, inverted = (engines.render(t, messages) for t in (NEGATED, inverted_ifs(NEGATED)))
    assert original.error is None and inverted.error is None, (original.error, inverted.error)
    assert original.prompt == inverted.prompt and "first" in original.prompt and "[" in original.prompt


@pytest.mark.parametrize(
    "condition",
    [
        "(not (not $.x))",
        "and $.x true",
        'or (or (eq $.r "a") (eq $.r "b")) (eq $.r "c")',
        'not (eq $.r "a")',
        "not (and $.x (not (not $.y)))",
        'or (and $.x true) (not (ne $.r "b")) false',
        "and (or $.x false) (or $.y (not $.x))",
    ],
)
def test_folded_conditions_have_the_same_truth_in_ollama(condition: str, engines: oracle.Oracle) -> None:
    """Every combination of values: the folded condition is true exactly where the original is.
    (The values reach the condition through a tool call's arguments, `$.x` being read from dot.)"""
    folded = simplify_condition(condition)
    assert folded != condition
    body = "{{- range .Messages }}{{ range .ToolCalls }}{{ with .Function.Arguments }}"
    for x in (True, False, "", "t", 0, 2):
        for y in (True, "", None):
            for r in ("a", "b", "c", ""):
                arguments = {"x": x, "y": y, "r": r}
                messages = [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"function": {"name": "f", "arguments": arguments}}],
                    }
                ]
                outputs = []
                for code in (condition, folded):
                    template = (
                        body
                        + "{{ if "
                        + code.replace("$.", ".")
                        + " }}1{{ else }}0{{ end }}{{ end }}{{ end }}{{ end }}"
                    )
                    rendered = engines.render(template, messages)
                    assert rendered.error is None, (code, rendered.error)
                    outputs.append(rendered.prompt)
                assert outputs[0] == outputs[1], (arguments, condition, folded)


def test_length_compared_with_zero_is_a_truth_test() -> None:
    """Python's len() is nonzero exactly when a string, list or mapping is true: no character
    count (`%-*s`) or `len` call is left for the comparisons with 0 or 1 but `> 1`."""
    go = convert(TemplateSource(TEMPLATES["lengths"], {}, "lengths")).template
    assert go.count('printf "%-*s"') == 1, go  # `m.content | length > 1` still counts
    assert not re.search(r"\((?:gt|ge|lt|le|eq|ne) \(len \$(?:_\d+|\.Messages)(?:\.\w+)*\) [01]\)", go), go


def test_concatenated_message_text_is_printed_in_pieces() -> None:
    """`m.content + eos` (Mistral's, not printed piece by piece as `+` with constant text is)
    costs no `printf` where no assistant message is continued: the
    text and the constant are printed one after the other (the cut, when one is, still reads
    the whole)."""
    go = convert(TemplateSource(TEMPLATES["final_concat"], {}, "final_concat")).template
    assert len(re.findall(r"\{\{\$\w+\.Content\}\}\{\{\$eos\}\}", go)) == 2, go
    assert len(re.findall(r"\{\{\$pct\}\}\{\{\$\w+\.Content\}\}\{\{\$pct\}\}", go)) == 2, go


def test_a_block_that_cannot_cut_is_guarded_once() -> None:
    """After the final message's text may have been printed, output is guarded by `$ofc_go`;
    a block that cannot cut it is guarded once, not at each piece it prints."""
    go = convert(TemplateSource(TEMPLATES["guarded_blocks"], {}, "guarded_blocks")).template
    loop = go[go.index("{{range $") : go.rindex("{{if ne (index $.Messages")]
    assert "{{if $ofc_go}}{{if ne $" in loop, go  # the role's block, guarded whole
    assert "{{if $ofc_go}}{{range $" in loop, go  # the calls' loop too
    # those two and the one around the final message's text (the cut): none inside the blocks
    assert loop.count("{{if $ofc_go}}") == 3, go
