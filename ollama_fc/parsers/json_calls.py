"""Bare or fenced JSON: a `{"name": ..., "arguments": {...}}` object, a list of them, one object
per line, or an envelope `{"tool_calls": [...]}` / `{"function_call": {...}}`.

JSON has no marker, so it counts only as the last thing in the output (see `runs.py`). A
```` ```json ```` block holding another shape is read as any wrapper's body.

Sources: vLLM's `test_xlam_tool_parser.py`, outputs of Hermes-prompted models quoted in the
output corpus.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values, strip_fence
from .wrapped import read_body


class JsonCallsParser(ToolCallParser):
    name = "json"
    models = "xLAM, Hammer, any model asked for JSON calls"
    markers = (
        Marker("{", "bracket", must_end=True),
        Marker("[", "bracket", must_end=True),
        Marker("```json", "fence", must_end=True),
    )

    def read_region(self, region: str) -> list[ParsedCall] | None:
        body = strip_fence(region)
        try:
            values = read_values(body)
        except NotALiteral:
            return read_body(body) if region.startswith("```") else None
        return calls_from_values(values)
