"""What the print plans would refuse is decided from the Jinja tree before translating
(`translate/planforecast.py`): the template is translated once, to the very text that
translating again without the failed plans gives."""

from __future__ import annotations

import pytest
from jinja2 import nodes

from ollama_fc.convert.sources import load_source
from ollama_fc.convert.translate import Translator
from ollama_fc.convert.translate.planfallback import PlanFallback, independent_of_plans
from ollama_fc.convert.translate.planforecast import forecast
from ollama_fc.errors import ConversionError
from tests.shared_data import shared_path

MESSAGES = "{% for m in messages %}{% if m.role != 'system' %}<{{ m.role }}>{{ m.content }}{% endif %}{% endfor %}"

#: a tool's JSON stored in a variable of the loop's pass, which a `set` then appends to a
#: namespace the loop does not own (minicpm3, reka-edge): one copy of the body stands for
#: every pass, so the plan is refused where the namespace is set
THROUGH_A_PASS_VARIABLE = (
    "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set j = t | tojson %}<{{ t.type }}>"
    "{% set ns.s = ns.s ~ '[' ~ j ~ ']' %}{% endfor %}{{ ns.s }}" + MESSAGES
)


def unforeseen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Translate as before the forecast: every failed plan found by translating."""
    monkeypatch.setattr(PlanFallback, "foresee", lambda self: None)
    monkeypatch.setattr(PlanFallback, "fails_without_plans", lambda self: False)


def plans_left(template: str) -> frozenset[int] | None:
    """The plan sources left captured from the start (None: no plans at all), as foreseen."""
    translator = Translator(template, {})
    translator.foresee()
    return translator.plans_off


def translated(template: str, tokens: dict[str, str] | None = None) -> tuple[str, int]:
    translator = Translator(template, tokens or {})
    return translator.translate(compact=True).text, translator.translations


def test_plan_stored_through_a_pass_variable_in_a_loop_is_foreseen(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = Translator(THROUGH_A_PASS_VARIABLE, {}).tree
    (stored,) = [f for f in tree.find_all(nodes.Filter) if f.name == "tojson"]
    assert forecast(tree).captured == {id(stored)}
    text, translations = translated(THROUGH_A_PASS_VARIABLE)
    assert translations == 1
    unforeseen(monkeypatch)
    assert translated(THROUGH_A_PASS_VARIABLE) == (text, 2)


@pytest.mark.parametrize(
    "template",
    [
        # appended in the loop that builds it, to a namespace it owns: a plan
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
        "{{ ns.s }}",
        # stored in a pass variable and printed in the pass: a plan of the pass
        "{% for t in tools or [] %}{% set j = t | tojson %}<{{ t.type }}>[{{ j }}]{% endfor %}",
        # the namespace is the loop's own
        "{% for t in tools or [] %}{% set ns = namespace(s='') %}{% set j = t | tojson %}<{{ t.type }}>"
        "{% set ns.s = ns.s ~ j %}{{ ns.s }}{% endfor %}",
        # set again before the loop stores it: it no longer holds the plan
        "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set j = t | tojson %}<{{ t.type }}>"
        "{% set j = t.type %}{% set ns.s = ns.s ~ j %}{% endfor %}{{ ns.s }}",
        # the namespace holding the plan handed on whole (a macro may set what it holds) first
        "{% macro show(n) %}[{{ n.s }}]{% endmacro %}{%- set ns = namespace(s='', k='') %}"
        "{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}{{ show(ns) }}"
        "{% for m in messages %}<{{ m.role }}>{% set ns.k = ns.k ~ ns.s %}{% endfor %}{{ ns.k }}",
    ],
)
def test_plans_a_loop_may_not_refuse_are_not_foreseen(template: str) -> None:
    assert forecast(Translator(template, {}).tree).captured == set()


ACCUMULATED = (
    "{%- set ns = namespace(s='') %}{% for t in tools or [] %}{% set ns.s = ns.s ~ (t | tojson) %}{% endfor %}"
)

#: a plan surely made, then used other than printed: its placeholder would be written, and the
#: template translated again without any plan (MiniMax M1, phi-4-mini, Gemma 4)
USED_OTHER_THAN_PRINTED = {
    "compared with text": ACCUMULATED + "{% if ns.s != '' %}[{{ ns.s }}]{% endif %}" + MESSAGES,
    "filtered": ACCUMULATED + "[{{ ns.s | trim }}]" + MESSAGES,
    "stored tools searched": (
        "{%- set d = '[' + (tools | tojson) + ']' %}{% if '\"x\"' not in d %}{% set d = d + '!' %}{% endif %}"
        "{{ d }}" + MESSAGES
    ),
    "in a macro printed where called": (
        "{%- macro m(x) %}{% set ns = namespace(s='') %}{% for p in x.split(',') %}"
        "{% set ns.s = ns.s + p %}{% endfor %}{{ ns.s | trim }}{% endmacro %}"
        "{% for message in messages %}{{ m(message.content) }}{% endfor %}"
    ),
}


@pytest.mark.parametrize("name", sorted(USED_OTHER_THAN_PRINTED))
def test_plan_used_other_than_printed_is_foreseen(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    template = USED_OTHER_THAN_PRINTED[name]
    assert plans_left(template) is None  # no plans at all
    text, translations = translated(template)
    assert translations == 1
    unforeseen(monkeypatch)
    assert translated(template) == (text, 2)


@pytest.mark.parametrize(
    "template",
    [
        # tested for truth first: that may refuse the plan alone (its emptiness is unknown)
        ACCUMULATED + "{% if ns.s %}{% if ns.s != '' %}[{{ ns.s }}]{% endif %}{% endif %}",
        # compared inside a larger test, which may be decided without evaluating it
        ACCUMULATED + "{% if messages and ns.s != '' %}[{{ ns.s }}]{% endif %}",
        # compared in an `elif`, not evaluated where the first test is decided statically
        ACCUMULATED + "{% if messages %}<{{ ns.s }}>{% elif ns.s != '' %}[{{ ns.s }}]{% endif %}",
        # compared in a check that only raises, which the translation drops
        ACCUMULATED + "{% if ns.s != '' %}{{ raise_exception('no') }}{% endif %}{{ ns.s }}",
        # a loop whose text may call a macro's define: perhaps no plan
        "{% macro f(t) %}{{ t.type }}{% endmacro %}{%- set ns = namespace(s='') %}"
        "{% for t in tools or [] %}{% set ns.s = ns.s ~ f(t) %}{% endfor %}{% if ns.s != '' %}{{ ns.s }}{% endif %}",
        # printed into a captured block: refused there, before its placeholder counts
        ACCUMULATED + "{% set w %}({{ ns.s }}){% endset %}{{ w | trim }}{% if ns.s != '' %}!{% endif %}",
        # a `{% set %}` block trimmed: plantext.py may print it so
        "{% set d %}T{% for t in tools %}{{ t | tojson }}{% endfor %}T{% endset %}[{{ d | trim }}]",
        # the namespace handed on whole first (a macro may set what it holds)
        "{% macro show(n) %}[{{ n.s }}]{% endmacro %}" + ACCUMULATED + "{{ show(ns) }}"
        "{% if ns.s != '' %}{{ ns.s }}{% endif %}",
    ],
)
def test_plan_that_may_not_leak_is_not_foreseen(template: str) -> None:
    assert plans_left(template) is not None


def test_forecast_relying_on_a_statement_never_translated_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop that would build the plan is in a branch decided statically false: no plan is
    made, so none leaks. The forecast, relying on that loop being translated, is dropped and
    the template translated again as before it."""
    template = (
        "{%- set on = false %}{% if on %}" + ACCUMULATED + "{% if ns.s != '' %}[{{ ns.s }}]{% endif %}{% endif %}"
    ) + MESSAGES
    assert plans_left(template) is None
    text, translations = translated(template)
    assert translations == 2
    unforeseen(monkeypatch)
    assert translated(template) == (text, 1)


#: a tool call's argument value made JSON where it is not a string (Hunyuan): a plan on that
#: path; on the other the value itself, which no plan can print, so every plan is refused
ARGUMENT_MADE_JSON = (
    "{% for m in messages %}{{ m.content }}{% for c in m.tool_calls or [] %}"
    "{% for k, v in c.function.arguments.items() %}<{{ k }}>{% if v is not string %}{% set v = v | tojson %}"
    "{% endif %}{{ v }}{% endfor %}{% endfor %}{% endfor %}"
)


def test_schema_made_json_on_one_path_only_is_foreseen(monkeypatch: pytest.MonkeyPatch) -> None:
    translator = Translator(ARGUMENT_MADE_JSON, {})
    text = translator.translate(compact=True).text
    assert (translator.plans_off, translator.translations) == (None, 1)
    unforeseen(monkeypatch)
    assert translated(ARGUMENT_MADE_JSON) == (text, 2)


def test_schema_made_json_where_the_test_is_decided_statically_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`v is defined` always holds: the plan is made on the only path and printed, nothing is
    refused. The forecast (from the tree alone, which cannot tell) is found not to hold where
    the `set` is translated, and the template translated again as before it."""
    template = ARGUMENT_MADE_JSON.replace("v is not string", "v is defined")
    text, translations = translated(template)
    assert translations == 2
    unforeseen(monkeypatch)
    assert translated(template) == (text, 1)


#: a plan is made (the tools' JSON), then a statement reading none of it fails
UNRELATED_FAILURE = (
    "{%- set d = tools | tojson %}[{{ d }}]{% for m in messages %}{{ m.content + eos_token }}{% endfor %}"
)


def test_failure_no_plan_reads_is_raised_without_translating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    translator = Translator(UNRELATED_FAILURE, {})
    with pytest.raises(ConversionError) as once:
        translator.translate()
    assert translator.translations == 1
    unforeseen(monkeypatch)
    again = Translator(UNRELATED_FAILURE, {})
    with pytest.raises(ConversionError) as twice:
        again.translate()
    assert (str(once.value), again.translations) == (str(twice.value), 2)


@pytest.mark.parametrize(
    "template",
    [
        UNRELATED_FAILURE.replace("eos_token }}", "eos_token }}{{ d }}"),  # it reads the plan's variable
        "{% set d = tools | tojson %}{% set e = d %}{{ e + x }}",  # it reads a name set from it
        "{% set d %}{% for t in tools %}{{ t | tojson }}{{ x + 1 }}{% endfor %}{% endset %}{{ d }}",  # in its source
        "{% macro f() %}{{ x + 1 }}{% endmacro %}{{ f() }}",  # in a macro (translated where it is called)
    ],
)
def test_failure_a_plan_may_cause_is_not_independent(template: str) -> None:
    """The statement that failed (the one with `+`) may translate otherwise without plans."""
    translator = Translator(template, {})
    (statement,) = [s for s in translator.tree.find_all(nodes.Output) if any(s.find_all(nodes.Add))]
    assert not independent_of_plans(statement, translator.index)


@pytest.mark.parametrize(
    "name",
    [
        "reka-edge.jinja",
        "mistral-nemo-instruct-2407-hfjs.jinja",
        "mistral-small-3.1-24b-instruct-2503.jinja",
        "minimax-m1.jinja",
        "llamacpp-fixed-phi-4-mini-instruct.jinja",
        "hunyuan-hy3.jinja",
    ],
)
def test_corpus_templates_whose_failed_plans_are_foreseen_translate_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reka-edge: two plans a `set` in a loop refuses; the Mistral templates: a failure no plan
    causes (`+` of the content and an undefined eos_token); MiniMax M1, phi-4-mini: a plan
    compared with a string; Hunyuan: an argument value made JSON where it is not a string."""
    source = load_source(shared_path("corpus", "templates", name))

    def outcome() -> tuple[str, int]:
        translator = Translator(source.template, source.special_tokens)
        try:
            text = translator.translate(compact=True).text
        except ConversionError as exc:
            text = f"refused: {exc}"
        return text, translator.translations

    text, translations = outcome()
    assert translations == 1
    unforeseen(monkeypatch)
    before, translations_before = outcome()
    assert (before, translations_before > 1) == (text, True)
