"""A real model whose chat template has no tools, on both tiers: SmolLM2-135M-Instruct (Q4_1).

`ollama-fc build --from GGUF` says in one line that its template has no tools; `build
--tools-format hermes --from GGUF` makes a model whose template (as the server holds it, rendered
by Ollama's own template package) lists the tools in the system turn and renders the extended
Jinja exactly, and whose replies `ollama_fc.Client` parses in that format. What is asserted of
the model's replies is what this 135M model, never trained on tools, really does at temperature 0:
the client's calls are exactly the parse of the raw text it wrote, streamed as whole, and a
question no tool fits gets text back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import ollama
import pytest
from click.testing import CliRunner

from ollama_fc import Client, cli
from ollama_fc.convert.sources import load_source
from ollama_fc.markers import read_marker
from ollama_fc.parsers import parse_tool_calls
from ollama_fc.testbed.realmodel import SMOLLM2_135M, ModelUnavailableError, real_model_gguf
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.tools_section import extend
from ollama_fc.verify.runner import compare
from tests.shared_data import IN_CI
from tests.test_real_model import TOOLS  # the same weather tool the real-model tests offer

pytestmark = pytest.mark.ollama

OPTIONS: dict[str, Any] = {"temperature": 0, "seed": 7, "num_predict": 96, "num_thread": 1}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
WEATHER = [SYSTEM, {"role": "user", "content": "What's the weather like in Paris right now?"}]
NO_TOOL = [SYSTEM, {"role": "user", "content": "Write a haiku about the sea."}]


@pytest.fixture(scope="session")
def smol_gguf() -> Path:
    try:
        return real_model_gguf(report=lambda line: print(f"[real model] {line}", file=sys.stderr), model=SMOLLM2_135M)
    except ModelUnavailableError as exc:
        if IN_CI:
            pytest.fail(f"the real model SmolLM2 is required in CI: {exc}", pytrace=False)
        pytest.skip(f"real model SmolLM2 unavailable: {exc}")


def _build(ollama_host: str, *args: str) -> Any:
    return CliRunner().invoke(cli.main, ["build", *args], env={"OLLAMA_HOST": ollama_host})


@pytest.fixture(scope="session")
def smol_models(smol_gguf: Path, ollama_server: Any) -> dict[str, Any]:
    """SmolLM2 built as it is, and with a hermes tools section, on this tier's server (the CLI's
    results kept for the tests of what it printed)."""
    host = ollama_server.host
    return {
        "plain": _build(host, "--from", str(smol_gguf), "--name", "smol-fc"),
        "hermes": _build(host, "--from", str(smol_gguf), "--tools-format", "hermes", "--name", "smol-hermes"),
    }


def test_build_says_in_one_line_that_the_template_has_no_tools(smol_models: dict[str, Any], smol_gguf: Path) -> None:
    result = smol_models["plain"]
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "no tools" in line]
    assert said == [
        f"warning: {smol_gguf.name}: its chat template has no tools (it lists no tools and writes no calls), "
        "so the model sees none; to try it with tools, add a tools section with --tools-format FORMAT "
        "(hermes, llama3_json, pythonic, mistral), e.g. --tools-format hermes"
    ]
    assert result.stdout.startswith(f"created smol-fc from {smol_gguf} in ")


def test_the_tools_format_build_records_the_format_and_lists_the_tools(
    smol_models: dict[str, Any], smol_gguf: Path, ollama_host: str, engines: dict[str, Any]
) -> None:
    result = smol_models["hermes"]
    assert result.exit_code == 0, result.output
    assert "no tools" not in result.stderr
    assert result.stdout.startswith(f"created smol-hermes from {smol_gguf} in ")
    assert "(its own chat template with a hermes tools section added; PARSER passthrough)" in result.stdout
    template = ollama.Client(host=ollama_host).show("smol-hermes").template or ""
    assert read_marker(template) == ("auto", "hermes")
    assert Client(host=ollama_host).model_profile("smol-hermes").tool_format == "hermes"
    # the prompt the server's template gives the model, rendered by Ollama's own template package
    for version, engine in engines.items():
        prompt = engine.render(template, WEATHER, TOOLS).prompt
        assert prompt is not None, version
        system_turn, user_turn = prompt.split("<|im_end|>\n")[:2]
        assert system_turn.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n")
        assert '"name": "get_weather"' in system_turn and "<tool_call>" in system_turn
        assert user_turn == "<|im_start|>user\nWhat's the weather like in Paris right now?"
    # the template the server holds renders what the extended Jinja of the GGUF's own template renders
    _, results = compare(extend(load_source(smol_gguf), "hermes"), template, engines)
    assert [case.name for case in results if case.status not in ("exact", "cannot-render")] == []


def _ask(ollama_host: str, messages: list[dict[str, Any]]) -> tuple[Any, tuple[str, list[Any]], str]:
    """ollama_fc.Client's reply whole and streamed (content, calls), and the raw text plain Ollama returns.

    A first request, whose reply is not read, fills the runner's prompt cache: on v0.34.4 the
    first reply to a prompt differed from later replies to the same prompt at temperature 0
    (a fresh prompt against a cached one); the replies read here all come after it."""
    client = Client(host=ollama_host)
    ollama.Client(host=ollama_host).chat("smol-hermes", messages, tools=TOOLS, options=OPTIONS)
    whole = client.chat("smol-hermes", messages, tools=TOOLS, options=OPTIONS)
    content, calls = "", []
    for chunk in client.chat("smol-hermes", messages, tools=TOOLS, options=OPTIONS, stream=True):
        content += chunk.message.content or ""
        calls += [(c.function.name, dict(c.function.arguments)) for c in chunk.message.tool_calls or []]
    raw = ollama.Client(host=ollama_host).chat("smol-hermes", messages, tools=TOOLS, options=OPTIONS)
    return whole.message, (content, calls), raw.message.content or ""


def _calls(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, dict(c.function.arguments)) for c in message.tool_calls or []]


@pytest.mark.parametrize("messages", [WEATHER, NO_TOOL], ids=["weather", "no-tool"])
def test_the_client_parses_what_the_model_writes_in_the_format(
    smol_models: dict[str, Any], ollama_host: str, messages: list[dict[str, Any]]
) -> None:
    """Plain Ollama hands back the model's raw text (passthrough); the client's reply is that
    text parsed in the hermes format, the same streamed as whole."""
    assert smol_models["hermes"].exit_code == 0
    message, streamed, raw = _ask(ollama_host, messages)
    parsed = parse_tool_calls(raw, format="hermes", tools=TOOLS)
    assert _calls(message) == [(call.name, call.arguments) for call in parsed.tool_calls]
    assert (message.content or "") == parsed.content
    assert streamed == (message.content or "", _calls(message))
    if messages is NO_TOOL:
        assert _calls(message) == [] and len((message.content or "").split()) >= 5


def test_tools_format_on_a_template_with_tools_is_one_line_and_creates_nothing(
    ollama_host: str, tmp_path: Path
) -> None:
    qwen_template = load_source(Path(__file__).parent.parent / "converters" / "qwen2.5" / "template.jinja").template
    gguf = write_scripted_gguf(tmp_path / "with-tools.gguf", "Hello.", chat_template=qwen_template)
    result = _build(ollama_host, "--from", str(gguf), "--tools-format", "hermes", "--name", "never-created")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"ollama-fc: {gguf}: the chat template has tools of its own; --tools-format only adds a tools "
        "section to a template without one: build without it"
    ]
    names = [model.model for model in ollama.Client(host=ollama_host).list().models]
    assert not any((name or "").startswith("never-created") for name in names)
