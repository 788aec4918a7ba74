"""`functools[{"name": ..., "arguments": {...}}, ...]`: the Phi-4-mini seed and Firefunction v2.

There is no closing marker; the list ends where its bracket closes (or at the end of the text).

Sources: Phi-4-mini-instruct's and Firefunction v2's chat templates, vLLM's
`test_phi4mini_tool_parser.py`.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_value
from .lenient import NotALiteral, read_value

MARKER = "functools["


class FunctoolsParser(ToolCallParser):
    name = "functools"
    models = "Phi-4-mini, Firefunction v2"
    markers = (Marker(MARKER, "bracket"),)
    tags = (MARKER,)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        try:
            value = read_value(region[len(MARKER) - 1 :])
        except NotALiteral:
            return None
        if not isinstance(value, list):
            return None
        return calls_from_value(value)
