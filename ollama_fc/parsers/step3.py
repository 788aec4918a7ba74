"""Step-3: `<｜tool_calls_begin｜>` around calls
`<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">` with
`<steptml:parameter name="KEY">VALUE</steptml:parameter>` elements, `</steptml:invoke>`, then
`<｜tool_call_end｜>`, and `<｜tool_calls_end｜>`.

Values are raw text, typed by the tool's schema (raw_values.py). The name may also follow
`function<｜tool_sep｜>` or be left out there, and parallel calls may be joined by
`<｜tool_sep｜>`. A block left unclosed at the end of the reply is read; a call without the
block tokens is not (as Step-3's own parser reads it); prose after the block stays content.
Step-3.5 writes Qwen3-Coder's `<tool_call><function=...>` instead (the `hermes` and `wrapped`
formats read it).

Sources: stepfun-ai/step3's chat template, vLLM's `step3_tool_parser.py` tests, SGLang's Step3
detector.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import InvokeSyntax, read_invokes

CALLS_BEGIN = "<｜tool_calls_begin｜>"
CALLS_END = "<｜tool_calls_end｜>"
CALL_END = "<｜tool_call_end｜>"
# A call: `<｜tool_call_begin｜>`, then `function<｜tool_sep｜>` (and the name again) or nothing,
# then the invoke; parallel calls may be joined by `<｜tool_sep｜>`.
CALL_HEAD = re.compile(
    r"\s*(?:<｜tool_sep｜>\s*)?<｜tool_call_begin｜>\s*(?:(?:function)?\s*<｜tool_sep｜>\s*(?:[A-Za-z_][\w\-.]*\s*)?)?"
)
CALL_TAIL = re.compile(r"\s*<｜tool_call_end｜>")
BLOCK_TAIL = re.compile(r"\s*(?:<｜tool_calls_end｜>)?")
SYNTAX = InvokeSyntax(
    '<steptml:invoke name="', "</steptml:invoke>", '<steptml:parameter name="', "</steptml:parameter>"
)


class Step3Parser(ToolCallParser):
    name = "step3"
    models = "Step-3"
    markers = (Marker(CALLS_BEGIN, "tag", closers=((CALLS_END, True),)),)
    tags = (CALLS_BEGIN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        index = len(CALLS_BEGIN) if region.startswith(CALLS_BEGIN) else 0
        calls: list[ParsedCall] = []
        while True:
            head = CALL_HEAD.match(region, index)
            if head is None:
                break
            found = read_invokes(region, head.end(), SYNTAX, CALL_END)
            if found is None:
                return None
            calls.extend(found[0])
            tail = CALL_TAIL.match(region, found[1])
            if tail is None:
                return None
            index = tail.end()
        if not calls:
            return None
        return calls, BLOCK_TAIL.match(region, index).end()  # type: ignore[union-attr]
