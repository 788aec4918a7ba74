"""Recover tool calls that a model wrote as text, in the formats models are trained on."""

from __future__ import annotations

from .base import ParsedCall, ParseResult, ToolCallParser
from .registry import FORMATS, PARSERS, parse_tool_calls, parsers_for
from .streaming import StreamingRecoverer

__all__ = [
    "FORMATS",
    "PARSERS",
    "ParseResult",
    "ParsedCall",
    "StreamingRecoverer",
    "ToolCallParser",
    "parse_tool_calls",
    "parsers_for",
]
