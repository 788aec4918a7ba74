"""The seed families' recipes and curated fixes, checked without a server.

The fixes are Jinja patches on the source template, so they are checked the way a user meets
them: the Hugging Face reference render of the fixed template must show an earlier tool call
in the format the family's client parser reads, and send the tool result to a turn the
template renders.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from ollama_fc.cli import main
from ollama_fc.errors import OllamaFcError, SourceError
from ollama_fc.families import (
    apply_patches,
    family_names,
    load_family,
    selected_fixes,
    write_modelfiles,
)
from ollama_fc.hf.reference import render
from ollama_fc.hf.shapes import probe, to_hf
from ollama_fc.markers import read_marker
from ollama_fc.parsers import parse_tool_calls
from ollama_fc.testbed.server import free_port
from tests.family_cases import CASES, turn
from tests.shared_data import seed_template

FAMILIES = ["gemma3-tools", "minimax", "phi4-mini", "qwen2.5", "typhoon2"]
SEEDS = {
    "minimax": "minimax-text-01.jinja",
    "qwen2.5": "qwen2.5-hermes.jinja",
    "gemma3-tools": "gemma3-tools.jinja",
    "phi4-mini": "phi4-mini-functools.jinja",
    "typhoon2": "typhoon2-llama3.1-function-list.jinja",
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
QUESTION = "Weather in Paris and Rome?"
RESULT = "sunny-result-4f1"
CONVERSATION = [
    {"role": "user", "content": QUESTION},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}},
        ],
    },
    {"role": "tool", "tool_name": "get_weather", "content": RESULT},
]


def reference(template: str, family: str, *, tool_role: str | None = None) -> str:
    """The HF render of CONVERSATION in the template's own input shape (or with `tool_role`)."""
    tokens = load_family(family).recipe.special_tokens.variables()
    shape = probe(template, tokens)
    if tool_role:
        shape = dataclasses.replace(shape, tool_role=tool_role)
    return render(template, to_hf(CONVERSATION, shape), [WEATHER], special_tokens=tokens)


def assistant_turn(prompt: str, family: str) -> str:
    """What the assistant printed after the question, as the prompt shows it back to the model."""
    case = CASES[family]
    return turn(prompt, case.assistant, case.end, after=QUESTION)


def test_the_five_seed_families_are_installed() -> None:
    assert family_names() == FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_source_template_is_the_seed_unchanged(family: str) -> None:
    assert load_family(family).template == seed_template(SEEDS[family])


@pytest.mark.parametrize("family", FAMILIES)
def test_fixed_template_shows_earlier_calls_in_the_family_format(family: str) -> None:
    loaded = load_family(family)
    turn = assistant_turn(reference(apply_patches(loaded, loaded.fix_names), family), family)
    parsed = parse_tool_calls(turn, format=loaded.recipe.tool_format)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]


@pytest.mark.parametrize("family", ["minimax", "typhoon2"])
def test_faithful_template_drops_earlier_calls(family: str) -> None:
    """Why the assistant-tool-calls fix exists: without it the model never sees its own call."""
    turn = assistant_turn(reference(load_family(family).template, family), family)
    assert "get_weather" not in turn and "Paris" not in turn


def test_phi4_faithful_template_sends_tool_results_to_a_role_it_does_not_wrap() -> None:
    loaded = load_family("phi4-mini")
    faithful = reference(loaded.template, "phi4-mini", tool_role="tool")
    fixed = reference(apply_patches(loaded, ["tool-role"]), "phi4-mini", tool_role="tool")
    assert f'{{"result": {RESULT}}}' not in faithful
    assert f'<|tool|>{{"result": {RESULT}}}<|end|>' in fixed


def test_minimax_fixed_template_renders_ollama_tool_results() -> None:
    loaded = load_family("minimax")
    prompt = reference(apply_patches(loaded, ["tool-role"]), "minimax", tool_role="tool")
    assert f'system function_response=functions\n{{"name": "get_weather", "response": {RESULT}}}' in prompt


def test_a_patch_that_no_longer_matches_is_a_clear_error() -> None:
    loaded = load_family("minimax")
    edited = dataclasses.replace(loaded, template=loaded.template.replace("role'] == 'function'", "role'] == 'fn'"))
    with pytest.raises(SourceError, match="fix 'tool-role' must match the template exactly once, matched 0 times"):
        apply_patches(edited, edited.fix_names)


def test_fixes_can_be_skipped_one_by_one_or_all() -> None:
    loaded = load_family("typhoon2")
    assert selected_fixes(loaded, faithful=True) == []
    assert selected_fixes(loaded, skip=["stop"]) == ["assistant-tool-calls", "bos", "tool-tag"]
    with pytest.raises(OllamaFcError, match="has no fix nope; its fixes: assistant-tool-calls, bos, tool-tag, stop"):
        selected_fixes(loaded, skip=["nope"])


def test_marker_round_trip() -> None:
    assert read_marker("{{/* ollama-fc family=qwen2.5 format=hermes */}}{{ .Prompt }}") == ("qwen2.5", "hermes")
    assert read_marker("{{ .Prompt }}") is None


def test_cli_unknown_family_lists_the_known_ones() -> None:
    result = CliRunner().invoke(main, ["show", "llama9"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "ollama-fc: unknown family 'llama9'; known families: gemma3-tools, minimax, phi4-mini, qwen2.5, typhoon2"
    )


def test_cli_list_shows_families_and_formats() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    rows = {line.split()[0]: line.split()[1] for line in result.output.splitlines()}
    assert rows == {
        "gemma3-tools": "hermes",
        "minimax": "minimax_ts",
        "phi4-mini": "functools",
        "qwen2.5": "hermes",
        "typhoon2": "function_list",
    }


def test_checked_in_modelfiles_are_up_to_date() -> None:
    stale = write_modelfiles(check=True)
    assert stale == [], f"modelfiles/ is stale for {[p.parent.name for p in stale]}: run `ollama-fc modelfiles`"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["minimax"], "ollama-fc: family minimax has no suggested base: MiniMax-Text-01 has 456B parameters"),
        (["qwen2.5", "--from", "./missing.gguf"], "ollama-fc: missing.gguf: no such file; give a .gguf file"),
        (["qwen2.5", "--from", "notes.gguf"], "ollama-fc: notes.gguf: not a GGUF file (no GGUF header)"),
        (["qwen2.5", "--from", "qwen2.5:0.5b"], "; start it with `ollama serve`, or set OLLAMA_HOST"),
    ],
)
def test_cli_build_errors_are_one_clear_line(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.gguf").write_text("not a model")
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")  # nothing listens there
    result = CliRunner().invoke(main, ["build", *args])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
