"""DeepSeek V3.2 and V4 (DSML): `<｜DSML｜function_calls>` (V4: `<｜DSML｜tool_calls>`) around
`<｜DSML｜invoke name="NAME">` elements, each holding
`<｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>` elements.

`string="true"` marks a value written as raw text; `string="false"` a JSON value (a number,
`true`, an object). Reported drift is read: the tokens with an ASCII `|`, the block left unclosed
at the end of the reply, and invoke elements without the block. Prose after the block stays
content.

Sources: DeepSeek-V3.2's encoding guide and chat template (encoding/encoding_dsv32.py), vLLM's
`deepseekv32_tool_parser.py` tests, SGLang's DeepSeek V3.2 detector.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import InvokeSyntax, read_invoke_block

BLOCKS = ("function_calls", "tool_calls")
BARS = ("｜", "|")


def _syntax(bar: str) -> InvokeSyntax:
    return InvokeSyntax(
        f'<{bar}DSML{bar}invoke name="',
        f"</{bar}DSML{bar}invoke>",
        f'<{bar}DSML{bar}parameter name="',
        f"</{bar}DSML{bar}parameter>",
    )


# (opener, closer, syntax) of every spelling of the block.
SPELLINGS = tuple(
    (f"<{bar}DSML{bar}{block}>", f"</{bar}DSML{bar}{block}>", _syntax(bar)) for bar in BARS for block in BLOCKS
)


class DeepSeekDsmlParser(ToolCallParser):
    name = "deepseek_dsml"
    models = "DeepSeek V3.2, V4"
    markers = (
        *(Marker(opener, "tag", closers=((closer, True),)) for opener, closer, _ in SPELLINGS),
        *(Marker(_syntax(bar).invoke, "tag", closers=((_syntax(bar).invoke_close, True),)) for bar in BARS),
    )
    tags = tuple(opener for opener, _, _ in SPELLINGS[:2])

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        for opener, closer, syntax in SPELLINGS:
            if region.startswith(opener) or region.startswith(syntax.invoke):
                return read_invoke_block(region, opener, closer, syntax)
        return None
