"""MiniCPM 5: `<function name="NAME">` holding `<param name="KEY">VALUE</param>` elements, then
`</function>`, one element per call.

Values are raw text, typed by the tool's schema (raw_values.py); a value in `<![CDATA[...]]>`
is the text inside; parameters wrapped in `<arguments>` are read too. MiniCPM3's `<|tool_call_start|>` + a fenced Python block is the `wrapped`
format's.

Sources: openbmb MiniCPM chat templates (minicpm5-1b in the reference corpus), vLLM's
`test_minicpm5xml_tool_parser.py`, Ollama's `model/parsers/minicpm5.go` tests.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import InvokeSyntax, read_invokes

SYNTAX = InvokeSyntax(
    '<function name="', "</function>", '<param name="', "</param>", wrappers=("<arguments>", "</arguments>")
)


class MiniCPMParser(ToolCallParser):
    name = "minicpm"
    models = "MiniCPM 5 (and MiniCPM3 through `wrapped`)"
    markers = (Marker(SYNTAX.invoke, "tag", closers=((SYNTAX.invoke_close, True),)),)
    tags = (SYNTAX.invoke,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        return read_invokes(region, 0, SYNTAX)
