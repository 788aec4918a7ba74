"""Latency of ollama_fc.Client against plain ollama.chat on the same scripted model and server.

Calls alternate (ours, plain, plain, ours, ...) for a fixed time per case, so drift, load from
other processes and any effect of going first hit both alike. Both get the same tool dicts
(given Python functions, ollama-python's own conversion costs ~0.8 ms a call and ours ~0.07 ms,
which would flatter us). Scripts are a few tokens long, so a call is mostly Ollama's own work.

Reported per case: the median of the paired latency ratios (target: at most 1.05) with its
5-95% range over bootstrap resamples, and our post-processing of one response measured directly
in this process: the most the ratio could truly show above 1.
Cases: a call Ollama parses itself (passed through) and a pythonic call Ollama leaves as text
(recovered), each whole and streamed.
Run: python -m benchmarks.client_overhead [--seconds S] [--host URL]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ollama

from benchmarks.table import Row, median_ratio_spread, print_table
from ollama_fc import Client
from ollama_fc.functions import function_to_tool
from ollama_fc.recovery import StreamRewriter, offer, recover_response
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.testbed.server import PinnedServer
from tests.test_client_e2e import ASK, HERMES, PLAIN_TOOLS, SPECIALS
from tests.test_client_e2e import TOOLS as FUNCTIONS

TOOLS = [function_to_tool(function) for function in FUNCTIONS]

CASES = {
    "ollama-parsed": (HERMES, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    "recovered": (PLAIN_TOOLS, '[get_weather(city="Paris")]'),
}
MAX_RUNS = 400


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def alternate(ours: Callable[[], Any], plain: Callable[[], Any], seconds: float) -> tuple[list[float], list[float]]:
    """Paired timings in ABBA order until `seconds` have passed (at least 20 pairs)."""
    our_times: list[float] = []
    plain_times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(our_times) < MAX_RUNS and (len(our_times) < 20 or time.perf_counter() < deadline):
        if len(our_times) % 2:
            plain_times.append(timed(plain))
            our_times.append(timed(ours))
        else:
            our_times.append(timed(ours))
            plain_times.append(timed(plain))
    return our_times, plain_times


def post_processing_ms(client: Client, model: str, response: Any, stream: bool, repeats: int = 300) -> float:
    """Our work on one response of plain ollama (tools, recovery or stream rewriting), per response."""
    format_name = client.tool_format(model)

    def once() -> None:
        offered = offer(TOOLS, None)
        if stream:
            rewriter = StreamRewriter(offered, format_name, True)
            for chunk in response:
                rewriter.rewrite(chunk)
        else:
            recover_response(response.model_copy(deep=True), offered, format_name, True)

    copying = (
        0.0 if stream else statistics.median(timed(lambda: response.model_copy(deep=True)) for _ in range(repeats))
    )
    return (statistics.median(timed(once) for _ in range(repeats)) - copying) * 1000


@contextlib.contextmanager
def server_host(host: str | None) -> Iterator[str]:
    if host:
        yield host
        return
    with PinnedServer() as server:
        yield server.host


def measure(seconds_per_case: float = 15.0, host: str | None = None) -> list[Row]:
    rows = []
    with server_host(host) as url, tempfile.TemporaryDirectory() as folder:
        plain = ollama.Client(host=url)
        ours = Client(host=url)
        for case, (template, script) in CASES.items():
            path = write_scripted_gguf(Path(folder) / f"{case}.gguf", script, special_tokens=SPECIALS)
            model = f"ofc-bench-{case}"
            plain.create(model=model, files={path.name: plain.create_blob(path)}, template=template)
            for stream in (False, True):

                def run_plain() -> Any:
                    result = plain.chat(model, ASK, tools=TOOLS, stream=stream)
                    return list(result) if stream else result

                def run_ours() -> Any:
                    result = ours.chat(model, ASK, tools=TOOLS, stream=stream)
                    return list(result) if stream else result

                run_plain(), run_ours()  # warm-up: model load, the one `show` for the format
                our_times, plain_times = alternate(run_ours, run_plain, seconds_per_case)
                ratio, low, high = median_ratio_spread(our_times, plain_times)
                ours_ms = post_processing_ms(ours, model, run_plain(), stream)
                rows.append(
                    Row(
                        f"client/plain ollama.chat, {case}, {'streamed' if stream else 'whole'}",
                        f"{statistics.median(our_times) * 1000:.1f} ms",
                        f"{statistics.median(plain_times) * 1000:.1f} ms",
                        ratio,
                        f"90% {low:.2f}-{high:.2f} over {len(our_times)} pairs; our post-processing "
                        f"{ours_ms:.3f} ms = {ours_ms / (statistics.median(plain_times) * 1000):.1%}",
                    )
                )
            plain.delete(model)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="alternating runs per case (default 15)")
    parser.add_argument("--host", help="an Ollama already running (default: start the pinned one)")
    args = parser.parse_args()
    print_table(measure(args.seconds, args.host))
