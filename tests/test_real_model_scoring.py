"""The real-model benchmark's scoring (benchmarks/real_model_scoring.py) and its prompt set.

The benchmark's table is what docs/BENCHMARKS.md and the README show of a real model: a
scoring that called a wrong argument right, or a fabricated call harmless, would overstate
ollama-fc; one that missed a right call in another order would understate it. No server.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from real_model_scoring import (
    CATEGORIES,
    Call,
    Prompt,
    Reply,
    Result,
    acceptable,
    category_table,
    headline_table,
    load_prompt_set,
    matches,
    score,
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
    import real_model

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
    again, run = real_model.from_details(path, prompt_set)
    assert run == {"seconds": 5.0}
    assert [(r.tier, r.reply, r.score) for r in again] == [(r.tier, r.reply, r.score) for r in results]
    assert real_model.report(again, [run]) == real_model.report(results, [run])
