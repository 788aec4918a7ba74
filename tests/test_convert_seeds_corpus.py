"""The converter on real templates: seeds exact under the HF reference, corpus never crashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ollama_fc import oracle
from ollama_fc.convert import convert
from ollama_fc.errors import ConversionError
from tests.shared_data import SHARED, missing

SEEDS = sorted((SHARED / "seeds" / "templates").glob("*.jinja"))
CORPUS = sorted((SHARED / "corpus" / "templates").glob("*.jinja"))


def _require(paths: list[Path]) -> None:
    if not paths:
        missing("reference data shared/seeds or shared/corpus not found next to the repository")


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_seed_is_exact_on_every_battery_case(seed: Path) -> None:
    from ollama_fc.verify.runner import verify

    report = verify(seed)
    failing = [
        (case.name, case.status, case.detail) for case in report.cases if case.status not in {"exact", "skipped"}
    ]
    assert not failing, failing
    assert report.exact == report.rendered > 0


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_seed_tool_round_trip_is_visible_to_ollama(seed: Path) -> None:
    conversion = convert(seed)
    assert conversion.capabilities.tools
    assert ".Tools" in conversion.template and ".ToolCalls" in conversion.template
    assert 'eq .Role "tool"' in conversion.template


def test_tool_call_tags_are_the_markers_models_print() -> None:
    _require(SEEDS)
    tags = {seed.stem: convert(seed).tool_call_tag for seed in SEEDS}
    assert tags["qwen2.5-hermes"] == "<tool_call>"
    assert tags["gemma3-tools"] == "<tool_call>"
    assert tags["phi4-mini-functools"] == "functools["


def test_every_corpus_template_converts_to_a_template_ollama_parses_or_fails_clearly() -> None:
    _require(CORPUS)
    converted = 0
    with oracle.Oracle() as pinned, oracle.Oracle(oracle.LATEST) as latest:
        for path in CORPUS:
            try:
                conversion = convert(path)
            except ConversionError as exc:
                assert "line" in str(exc) or "Jinja" in str(exc), (path.name, str(exc))
                continue
            converted += 1
            for engine in (pinned, latest):
                rendered = engine.render(conversion.template, [{"role": "user", "content": "hi"}])
                assert rendered.stage != "parse", (path.name, engine.version, rendered.error)
    assert converted > len(CORPUS) // 3


def test_faithful_or_loud_over_the_corpus() -> None:
    """Every corpus template that converts either renders exactly what the original renders on
    every battery case, under both Ollama versions, or its conversion carries a warning saying
    where and why it differs. A silent difference is the one outcome never allowed."""
    from ollama_fc.convert.sources import load_source
    from ollama_fc.verify.runner import compare, open_oracles, with_stand_in_tokens

    _require(CORPUS)
    silent: list[tuple[str, str, str]] = []
    exact_templates = 0
    with open_oracles([oracle.PINNED, oracle.LATEST]) as oracles:
        for path in CORPUS:
            source = with_stand_in_tokens(load_source(path))
            try:
                conversion = convert(source)
            except ConversionError:
                continue
            _, results = compare(source, conversion.template, oracles)
            failing = [result for result in results if result.status in {"diff", "error"}]
            if not failing:
                exact_templates += 1
            elif not conversion.warnings:
                silent.extend((path.name, result.name, result.detail[:200]) for result in failing)
    assert not silent, silent
    assert exact_templates > 0
