"""compare() puts the reference against Ollama's own engine, case by case, on both versions."""

from __future__ import annotations

from ollama_fc import oracle
from ollama_fc.convert.sources import TemplateSource
from ollama_fc.verify.battery import CASES, case_named
from ollama_fc.verify.runner import VersionResult, _combine, compact_diff, compare

CHATML_JINJA = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# the same prompt format, written by hand for Ollama: a final assistant message stays open
CHATML_GO = (
    "{{- range $i, $m := .Messages }}{{ $last := eq (len (slice $.Messages $i)) 1 }}"
    "<|im_start|>{{ $m.Role }}\n{{ $m.Content }}"
    '{{ if not (and $last (eq $m.Role "assistant")) }}<|im_end|>\n{{ end }}'
    '{{ if and $last (ne $m.Role "assistant") }}<|im_start|>assistant\n{{ end }}'
    "{{- end }}"
)


def test_an_equivalent_go_template_is_exact_on_every_case_and_version(engines) -> None:
    _, results = compare(TemplateSource(CHATML_JINJA), CHATML_GO, engines)
    assert [result.name for result in results] == [case.name for case in CASES]
    for result in results:
        assert result.status == "exact", (result.name, result.detail)
        assert set(result.versions) == {oracle.PINNED, oracle.LATEST}


def test_a_missing_generation_prompt_is_a_diff_at_the_end(engines) -> None:
    go = CHATML_GO.replace("<|im_start|>assistant\n{{ end }}", "{{ end }}")
    _, results = compare(TemplateSource(CHATML_JINJA), go, engines)
    by_name = {result.name: result for result in results}
    assert by_name["prefill"].status == "exact"
    single = by_name["single_turn"]
    assert single.status == "diff"
    # "<|im_start|>user\n" (17) + "Hello! How are you?" (19) + "<|im_end|>\n" (11) = 47
    assert single.detail == (
        "at char 47 (line 3 col 1): reference ' How are you?<|im_end|>\\n<|im_start|>assistant\\n' "
        "vs ollama ' How are you?<|im_end|>\\n'"
    )


def test_template_refusal_is_cannot_render_not_a_failure(engines) -> None:
    jinja = (
        "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        + CHATML_JINJA
    )
    _, results = compare(TemplateSource(jinja), CHATML_GO, engines)
    by_name = {result.name: result for result in results}
    assert by_name["system_prompt"].status == "cannot-render"
    assert "System role not supported" in by_name["system_prompt"].detail
    assert by_name["single_turn"].status == "exact"


def test_ollama_refusing_the_template_is_an_error(engines) -> None:
    _, results = compare(TemplateSource(CHATML_JINJA), "{{ if }}", engines)
    assert {result.status for result in results} == {"error"}
    assert "parse error" in results[0].detail


def test_leading_bos_added_by_the_runner_is_not_counted(engines) -> None:
    source = TemplateSource("{{ bos_token }}" + CHATML_JINJA, special_tokens={"bos_token": "<s>"})
    _, results = compare(source, CHATML_GO, engines)
    assert all(result.status == "exact" for result in results)


def test_compact_diff_shows_the_first_difference_with_context() -> None:
    assert (
        compact_diff("abcXdef", "abcYdef", context=2) == "at char 3 (line 1 col 4): reference 'bcXd' vs ollama 'bcYd'"
    )
    assert compact_diff("ab\ncd", "ab\nc", context=1) == "at char 4 (line 2 col 2): reference 'cd' vs ollama 'c'"


def test_a_difference_on_one_version_names_that_version() -> None:
    status, detail = _combine(
        {"v0.24.0": VersionResult(status="exact"), "v0.34.4": VersionResult(status="diff", detail="at char 1")}
    )
    assert status == "diff"
    assert detail == "v0.34.4: diff at char 1; exact on v0.24.0"
    status, detail = _combine(
        {
            "v0.24.0": VersionResult(status="diff", detail="at char 1"),
            "v0.34.4": VersionResult(status="diff", detail="at char 1"),
        }
    )
    assert (status, detail) == ("diff", "at char 1")


# DeepSeek V2.5/V3/R1's shape: the calls are printed only when the content is None
CALLS_WHEN_NONE_JINJA = (
    "{% for m in messages %}{% if m.role == 'user' %}<U>{{ m.content }}{% endif %}"
    "{% if m.role == 'assistant' and m.content is none %}<A>{% for c in m.tool_calls %}[{{ c.function.name }}]{% endfor %}{% endif %}"
    "{% if m.role == 'assistant' and m.content is not none %}<A>{{ m.content }}{% if m.tool_calls %}!{% endif %}{% endif %}"
    "{% if m.role == 'tool' %}<T>{{ m.content }}{% endif %}{% endfor %}{% if add_generation_prompt %}<A>{% endif %}"
)


def test_a_call_with_no_text_is_a_call_with_content_none(engines) -> None:
    """Ollama sends "" for a text-less assistant call where transformers users pass None: the
    reference gets None, and the converted template treats "" with calls as none, so the
    model's own calls stay in the prompt."""
    from ollama_fc.convert import convert

    source = TemplateSource(CALLS_WHEN_NONE_JINJA, {}, "calls-when-none")
    shape, results = compare(source, convert(source).template, engines)
    assert shape.tool_calls and shape.empty_call_content == "none"
    by_name = {result.name: result for result in results}
    for name in ("tool_call_result", "parallel_calls", "tool_call_with_text", "multi_turn", "empty_content"):
        assert by_name[name].status == "exact", (name, by_name[name].detail)
    call = case_named("tool_call_result")
    prompt = engines[oracle.PINNED].render(convert(source).template, list(call.messages), list(call.tools))
    assert "<A>[get_weather]" in (prompt.prompt or "")
