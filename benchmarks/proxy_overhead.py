"""What `ollama-fc serve` costs an app: latency, time to the first streamed byte, and memory.

The proxy runs as a user runs it (`ollama-fc serve`, its own process) in front of the pinned
Ollama, with scripted models that answer in milliseconds, so the proxy's share is as large as
it can be. An app-like client (httpx, one kept-alive connection to each) sends the same
request to Ollama and to the proxy, alternating (proxy, direct, direct, proxy, ...) so load
from other processes hits both alike.

Rows:
- latency, per endpoint and case: median of the paired ratios proxy/direct (target: at most
  1.05) with the 5-95% range of that median over bootstrap resamples. Cases: a call Ollama
  leaves as text (recovered by the proxy), a call Ollama parses itself (passed through), and
  a chat without tools (forwarded unchanged).
- time to first byte of a streamed answer: medians, and the median of the paired differences
  (target: at most 2 ms added).
- memory: the proxy process's resident set size after 1,000 and after 10,000 requests (both
  APIs, streamed and not, each with a call to recover, 8 at a time), sampled from /proc every
  500 requests.

Run: python benchmarks/proxy_overhead.py [--seconds S] [--requests N] [--host URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import ollama  # noqa: E402
from client_overhead import CASES, server_host  # noqa: E402
from table import Row, median_ratio_spread, print_table  # noqa: E402
from test_client_e2e import ASK, SPECIALS  # noqa: E402
from test_client_e2e import TOOLS as FUNCTIONS  # noqa: E402

from ollama_fc.functions import function_to_tool  # noqa: E402
from ollama_fc.testbed.scripted import write_scripted_gguf  # noqa: E402
from ollama_fc.testbed.server import free_port  # noqa: E402

TOOLS = [function_to_tool(function) for function in FUNCTIONS]
MAX_PAIRS = 400


@contextlib.contextmanager
def proxy_process(upstream: str) -> Iterator[tuple[str, int]]:
    """`ollama-fc serve` in front of `upstream`: its URL and process id."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("ollama-fc")), "serve", "--port", str(port), "--upstream", upstream]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("ollama-fc serve: http://"):
            break
    else:
        raise RuntimeError(f"ollama-fc serve exited with status {process.wait()}")
    # Keep reading what it prints, so a full pipe never blocks it.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request(path: str, model: str, stream: bool, tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": ASK, "stream": stream}
    if tools:
        body["tools"] = TOOLS
    return body


def whole(client: httpx.Client, path: str, body: dict[str, Any]) -> float:
    start = time.perf_counter()
    response = client.post(path, json=body)
    response.raise_for_status()
    return time.perf_counter() - start


def first_byte(client: httpx.Client, path: str, body: dict[str, Any]) -> tuple[float, float]:
    """Seconds to the first byte of the streamed body, and to its end."""
    start = time.perf_counter()
    with client.stream("POST", path, json=body) as response:
        response.raise_for_status()
        chunks = response.iter_raw()
        next(chunks)
        first = time.perf_counter() - start
        for _ in chunks:
            pass
    return first, time.perf_counter() - start


def paired(ours: Callable[[], Any], direct: Callable[[], Any], seconds: float) -> tuple[list[Any], list[Any]]:
    """Paired results in ABBA order until `seconds` have passed (at least 20 pairs)."""
    our_results: list[Any] = []
    direct_results: list[Any] = []
    deadline = time.perf_counter() + seconds
    while len(our_results) < MAX_PAIRS and (len(our_results) < 20 or time.perf_counter() < deadline):
        if len(our_results) % 2:
            direct_results.append(direct())
            our_results.append(ours())
        else:
            our_results.append(ours())
            direct_results.append(direct())
    return our_results, direct_results


def progress(message: str) -> None:
    print(f"[proxy_overhead] {message}", file=sys.stderr, flush=True)


def latency_row(label: str, ours: list[float], direct: list[float]) -> Row:
    progress(f"measured {label}")
    ratio, low, high = median_ratio_spread(ours, direct)
    added = statistics.median(o - d for o, d in zip(ours, direct)) * 1000
    return Row(
        f"proxy/direct, {label}",
        f"{statistics.median(ours) * 1000:.1f} ms",
        f"{statistics.median(direct) * 1000:.1f} ms",
        ratio,
        f"90% {low:.2f}-{high:.2f} over {len(ours)} pairs; median paired difference {added:+.2f} ms",
    )


async def soak(proxy: str, pid: int, models: dict[str, str], total: int, every: int = 500) -> list[tuple[int, float]]:
    """`total` requests through the proxy, 8 at a time, cycling through both APIs streamed and
    not, each with a call to recover (one model: switching models would make Ollama reload
    runners); the proxy's RSS in MB after each `every` requests."""
    kinds = [(path, "recovered", stream) for path in ("/api/chat", "/v1/chat/completions") for stream in (False, True)]
    samples: list[tuple[int, float]] = []
    done = 0
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=proxy, timeout=120) as client:

        async def one(index: int) -> None:
            path, case, stream = kinds[index % len(kinds)]
            try:
                response = await client.post(path, json=request(path, models[case], stream))
                response.raise_for_status()
            except httpx.HTTPError as error:  # counted and reported, so one stall does not end the run
                failures.append(f"{path} stream={stream}: {type(error).__name__}")

        while done < total:
            batch = min(every, total - done)
            for start in range(done, done + batch, 8):
                await asyncio.gather(*(one(index) for index in range(start, min(start + 8, done + batch))))
            done += batch
            samples.append((done, rss_mb(pid)))
            progress(f"soak: {done:,} requests, proxy RSS {samples[-1][1]:.1f} MB")
    for failure in failures:
        progress(f"soak: failed: {failure}")
    return samples


def measure(seconds_per_case: float = 10.0, requests: int = 10_000, host: str | None = None) -> list[Row]:
    rows = []
    with (
        server_host(host) as upstream,
        tempfile.TemporaryDirectory() as folder,
        proxy_process(upstream) as (
            proxy,
            pid,
        ),
    ):
        creator = ollama.Client(host=upstream)
        models = {}
        for case, (template, script) in CASES.items():
            path = write_scripted_gguf(Path(folder) / f"{case}.gguf", script, special_tokens=SPECIALS)
            models[case] = f"ofc-proxy-bench-{case}"
            creator.create(model=models[case], files={path.name: creator.create_blob(path)}, template=template)
        with httpx.Client(base_url=proxy, timeout=120) as via, httpx.Client(base_url=upstream, timeout=120) as direct:
            for path in ("/api/chat", "/v1/chat/completions"):
                for case, model in models.items():
                    body = request(path, model, stream=False)
                    whole(via, path, body), whole(direct, path, body)  # warm-up: model load, the proxy's `show`
                    ours, theirs = paired(
                        lambda: whole(via, path, body), lambda: whole(direct, path, body), seconds_per_case
                    )
                    rows.append(latency_row(f"{path}, {case}, whole", ours, theirs))
            plain = request("/api/chat", models["recovered"], stream=False, tools=False)
            ours, theirs = paired(
                lambda: whole(via, "/api/chat", plain), lambda: whole(direct, "/api/chat", plain), seconds_per_case
            )
            rows.append(latency_row("/api/chat, no tools (forwarded), whole", ours, theirs))
            for path in ("/api/chat", "/v1/chat/completions"):
                body = request(path, models["recovered"], stream=True)
                ours_pairs, theirs_pairs = paired(
                    lambda: first_byte(via, path, body), lambda: first_byte(direct, path, body), seconds_per_case
                )
                ours = [first for first, _ in ours_pairs]
                theirs = [first for first, _ in theirs_pairs]
                added = statistics.median(o - d for o, d in zip(ours, theirs)) * 1000
                ratio, low, high = median_ratio_spread(ours, theirs)
                rows.append(
                    Row(
                        f"proxy/direct, {path}, recovered, streamed: first byte",
                        f"{statistics.median(ours) * 1000:.2f} ms",
                        f"{statistics.median(theirs) * 1000:.2f} ms",
                        ratio,
                        f"adds {added:+.2f} ms (median paired difference; target <= 2 ms); 90% {low:.2f}-{high:.2f}",
                    )
                )
                rows.append(
                    latency_row(
                        f"{path}, recovered, streamed: whole stream",
                        [total for _, total in ours_pairs],
                        [total for _, total in theirs_pairs],
                    )
                )
        cpu_before = cpu_seconds(pid)
        samples = asyncio.run(soak(proxy, pid, models, requests))
        cpu_per_request = (cpu_seconds(pid) - cpu_before) / requests * 1000
        after_warmup = next(rss for count, rss in samples if count >= min(1000, requests))
        final = samples[-1][1]
        trace = ", ".join(f"{rss:.1f}" for _, rss in samples)
        rows.append(
            Row(
                f"proxy RSS after {requests:,} / after {min(1000, requests):,} requests",
                f"{final:.1f} MB",
                f"{after_warmup:.1f} MB",
                final / after_warmup,
                f"{final - after_warmup:+.1f} MB; proxy CPU {cpu_per_request:.2f} ms per request; "
                f"RSS every 500 requests: {trace}",
            )
        )
        for model in models.values():
            creator.delete(model)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="alternating runs per case (default 10)")
    parser.add_argument("--requests", type=int, default=10_000, help="requests of the memory soak (default 10,000)")
    parser.add_argument("--host", help="an Ollama already running (default: start the pinned one)")
    args = parser.parse_args()
    if "OLLAMA_HOST" in os.environ and not args.host:
        print("note: starting the pinned Ollama; pass --host to measure against OLLAMA_HOST", file=sys.stderr)
    print_table(measure(args.seconds, args.requests, args.host))
