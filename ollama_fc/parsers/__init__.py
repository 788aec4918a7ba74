"""Recover tool calls that a model wrote as text, in the formats models are trained on."""

from __future__ import annotations

from .base import Marker, ParsedCall, ParseResult, ToolCallParser
from .registry import FORMATS, KNOWN_TAGS, PARSERS, format_for_tag, parse_tool_calls, parsers_for
from .streaming import StreamingRecoverer

__all__ = [
    "FORMATS",
    "KNOWN_TAGS",
    "PARSERS",
    "Marker",
    "ParseResult",
    "ParsedCall",
    "StreamingRecoverer",
    "ToolCallParser",
    "format_for_tag",
    "parse_tool_calls",
    "parsers_for",
]
