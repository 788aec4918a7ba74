"""The proxy's transcripts in docs/PROXY.md: agents' SDKs getting a parsed call through `ollama-fc serve`.

On the pinned Ollama, with `ollama-fc serve` in front of it, a weather question with one tool
(`get_weather`) is asked through the anthropic SDK (`messages.create`, `messages.stream`, as
Claude Code speaks) and the openai SDK's Responses API (`responses.create`, `responses.stream`,
as Codex speaks), of two models:

1. the real model (Qwen2.5-Coder-0.5B-Instruct) built with `ollama-fc build qwen2.5`;
2. `ollama-fc build minimax` over a scripted test model that prints MiniMax-Text-01's call
   (`functions.get_weather({...})` in a TypeScript fence), which Ollama leaves as text.

For each, the same SDK call against Ollama's own layer for that API comes first: what the app
gets without the proxy. Run: `.venv/bin/python scripts/proxy_transcripts.py` (exit status 0
when every proxied answer is a get_weather call).

With `--agents` it serves Claude Code's and Codex's transcripts instead: the pinned Ollama with
two scripted MiniMax models, `minimax-claude` (calls Claude Code's `Bash` tool) and
`minimax-codex` (Codex's `exec_command`), each answering once it sees the command's output,
and `ollama-fc serve` on its default port, until Ctrl+C. The agents' commands are in
docs/PROXY.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
from demo import REAL_QUESTION, get_weather, say

from ollama_fc import OllamaFcError, function_to_tool
from ollama_fc.build import build
from ollama_fc.families import load_family
from ollama_fc.serve import ProxyThread
from ollama_fc.serve.server import serve
from ollama_fc.testbed import PinnedServer, write_scripted_gguf
from ollama_fc.testbed.realmodel import REAL_MODEL, ModelUnavailableError, real_model_gguf
from ollama_fc.testbed.scripted import CONTEXT_LENGTH

WEATHER = function_to_tool(get_weather)["function"]
ANTHROPIC_TOOLS = [
    {"name": WEATHER["name"], "description": WEATHER["description"], "input_schema": WEATHER["parameters"]}
]
RESPONSES_TOOLS = [{"type": "function", **WEATHER}]
MAX_TOKENS = 200
GREEDY = {"temperature": 0}
"""The anthropic SDK (2.x) no longer takes `temperature`; the API and the proxy still read it."""
SHOWN_TEXT = 160

Call = tuple[str, dict[str, Any]]
Ask = Callable[[str, str], tuple[str, list[Call]]]

PROOF_COMMAND = "echo parsed by ollama-fc > proof.txt && cat proof.txt"
AGENT_MODELS = {
    "minimax-claude": ("Bash", {"command": PROOF_COMMAND, "description": "Write and show proof.txt"}),
    "minimax-codex": ("exec_command", {"cmd": PROOF_COMMAND}),
}
AGENT_ANSWER = "Done: proof.txt holds the line the command wrote."
AGENT_CONTEXT = 65536
"""The scripted model makes a token of every prompt byte: 64k tokens hold Codex's prompt (40 kB)
and Claude Code's with only its Bash tool (10 kB); with all its tools (76 kB) Ollama cuts the
prompt to fit, which the scripted model does not mind (it only looks for a tool result)."""


def minimax_call(name: str, arguments: dict[str, Any]) -> str:
    """A call as MiniMax-Text-01 writes it, which Ollama leaves in the text."""
    return f"<function_call>```typescript\nfunctions.{name}({json.dumps(arguments)})\n```<end_of_sentence>"


def scripted_minimax(path: Path, script: str, after: str | None = None, context_length: int = CONTEXT_LENGTH) -> Path:
    """A scripted GGUF for `ollama-fc build minimax`: `script`, then `after` once a tool result is in the prompt."""
    return write_scripted_gguf(
        path,
        script,
        after=after,
        trigger="function_response=functions",  # how the MiniMax template opens a tool result
        special_tokens=load_family("minimax").recipe.special_tokens.control,
        context_length=context_length,
    )


def anthropic_create(base_url: str, model: str) -> tuple[str, list[Call]]:
    message = anthropic.Anthropic(base_url=base_url, api_key="ollama", max_retries=0).messages.create(
        model=model,
        max_tokens=MAX_TOKENS,
        messages=[{"role": "user", "content": REAL_QUESTION}],
        tools=ANTHROPIC_TOOLS,
        extra_body=GREEDY,
    )
    return _from_message(message)


def anthropic_stream(base_url: str, model: str) -> tuple[str, list[Call]]:
    client = anthropic.Anthropic(base_url=base_url, api_key="ollama", max_retries=0)
    with client.messages.stream(
        model=model,
        max_tokens=MAX_TOKENS,
        messages=[{"role": "user", "content": REAL_QUESTION}],
        tools=ANTHROPIC_TOOLS,
        extra_body=GREEDY,
    ) as stream:
        return _from_message(stream.get_final_message())


def _from_message(message: Any) -> tuple[str, list[Call]]:
    """What an app reads from an Anthropic message: its stop reason and tool_use blocks (else its text)."""
    calls = [(block.name, block.input) for block in message.content if block.type == "tool_use"]
    text = "".join(block.text for block in message.content if block.type == "text")
    return f"stop_reason={message.stop_reason}" + ("" if calls else f", text {_shortened(text)}"), calls


def responses_create(base_url: str, model: str) -> tuple[str, list[Call]]:
    client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="ollama", max_retries=0)
    response = client.responses.create(
        model=model, input=REAL_QUESTION, tools=RESPONSES_TOOLS, temperature=0, max_output_tokens=MAX_TOKENS
    )
    return _from_response(response)


def responses_stream(base_url: str, model: str) -> tuple[str, list[Call]]:
    client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="ollama", max_retries=0)
    with client.responses.stream(
        model=model, input=REAL_QUESTION, tools=RESPONSES_TOOLS, temperature=0, max_output_tokens=MAX_TOKENS
    ) as stream:
        return _from_response(stream.get_final_response())


def _from_response(response: Any) -> tuple[str, list[Call]]:
    """What an app reads from a Responses object: its output items' types and function calls (else its text)."""
    calls = [(item.name, json.loads(item.arguments)) for item in response.output if item.type == "function_call"]
    kinds = "+".join(item.type for item in response.output)
    return f"output=[{kinds}]" + ("" if calls else f", text {_shortened(response.output_text)}"), calls


def _shortened(text: str) -> str:
    text = text.strip()
    return repr(text[:SHOWN_TEXT]) + ("..." if len(text) > SHOWN_TEXT else "")


ASKS: list[tuple[str, Ask]] = [
    ("messages.create", anthropic_create),
    ("messages.stream", anthropic_stream),
    ("responses.create", responses_create),
    ("responses.stream", responses_stream),
]


def transcript(ollama: str, proxy: str, model: str) -> bool:
    """Ollama's own layers once, then every SDK call through the proxy; whether each proxied one is a call."""
    for label, ask in (("messages.create", anthropic_create), ("responses.create", responses_create)):
        try:
            summary, calls = ask(ollama, model)
            say("  Ollama", f"{label:<17}{summary}, {len(calls)} call(s)")
        except (anthropic.APIError, openai.APIError) as error:
            say("  Ollama", f"{label:<17}error: {error}")
    ok = True
    for label, ask in ASKS:
        summary, calls = ask(proxy, model)
        shown = ", ".join(f"{name}({json.dumps(arguments)})" for name, arguments in calls) or "no call"
        say("  proxy", f"{label:<17}{summary}: {shown}")
        ok = ok and [name for name, _ in calls] == ["get_weather"]
    return ok


def main() -> int:
    with (
        tempfile.TemporaryDirectory(prefix="ollama-fc-transcripts-") as folder,
        PinnedServer() as server,
        ProxyThread(server.host) as proxy,
    ):
        say("ollama", f"{server.version} on {server.host}; ollama-fc serve on {proxy.url}")
        say("question", f"{REAL_QUESTION} (tool: get_weather(city))")
        ok = True
        try:
            gguf = real_model_gguf(report=lambda line: say("download", line))
        except ModelUnavailableError as exc:
            say("skipped", f"the real model cannot be had ({exc})")
        else:
            real = build("qwen2.5", from_=str(gguf), name="qwen2.5-coder-fc", host=server.host).name
            print(f"\n1. {real}: {REAL_MODEL.about}, `ollama-fc build qwen2.5`", flush=True)
            ok = transcript(server.host, proxy.url, real)
        call = minimax_call("get_weather", {"city": "Paris"})
        scripted = scripted_minimax(Path(folder) / "minimax.gguf", call)
        minimax = build("minimax", from_=str(scripted), name="minimax-fc", host=server.host).name
        print(f"\n2. {minimax}: `ollama-fc build minimax` over a scripted model printing {call!r}", flush=True)
        return 0 if transcript(server.host, proxy.url, minimax) and ok else 1


def serve_agents() -> int:
    """The pinned Ollama with the agents' scripted models, and the proxy in front of it until Ctrl+C."""
    os.environ["OLLAMA_CONTEXT_LENGTH"] = str(AGENT_CONTEXT)  # the server's default num_ctx
    with tempfile.TemporaryDirectory(prefix="ollama-fc-agents-") as folder, PinnedServer() as server:
        for name, (tool, arguments) in AGENT_MODELS.items():
            after = AGENT_ANSWER + "<end_of_sentence>"
            scripted = scripted_minimax(
                Path(folder) / f"{name}.gguf", minimax_call(tool, arguments), after, AGENT_CONTEXT
            )
            build("minimax", from_=str(scripted), name=name, host=server.host)
            say("built", f"{name}: calls {tool}({json.dumps(arguments)}), then says {AGENT_ANSWER!r}")
        say("ollama", f"{server.version} on {server.host}")
        serve(upstream=server.host)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", action="store_true", help="serve the models of the Claude Code and Codex runs")
    try:
        sys.exit(serve_agents() if parser.parse_args().agents else main())
    except OllamaFcError as exc:
        print(f"proxy_transcripts: {exc}", file=sys.stderr)
        sys.exit(1)
