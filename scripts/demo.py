"""The demo behind scripts/demo: `ollama-fc build minimax` and one tool call, on the pinned Ollama.

The base model is a scripted test model (a tiny GGUF that always prints the same text), because
MiniMax-Text-01 has 456B parameters. Everything else is real: the Ollama server, the build,
the template and the ollama-fc client, which parses the call out of the model's raw text.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ollama_fc import Client, OllamaFcError, run_tools
from ollama_fc.build import build
from ollama_fc.families import load_family
from ollama_fc.testbed import PinnedServer, write_scripted_gguf

QUESTION = "What's the weather like in Shanghai today?"
CALL = '<function_call>```typescript\nfunctions.get_current_weather({"location": "Shanghai"})\n```<end_of_sentence>'
ANSWER = "It is sunny in Shanghai today, 25 degrees Celsius.<end_of_sentence>"


def get_current_weather(location: str) -> str:
    """Get the latest weather for a location.

    Args:
        location: A certain city, such as Beijing, Shanghai
    """
    return json.dumps({"location": location, "temperature": "25", "unit": "celsius", "weather": "Sunny"})


def say(label: str, text: str) -> None:
    print(f"{label:<14}{text}", flush=True)


def main() -> int:
    tokens = load_family("minimax").recipe.special_tokens.control
    with tempfile.TemporaryDirectory(prefix="ollama-fc-demo-") as folder, PinnedServer() as server:
        say("ollama", f"{server.version} serving on {server.host}")
        demo_model = write_scripted_gguf(
            Path(folder) / "minimax-demo.gguf",
            CALL,
            after=ANSWER,
            trigger="function_response=functions",
            special_tokens=tokens,
        )
        built = build("minimax", from_=str(demo_model), name="minimax-fc", host=server.host)
        say(
            "built",
            f"{built.name} in {built.seconds:.1f}s over a tiny deterministic test model (not a language "
            "model: it prints a fixed MiniMax tool call, then a fixed answer once it sees the tool result)",
        )
        client = Client(host=server.host)
        say("tool format", f"{client.tool_format(built.name)} (read from the model's template)")
        transcript = run_tools(client, built.name, [{"role": "user", "content": QUESTION}], [get_current_weather])
        say("question", QUESTION)
        for message in transcript[1:]:
            if message["role"] == "assistant" and message.get("tool_calls"):
                for call in message["tool_calls"]:
                    function = call["function"]
                    say("parsed call", f"{function['name']}({json.dumps(dict(function['arguments']))})")
            elif message["role"] == "tool":
                say("tool result", message["content"])
            elif message["role"] == "assistant":
                say("final answer", message["content"])
        roles = [message["role"] for message in transcript]
        if roles != ["user", "assistant", "tool", "assistant"] or not transcript[-1]["content"]:
            print(f"demo: unexpected conversation {roles}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OllamaFcError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        sys.exit(1)
