"""MiniMax M2: `<minimax:tool_call>` around `<invoke name="NAME">` elements, each holding
`<parameter name="KEY">VALUE</parameter>` elements.

Values are raw text, typed by the tool's schema as MiniMax's own parser types them
(raw_values.py). The same elements without the block, the
block unclosed at the end of the reply, and prose after it are read as for DeepSeek's DSML.

Sources: MiniMax-M2's chat template and tool-calling guide (docs/tool_calling_guide.md in
MiniMax-AI/MiniMax-M2), vLLM's `minimax_m2_tool_parser.py` tests, SGLang's MiniMax M2 detector.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import InvokeSyntax, read_invoke_block

OPEN = "<minimax:tool_call>"
CLOSE = "</minimax:tool_call>"
SYNTAX = InvokeSyntax('<invoke name="', "</invoke>", '<parameter name="', "</parameter>")


class MiniMaxM2Parser(ToolCallParser):
    name = "minimax_m2"
    models = "MiniMax M2, M2.1"
    markers = (
        Marker(OPEN, "tag", closers=((CLOSE, True),)),
        Marker(SYNTAX.invoke, "tag", closers=((SYNTAX.invoke_close, True),)),
    )
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        return read_invoke_block(region, OPEN, CLOSE, SYNTAX)
