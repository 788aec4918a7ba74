"""Apertus: `<|tools_prefix|>[{"NAME": {...arguments}}, ...]<|tools_suffix|>`.

Each call is an object whose only key is the tool's name; `{"name": ..., "arguments": ...}`
objects are read too. The closer may be left out at the end of the reply; prose after it stays
content. The name as the key is read only inside these tokens: elsewhere an object whose key
happens to be a tool's name is data.

Sources: swiss-ai/Apertus-8B-Instruct-2509's chat template, llama.cpp's Apertus chat parser
tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import Marker, ParsedCall, ToolCallParser, _is_name, call_from_object
from .tagged import json_block

OPEN = "<|tools_prefix|>"
CLOSE = "<|tools_suffix|>"


class ApertusParser(ToolCallParser):
    name = "apertus"
    models = "Apertus 8B / 70B"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        return json_block(region, OPEN, CLOSE, _calls)


def _calls(values: Iterable[Any]) -> list[ParsedCall] | None:
    """Every value a call (a list holds several), or None."""
    calls: list[ParsedCall] = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            call = _call(item)
            if call is None:
                return None
            calls.append(call)
    return calls


def _call(item: Any) -> ParsedCall | None:
    """`{"NAME": {...}}`, or a call object in the usual shape."""
    if isinstance(item, dict) and len(item) == 1:
        name, arguments = next(iter(item.items()))
        if isinstance(name, str) and _is_name(name) and isinstance(arguments, dict):
            found = call_from_object(item)
            return found if found is not None and found.name != name else ParsedCall(name, arguments)
    return call_from_object(item)
