"""Llama 3.x JSON calls: `{"name": ..., "parameters": {...}}`, optionally after `<|python_tag|>`,
several separated by `;`. After `<|python_tag|>` a pythonic call or a built-in tool's
`brave_search.call(query="...")` is read too.

Sources: Llama 3.1's model card (prompt format), vLLM's `test_llama3_json_tool_parser.py`.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values, read_values_prefix
from .wrapped import read_body

PYTHON_TAG = "<|python_tag|>"
END_TOKENS = ("<|eom_id|>", "<|eot_id|>")


class Llama3JsonParser(ToolCallParser):
    name = "llama3_json"
    models = "Llama 3.1 / 3.2 / 3.3, Nemotron 70B"
    markers = (
        Marker(PYTHON_TAG, "tag", closers=tuple((token, True) for token in END_TOKENS)),
        Marker("{", "bracket", must_end=True),
    )
    tags = (PYTHON_TAG,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        calls = self.read_region(region)
        if calls:
            return calls, len(region)
        if not region.startswith(PYTHON_TAG) or region.endswith(END_TOKENS):
            return None
        try:  # unclosed: the JSON right after the tag, then whatever follows is content again
            values, end = read_values_prefix(region[len(PYTHON_TAG) :])
        except NotALiteral:
            return None
        if not all(isinstance(value, dict) for value in values):
            return None
        found = calls_from_values(values)
        return (found, len(PYTHON_TAG) + end) if found else None

    def read_region(self, region: str) -> list[ParsedCall] | None:
        tagged = region.startswith(PYTHON_TAG)
        body = region.removeprefix(PYTHON_TAG)
        for token in END_TOKENS:
            body = body.removesuffix(token)
        try:
            values = read_values(body)
        except NotALiteral:
            return read_body(body) if tagged else None
        if not all(isinstance(value, dict) for value in values):
            return None
        return calls_from_values(values)
