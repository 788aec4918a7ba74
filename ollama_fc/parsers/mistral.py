"""Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]` (v3 tokenizers) and
`[TOOL_CALLS]name[ARGS]{...}` (v11+), possibly repeated, possibly with `[CALL_ID]id`; also
`name[ARGS]{...}` printed without the `[TOOL_CALLS]` token (found by the offered tools' names).

A region runs to the next `[TOOL_CALLS]`; prose after the calls stays content.

Sources: mistral-common's tokenizer docs and Mistral's chat templates, vLLM's
`test_mistral_tool_parser.py`, Ollama's `ministral` parser tests.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser, calls_from_value
from .lenient import NotALiteral, read_value, scan_balanced

TOOL_CALLS = "[TOOL_CALLS]"
NAMED_CALL = re.compile(r"\s*(?:\[TOOL_CALLS\])?\s*([A-Za-z_][\w\-.]*)\s*(?:\[CALL_ID\]\s*\w+\s*)?(?:\[ARGS\])?\s*")


class MistralParser(ToolCallParser):
    name = "mistral"
    models = "Mistral 7B v0.3, Mistral Small / Nemo, Ministral, Magistral, Devstral"
    markers = (
        Marker(TOOL_CALLS, "rest"),
        Marker("{name}[ARGS]", "bracket", must_end=True, per_tool=True),
    )
    tags = (TOOL_CALLS,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        start = len(TOOL_CALLS) if region.startswith(TOOL_CALLS) else 0
        index = start
        while index < len(region) and region[index].isspace():
            index += 1
        if region.startswith("[", index) and not region.startswith("[ARGS]", index):
            end = scan_balanced(region, index) or len(region)
            try:
                value = read_value(region[index:end])
            except NotALiteral:
                return None
            calls = calls_from_value(value) if isinstance(value, list) else None
            return (calls, end) if calls else None
        return _read_named_calls(region, start)


def _read_named_calls(region: str, index: int) -> tuple[list[ParsedCall], int] | None:
    """`name[ARGS]{...}` calls, one after another, from `index`; stops at anything else."""
    calls: list[ParsedCall] = []
    end = index
    while index < len(region):
        match = NAMED_CALL.match(region, index)
        if match is None or match.end() >= len(region) or region[match.end()] != "{":
            break
        close = scan_balanced(region, match.end()) or len(region)
        try:
            arguments = read_value(region[match.end() : close])
        except NotALiteral:
            return None
        if not isinstance(arguments, dict):
            return None
        calls.append(ParsedCall(match.group(1), arguments))
        index = end = close
    return (calls, end) if calls else None
