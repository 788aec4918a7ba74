"""LongCat-Flash: `<longcat_tool_call>{"name": NAME, "arguments": {...}}</longcat_tool_call>`.

Hermes's layout under LongCat's own tag. The last block may be left unclosed at the end of the
reply; prose after a block stays content.

Sources: meituan-longcat/LongCat-Flash-Chat's chat template, vLLM's `longcat_tool_parser.py`
tests, Ollama's `model/parsers/longcatflash.go`.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_block

OPEN = "<longcat_tool_call>"
CLOSE = "</longcat_tool_call>"


class LongCatParser(ToolCallParser):
    name = "longcat"
    models = "LongCat-Flash"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True), (OPEN, False))),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        return json_block(region, OPEN, CLOSE)
