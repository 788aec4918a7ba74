"""Streaming recovery cost against response length: 200,000 vs 20,000 characters, 1-char chunks.

The response mixes prose, bracketed asides, a code sample, thinking and Hermes calls. Linear
work per chunk gives a time ratio near 10; work that grew with the response would give ~100.
Run: python benchmarks/streaming_parse.py
"""

from __future__ import annotations

import statistics
import time

from ollama_fc.parsers import StreamingRecoverer, parsers_for

TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
BLOCK = (
    "The forecast [see note 1] says it's mild; {temperatures} vary.\n"
    "<think>Should I call a tool? Maybe [get_weather(city='x')].</think>\n"
    "```python\nprint(get_weather(city=\"Paris\"))\n```\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "note": "a (b) [c] {d}"}}\n</tool_call>\n'
)


def response(length: int) -> str:
    return (BLOCK * (length // len(BLOCK) + 1))[:length]


def stream_seconds(text: str, format_name: str | None) -> float:
    start = time.perf_counter()
    recoverer = StreamingRecoverer(parsers_for(format_name), TOOLS)
    for char in text:
        recoverer.feed(char)
    recoverer.finish()
    return time.perf_counter() - start


def main() -> None:
    print(f"{'formats':<10} {'20k (s)':>9} {'200k (s)':>9} {'ratio':>7}")
    for format_name in ("hermes", None):
        small = statistics.median(stream_seconds(response(20_000), format_name) for _ in range(3))
        large = statistics.median(stream_seconds(response(200_000), format_name) for _ in range(3))
        print(f"{format_name or 'all':<10} {small:>9.3f} {large:>9.3f} {large / small:>7.2f}")


if __name__ == "__main__":
    main()
