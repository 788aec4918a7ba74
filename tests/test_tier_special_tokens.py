"""Which special tokens of a reply reach its content, per tier, for each family's tool-call marker.

v0.24.0 prints every token the model emits as text. From v0.30 on, llama-server prints a special
(control) token only when it is "preserved": Ollama preserves the tool tag it derives from the
TEMPLATE (cut to its leading `<...>` or `[...]` token), and only when tools are sent. So a
model whose tool-call marker is a control token (MiniMax's `<function_call>` is one) shows the
marker with tools and loses it without; any other special token in a reply is dropped.

Each family's scripted model here has its marker as a control token (when the marker is a
`<...>` tag) and generates its native call followed by one more control token, `<|stray|>`,
and its end-of-turn token, each special token as the token itself, as a real model does. The
model runs with `PARSER passthrough`, so the content is the text llama-server produced, and
with Ollama's own parsing and `ollama_fc.Client`, which must still return the call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import ollama
import pytest

from ollama_fc import Client
from ollama_fc.build import build
from ollama_fc.families import family_template, load_family
from tests.family_cases import CASES
from tests.tier_cases import PARIS, QUESTION, TOOLS, create_passthrough, get_weather

pytestmark = pytest.mark.ollama

STRAY = "<|stray|>"


def marker_token(family: str) -> str | None:
    """The control token a family's tool tag starts with (`<tool_call>`), or None (`functools[`)."""
    tag = family_template(family).tool_tag or ""
    match = re.match(r"<[^<>]+>", tag)
    return match.group(0) if match else None


def expected_content(family: str, *, tier_uses_llama_server: bool, tools: bool) -> str:
    """The reply's text as each tier shows it (docs/OLLAMA.md, "special tokens")."""
    call = CASES[family].call
    if not tier_uses_llama_server:
        return call + STRAY  # v0.24.0: every token as text
    marker = marker_token(family)
    if marker and not tools:
        call = call.replace(marker, "")  # not preserved without tools: dropped
    return call  # the stray control token is never preserved


@pytest.fixture
def family_model(request: pytest.FixtureRequest, ollama_server: Any, tmp_path: Path) -> tuple[str, str]:
    from ollama_fc.testbed.scripted import write_scripted_gguf

    family: str = request.param
    case = CASES[family]
    specials = [*load_family(family).recipe.special_tokens.control, STRAY]
    marker = marker_token(family)
    if marker and marker not in specials:
        specials.append(marker)
    gguf = write_scripted_gguf(
        tmp_path / f"{family}.gguf", case.call + STRAY + case.end, special_tokens=specials, emit_special_tokens=True
    )
    built = build(family, from_=str(gguf), name=f"special-{family}", host=ollama_server.host, ollama_parses=True)
    return family, built.name


@pytest.mark.parametrize("family_model", sorted(CASES), indirect=True)
@pytest.mark.parametrize("tools", [True, False], ids=["tools", "no-tools"])
def test_which_special_tokens_reach_the_raw_content(
    family_model: tuple[str, str], tools: bool, ollama_server: Any
) -> None:
    family, built = family_model
    model = create_passthrough(ollama_server.host, f"{built}-passthrough", built)
    answer = ollama.Client(host=ollama_server.host).chat(model, QUESTION, tools=TOOLS if tools else None)
    expected = expected_content(family, tier_uses_llama_server=ollama_server.tier.uses_llama_server, tools=tools)
    assert answer.message.content == expected
    assert not answer.message.tool_calls


@pytest.mark.parametrize("family_model", sorted(CASES), indirect=True)
def test_calls_come_back_with_the_marker_a_control_token(family_model: tuple[str, str], ollama_server: Any) -> None:
    """Ollama's own parser and ollama_fc.Client both return the call on every tier."""
    _family, model = family_model
    plain = ollama.Client(host=ollama_server.host).chat(model, QUESTION, tools=TOOLS)
    assert [(c.function.name, dict(c.function.arguments)) for c in plain.message.tool_calls or []] == PARIS
    ours = Client(host=ollama_server.host).chat(model, QUESTION, tools=[get_weather])
    assert [(c.function.name, dict(c.function.arguments)) for c in ours.message.tool_calls or []] == PARIS
