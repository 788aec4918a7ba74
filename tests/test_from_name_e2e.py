"""`ollama-fc build --from NAME` and `ollama-fc check NAME` against a real Ollama of each tier, on
scripted models made the way a user's models come to be (a GGUF with its chat template imported
under a Go template that renders no tools), and their bad inputs: each one line, a non-zero exit,
nothing created. Also the client and proxy reading the format of a model ollama-fc did not build
from its own chat template. The real model's runs are in test_real_from_name.py."""

from __future__ import annotations

import re
import shlex
from typing import Any

import httpx
import ollama
import pytest
from click.testing import CliRunner, Result

from ollama_fc import Client, cli
from ollama_fc.installed import read_parameters
from ollama_fc.markers import read_marker
from ollama_fc.testbed.server import free_port
from tests.shared_data import shared_path

PROMPT_ONLY = "{{ .Prompt }}"  # what Ollama v0.24.0 gives a GGUF imported without a TEMPLATE
HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
ASK = [{"role": "user", "content": "What's the weather like in Paris?"}]


def qwen_jinja() -> str:
    """Qwen2.5-Coder's own chat template, as the GGUF of Ollama's library model carries it."""
    path = shared_path("corpus", "ollama-templates", "hfjs-automap", "qwen2.5-coder_1.5b.gguf.jinja")
    return path.read_text(encoding="utf-8")


def run(host: str, *args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args), env={"OLLAMA_HOST": host.removeprefix("http://")})


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def model_names(host: str) -> set[str]:
    return {model.model or "" for model in ollama.Client(host=host).list().models}


@pytest.fixture
def imported(scripted_model: Any) -> str:
    """A GGUF with Qwen's Jinja imported under `{{ .Prompt }}`; it prints a Hermes call."""
    return str(scripted_model(HERMES_CALL, template=PROMPT_ONLY, chat_template=qwen_jinja(), name="fromname-import"))


def test_build_from_name_makes_the_model_call_tools(imported: str, ollama_server: Any, ollama_host: str) -> None:
    built = run(ollama_host, "build", "--from", imported)
    assert built.exit_code == 0, built.output
    # v0.24.0 keeps the TEMPLATE it was given; 0.3x shows (and renders) the GGUF's own Jinja instead
    why = "renders no conversation" if ollama_server.tier.name == "pinned" else "is the model's Jinja itself"
    assert f"converted the model's template: Ollama's template {why}" in built.stdout
    assert "created fromname-import-fc from fromname-import" in built.stdout
    client = Client(host=ollama_host)
    whole = client.chat("fromname-import-fc", ASK, tools=TOOLS)
    calls = [(call.function.name, dict(call.function.arguments)) for call in whole.message.tool_calls or []]
    assert calls == [("get_weather", {"city": "Paris"})] and not whole.message.content
    streamed = [
        (call.function.name, dict(call.function.arguments))
        for chunk in client.chat("fromname-import-fc", ASK, tools=TOOLS, stream=True)
        for call in chunk.message.tool_calls or []
    ]
    assert streamed == calls
    show = ollama.Client(host=ollama_host).show("fromname-import-fc")
    assert "<|im_start|>" in (show.template or "") and "PARSER passthrough" in (show.modelfile or "")


def test_check_names_the_fix_and_checks_the_built_model_through_ollama_fc(
    imported: str, ollama_server: Any, ollama_host: str
) -> None:
    before = run(ollama_host, "check", imported)
    assert before.exit_code == 1, before.output
    if ollama_server.tier.name == "pinned":  # `{{ .Prompt }}` renders no tools: v0.24.0 refuses them
        assert "Ollama's template: a Go template that renders no tools" in before.stdout
        assert "plain Ollama: refused: Ollama says the model does not support tools (400)" in before.stdout
    assert re.search(r"^the model's own chat template \(.*\): renders tools$", before.stdout, re.M), before.stdout
    assert f"fix: ollama-fc build --from {imported}" in before.stdout
    assert run(ollama_host, "build", "--from", imported, "--name", "fromname-checked").exit_code == 0
    after = run(ollama_host, "check", "fromname-checked")
    lines = after.stdout.splitlines()
    weather = lines.index(next(line for line in lines if "weather in Paris" in line))
    assert lines[weather + 1].split() == ["ollama-fc:", "call:", "get_weather(city='Paris')"]
    assert "written format: learned from the template: json, call '<tool_call>'" in after.stdout
    # the scripted model calls the weather tool whatever it is asked: the haiku question fails
    assert after.exit_code == 1 and "no command fixes that" in after.stdout


def test_a_template_that_renders_as_the_jinja_does_is_kept(
    scripted_model: Any, ollama_server: Any, ollama_host: str
) -> None:
    """A model whose Go template already renders every conversation as its Jinja does (here the
    faithful conversion itself, as a user may have created it) keeps that template."""
    from ollama_fc.convert import TemplateSource, convert

    if ollama_server.tier.name != "pinned":
        pytest.skip("Ollama 0.3x shows and renders the GGUF's Jinja in place of a model's TEMPLATE")
    own = convert(TemplateSource(template=qwen_jinja())).template
    model = scripted_model(HERMES_CALL, template=own, chat_template=qwen_jinja(), name="fromname-exact")
    built = run(ollama_host, "build", "--from", model)
    assert built.exit_code == 0, built.output
    assert re.search(
        r"^kept Ollama's template: it renders all \d+ conversations exactly as the model's Jinja$", built.stdout, re.M
    )
    template = ollama.Client(host=ollama_host).show("fromname-exact-fc").template or ""
    assert template.startswith("{{/* ollama-fc family=auto format=learned:") and template.endswith(own)


def test_a_model_with_ollamas_own_renderer_and_parser_is_rebuilt_without_them(
    imported: str, scripted_model: Any, ollama_server: Any, ollama_host: str
) -> None:
    """Ollama 0.3x's library gives some families a RENDERER (prompts rendered in Go code, the
    TEMPLATE unused) and a PARSER; the model built from it has neither, but its own template and
    `PARSER passthrough`."""
    from ollama import ProgressResponse

    if ollama_server.tier.name == "pinned":
        pytest.skip("Ollama v0.24.0 has no RENDERER")
    client = ollama.Client(host=ollama_host)
    shown = client.show(imported)
    digest = next(line.split("sha256-")[1] for line in (shown.modelfile or "").splitlines() if line.startswith("FROM "))
    request = {
        "model": "fromname-rendered",
        "files": {"model.gguf": f"sha256:{digest.strip()}"},
        "renderer": "qwen3-coder",
        "parser": "qwen3-coder",
        "stream": False,
    }
    client._request(ProgressResponse, "POST", "/api/create", json=request)
    assert "RENDERER qwen3-coder" in (client.show("fromname-rendered").modelfile or "")
    built = run(ollama_host, "build", "--from", "fromname-rendered")
    assert built.exit_code == 0, built.output
    assert (
        "converted the model's template: Ollama renders fromname-rendered's prompts with its built-in renderer qwen3-coder"
        in built.stdout
    )
    modelfile = client.show("fromname-rendered-fc").modelfile or ""
    assert "RENDERER" not in modelfile and "PARSER passthrough" in modelfile


def test_an_hf_co_name_with_a_tag(scripted_model: Any, ollama_host: str) -> None:
    """A model pulled from Hugging Face keeps its namespace and tag: `-fc` goes before the tag."""
    name = "hf.co/someone/Some-Model-GGUF:Q4_K_M"
    scripted_model(HERMES_CALL, template=PROMPT_ONLY, chat_template=qwen_jinja(), name=name)
    built = run(ollama_host, "build", "--from", name)
    assert built.exit_code == 0, built.output
    assert f"created hf.co/someone/Some-Model-GGUF-fc:Q4_K_M from {name}" in built.stdout
    reply = Client(host=ollama_host).chat("hf.co/someone/Some-Model-GGUF-fc:Q4_K_M", ASK, tools=TOOLS)
    assert [call.function.name for call in reply.message.tool_calls or []] == ["get_weather"]


def test_the_models_parameters_are_carried_over(scripted_model: Any, ollama_host: str) -> None:
    model = scripted_model(
        HERMES_CALL,
        template=PROMPT_ONLY,
        chat_template=qwen_jinja(),
        parameters={"num_ctx": 2048, "temperature": 0.3, "stop": ["<|endoftext|>"]},
        name="fromname-params",
    )
    assert run(ollama_host, "build", "--from", model).exit_code == 0
    parameters = read_parameters(ollama.Client(host=ollama_host).show("fromname-params-fc").parameters)
    assert parameters["num_ctx"] == 2048 and parameters["temperature"] == 0.3
    assert parameters["stop"][0] == "<|endoftext|>"  # its own stop tokens first
    assert "<|im_end|>" in parameters["stop"]  # then the template's


def test_the_models_system_message_is_carried_over(imported: str, ollama_host: str) -> None:
    client = ollama.Client(host=ollama_host)
    for _ in client.create("fromname-system", from_=imported, system="You answer in French.", stream=True):
        pass
    assert run(ollama_host, "build", "--from", "fromname-system").exit_code == 0
    shown = httpx.post(f"{ollama_host}/api/show", json={"model": "fromname-system-fc"}).json()
    assert shown.get("system") == "You answer in French."


LIBRARY_GO = shared_path("corpus", "ollama-templates", "hfjs-automap", "qwen2.5-coder_1.5b.ollama.gotmpl")


def test_check_tells_a_reply_ollamas_parser_dropped(scripted_model: Any, ollama_host: str) -> None:
    """The model prints the template's tool tag and then no JSON: Ollama's own parser returns
    nothing (v0.24.0 through 0.3x), and check says so and names the fix."""
    model = scripted_model(
        "<tool_call>\nget_weather(Paris)\n</tool_call>",
        template=LIBRARY_GO.read_text(encoding="utf-8"),
        chat_template=qwen_jinja(),
        name="fromname-dropped",
    )
    result = run(ollama_host, "check", model)
    assert result.exit_code == 1
    assert "plain Ollama: empty: no text and no call" in result.stdout, result.stdout
    assert f"fix: ollama-fc build --from {model}" in result.stdout


# A format no built-in parser reads: the client and proxy can only know it from the chat template.
ODD_JINJA = (
    "{%- if tools %}Tools: {{ tools | tojson }}\n{% endif %}"
    "{%- for m in messages %}{%- if m.role == 'assistant' and m.tool_calls %}"
    "{%- for c in m.tool_calls %}<<call {{ c.function.name }}>>{{ c.function.arguments | tojson }}<</call>>"
    "{%- endfor %}{%- else %}<|{{ m.role }}|>{{ m.content }}\n{% endif %}{%- endfor %}<|assistant|>"
)
ODD_GO = "{{ if .Tools }}Tools: {{ json .Tools }}\n{{ end }}{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}\n{{ end }}<|assistant|>"
ODD_CALL = '<<call get_weather>>{"city": "Paris"}<</call>>'


def test_the_client_and_proxy_learn_the_format_of_a_model_ollama_fc_did_not_build(
    scripted_model: Any, ollama_host: str, proxy: str
) -> None:
    model = scripted_model(ODD_CALL, template=ODD_GO, chat_template=ODD_JINJA, parser="passthrough")
    reply = Client(host=ollama_host).chat(model, ASK, tools=TOOLS)
    assert [(c.function.name, dict(c.function.arguments)) for c in reply.message.tool_calls or []] == [
        ("get_weather", {"city": "Paris"})
    ]
    proxied = ollama.Client(host=proxy).chat(model, ASK, tools=TOOLS)
    assert [c.function.name for c in proxied.message.tool_calls or []] == ["get_weather"]
    assert not proxied.message.content


# -- bad input: one line, a non-zero exit, nothing created ----------------------------------------


def test_an_unknown_name(ollama_host: str) -> None:
    before = model_names(ollama_host)
    for command in (["build", "--from", "no-such-model:7b"], ["check", "no-such-model:7b"]):
        result = run(ollama_host, *command)
        assert result.exit_code == 1
        assert one_line(result.stderr).startswith(
            f"ollama-fc: the Ollama at {ollama_host} has no model 'no-such-model:7b'"
        )
    assert model_names(ollama_host) == before


def test_a_name_that_is_a_file(ollama_host: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymodel").write_text("FROM qwen2.5\n")
    checked = run(ollama_host, "check", "mymodel")
    assert checked.exit_code == 1
    assert one_line(checked.stderr) == (
        "ollama-fc: mymodel is a file, not an Ollama model; check takes a model name (`ollama list`); "
        "`ollama-fc build --from mymodel` builds a model from a GGUF file"
    )
    built = run(ollama_host, "build", "--from", "mymodel")
    assert built.exit_code == 1 and "not a GGUF file" in one_line(built.stderr)


def test_ollama_down() -> None:
    host = f"http://127.0.0.1:{free_port()}"
    for command in (["build", "--from", "mylib"], ["check", "mylib"]):
        result = run(host, *command)
        assert result.exit_code == 1
        assert one_line(result.stderr).startswith(f"ollama-fc: cannot reach Ollama at {host}")


def test_a_model_without_any_chat_template(scripted_model: Any, ollama_host: str) -> None:
    model = scripted_model("Hello.", template=PROMPT_ONLY, name="fromname-bare")
    before = model_names(ollama_host)
    result = run(ollama_host, "build", "--from", model)
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        "ollama-fc: no chat template of fromname-bare's own found (Ollama's template is a Go template and its "
        "GGUF has no tokenizer.chat_template); give --from the model's .gguf file (one with a chat template), "
        "or a family (`ollama-fc list`)"
    )
    assert model_names(ollama_host) == before


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_a_template_without_tools_says_so_in_one_line(scripted_model: Any, ollama_host: str) -> None:
    model = scripted_model("Hello.", template=PROMPT_ONLY, chat_template=CHATML, name="fromname-toolless")
    before = model_names(ollama_host)
    result = run(ollama_host, "build", "--from", model)
    assert result.exit_code == 1
    line = one_line(result.stderr)
    assert line == (
        "ollama-fc: fromname-toolless's chat template has no tools (it never renders the tools offered); give "
        "--tools-format hermes (or llama3_json, pythonic, mistral) to add a tools section in that format"
    )
    assert model_names(ollama_host) == before


def test_the_fix_for_a_template_without_tools_adds_a_tools_section(
    scripted_model: Any, ollama_host: str, engines: dict[str, Any]
) -> None:
    model = scripted_model(HERMES_CALL, template=PROMPT_ONLY, chat_template=CHATML, name="fromname-toolless-h")
    before = run(ollama_host, "check", model)
    assert before.exit_code == 1, before.output
    assert re.search(r"^the model's own chat template \(.*\): has no tools at all", before.stdout, re.M)
    fix = next(line for line in before.stdout.splitlines() if line.startswith("fix: "))
    assert fix == (
        f"fix: ollama-fc build --from {model} --tools-format hermes  # or another format: llama3_json, pythonic, mistral"
    )
    command = shlex.split(fix.removeprefix("fix: "), comments=True)  # the command, pasted as it is printed
    assert command[0] == "ollama-fc"
    built = run(ollama_host, *command[1:])
    assert built.exit_code == 0, built.output
    assert "converted the model's template: a hermes tools section is added to it" in built.stdout
    assert f"created {model}-fc from {model} in " in built.stdout
    assert "(its own chat template with a hermes tools section added; PARSER passthrough)" in built.stdout
    template = ollama.Client(host=ollama_host).show(f"{model}-fc").template or ""
    assert read_marker(template) == ("auto", "hermes")
    for version, engine in engines.items():  # the tools a request offers are in the prompt the model gets
        prompt = engine.render(template, ASK, TOOLS).prompt
        assert prompt is not None and '"name": "get_weather"' in prompt and "<tool_call>" in prompt, version
        assert "get_weather" not in (engine.render(template, ASK, None).prompt or ""), version
    client = Client(host=ollama_host)
    whole = client.chat(f"{model}-fc", ASK, tools=TOOLS)
    calls = [(call.function.name, dict(call.function.arguments)) for call in whole.message.tool_calls or []]
    assert calls == [("get_weather", {"city": "Paris"})] and not whole.message.content
    streamed = [
        (call.function.name, dict(call.function.arguments))
        for chunk in client.chat(f"{model}-fc", ASK, tools=TOOLS, stream=True)
        for call in chunk.message.tool_calls or []
    ]
    assert streamed == calls
    after = run(ollama_host, "check", f"{model}-fc")
    assert "no tools" not in after.stdout, after.stdout
    assert "renders tools in the hermes tools section ollama-fc added (--tools-format)" in after.stdout
    lines = after.stdout.splitlines()
    weather = lines.index(next(line for line in lines if "weather in Paris" in line))
    assert lines[weather + 1].split() == ["ollama-fc:", "call:", "get_weather(city='Paris')"]


def test_tools_format_on_a_template_with_tools_is_one_line_and_creates_nothing(imported: str, ollama_host: str) -> None:
    before = model_names(ollama_host)
    result = run(ollama_host, "build", "--from", imported, "--tools-format", "hermes")
    assert result.exit_code == 1
    line = one_line(result.stderr)
    assert line.startswith(f"ollama-fc: {imported} (") and line.endswith(
        "the chat template has tools of its own; --tools-format only adds a tools section to a template "
        "without one: build without it"
    )
    assert model_names(ollama_host) == before
