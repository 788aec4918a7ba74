"""InternLM2 / 2.5: `<|action_start|><|plugin|>` then `{"name": NAME, "parameters": {...}}`
and `<|action_end|>`.

`<|action_start|><|interpreter|>` (code for the model's interpreter) is not a function call.
The closer may be left out at the end of the reply; prose after the call stays content.

Sources: InternLM2.5's chat template and agent guide (internlm/internlm2_5-7b-chat), vLLM's
`internlm2_tool_parser.py` tests.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser, calls_from_values
from .lenient import NotALiteral, read_values_prefix
from .tagged import through_closer

OPEN = "<|action_start|>"
CLOSE = "<|action_end|>"
PLUGIN = re.compile(r"<\|action_start\|>\s*<\|plugin\|>\s*")


class InternLMParser(ToolCallParser):
    name = "internlm"
    models = "InternLM2, InternLM2.5"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        head = PLUGIN.match(region)
        if head is None:
            return None
        try:
            values, end = read_values_prefix(region[head.end() :])
        except NotALiteral:
            return None
        calls = calls_from_values(values)
        if not calls:
            return None
        end += head.end()
        through = through_closer(region, end, CLOSE)
        return None if through is None else (calls, through)
