"""Streaming recovery cost against response length: 200,000 vs 20,000 characters, 1-char chunks.

The response mixes prose, bracketed asides, a code sample, thinking and Hermes calls. Work per
chunk that does not grow with the response gives a time ratio near 10; work that grew with it
would give ~100. Times are CPU time (time.process_time), which waiting for a core does not inflate.
Run: python -m benchmarks.streaming_parse
"""

from __future__ import annotations

import time

from benchmarks.table import Row, print_table
from ollama_fc.parsers import StreamingRecoverer, parsers_for

TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
BLOCK = (
    "The forecast [see note 1] says it's mild; {temperatures} vary.\n"
    "<think>Should I call a tool? Maybe [get_weather(city='x')].</think>\n"
    '```python\nprint(get_weather(city="Paris"))\n```\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "note": "a (b) [c] {d}"}}\n</tool_call>\n'
)
SMALL, LARGE = 20_000, 200_000


def response(length: int) -> str:
    return (BLOCK * (length // len(BLOCK) + 1))[:length]


def stream_seconds(text: str, format_name: str | None) -> float:
    start = time.process_time()
    recoverer = StreamingRecoverer(parsers_for(format_name), TOOLS)
    for char in text:
        recoverer.feed(char)
    recoverer.finish()
    return time.process_time() - start


def measure(repeats: int = 5) -> list[Row]:
    """One row per format setting: the 200k stream's time against the 20k stream's."""
    rows = []
    for format_name in ("hermes", None):
        times = [
            (stream_seconds(response(SMALL), format_name), stream_seconds(response(LARGE), format_name))
            for _ in range(repeats)
        ]
        small = min(pair[0] for pair in times)  # best of the interleaved runs: noise only adds time
        large = min(pair[1] for pair in times)
        rows.append(
            Row(
                f"streaming 200k/20k chars, 1-char chunks ({format_name or 'all formats'})",
                f"{large:.3f} s",
                f"{small:.3f} s",
                large / small,
                f"linear = 10; {large / LARGE * 1e6:.2f} µs per chunk",
            )
        )
    return rows


if __name__ == "__main__":
    print_table(measure())
