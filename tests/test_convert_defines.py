"""Macro defines written alike but for their numbers are parsed once (`merge_identical_defines`):
the template renders the same through Ollama's template package, and defines that differ, or
that call defines that differ, stay apart."""

from __future__ import annotations

from ollama_fc import oracle
from ollama_fc.convert.go import tree
from ollama_fc.convert.go.sharing import merge_identical_defines


def define(name: str, body: str) -> str:
    return f'{{{{ define "{name}" }}}}{body}{{{{ end }}}}'


def test_defines_alike_but_for_their_numbers_are_one_and_render_the_same(engine: oracle.Oracle) -> None:
    helpers = {
        # two copies calling each other, each other's twin: one class
        "ofc_macro_f_1": define(
            "ofc_macro_f_1", '{{ $_3 := . }}[{{ if $_3 }}{{ template "ofc_macro_f_2" (slice $_3 1) }}{{ end }}]'
        ),
        "ofc_macro_f_2": define(
            "ofc_macro_f_2", '{{ $_7 := . }}[{{ if $_7 }}{{ template "ofc_macro_f_1" (slice $_7 1) }}{{ end }}]'
        ),
        # other text
        "ofc_macro_f_3": define(
            "ofc_macro_f_3", '{{ $_9 := . }}<{{ if $_9 }}{{ template "ofc_macro_f_3" (slice $_9 1) }}{{ end }}>'
        ),
        # alike but for the define they call, which differ
        "ofc_macro_g_4": define("ofc_macro_g_4", '{{ $_1 := . }}({{ template "ofc_macro_f_3" $_1 }})'),
        "ofc_macro_g_5": define("ofc_macro_g_5", '{{ $_2 := . }}({{ template "ofc_macro_f_1" $_2 }})'),
    }
    body = (  # (reading .Messages: Ollama runs it as a template of the whole conversation)
        '{{- if and false .Messages }}{{- end }}{{ template "ofc_macro_f_2" "abc" }}{{ template "ofc_macro_f_3" "ab" }}'
        '{{ template "ofc_macro_g_4" "a" }}{{ template "ofc_macro_g_5" "a" }}'
    )
    merged_body = tree.parse(body)
    merged = merge_identical_defines({name: tree.parse(code) for name, code in helpers.items()}, merged_body)
    assert sorted(merged) == ["ofc_macro_f_1", "ofc_macro_f_3", "ofc_macro_g_4", "ofc_macro_g_5"]
    messages = [{"role": "user", "content": "hi"}]
    before = engine.render("".join(helpers.values()) + body, messages)
    after = engine.render(tree.render([node for helper in merged.values() for node in helper] + merged_body), messages)
    assert before.error is None and after.error is None, (before.error, after.error)
    assert after.prompt == before.prompt == "[[[[]]]]<<<>>>(<<>>)([[]])"
