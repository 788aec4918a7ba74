"""Hermes-style `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>` blocks.

Qwen2/2.5, Hermes 2/3 and the Gemma 3 tools template. The last block may be unclosed (prose
after its JSON stays content), the JSON may sit in a Markdown fence, and `arguments` may be a
JSON string. A block holding another shape (a pythonic call) is read as any wrapper's body.

Sources: Qwen2.5's and Hermes 2 Pro's chat templates (NousResearch/Hermes-Function-Calling),
vLLM's `test_hermes_tool_parser.py`, Ollama's `qwen3` parser tests.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values, read_values_prefix, strip_fence
from .wrapped import read_body

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


class HermesParser(ToolCallParser):
    name = "hermes"
    models = "Qwen2 / 2.5 / 3, QwQ, Hermes 2 Pro / 3, Granite 4, ERNIE 4.5, Cogito, MiMo, the Gemma 3 tools template"
    # A second opening tag also ends an unclosed block (it is not part of the region).
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True), (OPEN, False))),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        calls = self.read_region(region)
        if calls:
            return calls, len(region)
        if region.endswith(CLOSE):
            return None
        try:  # unclosed: the JSON right after the tag, then whatever follows is content again
            values, end = read_values_prefix(region[len(OPEN) :])
        except NotALiteral:
            return None
        found = calls_from_values(values)
        return (found, len(OPEN) + end) if found else None

    def read_region(self, region: str) -> list[ParsedCall] | None:
        inner = region[len(OPEN) :].removesuffix(CLOSE)
        try:
            values = read_values(strip_fence(inner))
        except NotALiteral:
            return read_body(inner)
        return calls_from_values(values)
