"""The render-cost floor (benchmarks/render_floor.py): a pair's floor is one call per message
only where the Jinja surely makes one for every message. docs/BENCHMARKS.md reads targets
below the floor as out of reach for any exact conversion, so a floor counted where the Jinja
may skip the call would overstate that."""

from __future__ import annotations

import pytest

from benchmarks.render_floor import BARE_RANGE, ONE_CALL_PER_MESSAGE, floor_template, per_message_call

CALLS = {
    "a role test": "{% for m in messages %}{% if m['role'] == 'user' %}U{% endif %}{{ m.content }}{% endfor %}",
    "a role test in an elif chain's first test": (
        "{% for m in messages %}{% if m.role == 'system' %}S{% elif m.role == 'user' %}U{% endif %}{% endfor %}"
    ),
    "the left operand of `or`": "{% for m in messages %}{% if m.role == 'tool' or x %}T{% endif %}{% endfor %}",
    "`|trim` of the text": "{% for m in messages %}{{ m['content'] | trim }}{% endfor %}",
    "a trim in a `set`": "{% for m in messages %}{% set c = '<' + m.content|trim + '>' %}{{ c }}{% endfor %}",
    "a call on both branches": (
        "{% for m in messages %}{% if x %}{{ m.content|trim }}{% else %}{{ m.role|upper }}{% endif %}{% endfor %}"
    ),
    "a method on the role": "{% for m in messages %}{{ m['role'].title() + ': ' + m['content'] }}{% endfor %}",
    "a loop over a slice": "{% for m in messages[1:] %}{% if m.role != 'user' %}A{% endif %}{% endfor %}",
    "a loop over loop_messages": "{% for m in loop_messages %}{{ m.content | tojson }}{% endfor %}",
    "a negated test": "{% for m in messages %}{% if not m.role == 'user' %}A{% endif %}{% endfor %}",
}

NO_CALLS = {
    "ChatML printed as it is": "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] }}{% endfor %}",
    "a test behind `loop.first and`": (
        "{% for m in messages %}{% if loop.first and m['role'] != 'system' %}S{% endif %}{{ m.content }}{% endfor %}"
    ),
    "a comparison with the empty string (a truth test)": (
        "{% for m in messages %}{% if m.content == '' %}E{% endif %}{% endfor %}"
    ),
    "a call in an `if` without `else`": "{% for m in messages %}{% if x %}{{ m.content|trim }}{% endif %}{% endfor %}",
    "a call in one branch only": (
        "{% for m in messages %}{% if x %}{{ m.content|trim }}{% else %}{{ m.content }}{% endif %}{% endfor %}"
    ),
    "a call in a nested loop": (
        "{% for m in messages %}{% for c in m.tool_calls %}{{ m.role|upper }}{% endfor %}{% endfor %}"
    ),
    "a call in an inline if's branch": "{% for m in messages %}{{ m.content|trim if x else '' }}{% endfor %}",
    "a loop over the tools": "{% for t in tools %}{% if t.type == 'function' %}F{% endif %}{% endfor %}",
    "a comparison of the loop index": "{% for m in messages %}{% if loop.index0 == 0 %}F{% endif %}{% endfor %}",
}


@pytest.mark.parametrize("source", CALLS.values(), ids=CALLS.keys())
def test_a_call_made_for_every_message_sets_the_one_call_floor(source: str) -> None:
    assert per_message_call(source)
    assert floor_template(source)[0] == ONE_CALL_PER_MESSAGE


@pytest.mark.parametrize("source", NO_CALLS.values(), ids=NO_CALLS.keys())
def test_a_call_that_may_be_skipped_leaves_the_bare_range(source: str) -> None:
    assert per_message_call(source) is None
    assert floor_template(source) == (BARE_RANGE, None)


def test_the_reason_names_what_the_jinja_does() -> None:
    assert per_message_call(CALLS["a role test"]) == "compares m['role'] with a value"
    assert per_message_call(CALLS["`|trim` of the text"]) == "applies |trim to m['content']"
