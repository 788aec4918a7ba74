"""The real model already in Ollama, on both tiers: `ollama-fc check NAME`, then
`ollama-fc build --from NAME`, then `check` on the result.

The real model is made an Ollama model the two ways a user has one: the plain import (`ollama
create` FROM the GGUF alone) and a library-style model (the GGUF under Ollama's own hand-written
TEMPLATE for Qwen2.5-Coder, as `ollama pull qwen2.5-coder` leaves it; Ollama's library gives this
family no RENDERER or PARSER line). `check` must diagnose it as plain Ollama answers it, `build
--from NAME` must make a model whose weather question comes back as a parsed call (streamed ==
whole) and whose haiku stays text, and `check` on that model must find nothing to fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import ollama
import pytest

from ollama_fc import Client
from ollama_fc.diagnose import OPTIONS as CHECK_OPTIONS
from ollama_fc.diagnose import TOOLS as CHECK_TOOLS
from tests.shared_data import shared_path
from tests.test_real_model import NO_TOOL, OPTIONS, TOOLS, WEATHER, calls_of, create, is_paris_weather, streamed
from tests.test_real_model import real_gguf as real_gguf  # the fixture: the real model's GGUF

pytestmark = pytest.mark.ollama

CLI = [sys.executable, "-c", "from ollama_fc.cli import main; main()"]


def library_template() -> str:
    """Ollama's hand-written TEMPLATE of its qwen2.5-coder library model."""
    path = shared_path("corpus", "ollama-templates", "hfjs-automap", "qwen2.5-coder_1.5b.ollama.gotmpl")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def user_models(real_gguf: Path, ollama_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The real model as a user has it in Ollama: imported plainly, and as the library has it."""
    folder = tmp_path_factory.mktemp("user-models")
    env = {**os.environ, "OLLAMA_HOST": ollama_server.host.removeprefix("http://")}
    plain = folder / "Modelfile.plain"
    plain.write_text(f"FROM {real_gguf}\n", encoding="utf-8")
    library = folder / "Modelfile.library"
    library.write_text(f'FROM {real_gguf}\nTEMPLATE """{library_template()}"""\n', encoding="utf-8")
    return {
        "plain": create(ollama_server, "user-plain", plain, env),
        "library": create(ollama_server, "user-library", library, env),
    }


def ollama_fc(host: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OLLAMA_HOST": host.removeprefix("http://")}
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=1800)


def unload(host: str) -> None:
    """Stop every running model: Ollama 0.3x runs one runner per GGUF blob, started with or without
    Jinja for whichever model loads it first, and the models here share one blob."""
    client = ollama.Client(host=host)
    for running in client.ps().models:
        client.generate(model=running.model, keep_alive=0)


@pytest.mark.parametrize("way", ["plain", "library"])
def test_check_then_build_from_name_then_nothing_to_fix(
    way: str, user_models: dict[str, str], ollama_host: str
) -> None:
    name = user_models[way]
    unload(ollama_host)
    # what plain Ollama returns for the weather question, asked as check asks it
    try:
        asked = ollama.Client(host=ollama_host).chat(
            name, [{"role": "user", "content": WEATHER}], tools=CHECK_TOOLS, options=CHECK_OPTIONS
        )
        ollama_parses = is_paris_weather(calls_of(asked.message))
    except ollama.ResponseError:  # refused: the template has no tools
        ollama_parses = False
    before = ollama_fc(ollama_host, "check", name)
    print(before.stdout, before.stderr, sep="\n")
    assert "Traceback" not in before.stderr
    if not ollama_parses:
        assert before.returncode == 1
        assert f"fix: ollama-fc build --from {name}\n" in before.stdout
    else:
        assert "plain Ollama: call: get_weather(city='Paris')" in before.stdout

    built = ollama_fc(ollama_host, "build", "--from", name)
    print(built.stdout, built.stderr, sep="\n")
    assert built.returncode == 0, built.stderr
    assert f"created {name}-fc from {name}" in built.stdout

    unload(ollama_host)
    client = Client(host=ollama_host)
    whole = client.chat(f"{name}-fc", [{"role": "user", "content": WEATHER}], tools=TOOLS, options=OPTIONS)
    assert is_paris_weather(calls_of(whole.message)), whole.message
    assert streamed(client, f"{name}-fc", WEATHER) == (whole.message.content, calls_of(whole.message))
    haiku = client.chat(f"{name}-fc", [{"role": "user", "content": NO_TOOL}], tools=TOOLS, options=OPTIONS)
    assert calls_of(haiku.message) == [] and len((haiku.message.content or "").split()) >= 5

    after = ollama_fc(ollama_host, "check", f"{name}-fc")
    print(after.stdout, after.stderr, sep="\n")
    assert after.returncode == 0, after.stdout
    assert after.stdout.rstrip().endswith("nothing to fix")
