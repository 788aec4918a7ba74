"""A real instruct model choosing for itself, on both tiers: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M).

The scripted models of the other tests print a fixed text; this one decides whether to call a
tool and how to write the call. Each way a user makes it a model is tested here:
`ollama-fc build qwen2.5 --from GGUF`, `ollama-fc build --from GGUF` (its own template),
`ollama-fc convert GGUF` with the tier's real `ollama create`, and the plain `ollama create`
FROM the GGUF that a user without ollama-fc runs. Requests are deterministic (temperature 0, a
seed); what is asserted is what a user relies on (a parsed call of the offered tool with the
city asked for, text and no call where no tool fits), not the model's wording.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ollama
import openai
import pytest

from ollama_fc import Client
from ollama_fc.build import build
from ollama_fc.functions import function_to_tool
from ollama_fc.serve.server import ProxyThread
from ollama_fc.testbed.realmodel import REAL_MODEL, ModelUnavailableError, real_model_gguf
from tests.shared_data import IN_CI

pytestmark = pytest.mark.ollama

#: One thread: the two tiers' tests run side by side on two cores (see SCRIPTED_THREADS).
OPTIONS: dict[str, Any] = {"temperature": 0, "seed": 7, "num_predict": 160, "num_thread": 1}
WEATHER = "What's the weather like in Paris right now?"
NO_TOOL = "Write a haiku about the sea."


def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: The city's name, e.g. Paris
    """
    return json.dumps({"city": city, "temperature": 21, "sky": "sunny"})


TOOLS = [function_to_tool(get_weather)]


@pytest.fixture(scope="session")
def real_gguf() -> Path:
    """The real model's GGUF (downloaded once into the cache)."""
    try:
        return real_model_gguf(report=lambda line: print(f"[real model] {line}", file=sys.stderr))
    except ModelUnavailableError as exc:
        if IN_CI:
            pytest.fail(f"the real model is required in CI: {exc}", pytrace=False)
        pytest.skip(f"real model unavailable: {exc}")


@pytest.fixture(scope="session")
def real_models(real_gguf: Path, ollama_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The real model made an Ollama model each way a user makes it, on this tier's server."""
    host = ollama_server.host
    folder = tmp_path_factory.mktemp("real")
    env = {**os.environ, "OLLAMA_HOST": host.removeprefix("http://")}
    models = {"family": build("qwen2.5", from_=str(real_gguf), name="real-family", host=host).name}

    ollama_fc = [sys.executable, "-c", "from ollama_fc.cli import main; main()"]
    built = subprocess.run([*ollama_fc, "build", "--from", str(real_gguf)], env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    models["gguf"] = f"{REAL_MODEL.file_name.removesuffix('.gguf')}-fc"
    assert f"created {models['gguf']} from {real_gguf}" in built.stdout

    converted = folder / "Modelfile"
    run = subprocess.run([*ollama_fc, "convert", str(real_gguf), "--from", str(real_gguf), "-o", str(converted)])
    assert run.returncode == 0
    models["convert"] = create(ollama_server, "real-convert", converted, env)

    plain = folder / "Modelfile.plain"
    plain.write_text(f"FROM {real_gguf}\n", encoding="utf-8")
    models["plain"] = create(ollama_server, "real-plain", plain, env)
    return models


def create(ollama_server: Any, name: str, modelfile: Path, env: dict[str, str]) -> str:
    """`ollama create NAME -f Modelfile` with the tier's own binary."""
    created = subprocess.run(
        [str(ollama_server.binary), "create", name, "-f", str(modelfile)], env=env, capture_output=True, text=True
    )
    assert created.returncode == 0, created.stderr
    return name


def calls_of(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or []]


def streamed(client: ollama.Client, model: str, question: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    content, calls = "", []
    for chunk in client.chat(model, [{"role": "user", "content": question}], tools=TOOLS, options=OPTIONS, stream=True):
        content += chunk.message.content or ""
        calls += calls_of(chunk.message)
    return content, calls


def is_paris_weather(calls: list[tuple[str, dict[str, Any]]]) -> bool:
    """One call of get_weather for Paris (the model may add the country)."""
    return (
        len(calls) == 1
        and calls[0][0] == "get_weather"
        and set(calls[0][1]) == {"city"}
        and str(calls[0][1]["city"]).split(",")[0].strip() == "Paris"
    )


@pytest.mark.parametrize("way", ["family", "gguf", "convert"])
def test_a_weather_question_comes_back_as_a_parsed_call(
    way: str, real_models: dict[str, str], ollama_host: str
) -> None:
    client = Client(host=ollama_host)
    whole = client.chat(real_models[way], [{"role": "user", "content": WEATHER}], tools=TOOLS, options=OPTIONS)
    assert is_paris_weather(calls_of(whole.message)), whole.message
    assert "get_weather" not in (whole.message.content or "")  # the call's text is not left in the content
    assert streamed(client, real_models[way], WEATHER) == (whole.message.content, calls_of(whole.message))


@pytest.mark.parametrize("way", ["family", "gguf", "convert"])
def test_a_question_no_tool_fits_comes_back_as_text(way: str, real_models: dict[str, str], ollama_host: str) -> None:
    client = Client(host=ollama_host)
    reply = client.chat(real_models[way], [{"role": "user", "content": NO_TOOL}], tools=TOOLS, options=OPTIONS)
    assert calls_of(reply.message) == []
    assert len((reply.message.content or "").split()) >= 5  # a haiku, not an empty or cut reply
    assert streamed(client, real_models[way], NO_TOOL) == (reply.message.content, [])


@pytest.fixture(scope="module")
def proxy(ollama_host: str) -> Iterator[str]:
    with ProxyThread(ollama_host) as running:
        yield running.url


def test_the_proxy_returns_the_call_to_ollama_python(real_models: dict[str, str], proxy: str) -> None:
    client = ollama.Client(host=proxy)
    whole = client.chat(real_models["family"], [{"role": "user", "content": WEATHER}], tools=TOOLS, options=OPTIONS)
    assert is_paris_weather(calls_of(whole.message)), whole.message
    assert streamed(client, real_models["family"], WEATHER)[1] == calls_of(whole.message)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_proxy_returns_the_call_to_the_openai_sdk(real_models: dict[str, str], proxy: str, stream: bool) -> None:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)
    request: dict[str, Any] = {
        "model": real_models["family"],
        "messages": [{"role": "user", "content": WEATHER}],
        "tools": TOOLS,
        "temperature": 0,
        "seed": 7,
        "max_tokens": OPTIONS["num_predict"],
    }
    if stream:
        names, arguments, finish = [], [], None
        for chunk in client.chat.completions.create(**request, stream=True):
            choice = chunk.choices[0]
            for call in choice.delta.tool_calls or []:
                names.append(call.function.name)
                arguments.append(json.loads(call.function.arguments))
            finish = choice.finish_reason or finish
        calls = list(zip(names, arguments))
    else:
        completion = client.chat.completions.create(**request)
        choice = completion.choices[0]
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or []]
        finish = choice.finish_reason
    assert is_paris_weather(calls) and finish == "tool_calls"


def test_the_plain_import_without_ollama_fc(real_models: dict[str, str], ollama_server: Any) -> None:
    """What a user gets from `ollama create` FROM the GGUF and the plain client: on v0.24.0 the
    imported GGUF gets no tools template and every request with tools is refused; on 0.3x the
    model's call comes back as text, which `ollama_fc.Client` then recovers."""
    plain = ollama.Client(host=ollama_server.host)
    ask = [{"role": "user", "content": WEATHER}]
    if ollama_server.tier.name == "pinned":
        with pytest.raises(ollama.ResponseError, match="does not support tools"):
            plain.chat(real_models["plain"], ask, tools=TOOLS, options=OPTIONS)
        return
    # 0.3x runs one llama-server per GGUF blob, started with or without Jinja by whichever model
    # loads it first; a plain model answered by a runner started for a Go-template model fails
    # with 500 "tools param requires --jinja flag". The plain model gets a runner of its own.
    for running in plain.ps().models:
        plain.generate(model=running.model, keep_alive=0)
    reply = plain.chat(real_models["plain"], ask, tools=TOOLS, options=OPTIONS)
    assert calls_of(reply.message) == [] and "get_weather" in (reply.message.content or "")
    recovered = Client(host=ollama_server.host).chat(real_models["plain"], ask, tools=TOOLS, options=OPTIONS)
    assert is_paris_weather(calls_of(recovered.message))


def get_time(city: str) -> str:
    """Get the current local time in a city.

    Args:
        city: The city's name, e.g. Tokyo
    """
    return "12:00"


@pytest.mark.parametrize(
    "tool_choice", ["required", {"type": "function", "function": {"name": "get_time"}}], ids=["required", "named"]
)
def test_a_forced_tool_choice_makes_a_call_even_where_no_tool_fits(
    tool_choice: Any, real_models: dict[str, str], ollama_host: str
) -> None:
    """`tool_choice` forces a schema-valid call of an allowed tool, where the model would answer in text."""
    client = Client(host=ollama_host)
    tools = [get_weather, get_time]
    reply = client.chat(
        real_models["family"],
        [{"role": "user", "content": NO_TOOL}],
        tools=tools,
        options=OPTIONS,
        tool_choice=tool_choice,
    )
    calls = calls_of(reply.message)
    allowed = {"get_time"} if isinstance(tool_choice, dict) else {"get_weather", "get_time"}
    assert len(calls) == 1 and calls[0][0] in allowed, reply.message
    assert set(calls[0][1]) == {"city"} and isinstance(calls[0][1]["city"], str)  # valid for its schema


def test_tool_choice_none_withholds_the_tools(real_models: dict[str, str], ollama_host: str) -> None:
    client = Client(host=ollama_host)
    reply = client.chat(
        real_models["family"], [{"role": "user", "content": WEATHER}], tools=TOOLS, options=OPTIONS, tool_choice="none"
    )
    assert calls_of(reply.message) == [] and (reply.message.content or "").strip()
