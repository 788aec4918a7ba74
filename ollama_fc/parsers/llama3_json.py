"""Llama 3.x JSON calls: `{"name": ..., "parameters": {...}}`, optionally after `<|python_tag|>`,
several separated by `;`."""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values

PYTHON_TAG = "<|python_tag|>"
END_TOKENS = ("<|eom_id|>", "<|eot_id|>")


class Llama3JsonParser(ToolCallParser):
    name = "llama3_json"
    markers = (
        Marker(PYTHON_TAG, "tag", closers=tuple((token, True) for token in END_TOKENS)),
        Marker("{", "bracket", must_end=True),
    )

    def read_region(self, region: str) -> list[ParsedCall] | None:
        body = region.removeprefix(PYTHON_TAG)
        for token in END_TOKENS:
            body = body.removesuffix(token)
        try:
            values = read_values(body)
        except NotALiteral:
            return None
        if not all(isinstance(value, dict) for value in values):
            return None
        return calls_from_values(values)
