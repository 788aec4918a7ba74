"""The real-model benchmark's scoring (benchmarks/real_model_scoring.py) and its prompt set.

The benchmark's table is what docs/BENCHMARKS.md and the README show of a real model: a
scoring that called a wrong argument right, or a fabricated call harmless, would overstate
ollama-fc; one that missed a right call in another order would understate it. No server.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.real_model_scoring import (
    CATEGORIES,
    MODES,
    Call,
    ModeResult,
    Prompt,
    Reply,
    Result,
    acceptable,
    category_table,
    headline_table,
    load_prompt_set,
    matches,
    mode_tallies,
    modes_headline,
    modes_table,
    named_tool,
    score,
    score_mode,
    spread,
    tallies,
)
from ollama_fc.arguments import validate_arguments

PROMPTS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "real_model_prompts.json"
ANY_OF_TYPE: dict[str, Any] = {"string": "some text", "integer": 30, "number": 2.5}

WEATHER = {"name": "get_weather", "arguments": {"city": ["Paris", "Paris, France"]}, "optional": {"unit": "*"}}
ROME = {"name": "get_weather", "arguments": {"city": ["Rome"]}, "optional": {"unit": "*"}}
PRODUCT = {
    "name": "calculate",
    "arguments": [
        {"operation": ["multiply"], "a": [12], "b": [9]},
        {"operation": ["multiply"], "a": [9], "b": [12]},
    ],
}


def prompt(category: str, expected: list[dict[str, Any]], tools: tuple[str, ...] = ("get_weather",)) -> Prompt:
    return Prompt.from_json(
        {
            "id": f"{category}-01",
            "category": category,
            "messages": [{"role": "user", "content": "?"}],
            "tools": list(tools),
            "expected": expected,
        }
    )


def reply(*calls: tuple[str, Any], content: str = "", error: str = "", seconds: float = 1.0) -> Reply:
    return Reply([Call(name, arguments) for name, arguments in calls], content, error, seconds)


ONE = prompt("one", [WEATHER])
PARALLEL = prompt("parallel", [WEATHER, ROME], tools=("get_weather", "get_current_time"))
NONE = prompt("none", [], tools=("get_weather", "get_stock_price"))


def test_the_expected_call_is_exact_up_to_case_and_listed_variants() -> None:
    for city in ("Paris", "paris", " Paris. ", "Paris, France"):
        result = score(ONE, reply(("get_weather", {"city": city})))
        assert result.exact and result.called and not result.no_call and not result.problem, city


def test_a_value_outside_the_list_is_wrong() -> None:
    result = score(ONE, reply(("get_weather", {"city": "Lyon"})))
    assert result.called and not result.exact
    assert "Lyon" in result.problem


def test_an_optional_argument_is_tolerated_an_unnamed_one_is_not() -> None:
    assert score(ONE, reply(("get_weather", {"city": "Paris", "unit": "celsius"}))).exact
    wrong = score(ONE, reply(("get_weather", {"city": "Paris", "days": 3})))
    assert wrong.called and not wrong.exact


def test_a_missing_argument_is_wrong() -> None:
    assert not score(ONE, reply(("get_weather", {"unit": "celsius"}))).exact
    assert not score(ONE, reply(("get_weather", "Paris"))).exact  # arguments that are not an object


def test_an_extra_call_is_not_exact() -> None:
    result = score(ONE, reply(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Paris"})))
    assert result.called and not result.exact
    assert result.problem == "2 calls, expected 1"


def test_a_wrong_offered_tool_is_a_call_but_not_exact() -> None:
    wrong = prompt("choice", [WEATHER], tools=("get_weather", "get_current_time"))
    result = score(wrong, reply(("get_current_time", {"city": "Paris"})))
    assert result.called and not result.exact
    assert result.problem.startswith("wrong tool: get_current_time")


def test_a_tool_not_offered_is_not_a_call_of_an_offered_tool() -> None:
    result = score(ONE, reply(("get_forecast", {"city": "Paris"})))
    assert not result.called and not result.exact
    assert "not offered" in result.problem


def test_parallel_calls_pair_off_in_any_order() -> None:
    paris, rome = ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})
    assert score(PARALLEL, reply(paris, rome)).exact
    assert score(PARALLEL, reply(rome, paris)).exact
    assert not score(PARALLEL, reply(paris, paris)).exact  # one expected call matched twice, one missed
    assert not score(PARALLEL, reply(paris)).exact
    assert not score(PARALLEL, reply(paris, rome, rome)).exact


def test_an_argument_set_among_alternatives() -> None:
    product = prompt("one", [PRODUCT], tools=("calculate",))
    assert score(product, reply(("calculate", {"operation": "multiply", "a": 9, "b": 12}))).exact
    assert score(product, reply(("calculate", {"operation": "multiply", "a": "12", "b": 9.0}))).exact
    assert not score(product, reply(("calculate", {"operation": "multiply", "a": 12, "b": 12}))).exact
    assert not score(product, reply(("calculate", {"operation": "add", "a": 12, "b": 9}))).exact


def test_value_matchers() -> None:
    assert acceptable([7], "7") and acceptable([7], 7.0) and not acceptable([7], "seven")
    assert not acceptable([1], True) and not acceptable([True], 1) and acceptable([True], True)
    assert acceptable(["Team sync"], "'team  sync'") and not acceptable(["Team sync"], "Team sync meeting")
    assert acceptable("*", "anything") and not acceptable("*", "  ") and not acceptable("*", None)
    assert acceptable({"contains": ["python", "3.13"]}, "Python 3.13 release date")
    assert not acceptable({"contains": ["python", "3.13"]}, "python release date")
    with pytest.raises(ValueError, match="not a value matcher"):
        acceptable("Paris", "Paris")


def test_a_lost_reply_and_a_refused_request() -> None:
    lost = score(ONE, reply(content="  \n"))
    assert lost.lost and lost.no_call and not lost.called and not lost.refused
    refused = score(ONE, reply(error="registry.ollama.ai/library/m does not support tools"))
    assert refused.refused and not refused.lost and not refused.called
    text = score(ONE, reply(content="It is sunny in Paris."))
    assert text.no_call and not text.lost and not text.exact
    assert text.problem == "answered in text, no call"


def test_no_tool_prompts_are_right_without_a_call() -> None:
    text = score(NONE, reply(content="Here is a haiku."))
    assert text.no_call and not text.called and not text.exact and text.problem == ""
    fabricated = score(NONE, reply(("get_weather", {"city": "Paris"}), content=""))
    assert not fabricated.no_call and fabricated.called
    assert "where no tool fits" in fabricated.problem
    assert score(NONE, reply()).lost


def test_tallies_and_tables_count_each_reply_once() -> None:
    results = [
        Result("v0.34.4", "build", ONE, r, score(ONE, r))
        for r in (reply(("get_weather", {"city": "Paris"}), seconds=2.0), reply(content="sunny", seconds=4.0))
    ]
    results += [
        Result("v0.34.4", "build", NONE, r, score(NONE, r))
        for r in (reply(content="no tool", seconds=1.0), reply(error="boom"))
    ]
    one = tallies(results)[("v0.34.4", "build", "one")]
    assert (one.prompts, one.called, one.exact, one.no_call, one.lost, one.refused) == (2, 1, 1, 1, 0, 0)
    assert one.median_seconds == 3.0
    everything = tallies(results)[("v0.34.4", "build", "all")]
    assert (everything.prompts, everything.no_call, everything.refused, everything.seconds) == (
        4,
        2,
        1,
        [2.0, 4.0, 1.0],
    )
    labels = {"build": "ollama-fc build"}
    assert "| v0.34.4 | ollama-fc build | 1 / 1 | 1 | 0 | 1 | 2.0 |" in headline_table(results, labels)
    assert "| v0.34.4 | build | none | 2 | 0 | - | 1 | 0 | 1 | 1.0 |" in category_table(results)


def test_the_prompt_set_covers_each_category() -> None:
    prompts = load_prompt_set(PROMPTS).prompts
    counts = Counter(p.category for p in prompts)
    assert len(prompts) >= 80 and set(counts) == set(CATEGORIES)
    assert all(count >= 15 for count in counts.values()), counts
    assert len({p.id for p in prompts}) == len(prompts)
    assert all(len(p.expected) >= 2 for p in prompts if p.category == "parallel")
    assert all(len(p.expected) == 1 for p in prompts if p.category in ("one", "choice"))
    assert all(len(p.tools) == 1 for p in prompts if p.category == "one")
    assert all(len(p.tools) >= 2 for p in prompts if p.category == "choice")
    assert all(not p.expected for p in prompts if p.category == "none")
    assert [p.category for p in spread(prompts, 6)] == ["one", "choice", "parallel", "none", "one", "choice"]


def _sample(matcher: Any, schema: dict[str, Any]) -> Any:
    """A value `matcher` accepts, for a property of this schema ("*": any value of its type)."""
    if isinstance(matcher, list):
        return matcher[0]
    if isinstance(matcher, dict):
        return " ".join(matcher["contains"])
    return schema["enum"][0] if "enum" in schema else ANY_OF_TYPE[schema["type"]]


def test_each_expected_call_is_one_the_offered_tool_accepts() -> None:
    """Every expectation names an offered tool, covers its required arguments, and a call made of
    any of its acceptable values passes the tool's schema (so a right answer can score exact)."""
    prompt_set = load_prompt_set(PROMPTS)
    for each in prompt_set.prompts:
        for expected in each.expected:
            assert expected.name in each.tools, each.id
            schema = prompt_set.tools[expected.name]["function"]["parameters"]
            properties = schema["properties"]
            for argument_set in expected.argument_sets:
                assert set(schema["required"]) <= set(argument_set), each.id
                for key, matcher in [*argument_set.items(), *expected.optional.items()]:
                    assert key in properties, (each.id, key)
                    values = matcher if isinstance(matcher, list) else [_sample(matcher, properties[key])]
                    for value in values:
                        arguments = {k: _sample(m, properties[k]) for k, m in argument_set.items()} | {key: value}
                        validate_arguments(expected.name, schema, arguments)
                        assert matches(expected, Call(expected.name, arguments)), (each.id, key, value)


def test_a_details_file_reports_the_same_scores_again(tmp_path: Path) -> None:
    """`--from-details` re-scores saved replies: what it reads back is what the run scored."""
    from benchmarks import real_model

    prompt_set = load_prompt_set(PROMPTS)
    first = prompt_set.prompts[0]
    replies = [
        reply(("get_weather", {"city": "Paris", "unit": "celsius"}), seconds=3.0),
        reply(content="It is sunny.", seconds=2.0),
        reply(error="ResponseError: does not support tools"),
    ]
    results = [Result(tier, "build", first, r, score(first, r)) for tier, r in zip(("a", "b", "c"), replies)]
    path = tmp_path / "details.json"
    path.write_text(json.dumps(real_model.details(results, Path("model.gguf"), {"seconds": 5.0})), encoding="utf-8")
    modes = [ModeResult("a", "responses", "none", first, r, score_mode("none", first, r, TOOLS)) for r in replies]
    details = real_model.details(results, Path("model.gguf"), {"seconds": 5.0}, modes)
    path.write_text(json.dumps(details), encoding="utf-8")
    again, modes_again, run = real_model.from_details(path, prompt_set)
    assert run == {"seconds": 5.0}
    assert [(r.tier, r.reply, r.score) for r in again] == [(r.tier, r.reply, r.score) for r in results]
    assert real_model.report(again, [run]) == real_model.report(results, [run])
    assert [(r.api, r.mode, r.reply, r.score) for r in modes_again] == [
        (r.api, r.mode, r.reply, r.score) for r in modes
    ]
    assert real_model.modes_report(modes_again, [run]) == real_model.modes_report(modes, [run])


TOOLS = load_prompt_set(PROMPTS).tools
CHOICE = prompt("choice", [WEATHER], tools=("get_weather", "get_current_time"))
PARIS = ("get_weather", {"city": "Paris"})


def test_a_forced_mode_needs_one_schema_valid_call_of_an_allowed_tool() -> None:
    """required / named promise a call every time, even where no tool fits: a call of the wrong
    tool, with arguments the schema refuses, two calls, or text, breaks the promise."""
    for mode in ("required", "named"):
        right = score_mode(mode, CHOICE, reply(PARIS), TOOLS)
        assert right.kept and right.correct and right.schema_valid and not right.problem, mode
        forced = score_mode(mode, NONE, reply(("get_stock_price", {"symbol": "AAPL"})), TOOLS)
        assert forced.kept and forced.correct and forced.called, mode  # where none fits, the call is the answer
        text = score_mode(mode, NONE, reply(content="A haiku."), TOOLS)
        assert not text.kept and not text.correct and text.no_call and text.problem.startswith(f"no call under {mode}")
        invalid = score_mode(mode, CHOICE, reply(("get_weather", {"town": "Paris"})), TOOLS)
        assert invalid.called and not invalid.schema_valid and not invalid.kept
        assert invalid.problem.startswith("not schema-valid:"), invalid.problem
        two = score_mode(mode, CHOICE, reply(PARIS, PARIS), TOOLS)
        assert two.schema_valid and not two.kept and two.problem == "2 calls, at most one allowed"
        stranger = score_mode(mode, CHOICE, reply(("get_forecast", {"city": "Paris"})), TOOLS)
        assert not stranger.schema_valid and not stranger.kept
    wrong_city = score_mode("required", CHOICE, reply(("get_weather", {"city": "Lyon"})), TOOLS)
    assert wrong_city.kept and wrong_city.schema_valid and not wrong_city.correct and "Lyon" in wrong_city.problem


def test_named_allows_only_the_named_tool() -> None:
    """The named tool is the one that fits, else the last one offered (one that does not fit)."""
    assert named_tool(CHOICE) == "get_weather" and named_tool(NONE) == "get_stock_price"
    other = score_mode("named", CHOICE, reply(("get_current_time", {"city": "Paris"})), TOOLS)
    assert not other.kept and not other.schema_valid and other.problem == "called get_current_time, not the named tool"
    assert score_mode("required", CHOICE, reply(("get_current_time", {"city": "Paris"})), TOOLS).kept
    first_offered = score_mode("named", NONE, reply(("get_weather", {"city": "Paris"})), TOOLS)
    assert not first_offered.kept and not first_offered.correct


def test_none_needs_text_and_no_call() -> None:
    kept = score_mode("none", ONE, reply(content="I cannot check the weather."), TOOLS)
    assert kept.kept and kept.correct and kept.no_call and not kept.problem
    called = score_mode("none", ONE, reply(PARIS), TOOLS)
    assert not called.kept and not called.correct and called.problem == "called get_weather under none"
    lost = score_mode("none", ONE, reply(content=" "), TOOLS)
    assert not lost.kept and lost.problem == "lost: no text and no call"


def test_parallel_off_allows_one_call_which_must_be_an_expected_one() -> None:
    rome = ("get_weather", {"city": "Rome"})
    for single in (PARIS, rome):
        one = score_mode("parallel_off", PARALLEL, reply(single), TOOLS)
        assert one.kept and one.correct and not one.problem
    both = score_mode("parallel_off", PARALLEL, reply(PARIS, rome), TOOLS)
    assert not both.kept and not both.correct and both.problem == "2 calls, at most one allowed"
    wrong = score_mode("parallel_off", PARALLEL, reply(("get_weather", {"city": "Lyon"})), TOOLS)
    assert wrong.kept and not wrong.correct and "fit no expected call" in wrong.problem
    text = score_mode("parallel_off", PARALLEL, reply(content="Sunny in both."), TOOLS)
    assert text.kept and not text.correct and text.problem == "answered in text, no call"


def test_auto_is_scored_as_the_arms_are() -> None:
    """auto promises only calls of offered tools; correct is exact where a tool fits, text where none does."""
    assert score_mode("auto", ONE, reply(PARIS), TOOLS).correct
    text_where_a_tool_fits = score_mode("auto", ONE, reply(content="Sunny."), TOOLS)
    assert text_where_a_tool_fits.kept and not text_where_a_tool_fits.correct
    assert score_mode("auto", NONE, reply(content="A haiku."), TOOLS).correct
    fabricated = score_mode("auto", NONE, reply(PARIS), TOOLS)
    assert fabricated.kept and not fabricated.correct and "where no tool fits" in fabricated.problem
    assert not score_mode("auto", ONE, reply(("get_forecast", {})), TOOLS).kept


def test_an_error_keeps_no_promise_and_counts_once() -> None:
    for mode in MODES:
        failed = score_mode(mode, ONE, reply(error="BadRequestError: 400"), TOOLS)
        assert failed.error and not failed.kept and not failed.correct and not failed.no_call, mode
    with pytest.raises(ValueError, match="unknown mode"):
        score_mode("any", ONE, reply(), TOOLS)


def test_mode_tallies_and_tables() -> None:
    replies = [("required", ONE, reply(PARIS, seconds=2.0)), ("required", NONE, reply(content="x", seconds=4.0))]
    replies += [("required", NONE, reply(error="boom")), ("none", ONE, reply(content="no", seconds=1.0))]
    results = [ModeResult("v0.34.4", "messages", m, p, r, score_mode(m, p, r, TOOLS)) for m, p, r in replies]
    table = mode_tallies(results)
    fits, no_fit = (
        table[("v0.34.4", "messages", "required", "tool fits")],
        table[("v0.34.4", "messages", "required", "no tool fits")],
    )
    assert (fits.prompts, fits.called, fits.schema_valid, fits.correct, fits.kept) == (1, 1, 1, 1, 1)
    assert (no_fit.prompts, no_fit.no_call, no_fit.errors, no_fit.kept, no_fit.seconds) == (2, 1, 1, 0, [4.0])
    headline = modes_headline(results, {"messages": "anthropic SDK"})
    assert "| Ollama | API | required (3): kept / correct | none (1): kept / correct | errors | median s |" in headline
    assert "| v0.34.4 | anthropic SDK | 1 / 1 | 1 / 1 | 1 | 2.0 |" in headline
    rows = modes_table(results)
    assert "| v0.34.4 | messages | required | no tool fits | 2 | 0 | 0 | 0 | 1 | 1 | 0 | 4.0 |" in rows
    assert "| v0.34.4 | messages | none | tool fits | 1 | 0 | 0 | 1 | 1 | 0 | 1 | 1.0 |" in rows


def test_the_modes_ask_prompts_suited_to_each() -> None:
    """Forced and auto modes ask prompts a tool fits and prompts none fits; none asks tool prompts;
    parallel off asks parallel prompts; about eight each, every one a prompt of the set."""
    modes = load_prompt_set(PROMPTS).modes
    assert list(modes) == list(MODES)
    assert all(6 <= len(chosen) <= 10 and len({p.id for p in chosen}) == len(chosen) for chosen in modes.values())
    for mode in ("auto", "required", "named"):
        assert {p.category == "none" for p in modes[mode]} == {True, False}, mode
    assert all(p.expected and p.category != "parallel" for p in modes["none"])
    assert all(p.category == "parallel" for p in modes["parallel_off"])
