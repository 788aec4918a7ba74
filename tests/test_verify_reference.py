"""The reference renderer behaves like transformers' apply_chat_template on the points templates rely on."""

from __future__ import annotations

import datetime

import pytest

from ollama_fc.hf.reference import ReferenceRenderError, render


def render_text(template: str, **extra: object) -> str:
    return render(template, [], add_generation_prompt=False, **extra)


def test_tojson_keeps_html_characters_and_unicode_with_python_separators() -> None:
    # jinja2's own tojson would give \u003cb\u003e and \u0026; transformers' does not escape
    out = render_text('{{ {"a": "<b>&\'", "é": [1, 2]} | tojson }}')
    assert out == '{"a": "<b>&\'", "é": [1, 2]}'


def test_tojson_indent_separators_and_sort_keys() -> None:
    assert render_text('{{ {"b": 1, "a": [2]} | tojson(indent=2) }}') == '{\n  "b": 1,\n  "a": [\n    2\n  ]\n}'
    assert render_text('{{ {"b": 1, "a": 2} | tojson(separators=(",", ":")) }}') == '{"b":1,"a":2}'
    assert render_text('{{ {"b": 1, "a": 2} | tojson(sort_keys=true) }}') == '{"a": 2, "b": 1}'


def test_trim_blocks_and_lstrip_blocks() -> None:
    # block and comment tags eat the newline after them and the indentation before them;
    # expression tags do neither
    template = "  {% if true %}\nx\n  {% endif %}\ny\n{# c #}\n  {{ 'z' }}\n!"
    assert render_text(template) == "x\ny\n  z\n!"


def test_raise_exception_is_a_deliberate_refusal() -> None:
    with pytest.raises(ReferenceRenderError, match="System role not supported") as caught:
        render_text("{{ raise_exception('System role not supported') }}")
    assert caught.value.raised


def test_a_crash_is_not_a_deliberate_refusal() -> None:
    with pytest.raises(ReferenceRenderError) as caught:
        render_text("{{ 'a' + 1 }}")
    assert not caught.value.raised


def test_sandbox_is_immutable() -> None:
    with pytest.raises(ReferenceRenderError, match="SecurityError"):
        render_text("{% set x = [] %}{{ x.append(1) }}")


def test_generation_block_renders_its_body() -> None:
    template = "{% for m in messages %}{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}!"
    assert render(template, [{"role": "assistant", "content": "hi"}]) == "[hi]!"


def test_loop_controls() -> None:
    assert render_text("{% for i in [1, 2, 3] %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}") == "1"
    assert render_text("{% for i in [1, 2, 3] %}{% if i == 2 %}{% continue %}{% endif %}{{ i }}{% endfor %}") == "13"


def test_strftime_now() -> None:
    assert render_text("{{ strftime_now('%Y') }}") == str(datetime.date.today().year)


def test_context_variables_as_transformers_passes_them() -> None:
    template = (
        "{{ bos_token }}|{{ eos_token }}|{{ tools is none }}|{{ documents is defined }}|"
        "{{ add_generation_prompt }}|{{ messages | length }}"
    )
    out = render(template, [{"role": "user", "content": "x"}], special_tokens={"bos_token": "<s>", "eos_token": "</s>"})
    assert out == "<s>|</s>|True|True|True|1"


def test_undefined_token_renders_empty_but_concatenation_fails() -> None:
    assert render_text("[{{ bos_token }}]") == "[]"
    with pytest.raises(ReferenceRenderError, match="eos_token"):
        render_text("{{ 'x' + eos_token }}")


def test_syntax_error_names_the_line() -> None:
    with pytest.raises(ReferenceRenderError, match="line 2"):
        render_text("ok\n{% if %}")


@pytest.mark.parametrize(
    ("final", "expected_end"),
    [
        ("Soft rain,", "<a>Soft rain,"),  # cut right after the text: the turn stays open
        ("tail \n", "<a>tail \n"),  # printed whole without leading space: trailing space kept
        ("  both \n", "<a>  both"),  # leading space: transformers keeps only up to the stripped text
        ("", "<a></a>"),  # empty text occurs at the very end: nothing is cut
    ],
)
def test_continue_final_message_cuts_like_transformers(final: str, expected_end: str) -> None:
    template = "{% for m in messages %}<{{ m.role[0] }}>{{ m.content }}</{{ m.role[0] }}>{% endfor %}"
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": final}]
    prompt = render(template, messages, add_generation_prompt=False, continue_final_message=True)
    assert prompt == "<u>Hi</u>" + expected_end


def test_continue_final_message_refuses_a_template_that_drops_the_text() -> None:
    template = "{% for m in messages %}<{{ m.role }}>{% endfor %}"
    with pytest.raises(ReferenceRenderError, match="final message"):
        render(
            template, [{"role": "assistant", "content": "x"}], add_generation_prompt=False, continue_final_message=True
        )
