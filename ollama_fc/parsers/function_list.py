"""The Typhoon2 seed's `[Function(arguments1={...}, name1=fn), ...]` and its near variants.

The prompt shows the arguments with doubled braces and bare keys (`{{city: "x"}}`); the lenient
literal reader accepts both. Plain pythonic items (`[f(a=1)]`) are accepted too, since real
Typhoon2 outputs mix the two, and so is a `Function(...)` item without the list brackets.

Sources: the Typhoon2 (Llama 3.1) seed template in the reference corpus.
"""

from __future__ import annotations

from .base import Marker, ParsedCall, ToolCallParser
from .pythonic import read_call_list


class FunctionListParser(ToolCallParser):
    name = "function_list"
    models = "Typhoon2 (Llama 3.1)"
    markers = (
        Marker("[", "bracket", must_end=True),
        Marker("Function(", "bracket", must_end=True),
    )

    def read_region(self, region: str) -> list[ParsedCall] | None:
        return read_call_list(region, function_wrappers=True)
