"""Hermes-style `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>` blocks.

Qwen2/2.5, Hermes 2/3 and the Gemma 3 tools template. The last block may be unclosed, the JSON
may sit in a Markdown fence, and `arguments` may be a JSON string.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values, strip_fence

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


class HermesParser(ToolCallParser):
    name = "hermes"
    # A second opening tag also ends an unclosed block (it is not part of the region).
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True), (OPEN, False))),)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        inner = region[len(OPEN) :]
        if inner.endswith(CLOSE):
            inner = inner[: -len(CLOSE)]
        try:
            values = read_values(strip_fence(inner))
        except NotALiteral:
            return None
        return calls_from_values(values)
