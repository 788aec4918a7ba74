"""LongCat-Flash: `<longcat_tool_call>{"name": NAME, "arguments": {...}}</longcat_tool_call>`.

Hermes's layout under LongCat's own tag. The last block may be left unclosed at the end of the
reply; prose after a block stays content.

Sources: meituan-longcat/LongCat-Flash-Chat's chat template, vLLM's `longcat_tool_parser.py`
tests, Ollama's `model/parsers/longcatflash.go`.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values_prefix
from .tagged import through_closer

OPEN = "<longcat_tool_call>"
CLOSE = "</longcat_tool_call>"


class LongCatParser(ToolCallParser):
    name = "longcat"
    models = "LongCat-Flash"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True), (OPEN, False))),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        try:
            values, end = read_values_prefix(region[len(OPEN) :])
        except NotALiteral:
            return None
        calls = calls_from_values(values)
        if not calls:
            return None
        end += len(OPEN)
        through = through_closer(region, end, CLOSE)
        return None if through is None else (calls, through)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        found = self.read_prefix(region)
        return found[0] if found and not region[found[1] :].strip() else None
