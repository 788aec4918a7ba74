"""Who parses the model's text: each seed family built with `PARSER passthrough` (the default) and
with `--ollama-parses`, answering with outputs Ollama's own parser gets wrong.

The base is a scripted model printing one tricky output in the family's own format (a truncated
call, a call to a tool not offered, `"args"` for `"arguments"`, prose quoting the tag, prose
after a call, a call inside `<think>`). `benchmarks/passthrough_tradeoff.py` prints the table
docs/USAGE.md quotes from the same cases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ollama
import pytest

from ollama_fc import Client
from ollama_fc.build import build
from ollama_fc.families import family_template, load_family
from ollama_fc.functions import function_to_tool
from ollama_fc.testbed.scripted import write_scripted_gguf
from tests.family_cases import CASES

ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


TOOLS = [function_to_tool(get_weather)]
PARIS = [("get_weather", {"city": "Paris"})]


@dataclass(frozen=True)
class Tricky:
    """One output: what the model prints, and what a caller should get back."""

    script: str
    calls: list[tuple[str, dict[str, Any]]]
    content: str


def _well_formed(call: str, tag: str) -> Tricky | None:
    return Tricky(call, PARIS, "")


def _truncated(call: str, tag: str) -> Tricky | None:
    cut = call[: call.index("Paris") + 3]
    return Tricky(cut, [], cut)


def _not_offered(call: str, tag: str) -> Tricky | None:
    script = call.replace("get_weather", "get_stock_price").replace('"city": "Paris"', '"ticker": "ACME"')
    return Tricky(script, [], script)


def _args_key(call: str, tag: str) -> Tricky | None:
    if '"arguments"' not in call:
        return None  # the format names no arguments key
    return Tricky(call.replace('"arguments"', '"args"'), PARIS, "")


def _quotes_tag(call: str, tag: str) -> Tricky | None:
    script = f"A model calls a tool by printing {tag} and then the call. No call needed here: it is sunny."
    return Tricky(script, [], script)


def _prose_after(call: str, tag: str) -> Tricky | None:
    prose = "I will tell you as soon as I know."
    return Tricky(f"{call}\n{prose}", PARIS, prose)


def _inside_think(call: str, tag: str) -> Tricky | None:
    script = f"<think>I could run {call} but it is known.</think>It is sunny in Paris."
    return Tricky(script, [], script)


SHAPES: dict[str, Callable[[str, str], Tricky | None]] = {
    "well-formed call": _well_formed,
    "truncated call": _truncated,
    "tool not offered": _not_offered,
    '"args" for "arguments"': _args_key,
    "prose quoting the tag": _quotes_tag,
    "prose after a call": _prose_after,
    "call inside <think>": _inside_think,
}


def tricky(family: str, shape: str) -> Tricky | None:
    tag = family_template(family).tool_tag or ""
    return SHAPES[shape](CASES[family].call, tag)


CASE_IDS = [(family, shape) for family in sorted(CASES) for shape in SHAPES if tricky(family, shape)]
#: outputs the parsers do not recover yet; the client returns them as raw text (nothing lost)
NOT_YET = {("typhoon2", "prose after a call"): "the function_list parser wants the call to end the output"}


def calls_of(messages: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, dict(c.function.arguments)) for m in messages for c in m.tool_calls or []]


def outcome(expected: Tricky, calls: list[tuple[str, dict[str, Any]]], content: str) -> str:
    """`ok`: what the caller wants; `raw`: no calls but the whole text; `lost`: text dropped,
    cut or repeated, or a call that should not be there."""
    if calls == expected.calls and content.strip() == expected.content.strip():
        return "ok"
    if not calls and content.strip() == expected.script.strip():
        return "raw"
    return "lost"


def chat(client: ollama.Client, model: str, stream: bool) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The calls and joined content of one chat (the tools offered), whole or streamed."""
    if stream:
        chunks = list(client.chat(model, ASK, tools=TOOLS, stream=True))
        return calls_of([c.message for c in chunks]), "".join(c.message.content or "" for c in chunks)
    message = client.chat(model, ASK, tools=TOOLS).message
    return calls_of([message]), message.content or ""


def build_tricky(host: str, folder: Path, family: str, shape: str, *, ollama_parses: bool) -> str:
    """The family built over a scripted model printing the shape; returns the model's name."""
    case = tricky(family, shape)
    assert case is not None
    key = f"{family}-{list(SHAPES).index(shape)}"
    gguf = folder / f"{key}.gguf"
    if not gguf.exists():
        write_scripted_gguf(
            gguf,
            case.script + CASES[family].end,
            special_tokens=load_family(family).recipe.special_tokens.control,
        )
    name = f"{key}-{'ollama' if ollama_parses else 'pt'}"
    build(family, from_=str(gguf), name=name, host=host, ollama_parses=ollama_parses)
    return name


@pytest.fixture(scope="module")
def scripted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tricky")


@pytest.mark.parametrize(("family", "shape"), CASE_IDS, ids=[f"{f}:{s}" for f, s in CASE_IDS])
def test_passthrough_model_returns_raw_text_and_the_client_recovers_it(
    family: str, shape: str, ollama_host: str, scripted_dir: Path
) -> None:
    case = tricky(family, shape)
    assert case is not None
    model = build_tricky(ollama_host, scripted_dir, family, shape, ollama_parses=False)
    # Ollama leaves the text alone: a plain client sees exactly what the model printed.
    assert chat(ollama.Client(host=ollama_host), model, stream=False) == ([], case.script)
    client = Client(host=ollama_host)
    want = "raw" if (family, shape) in NOT_YET else "ok"
    for stream in (False, True):
        calls, content = chat(client, model, stream)
        assert outcome(case, calls, content) == want, (stream, calls, content)


SWALLOWED = ("truncated call", "tool not offered", '"args" for "arguments"', "prose quoting the tag")


@pytest.mark.parametrize("family", sorted(CASES))
def test_outputs_ollama_parsing_loses_are_what_the_passthrough_client_recovers(
    family: str, ollama_host: str, scripted_dir: Path
) -> None:
    """Why passthrough is the default: with `--ollama-parses`, Ollama drops or cuts these outputs
    before any client sees them (v0.24.0), and a well-formed call still works."""
    plain = ollama.Client(host=ollama_host)
    for shape in (*SWALLOWED, "well-formed call"):
        case = tricky(family, shape)
        if case is None:
            continue
        model = build_tricky(ollama_host, scripted_dir, family, shape, ollama_parses=True)
        calls, content = chat(plain, model, stream=False)
        assert outcome(case, calls, content) == ("ok" if shape == "well-formed call" else "lost"), shape
