"""The records a built-in format's tests read: tests/data/model_outputs/<format>.parser.jsonl.

Each record quotes a model output from a public parser test or report (its `source`, a URL) or
is constructed after one (`source: "constructed"`, with what it tests in `note`), with the calls
a caller must get back and the content left. The output corpus (tests/test_output_corpus.py)
reads the same files; here each format's test asserts its own records: named, with no format
given (every shape tried), and streamed in chunks of every size from 1 to 9 characters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ollama_fc import parse_tool_calls
from ollama_fc.parsers import StreamingRecoverer, parsers_for

DATA = Path(__file__).resolve().parent / "data" / "model_outputs"


def format_records(format_name: str) -> list[dict[str, Any]]:
    path = DATA / f"{format_name}.parser.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def record_id(record: dict[str, Any]) -> str:
    return str(record["id"])


def tool_dicts(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": spec["name"],
                "parameters": spec.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for spec in record["tools"]
    ]


def _calls(calls: Any) -> list[tuple[str, str]]:
    return [(call.name, json.dumps(call.arguments, sort_keys=True)) for call in calls]


def check_record(record: dict[str, Any], format_name: str | None) -> None:
    """The record's calls and content come back, whole and streamed in chunks of 1 to 9."""
    tools = tool_dicts(record)
    expected = [(call["name"], json.dumps(call["arguments"], sort_keys=True)) for call in record["expected"]["calls"]]
    result = parse_tool_calls(record["text"], format=format_name, tools=tools)
    assert _calls(result.tool_calls) == expected
    assert " ".join(result.content.split()) == " ".join(record["expected"]["content"].split())
    text = record["text"]
    for size in range(1, 10):
        recoverer = StreamingRecoverer(parsers_for(format_name), tools)
        pieces = [piece for start in range(0, len(text), size) for piece in recoverer.feed(text[start : start + size])]
        pieces += recoverer.finish()
        streamed = [call for piece in pieces if not isinstance(piece, str) for call in piece]
        assert _calls(streamed) == expected, f"chunks of {size}"
        content = "".join(piece for piece in pieces if isinstance(piece, str))
        assert " ".join(content.split()) == " ".join(result.content.split()), f"chunks of {size}"
