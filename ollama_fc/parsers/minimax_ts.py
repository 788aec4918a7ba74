"""MiniMax-Text-01: `<function_call>` then a ```typescript block of `functions.NAME({...})` lines.

`<function_call>` is a special token, so it is missing when special tokens are not printed; the
fenced block alone is enough. Arguments are found by bracket scanning, so `)`, `}` and quotes
inside string values do not end them early. Prose after the block stays content.

Sources: MiniMax-Text-01's chat template (the seed in the reference corpus), vLLM's
`minimax_tool_parser.py` tests.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .lenient import NotALiteral, read_value, scan_balanced
from .regions import closing_fence

CALL_TOKEN = "<function_call>"
CALL_CLOSE = "</function_call>"
CALL_START = re.compile(r"(?:functions\.)?([A-Za-z_][\w\-]*)\s*\(")
SEPARATORS = " \t\r\n;,"


class MiniMaxTypeScriptParser(ToolCallParser):
    name = "minimax_ts"
    models = "MiniMax-Text-01, MiniMax-VL-01"
    markers = (
        Marker(CALL_TOKEN, "tag", closers=((CALL_CLOSE, True),)),
        Marker("```typescript", "fence"),
        Marker("```ts\n", "fence"),
    )
    tags = (CALL_TOKEN, "```typescript")

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        index = 0
        if region.startswith(CALL_TOKEN):
            index = len(CALL_TOKEN)
            while index < len(region) and region[index].isspace():
                index += 1
        if not region.startswith("```", index):
            return None
        newline = region.find("\n", index)
        if newline < 0:
            return None
        end = closing_fence(region, newline + 1)
        body = region[newline + 1 : end]
        calls = read_call_lines(body.rstrip().removesuffix("```"), require_namespace=True)
        if not calls:
            return None
        rest = region[end:]
        if rest.strip() == CALL_CLOSE or rest.lstrip().startswith(CALL_CLOSE):
            end += len(rest) - len(rest.lstrip()) + len(CALL_CLOSE)
        return calls, end


def read_call_lines(body: str, *, require_namespace: bool) -> list[ParsedCall] | None:
    """Read `functions.NAME({...})` calls separated by newlines or `;`; None if anything else."""
    calls: list[ParsedCall] = []
    index = 0
    while True:
        while index < len(body) and body[index] in SEPARATORS:
            index += 1
        if index >= len(body):
            break
        match = CALL_START.match(body, index)
        if match is None or (require_namespace and not match.group(0).startswith("functions.")):
            return None
        open_paren = match.end() - 1
        end = scan_balanced(body, open_paren)
        if end is None:
            end = len(body)
            inner = body[open_paren + 1 :].rstrip().removesuffix(")")
        else:
            inner = body[open_paren + 1 : end - 1]
        if inner.strip():
            try:
                arguments = read_value(inner)
            except NotALiteral:
                return None
            if not isinstance(arguments, dict):
                return None
        else:
            arguments = {}
        calls.append(ParsedCall(match.group(1), arguments))
        index = end
    return calls or None
