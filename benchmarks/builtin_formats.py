"""The built-in tool-call formats, as docs/FORMATS.md lists them (benchmarks/learned_formats.py
writes the section): for each format in the order it is tried, the models that write it, its
shape (its module's first paragraph), the tags that select it, its public sources (its module's
`Sources:` paragraph) and its records in tests/data/model_outputs.
"""

from __future__ import annotations

import inspect
import json
from collections import Counter
from pathlib import Path

from ollama_fc.parsers import PARSERS

RECORDS = Path(__file__).resolve().parent.parent / "tests" / "data" / "model_outputs"


def _paragraphs(doc: str) -> list[str]:
    return [" ".join(block.split()) for block in doc.strip().split("\n\n") if block.strip()]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def record_counts() -> dict[str, Counter[str]]:
    """Per format: records that hold calls, records that hold none, and real ones."""
    counts: dict[str, Counter[str]] = {}
    for path in sorted(RECORDS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                count = counts.setdefault(record["format"], Counter())
                count["calls" if record["expected"]["calls"] else "none"] += 1
                count["real"] += record["source"] != "constructed"
    return counts


def builtin_section() -> list[str]:
    counts = record_counts()
    lines = [
        "## Built-in formats",
        "",
        "Every format below is read by `parse_tool_calls`, the client and the proxy without a learned",
        "format. A named format (`format=`, the template's tag, the TEMPLATE's comment) is tried first,",
        "then every other one in this order; with no format known, all of them in this order (the",
        "formats of the current generation after the earlier ones, so what was read before reads the",
        "same). Each is streamed exactly as it is read whole (tests/test_parsers_common.py and each",
        "format's tests/test_parsers_<format>.py, which reads its records in chunks of 1 to 9",
        "characters). `records` counts its records in tests/data/model_outputs (with calls / without /",
        "quoted from a public source).",
        "",
        "| format | models | shape | tags | sources | records |",
        "|---|---|---|---|---|---|",
    ]
    for name, parser in PARSERS.items():
        module = inspect.getmodule(type(parser))
        paragraphs = _paragraphs((module.__doc__ if module else "") or "")
        shape = paragraphs[0] if paragraphs else ""
        sources = next((p.removeprefix("Sources:").strip() for p in paragraphs if p.startswith("Sources:")), "")
        tags = ", ".join(f"`{_cell(tag)}`" for tag in parser.tags)
        count = counts.get(name, Counter())
        lines.append(
            f"| `{name}` | {_cell(parser.models)} | {_cell(shape)} | {tags} | {_cell(sources)} | "
            f"{count['calls']} / {count['none']} / {count['real']} |"
        )
    return lines + [""]


if __name__ == "__main__":
    print("\n".join(builtin_section()))
