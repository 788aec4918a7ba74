"""DeepSeek V3, R1 and V3.1: calls between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`.

V3 and R1 (and their distills) write each call as
`<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` then a ```` ```json ```` block and
`<｜tool▁call▁end｜>`; V3.1 as `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`.
Reported drift is read: calls without the block tokens, the block left unclosed
(`<｜end▁of▁sentence｜>` ends the reply), and the ASCII `<|tool▁sep|>` spellings some GGUF
templates print. A block without the per-call `<｜tool▁call▁begin｜>` is not a call (as the
models' own parsers read it): the text may be cut or garbled. Prose after the block stays content.

Sources: DeepSeek-V3 / R1 / V3.1 chat templates (tokenizer_config.json), vLLM's
`deepseekv3_tool_parser.py` and `deepseekv31_tool_parser.py` tests, llama.cpp's DeepSeek R1 and
V3.1 chat parsers.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_object_at

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
END_OF_SENTENCE = "<｜end▁of▁sentence｜>"
# `｜` (U+FF5C) or `|`, `▁` (U+2581) or `_`: the spellings of the tokens seen in the wild.
_BAR = "[｜|]"
_SPACE = "[▁_]"
SEP = re.compile(rf"<{_BAR}tool{_SPACE}sep{_BAR}>")
CALL_HEAD = re.compile(rf"\s*<{_BAR}tool{_SPACE}call{_SPACE}begin{_BAR}>\s*")
CALL_TAIL = re.compile(rf"\s*(?:<{_BAR}tool{_SPACE}call{_SPACE}end{_BAR}>)?")
BLOCK_TAIL = re.compile(
    rf"\s*(?:<{_BAR}tool{_SPACE}calls{_SPACE}end{_BAR}>)?\s*(?:<{_BAR}end{_SPACE}of{_SPACE}sentence{_BAR}>)?"
)
NAME = re.compile(r"[A-Za-z_][\w\-.]*")
FENCE_OPEN = re.compile(r"\s*```(?:json)?[ \t]*\n?")
FENCE_CLOSE = re.compile(r"\s*```")


class DeepSeekV3Parser(ToolCallParser):
    """DeepSeek V3 and R1; the V3.1 layout is read too (a model may print either)."""

    name = "deepseek_v3"
    models = "DeepSeek V3, R1 and the R1 distills"
    markers = (
        Marker(CALLS_BEGIN, "tag", closers=((CALLS_END, True),)),
        Marker(CALL_BEGIN, "tag", closers=((CALL_END, True),)),
    )
    tags = (CALLS_BEGIN, CALL_BEGIN)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        index = len(CALLS_BEGIN) if region.startswith(CALLS_BEGIN) else 0
        calls: list[ParsedCall] = []
        while True:
            found = _read_call(region, index)
            if found is None:
                break
            call, index = found
            calls.append(call)
        if not calls:
            return None
        tail = BLOCK_TAIL.match(region, index)
        assert tail is not None  # every part of it is optional
        return calls, tail.end()


class DeepSeekV31Parser(DeepSeekV3Parser):
    """DeepSeek V3.1: the same tokens, the V3 layout read too."""

    name = "deepseek_v31"
    models = "DeepSeek V3.1, V3.1-Terminus"


def _read_call(text: str, index: int) -> tuple[ParsedCall, int] | None:
    """One call from `index`, in the V3 or the V3.1 layout, and where it ends."""
    head = CALL_HEAD.match(text, index)
    if head is None:
        return None
    first = NAME.match(text, head.end())
    if first is None:
        return None
    sep = SEP.match(text, first.end())
    if sep is None:
        return None
    name = NAME.match(text, sep.end())
    if first.group() == "function" and name is not None:  # V3: the type, then the name
        fence = FENCE_OPEN.match(text, name.end())  # None where the text is cut or unfenced
        found = json_object_at(text, name.end() if fence is None else fence.end())
        if found is None:
            return None
        arguments, end = found
        if fence is not None:
            close = FENCE_CLOSE.match(text, end)
            if close is not None:
                end = close.end()
        call = ParsedCall(name.group(), arguments)
    else:  # V3.1: the name, then the JSON
        found = json_object_at(text, sep.end())
        if found is None:
            return None
        arguments, end = found
        call = ParsedCall(first.group(), arguments)
    tail = CALL_TAIL.match(text, end)
    assert tail is not None
    return call, tail.end()
