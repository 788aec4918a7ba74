"""Seed-OSS: `<seed:tool_call>` around Qwen3-Coder-style `<function=NAME>` elements holding
`<parameter=KEY>VALUE</parameter>` elements, then `</seed:tool_call>`.

Values are raw text, typed by the tool's schema (raw_values.py). The block's closer may be left
out at the end of the reply; prose after the block stays content. A call inside the
`<seed:think>` block is read like any other (only `<think>` is known to the scanner).

Sources: ByteDance-Seed/Seed-OSS-36B-Instruct's chat template, vLLM's `seed_oss_tool_parser.py`
tests, llama.cpp's Seed-OSS chat parser tests.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import read_function_tags, through_closer

OPEN = "<seed:tool_call>"
CLOSE = "</seed:tool_call>"


class SeedOssParser(ToolCallParser):
    name = "seed_oss"
    models = "Seed-OSS 36B"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        found = read_function_tags(region, len(OPEN))
        if found is None:
            return None
        calls, end = found
        through = through_closer(region, end, CLOSE)
        return None if through is None else (calls, through)
