"""GLM-4.5, 4.6 and 4.7 (and GLM-5): `<tool_call>NAME` then `<arg_key>KEY</arg_key>` and
`<arg_value>VALUE</arg_value>` pairs, then `</tool_call>`.

GLM-4.5 puts each on its own line, GLM-4.7 writes them together. Values are raw text, typed by the
tool's schema (raw_values.py; the templates write non-string arguments as JSON). The block must be closed: an unclosed one may have been cut before its last
argument. `<tool_call>` is Hermes's tag too; a block holding JSON is Hermes's.

Sources: GLM-4.5/4.6/4.7 chat templates (zai-org), vLLM's `glm4_moe_tool_parser.py` and
`glm47_moe_tool_parser.py` tests, SGLang's GLM-4.5 detector, llama.cpp's GLM 4.5 chat parser.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .hermes import CLOSE, OPEN
from .tagged import PairSyntax, read_pairs_call

SYNTAX = PairSyntax("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")


class Glm45Parser(ToolCallParser):
    name = "glm45"
    models = "GLM-4.5, GLM-4.6, GLM-4.7, GLM-5"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True), (OPEN, False))),)
    tags = ("<arg_key>",)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        calls = self.read_region(region)
        return (calls, len(region)) if calls else None

    def read_region(self, region: str) -> list[ParsedCall] | None:
        if not region.endswith(CLOSE):
            return None
        call = read_pairs_call(region[len(OPEN) : -len(CLOSE)], SYNTAX)
        return [call] if call else None
