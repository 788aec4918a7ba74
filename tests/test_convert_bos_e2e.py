"""A template's leading BOS on the real server: Ollama's runner adds BOS itself, so the converted
template leaves the literal one out and the model sees exactly one."""

from __future__ import annotations

import pytest

from ollama_fc.convert import TemplateSource, convert
from ollama_fc.hf.reference import render as reference_render
from ollama_fc.testbed.scripted import BOS, EOS
from tests.renders import ollama_renders

CHATML = (
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: the same prompt without any BOS, written by hand: the runner's own BOS is the only one
SINGLE_BOS_GO = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)
TOKENS = {"bos_token": BOS, "eos_token": EOS}
CONTROL = ("<|im_start|>", "<|im_end|>")


def test_the_leading_bos_is_left_out_with_a_warning_where_the_runner_adds_it() -> None:
    adds = convert(TemplateSource(CHATML, TOKENS, "chatml", add_bos_token=True))
    unknown = convert(TemplateSource(CHATML, TOKENS, "chatml"))
    keeps = convert(TemplateSource(CHATML, TOKENS, "chatml", add_bos_token=False))
    assert BOS not in adds.template and BOS not in unknown.template  # Ollama's default: BOS added
    assert BOS in keeps.template
    assert [str(w) for w in adds.warnings if "bos_token" in str(w)] == [
        f"line 1: leading {BOS} (bos_token): left out: Ollama's runner adds BOS itself (the model's add_bos_token), the model sees one"
    ]
    assert not keeps.warnings


BRANCHES = (
    "{% if messages[0].role == 'system' %}{{ bos_token }}[S]{{ messages[0].content }}{% else %}{{ bos_token + '[U]' }}{% endif %}"
    "{% for m in messages %}{{ m.content }}{% endfor %}"
)


def test_a_bos_first_on_every_branch_is_left_out_on_each(engine) -> None:
    from ollama_fc.hf.reference import render as reference_render

    template = convert(TemplateSource(BRANCHES, TOKENS, "branches")).template
    assert BOS not in template
    for messages in (
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        [{"role": "user", "content": "u"}],
    ):
        expected = reference_render(BRANCHES, messages, special_tokens=TOKENS)
        assert expected.startswith(BOS)
        assert engine.render(template, messages).prompt == expected.removeprefix(BOS)


@pytest.mark.parametrize(
    "template",
    [
        "{% if messages[0].role == 'system' %}x{% endif %}{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
        "{% for m in messages %}{{ bos_token }}{{ m.content }}{% endfor %}",
        "{% for m in messages %}{{ m.content }}{% endfor %}{% if bos_token %}{{ eos_token }}{% endif %}",
    ],
)
def test_a_bos_that_may_follow_other_output_or_repeat_is_kept(template: str) -> None:
    """Only a BOS printed before anything else, once, is the leading one; elsewhere it is text,
    and a template that tests `bos_token` is not given an empty one."""
    conversion = convert(TemplateSource(template, TOKENS, "kept"))
    assert BOS in conversion.template or EOS in conversion.template
    assert not [w for w in conversion.warnings if "bos_token" in str(w)]


#: a BOS printed first where the translator cannot see it is first: inside the message loop, in a
#: value built for the first message (Llama 3's template), behind a namespace flag (rnj-1's)
LEADING_ELSEWHERE = {
    "loop.first": "{% for m in messages %}{% if loop.first %}{{ bos_token }}{% endif %}[{{ m.content }}]{% endfor %}",
    "value": (
        "{% for m in messages %}{% set content = '<' + m.role + '>' + m.content %}"
        "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    ),
    "flag": (
        "{% set emit = namespace(started=false) %}{% for m in messages %}"
        "{% if not emit.started %}{{ bos_token }}{% set emit.started = true %}{% endif %}"
        "{{ m.role }}: {{ m.content }}\n{% endfor %}"
    ),
}


@pytest.mark.parametrize("name", sorted(LEADING_ELSEWHERE))
def test_a_bos_only_ever_printed_first_is_left_out_with_a_warning(name: str, engines: dict) -> None:
    template = LEADING_ELSEWHERE[name]
    conversion = convert(TemplateSource(template, TOKENS, name))
    assert BOS not in conversion.template
    assert [w.construct for w in conversion.warnings] == [f"bos_token ({BOS})"]
    for messages in (
        [{"role": "user", "content": "u"}],
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": "v"},
        ],
    ):
        expected = reference_render(template, messages, special_tokens=TOKENS)
        assert expected.startswith(BOS)
        assert ollama_renders(conversion.template, messages, None, engines) == {expected.removeprefix(BOS)}


def test_a_bos_only_ever_printed_first_is_kept_where_the_model_adds_none() -> None:
    conversion = convert(TemplateSource(LEADING_ELSEWHERE["value"], TOKENS, "value", add_bos_token=False))
    assert BOS in conversion.template
    assert not conversion.warnings


def test_prompt_eval_count_is_a_single_bos_prompts(scripted_model, ollama_host: str) -> None:
    import ollama

    client = ollama.Client(host=ollama_host)
    messages = [{"role": "user", "content": "Hello there, how are you?"}]

    def prompt_tokens(template: str) -> int | None:
        model = scripted_model("Fine, thanks.", template=template, special_tokens=CONTROL)
        return client.chat(model, messages, options={"num_predict": 1, "temperature": 0}).prompt_eval_count

    single = prompt_tokens(SINGLE_BOS_GO)
    converted = prompt_tokens(convert(TemplateSource(CHATML, TOKENS, "chatml", add_bos_token=True)).template)
    literal = prompt_tokens(convert(TemplateSource(CHATML, TOKENS, "chatml", add_bos_token=False)).template)
    assert single is not None and single > 10
    assert converted == single
    assert literal == single + 1  # a literal BOS in the template is one more token: two BOS


def test_prompt_eval_count_of_a_bos_in_a_value_is_a_single_bos_prompts(scripted_model, ollama_host: str) -> None:
    """Llama 3's shape (`bos_token + content` for the first message) on the real server."""
    import ollama

    client = ollama.Client(host=ollama_host)
    messages = [{"role": "user", "content": "Hello there, how are you?"}]

    def prompt_tokens(template: str) -> int | None:
        model = scripted_model("Fine, thanks.", template=template)
        return client.chat(model, messages, options={"num_predict": 1, "temperature": 0}).prompt_eval_count

    single = prompt_tokens("{{- range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}<assistant>")
    converted = prompt_tokens(convert(TemplateSource(LEADING_ELSEWHERE["value"], TOKENS, "value")).template)
    assert single is not None and single > 5
    assert converted == single
