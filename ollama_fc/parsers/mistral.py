"""Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]` (v3 tokenizers) and
`[TOOL_CALLS]name[ARGS]{...}` (v11+), possibly repeated, possibly with `[CALL_ID]id`."""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser, calls_from_value
from .lenient import NotALiteral, read_value, scan_balanced

TOOL_CALLS = "[TOOL_CALLS]"
NAMED_CALL = re.compile(r"\s*(?:\[TOOL_CALLS\])?\s*([A-Za-z_][\w\-.]*)\s*(?:\[CALL_ID\]\s*\w+\s*)?(?:\[ARGS\])?\s*")


class MistralParser(ToolCallParser):
    name = "mistral"
    markers = (Marker(TOOL_CALLS, "rest"),)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        body = region[len(TOOL_CALLS) :].strip().removesuffix("</s>").rstrip()
        if body.startswith("["):
            try:
                value = read_value(body)
            except NotALiteral:
                return None
            return calls_from_value(value) if isinstance(value, list) else None
        calls: list[ParsedCall] = []
        index = 0
        while index < len(body):
            match = NAMED_CALL.match(body, index)
            if match is None or match.end() >= len(body) or body[match.end()] != "{":
                return None
            end = scan_balanced(body, match.end()) or len(body)
            try:
                arguments = read_value(body[match.end() : end])
            except NotALiteral:
                return None
            if not isinstance(arguments, dict):
                return None
            calls.append(ParsedCall(match.group(1), arguments))
            index = end
            while index < len(body) and body[index].isspace():
                index += 1
        return calls or None
