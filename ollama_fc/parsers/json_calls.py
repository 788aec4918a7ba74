"""Bare or fenced JSON: a `{"name": ..., "arguments": {...}}` object, a list of them, several
objects in a row, or a wrapper `{"tool_calls": [...]}` / `{"tool_call": {...}}`.

JSON has no marker, so it counts only as the last thing in the output.
"""

from __future__ import annotations

from typing import Any

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values, strip_fence


class JsonCallsParser(ToolCallParser):
    name = "json"
    markers = (
        Marker("{", "bracket", must_end=True),
        Marker("[", "bracket", must_end=True),
        Marker("```json", "fence", must_end=True),
    )

    def read_region(self, region: str) -> list[ParsedCall] | None:
        try:
            values = read_values(strip_fence(region))
        except NotALiteral:
            return None
        return calls_from_values(map(_unwrap, values))


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        inner = value.get("tool_calls", value.get("tool_call"))
        if inner is not None:
            return inner
    return value
