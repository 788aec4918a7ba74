"""Keys of untyped values read several times in a scope are looked up once where the scope
starts (`Access.prefetch_fields`): the renders stay the reference's, on both Ollama versions."""

from __future__ import annotations

from typing import Any

import pytest

from ollama_fc.convert import TemplateSource, convert
from ollama_fc.hf.reference import render as reference_render

ARGUMENTS = {
    "p": {"kind": "a", "n": 1, "sub": {"kind": "x", "n": None}},
    "q": {"kind": "b", "n": "two", "sub": {"kind": "y"}},
    "r": {"kind": None},
    "s": "text",
    "t": [1, 2],
    "u": {"n": None, "sub": "flat"},
}

SHOW = (
    "{% macro show(v) %}{% if v.kind == 'a' %}A{{ v.n }}{% elif v.kind == 'b' %}B{{ v['n'] }}"
    "{% elif v.kind is defined %}?{{ v.kind }}{% else %}-{% endif %}"
    "{% if v.sub and v.sub.kind == 'x' %}[{{ v.sub.n }}|{{ v.sub['kind'] }}|{{ v.sub.n is none }}]"
    "{% elif v.sub is mapping %}<{{ v.sub.kind }}>{% endif %}{{ v.n is none }}{{ v.n is defined }}{% endmacro %}"
)

TEMPLATES = {
    "macro_parameter": SHOW + "{% for m in messages %}{% for c in m.tool_calls or [] %}"
    "{% for k, v in c.function.arguments.items() %}{{ k }}={{ show(v) }};{% endfor %}{% endfor %}{% endfor %}",
    "loop_variable": "{% for m in messages %}{% for c in m.tool_calls or [] %}"
    "{% for k, v in c.function.arguments.items() %}{{ k }}:{% if v.kind == 'a' %}{{ v.n }}{% elif v.kind == 'b' %}"
    "{{ v.n }}{{ v.sub.kind }}{% endif %}{{ v.kind is defined }}{{ v.sub is mapping and v.sub.kind == 'y' }};{% endfor %}{% endfor %}{% endfor %}",
    "bound_again_in_the_scope": "{% for m in messages %}{% for c in m.tool_calls or [] %}"
    "{% for k, v in c.function.arguments.items() %}{{ v.kind }}{% for v in [k, k] %}{{ v }}{% endfor %}"
    "{{ v.kind }}{{ v.n }};{% endfor %}{% endfor %}{% endfor %}",
}


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": ARGUMENTS}}]},
    ]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_fields_read_several_times_render_like_jinja(name: str, engines: Any) -> None:
    template = TEMPLATES[name]
    conversion = convert(TemplateSource(template, {}, name))
    messages = conversation()
    hf_messages = [
        {**m, "tool_calls": [{"type": "function", "function": c["function"]} for c in m["tool_calls"]]}
        if "tool_calls" in m
        else m
        for m in messages
    ]
    expected = reference_render(template, hf_messages)
    assert "A1" in expected or name != "macro_parameter"
    for version, engine in engines.items():
        rendered = engine.render(conversion.template, messages)
        assert rendered.error is None, (version, rendered.error)
        assert rendered.prompt == expected, version
