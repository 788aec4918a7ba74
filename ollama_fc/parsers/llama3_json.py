"""Llama 3.x JSON calls: `{"name": ..., "parameters": {...}}`, optionally after `<|python_tag|>`,
several separated by `;`."""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_value
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
        calls: list[ParsedCall] = []
        for value in values:
            found = calls_from_value(value) if isinstance(value, dict) else None
            if found is None:
                return None
            calls.extend(found)
        return calls
