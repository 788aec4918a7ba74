"""Recovery time against text length on the worst inputs we know: 80,000 against 40,000 characters.

Each shape repeats something that starts a call region and then fails (or succeeds) many times:
repeated markers, citations, brackets that never close, deep nesting, code full of brackets.
Linear work gives a ratio of 2; work that grew with the text seen so far would give 4. Both
whole-text parsing (format=None, tools offered) and streaming in 7-character chunks are timed,
and a 120 KB code-heavy reply is timed on its own (the target is under 50 ms). Each time is the
best of five runs of CPU time (time.process_time: time spent waiting for a core on a shared
machine does not count), the two lengths interleaved.

Per character, the whole-text time of every shape at 40,000 characters is also set against
ordinary replies': the replies of the output corpus (tests/data/model_outputs, what models print,
each parsed with the tools it was given), their CPU time over their characters. The target is
within 10 times. Each shape is also set against 40,000 characters of prose with one call at the
end, which costs the scanner's skip over prose only (reported, no target). The densest shapes are
every marker of every format one after another, bare and each followed by a call cut inside a
string.
Run: python -m benchmarks.linear_time
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.table import Row, print_table
from ollama_fc.parsers import PARSERS, StreamingRecoverer, parse_tool_calls, parsers_for
from ollama_fc.parsers.base import ToolsArg

TOOLS = [{"type": "function", "function": {"name": name}} for name in ("get_weather", "search")]
SMALL, LARGE = 40_000, 80_000
CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def repeat(unit: str) -> Callable[[int], str]:
    return lambda length: (unit * (length // len(unit) + 1))[:length]


def citations(length: int) -> str:
    parts: list[str] = []
    total = 0
    number = 1
    while total < length:
        part = f"[{number}], "
        parts.append(part)
        total += len(part)
        number += 1
    return "".join(parts)[:length]


def nested(length: int) -> str:
    return "[" * (length // 2) + "]" * (length // 2)


CODE_BLOCK = """Here is the module:

```python
def merge(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {key: [*value] for key, value in a.items()}
    for key, value in b.items():
        out.setdefault(key, []).extend(x for x in value if x not in out[key])
    return {k: sorted(v) for k, v in out.items() if v}  # [1], {2}
```

And the JavaScript side: `const f = (x) => ({ ...x, items: [x.a, [x.b]] });` then
```js
export function walk(node, seen = new Set()) { if (seen.has(node)) { return []; }
  seen.add(node); return [node, ...(node.children ?? []).flatMap((c) => walk(c, seen))]; }
```
The JSON config {"retries": 3, "paths": ["a", "b"]} goes in settings [see note 2].
"""

EVERY_MARKER = [
    marker.text.replace("{name}", "get_weather") for parser in PARSERS.values() for marker in parser.markers
]
ORDINARY = (
    "The forecast for Paris shows mild weather this week, with light winds from the west and highs "
    "around 21 degrees; rain is likely on Thursday evening, so an umbrella would help.\n"
)


def ordinary_reply(length: int) -> str:
    """Prose, then one call at its end: what most replies look like."""
    return repeat(ORDINARY)(max(0, length - len(CALL))) + CALL


SHAPES: dict[str, Callable[[int], str]] = {
    '"[x] " * n': repeat("[x] "),
    '"{x} " * n': repeat("{x} "),
    '"[TOOL_CALLS]" * n': repeat("[TOOL_CALLS]"),
    "citations [1], [2], ...": citations,
    "deep nesting [[[...]]]": nested,
    '"{" * n (never closed)': repeat("{"),
    '"{[x] " * n': repeat("{[x] "),
    '"<tool_call>" * n': repeat("<tool_call>"),
    '"<|python_tag|>" * n': repeat("<|python_tag|>"),
    '"<function_call>" * n': repeat("<function_call>"),
    '"```json " * n': repeat("```json "),
    '"```\\n" * n': repeat("```\n"),
    '"Action: " * n': repeat("Action: "),
    '"get_weather(" * n': repeat("get_weather("),
    '"functools[" * n': repeat("functools["),
    '"<think>" * n': repeat("<think>"),
    '"`<tool_call>" * n (inline code spans)': repeat("`<tool_call>"),
    '"<|channel|>" * n': repeat("<|channel|>"),
    '"<invoke name=" * n': repeat('<invoke name="get_weather">'),
    "a call then prose, repeated": repeat(CALL + " and then "),
    "calls one per line": repeat(CALL + "\n"),
    "'[\"a\", ' * n (unclosed)": repeat('["a", '),
    "code-heavy reply": repeat(CODE_BLOCK),
    "every marker of every format": repeat(" ".join(EVERY_MARKER) + " "),
    "every marker, each with a cut call": repeat(
        " ".join(marker + '{"name": "get_weather", "arguments": {"city": "Pa' for marker in EVERY_MARKER) + " "
    ),
    "prose with one call at its end": ordinary_reply,
}


OUTPUT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "model_outputs"


def whole_seconds(text: str, tools: ToolsArg = TOOLS) -> float:
    start = time.process_time()
    parse_tool_calls(text, tools=tools)
    return time.process_time() - start


def corpus_replies() -> list[tuple[str, ToolsArg]]:
    """The output corpus's replies, each with the tools it was given."""
    replies = []
    for path in sorted(OUTPUT_CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                tools = [{"type": "function", "function": tool} for tool in record["tools"]] or None
                replies.append((record["text"], tools))
    return replies


def ordinary_seconds_per_char(repeats: int) -> float:
    """CPU per character over the corpus's replies, each timed at its best of `repeats`."""
    replies = corpus_replies()
    seconds = sum(min(whole_seconds(text, tools) for _ in range(repeats)) for text, tools in replies)
    return seconds / sum(len(text) for text, _ in replies)


def stream_seconds(text: str) -> float:
    start = time.process_time()
    recoverer = StreamingRecoverer(parsers_for(None), TOOLS)
    for offset in range(0, len(text), 7):
        recoverer.feed(text[offset : offset + 7])
    recoverer.finish()
    return time.process_time() - start


def _best_pair(measure: Callable[[str], float], small_text: str, large_text: str, repeats: int) -> tuple[float, float]:
    small, large = [], []
    for _ in range(repeats):
        small.append(measure(small_text))
        large.append(measure(large_text))
    return min(small), min(large)


def measure(repeats: int = 5, shapes: dict[str, Callable[[int], str]] = SHAPES) -> list[Row]:
    """One row per shape and mode: the 80k time against the 40k time."""
    rows = []
    per_char: dict[str, float] = {}
    for label, make in shapes.items():
        small_text, large_text = make(SMALL), make(LARGE)
        for mode, measure_one in (("whole", whole_seconds), ("stream", stream_seconds)):
            small, large = _best_pair(measure_one, small_text, large_text, repeats)
            if mode == "whole":
                per_char[label] = small / SMALL
            rows.append(
                Row(
                    f"linear time 80k/40k, {label}, {mode}",
                    f"{large * 1e3:.1f} ms",
                    f"{small * 1e3:.1f} ms",
                    large / small,
                    "linear = 2; target <= 2.2",
                )
            )
    prose = (
        per_char.get("prose with one call at its end")
        or min(whole_seconds(ordinary_reply(SMALL)) for _ in range(repeats)) / SMALL
    )
    ordinary = ordinary_seconds_per_char(repeats)
    rows.append(
        Row(
            f"per character, the output corpus's {len(corpus_replies())} replies",
            f"{ordinary * 1e6:.3f} us",
            f"{prose * 1e6:.3f} us",
            ordinary / prose,
            "against 40k of prose with one call at its end",
        )
    )
    for label, seconds_per_char in per_char.items():
        rows.append(
            Row(
                f"per character (whole, 40k), {label}",
                f"{seconds_per_char * 1e6:.3f} us",
                f"{ordinary * 1e6:.3f} us",
                seconds_per_char / ordinary,
                f"against ordinary replies; target <= 10 ({seconds_per_char / prose:.0f}x 40k of prose)",
            )
        )
    reply = repeat(CODE_BLOCK)(120_000)
    seconds = min(whole_seconds(reply) for _ in range(repeats))
    rows.append(
        Row(
            "120 KB code-heavy reply, whole text",
            f"{seconds * 1e3:.1f} ms",
            "50 ms",
            seconds / 0.05,
            "target: under 50 ms",
        )
    )
    return rows


if __name__ == "__main__":
    print_table(measure())
