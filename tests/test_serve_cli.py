"""The `ollama-fc serve` command itself: started as a user starts it, used by the openai SDK."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from ollama_fc.build import build
from ollama_fc.cli import main
from ollama_fc.families import load_family
from ollama_fc.serve import default_upstream
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.testbed.server import free_port
from tests.family_cases import CASES

QUESTION = "What is the weather in Paris?"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
COMMAND = [str(Path(sys.executable).with_name("ollama-fc")), "serve"]


class Served:
    """A running `ollama-fc serve` process and the lines it printed."""

    def __init__(self, arguments: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            COMMAND + arguments, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, start: str, timeout: float = 60.0) -> list[str]:
        """The lines printed up to and including the first one starting with `start`."""
        seen = []
        while True:
            line = self.lines.get(timeout=timeout)
            seen.append(line)
            if line.startswith(start):
                return seen

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=30)


@pytest.fixture
def served(ollama_host: str) -> Iterator[tuple[Served, int]]:
    """`ollama-fc serve --port P`, finding Ollama through OLLAMA_HOST as apps do."""
    port = free_port()
    running = Served(["--port", str(port)], {**os.environ, "OLLAMA_HOST": ollama_host})
    try:
        yield running, port
    finally:
        running.stop()


def test_serve_command_repairs_a_minimax_call_for_the_openai_sdk(
    served: tuple[Served, int], ollama_server: Any, ollama_host: str, tmp_path: Path
) -> None:
    """The minimax family, its model printing the fenced call without the <function_call> token
    (Ollama's tag): Ollama leaves the call in the text, the proxy gives the openai SDK a parsed call."""
    running, port = served
    untagged = CASES["minimax"].call.removeprefix("<function_call>")
    gguf = write_scripted_gguf(
        tmp_path / "minimax.gguf",
        untagged + CASES["minimax"].end,
        special_tokens=load_family("minimax").recipe.special_tokens.control,
    )
    model = build("minimax", from_=str(gguf), name="serve-minimax", host=ollama_host).name
    lines = running.wait_for("ollama-fc serve: http://")
    assert f"upstream: Ollama {ollama_server.version.lstrip('v')} at {ollama_host}" in lines
    assert lines[-1].startswith(f"ollama-fc serve: http://127.0.0.1:{port} (Ollama API)")

    messages: Any = [{"role": "user", "content": QUESTION}]
    direct = openai.OpenAI(base_url=f"{ollama_host}/v1", api_key="ollama", max_retries=0)
    plain = direct.chat.completions.create(model=model, messages=messages, tools=[WEATHER_TOOL]).choices[0]
    assert not plain.message.tool_calls and plain.message.content == untagged

    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="ollama", max_retries=0)
    choice = client.chat.completions.create(model=model, messages=messages, tools=[WEATHER_TOOL]).choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == ""
    [call] = choice.message.tool_calls or []
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})

    assert running.stop() == 0  # Ctrl+C ends it cleanly


def test_a_busy_port_is_one_line_naming_it(served: tuple[Served, int]) -> None:
    running, port = served
    running.wait_for("ollama-fc serve: http://")
    second = subprocess.run(COMMAND + ["--port", str(port)], capture_output=True, text=True, timeout=60)
    assert second.returncode == 1
    assert second.stderr.strip().splitlines() == [
        f"ollama-fc: port {port} on 127.0.0.1 is already in use (another `ollama-fc serve`?); pass --port with a free one"
    ]


def test_an_upstream_that_is_the_proxy_itself_is_refused() -> None:
    port = free_port()
    result = CliRunner().invoke(main, ["serve", "--port", str(port), "--upstream", f"http://127.0.0.1:{port}"])
    assert result.exit_code == 1
    assert "is this proxy itself" in result.output and "Traceback" not in result.output


def test_an_upstream_that_is_not_a_url_is_refused() -> None:
    result = CliRunner().invoke(main, ["serve", "--port", str(free_port()), "--upstream", "ollama"])
    assert result.exit_code == 1
    assert result.output.strip() == "ollama-fc: --upstream 'ollama' is not a URL; give one like http://127.0.0.1:11434"


@pytest.mark.parametrize(
    ("setting", "upstream"),
    [
        (None, "http://127.0.0.1:11434"),
        ("0.0.0.0:12345", "http://0.0.0.0:12345"),
        ("http://ollama.local:11434", "http://ollama.local:11434"),
    ],
)
def test_the_default_upstream_reads_ollama_host(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, upstream: str
) -> None:
    if setting is None:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_HOST", setting)
    assert default_upstream() == upstream
