"""Hunyuan (HY 3): `<tool_calls:opensource>` around calls
`<tool_call:opensource>NAME<tool_sep:opensource>` then `<arg_key:opensource>KEY</arg_key:opensource>`
and `<arg_value:opensource>VALUE</arg_value:opensource>` pairs and `</tool_call:opensource>`.

GLM-4.5's layout in Hunyuan's own tokens; the same tokens without the `:opensource` suffix are
read too. Values are raw text, typed by the tool's schema (raw_values.py). A block's closer may
be left out at the end of the reply; prose after it stays content. Hunyuan A13B's
`<tool_calls>[{...}]</tool_calls>` is the `wrapped` format's.

Sources: tencent Hunyuan chat templates (the HY 3 template in the reference corpus), vLLM's
`test_hy_v3_tool_parser.py` and `test_hunyuan_a13b_tool_parser.py`.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import PairSyntax, read_pairs_call


def _syntax(suffix: str) -> tuple[str, str, str, str, PairSyntax]:
    """The block's and a call's opener and closer, and the pair tags, for one spelling."""
    return (
        f"<tool_calls{suffix}>",
        f"</tool_calls{suffix}>",
        f"<tool_call{suffix}>",
        f"</tool_call{suffix}>",
        PairSyntax(
            f"<arg_key{suffix}>",
            f"</arg_key{suffix}>",
            f"<arg_value{suffix}>",
            f"</arg_value{suffix}>",
            f"<tool_sep{suffix}>",
        ),
    )


SUFFIXED = _syntax(":opensource")
PLAIN = _syntax("")


class HunyuanParser(ToolCallParser):
    name = "hunyuan"
    models = "Hunyuan HY 3 (and Hunyuan A13B through `wrapped`)"
    markers = (
        Marker(SUFFIXED[0], "tag", closers=((SUFFIXED[1], True),)),
        Marker(SUFFIXED[2], "tag", closers=((SUFFIXED[3], True),)),
        Marker(PLAIN[2], "tag", closers=((PLAIN[3], True), (PLAIN[2], False))),
    )
    tags = (SUFFIXED[0], "<tool_sep")

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        spelling = SUFFIXED if region.startswith((SUFFIXED[0], SUFFIXED[2])) else PLAIN
        block_open, block_close, call_open, call_close, pairs = spelling
        index = len(block_open) if region.startswith(block_open) else 0
        calls: list[ParsedCall] = []
        while True:
            while index < len(region) and region[index].isspace():
                index += 1
            if not region.startswith(call_open, index):
                break
            close = region.find(call_close, index)
            if close < 0:
                return None
            call = read_pairs_call(region[index + len(call_open) : close], pairs)
            if call is None or (spelling is PLAIN and pairs.separator not in region[index:close]):
                return None  # without its suffix, only a call with the separator is Hunyuan's
            calls.append(call)
            index = close + len(call_close)
        if not calls:
            return None
        rest = region[index:]
        if rest.lstrip().startswith(block_close):
            index += len(rest) - len(rest.lstrip()) + len(block_close)
        return calls, index
