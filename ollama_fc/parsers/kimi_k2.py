"""Kimi K2: `<|tool_calls_section_begin|>` around calls
`<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>`,
then `<|tool_calls_section_end|>`.

The call id is `functions.NAME:INDEX`; `NAME:INDEX` without the namespace is read too. A bare
counter (`0`) names no tool, so that call stays text: which tool was meant would be a guess.
Calls without the section tokens, and a section left unclosed at the end of the reply, are read;
prose after the section stays content.

Sources: Kimi-K2-Instruct's chat template and tool-call guide (docs/tool_call_guidance.md in
MoonshotAI/Kimi-K2), vLLM's `kimi_k2_tool_parser.py` tests, SGLang's Kimi K2 detector.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_object_at

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
CALL_END = "<|tool_call_end|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_ID = re.compile(
    r"\s*(?:<\|tool_call_begin\|>)?\s*(?:functions\.)?([A-Za-z_][\w\-.]*):\d+\s*<\|tool_call_argument_begin\|>"
)
CALL_TAIL = re.compile(r"\s*(?:<\|tool_call_end\|>)?")
SECTION_TAIL = re.compile(r"\s*(?:<\|tool_calls_section_end\|>)?")


class KimiK2Parser(ToolCallParser):
    name = "kimi_k2"
    models = "Kimi K2 Instruct, Kimi K2 Thinking"
    markers = (
        Marker(SECTION_BEGIN, "tag", closers=((SECTION_END, True),), in_thinking=True),
        Marker(CALL_BEGIN, "tag", closers=((CALL_END, True),), in_thinking=True),
    )
    tags = (SECTION_BEGIN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        index = len(SECTION_BEGIN) if region.startswith(SECTION_BEGIN) else 0
        calls: list[ParsedCall] = []
        while True:
            head = CALL_ID.match(region, index)
            if head is None:
                break
            found = json_object_at(region, head.end())
            if found is None:
                return None
            arguments, end = found
            calls.append(ParsedCall(head.group(1), arguments))
            index = CALL_TAIL.match(region, end).end()  # type: ignore[union-attr]
        if not calls:
            return None
        return calls, SECTION_TAIL.match(region, index).end()  # type: ignore[union-attr]
