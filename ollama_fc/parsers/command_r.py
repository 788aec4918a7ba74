"""Command R7B and Command A: `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": NAME,
"parameters": {...}}, ...]<|END_ACTION|>`, usually after a `<|START_THINKING|>` plan.

The plan stays content. The action's closer may be left out at the end of the reply; prose after
it stays content. Command R+'s `Action: ```json [...]```` is the `wrapped` format's.

Sources: Cohere's Command R7B / Command A chat templates and tool-use guide
(docs.cohere.com), Ollama's `model/parsers/commandr.go` tests, llama.cpp's Command R7B chat
parser tests.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_block

OPEN = "<|START_ACTION|>"
CLOSE = "<|END_ACTION|>"


class CommandRParser(ToolCallParser):
    name = "command_r"
    models = "Command R7B, Command A"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        return json_block(region, OPEN, CLOSE)
