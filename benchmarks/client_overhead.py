"""Latency of ollama_fc.Client against plain ollama.chat on the same scripted model and server.

Runs alternate (ours, plain, ours, ...) so drift hits both alike; the median latency ratio is
reported (target: at most 1.05). Cases: a call Ollama parses itself (passed through) and a
pythonic call Ollama leaves as text (recovered), each whole and streamed.
Run: python benchmarks/client_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import ollama

from ollama_fc import Client
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.testbed.server import PinnedServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_client_e2e import ASK, HERMES, PLAIN_TOOLS, SPECIALS, TOOLS  # noqa: E402

CASES = {
    "ollama-parsed": (HERMES, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    "recovered": (PLAIN_TOOLS, 'Checking the weather now.\n[get_weather(city="Paris", days=2)]'),
}


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    with PinnedServer() as server, tempfile.TemporaryDirectory() as folder:
        plain = ollama.Client(host=server.host)
        ours = Client(host=server.host)
        print(f"{'case':<15} {'mode':<7} {'plain ms':>9} {'ours ms':>9} {'ratio':>7}")
        for case, (template, script) in CASES.items():
            path = write_scripted_gguf(Path(folder) / f"{case}.gguf", script, special_tokens=SPECIALS)
            model = f"bench-{case}"
            plain.create(model=model, files={path.name: plain.create_blob(path)}, template=template)
            for stream in (False, True):
                def run_plain() -> Any:
                    result = plain.chat(model, ASK, tools=TOOLS, stream=stream)
                    return list(result) if stream else result

                def run_ours() -> Any:
                    result = ours.chat(model, ASK, tools=TOOLS, stream=stream)
                    return list(result) if stream else result

                run_plain(), run_ours()  # warm-up (model load, format lookup)
                plain_times, our_times = [], []
                for _ in range(runs):
                    our_times.append(timed(run_ours))
                    plain_times.append(timed(run_plain))
                p, o = statistics.median(plain_times), statistics.median(our_times)
                print(f"{case:<15} {'stream' if stream else 'whole':<7} {p * 1000:>9.2f} {o * 1000:>9.2f} {o / p:>7.3f}")


if __name__ == "__main__":
    main()
