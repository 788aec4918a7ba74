"""The test bed itself: each tier's server runs, and scripted models say exactly their script.

Every other integration test relies on these facts, so they are checked against the real
server of every tier: plain and streamed chat, any sampling settings, Ollama's own tool-call
parsing of a Hermes-format script, and the switch to the final answer after a tool result.
Provisioning failures are checked to say, in one line, what is missing and where the log is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import gguf
import ollama
import pytest

from ollama_fc.errors import OllamaUnavailableError
from ollama_fc.testbed.buildsteps import BuildLog
from ollama_fc.testbed.scripted import ScriptError, split_script, write_scripted_gguf
from ollama_fc.testbed.tiers import TIERS

CHATML = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
CHATML_SPECIALS = ("<|im_start|>", "<|im_end|>")

HERMES = """{{- if or .System .Tools }}<|im_start|>system
{{- if .System }}
{{ .System }}
{{- end }}
{{- if .Tools }}
You may call these tools:
<tools>
{{- range .Tools }}
{{ .Function }}
{{- end }}
</tools>
Answer a call as <tool_call>{"name": ..., "arguments": ...}</tool_call>
{{- end }}<|im_end|>
{{ end }}
{{- range .Messages }}
{{- if eq .Role "user" }}<|im_start|>user
{{ .Content }}<|im_end|>
{{ else if eq .Role "assistant" }}<|im_start|>assistant
{{- if .ToolCalls }}<tool_call>
{{- range .ToolCalls }}
{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
{{- end }}
</tool_call>
{{- else }}
{{ .Content }}
{{- end }}<|im_end|>
{{ else if eq .Role "tool" }}<|im_start|>user
<tool_response>
{{ .Content }}
</tool_response><|im_end|>
{{ end }}
{{- end }}<|im_start|>assistant
"""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    },
}
TOOL_CALL_SCRIPT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
FINAL_ANSWER = "It is 22 °C and sunny in Paris — enjoy! ☀️"

# Repeated words, newlines, JSON punctuation and multi-byte characters.
SCRIPT = 'Bonjour! The answer is {"x": [1, 2, 3]}.\nThe answer is still 42 — naïve café, 東京.\n'


@pytest.fixture
def client(ollama_host: str) -> ollama.Client:
    return ollama.Client(host=ollama_host)


def test_server_is_its_tiers_version(ollama_server, ollama_host: str) -> None:
    with urllib.request.urlopen(f"{ollama_host}/api/version") as response:
        assert json.load(response)["version"] == ollama_server.tier.version.lstrip("v")
    assert ollama_server.version == TIERS[ollama_server.tier.name].version
    assert ollama_host.startswith("http://127.0.0.1:")


def test_tiers_are_the_pinned_release_and_a_current_0_3x_release() -> None:
    assert TIERS["pinned"].version == "v0.24.0" and not TIERS["pinned"].uses_llama_server
    major, minor = (int(part) for part in TIERS["current"].version.lstrip("v").split(".")[:2])
    assert (major, minor) >= (0, 30) and TIERS["current"].uses_llama_server


def test_provision_command_prints_version_and_binary(ollama_server) -> None:
    """`scripts/ollama-server provision --tier NAME` (warm: the server already runs it)."""
    tier = ollama_server.tier
    result = subprocess.run(
        [sys.executable, "-m", "ollama_fc.testbed", "provision", "--tier", tier.name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"ollama {tier.version} ({tier.name}): {ollama_server.binary}\n"


def test_chat_returns_the_exact_script(scripted_model, client: ollama.Client) -> None:
    model = scripted_model(SCRIPT, template=CHATML, special_tokens=CHATML_SPECIALS)
    answer = client.chat(model=model, messages=[{"role": "user", "content": "Say it."}])
    assert answer.message.content == SCRIPT
    assert answer.done_reason == "stop"


def test_streamed_chat_returns_the_exact_script(scripted_model, client: ollama.Client) -> None:
    model = scripted_model(SCRIPT, template=CHATML, special_tokens=CHATML_SPECIALS)
    chunks = list(client.chat(model=model, messages=[{"role": "user", "content": "Say it."}], stream=True))
    assert len(chunks) > 2
    assert "".join(chunk.message.content for chunk in chunks) == SCRIPT


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": 0},
        {"temperature": 0.8, "seed": 1},
        {"temperature": 2.0, "seed": 12345, "top_k": 1000, "top_p": 1.0, "min_p": 0.0},
        {"temperature": 1.5, "repeat_penalty": 2.0, "repeat_last_n": 4096, "presence_penalty": 2.0},
    ],
    ids=["greedy", "default-temperature", "hot", "penalties"],
)
def test_script_holds_under_any_sampling(scripted_model, client: ollama.Client, options: dict) -> None:
    model = scripted_model(SCRIPT, template=CHATML, special_tokens=CHATML_SPECIALS)
    answer = client.chat(model=model, messages=[{"role": "user", "content": "Say it."}], options=options)
    assert answer.message.content == SCRIPT


def test_repeat_last_n_minus_one_is_refused_from_0_3x_on(scripted_model, client: ollama.Client, ollama_server) -> None:
    """`repeat_last_n: -1` (the whole context) works on v0.24.0; llama-server refuses it."""
    model = scripted_model(SCRIPT, template=CHATML, special_tokens=CHATML_SPECIALS)
    ask = {"model": model, "messages": [{"role": "user", "content": "Say it."}], "options": {"repeat_last_n": -1}}
    if ollama_server.tier.uses_llama_server:
        with pytest.raises(ollama.ResponseError, match=r"repeat_last_n.*must be between 0"):
            client.chat(**ask)
    else:
        assert client.chat(**ask).message.content == SCRIPT


def test_hermes_script_comes_back_as_parsed_tool_calls(scripted_model, client: ollama.Client) -> None:
    model = scripted_model(TOOL_CALL_SCRIPT, after=FINAL_ANSWER, template=HERMES, special_tokens=CHATML_SPECIALS)
    answer = client.chat(model=model, messages=[{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER_TOOL])
    calls = answer.message.tool_calls or []
    assert [(call.function.name, dict(call.function.arguments)) for call in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert answer.message.content == ""


def test_streamed_hermes_script_comes_back_as_parsed_tool_calls(scripted_model, client: ollama.Client) -> None:
    model = scripted_model(TOOL_CALL_SCRIPT, after=FINAL_ANSWER, template=HERMES, special_tokens=CHATML_SPECIALS)
    chunks = list(
        client.chat(
            model=model,
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=[WEATHER_TOOL],
            stream=True,
        )
    )
    calls = [call for chunk in chunks for call in (chunk.message.tool_calls or [])]
    assert [(call.function.name, dict(call.function.arguments)) for call in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert "".join(chunk.message.content for chunk in chunks) == ""


def test_turn_after_tool_result_returns_the_final_answer(scripted_model, client: ollama.Client) -> None:
    model = scripted_model(TOOL_CALL_SCRIPT, after=FINAL_ANSWER, template=HERMES, special_tokens=CHATML_SPECIALS)
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": '{"temperature_c": 22, "sky": "sunny"}', "tool_name": "get_weather"},
    ]
    answer = client.chat(model=model, messages=messages, tools=[WEATHER_TOOL], options={"temperature": 0.8})
    assert answer.message.content == FINAL_ANSWER
    assert not answer.message.tool_calls


def test_trigger_is_found_inside_ordinary_text(scripted_model, client: ollama.Client) -> None:
    """The template glues the trigger to other text; a tokenizer must still see it."""
    template = (
        '{{- range .Messages }}{{ if eq .Role "tool" }}xx<tool_response>yy{{ .Content }}'
        "{{ else }}{{ .Role }}:{{ .Content }}{{ end }}\n{{ end }}assistant:"
    )
    model = scripted_model("first answer", after="second answer", template=template)
    user = {"role": "user", "content": "hello <tool_ no trigger here"}
    tool = {"role": "tool", "content": "result"}
    assert client.chat(model=model, messages=[user]).message.content == "first answer"
    later = [tool, user, {"role": "assistant", "content": "ok"}, user]
    assert client.chat(model=model, messages=later).message.content == "second answer"


def test_special_tokens_are_single_control_tokens(tmp_path: Path) -> None:
    path = write_scripted_gguf(
        tmp_path / "m.gguf", "hello there", after="bye now", special_tokens=["<start_of_turn>", "<end_of_turn>"]
    )
    reader = gguf.GGUFReader(path)
    tokens = [
        str(bytes(reader.fields["tokenizer.ggml.tokens"].parts[i]), "utf-8")
        for i in reader.fields["tokenizer.ggml.tokens"].data
    ]
    types = [
        int(reader.fields["tokenizer.ggml.token_type"].parts[i][0])
        for i in reader.fields["tokenizer.ggml.token_type"].data
    ]
    kinds = dict(zip(tokens, types))
    assert kinds["<start_of_turn>"] == gguf.TokenType.CONTROL
    assert kinds["<end_of_turn>"] == gguf.TokenType.CONTROL
    assert kinds["<tool_response>"] == gguf.TokenType.USER_DEFINED
    assert os.path.getsize(path) < 2_000_000


def test_script_pieces_are_distinct_and_reassemble() -> None:
    text = "ab" * 20 + "é東京" * 3
    pieces = split_script(text, set())
    assert b"".join(pieces).decode() == text
    assert len(set(pieces)) == len(pieces)
    assert all(2 <= len(piece) <= 16 for piece in pieces)


@pytest.mark.parametrize("script", ["a", "a" * 400])
def test_unencodable_scripts_are_refused_clearly(tmp_path: Path, script: str) -> None:
    with pytest.raises(ScriptError, match="distinct pieces"):
        write_scripted_gguf(tmp_path / "m.gguf", script)


def test_models_made_from_one_gguf_share_one_runner(scripted_model, client: ollama.Client) -> None:
    """Ollama loads one runner per GGUF, whatever the model is called: a second model over the
    same file is answered by the runner the first one loaded. So a test that must not share a
    runner with another (one whose only slot a hang-up may have left taken) needs a GGUF of its
    own, not only a name of its own (`test_disconnect_cancels_the_upstream_request`)."""
    script = "one file, two names"
    first = scripted_model(script, template=CHATML, special_tokens=CHATML_SPECIALS, name="ofc-one-gguf-first")
    second = scripted_model(script, template=CHATML, special_tokens=CHATML_SPECIALS, name="ofc-one-gguf-second")
    for model in (first, second):
        assert client.chat(model=model, messages=[{"role": "user", "content": "hi"}]).message.content == script
    loaded = {entry.model for entry in client.ps().models}
    assert f"{first}:latest" in loaded and f"{second}:latest" not in loaded, loaded


def test_stopping_the_server_ends_its_runners(tmp_path: Path, ollama_server) -> None:
    """A stopped test server leaves no `ollama runner` behind (each holds a model in memory).

    Uses a second server of its own, of the same tier; `ollama_server` makes it skip or fail
    like the others. On 0.3x the runner is llama-server.
    """
    from ollama_fc.testbed.server import OllamaServer

    with OllamaServer(ollama_server.tier, workdir=tmp_path / "server") as server:
        client = ollama.Client(host=server.host)
        path = write_scripted_gguf(tmp_path / "m.gguf", "still here")
        client.create(model="runner-check", files={"m.gguf": client.create_blob(path)}, template=CHATML)
        assert client.chat(model="runner-check", messages=[{"role": "user", "content": "hi"}]).message.content == (
            "still here"
        )
        assert server.pid is not None
        group = os.getpgid(server.pid)
        members = _processes_in_group(group)
        assert len(members) >= 2  # the server and a runner
    assert _processes_in_group(group) == []


def _processes_in_group(group: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(entry.name))
    return members


@pytest.mark.parametrize("tier", list(TIERS))
def test_provisioning_without_go_says_what_to_install(
    tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ollama_fc.testbed.provision import provision

    monkeypatch.setenv("OLLAMA_FC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(OllamaUnavailableError, match=r"^building Ollama v[\d.]+ needs go on PATH .*; install Go$"):
        provision(tier, report=lambda line: None)


def _without(monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """Hide `ollama` (so nothing on PATH is used) and the given build tools from shutil.which."""
    real_which = shutil.which
    hidden = {"ollama", *tools}
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None if name in hidden else real_which(name))


def test_provisioning_without_headers_names_the_debian_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ollama_fc.testbed import cgo_build
    from ollama_fc.testbed.provision import provision

    if not all(map(shutil.which, ("go", "gcc", "g++"))):
        pytest.skip("needs go, gcc and g++ on PATH to get as far as the header check")
    monkeypatch.setenv("OLLAMA_FC_CACHE", str(tmp_path / "cache"))
    _without(monkeypatch)
    monkeypatch.setitem(cgo_build.SYSTEM_HEADERS, "stb/stb_image.h", (str(tmp_path / "absent.h"), "libstb-dev"))
    with pytest.raises(OllamaUnavailableError, match=r"apt-get install libstb-dev$"):
        provision("pinned", report=lambda line: None)


def test_provisioning_the_current_tier_without_cmake_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ollama_fc.testbed.provision import provision

    if not all(map(shutil.which, ("go", "gcc", "g++", "git"))):
        pytest.skip("needs go, gcc, g++ and git on PATH to get as far as the cmake check")
    monkeypatch.setenv("OLLAMA_FC_CACHE", str(tmp_path / "cache"))
    _without(monkeypatch, "cmake")
    with pytest.raises(OllamaUnavailableError) as raised:
        provision("current", report=lambda line: None)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"building Ollama {TIERS['current'].version} needs cmake on PATH")
    assert message.endswith("install cmake >= 3.24")


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (
            "echo compiling ggml.c; echo 'fatal: not a git repository' >&2; "
            "echo 'ggml.c:12:5: error: unknown type name bad_t' >&2; echo more >&2",
            "ggml.c:12:5: error: unknown type name bad_t",
        ),
        (
            "echo 'CMake Error at ggml/CMakeLists.txt:376 (message):'; echo '  GGML_NATIVE is not compatible'",
            "CMake Error at ggml/CMakeLists.txt:376 (message): GGML_NATIVE is not compatible",
        ),
    ],
    ids=["compiler", "cmake"],
)
def test_a_failed_build_step_is_one_line_naming_the_error_and_the_log(output: str, reason: str, tmp_path: Path) -> None:
    """What `provision` raises when a build step fails: the step, its error line, the log."""
    script = output + "; exit 2"
    with BuildLog(tmp_path / "build.log") as log:
        log.run(["sh", "-c", "echo an earlier step printed error words"], tmp_path, "an earlier step")
        with pytest.raises(OllamaUnavailableError) as raised:
            log.run_with_progress(
                ["sh", "-c", script], tmp_path, "`cmake --build` of Ollama vX", lambda line: None, lambda: ""
            )
    assert str(raised.value) == f"`cmake --build` of Ollama vX failed: {reason} (log: {tmp_path / 'build.log'})"


def test_a_special_token_a_script_spells_is_generated_as_that_token(tmp_path: Path) -> None:
    """With emit_special_tokens the successor of `hi` is the control token itself, not its text."""
    path = write_scripted_gguf(
        tmp_path / "m.gguf", "hi<|stray|>there", special_tokens=["<|stray|>"], emit_special_tokens=True
    )
    reader = gguf.GGUFReader(path)
    field = reader.fields["tokenizer.ggml.tokens"]
    tokens = [str(bytes(field.parts[i]), "utf-8") for i in field.data]
    assert tokens.count("<|stray|>") == 1
    assert not any("stray" in token for token in tokens if token != "<|stray|>")  # no text pieces of it


def test_a_special_token_emitted_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"special token '<\|x\|>' occurs twice"):
        write_scripted_gguf(tmp_path / "m.gguf", "ab<|x|>cd<|x|>ef", special_tokens=["<|x|>"], emit_special_tokens=True)
