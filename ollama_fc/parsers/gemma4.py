"""Gemma 4: `<|tool_call>call:name{key:<|"|>text<|"|>,n:42}<tool_call|>`, and its drift.

Strings are quoted by `<|"|>`, keys are bare. Reported drift that still names its arguments is
read: a paren shell `call:name(key:<|"|>v<|"|>)` or `call:name(key='v')`, `call:` left out, a
namespaced name (`google:mcp:create-file`), `'single'` or `"double"` quotes in place of
`<|"|>`, and a block the model did not close (the call must then be complete; prose after it
stays content). Positional `BEGIN_ARG:` ... `END_ARG` blocks name no parameter, so they stay
text: which argument a value is meant for would be a guess.

Sources: Gemma 4's chat template, vLLM's `test_gemma4_tool_parser.py`, Ollama's `gemma4` parser
tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from .base import Marker, ParsedCall, ToolCallParser
from .learned_format import unquote
from .lenient import NotALiteral, read_value, scan_balanced
from .pythonic import read_call_list

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
QUOTE = '<|"|>'
HEAD = re.compile(r"\s*(?:call\s*:\s*)?([A-Za-z_][\w\-.]*(?::[A-Za-z_][\w\-.]*)*)\s*(?=[{(])")
SPACE_OR_CLOSE = re.compile(rf"(?:\s|{re.escape(CLOSE)})*")
EQUALS_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w\-]*)\s*=(?!=)")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')


class Gemma4Parser(ToolCallParser):
    name = "gemma4"
    models = "Gemma 4"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)
    # The tags and the string quote (FunctionGemma writes the same calls with its own).
    opener: ClassVar[str] = OPEN
    closer: ClassVar[str] = CLOSE
    quote: ClassVar[str] = QUOTE
    space_or_close: ClassVar[re.Pattern[str]] = SPACE_OR_CLOSE

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        opener, closer = self.opener, self.closer
        closed = region.endswith(closer)
        body = unquote(region[len(opener) :].removesuffix(closer) if closed else region[len(opener) :], self.quote)
        if self.quote in body:
            return None  # a string left open: the text was cut inside a value
        calls: list[ParsedCall] = []
        index = 0
        while True:
            match = HEAD.match(body, index)
            if match is None:
                break
            end = scan_balanced(body, match.end())
            if end is None:
                return None
            arguments = _arguments(match.group(1), body[match.end() : end])
            if arguments is None:
                return None
            calls.append(ParsedCall(match.group(1), arguments))
            index = self.space_or_close.match(body, end).end()  # type: ignore[union-attr]
        if not calls or body[index:].strip():
            return None
        return calls, len(region)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        found = self.read_prefix(region)
        return found[0] if found else None


def _arguments(name: str, shell: str) -> dict[str, object] | None:
    """The arguments written in `{...}` or `(...)` after a call's name."""
    if shell.startswith("("):
        calls = read_call_list(name.replace(":", "_") + shell, function_wrappers=False)
        if calls and len(calls) == 1:
            return calls[0].arguments
        shell = "{" + shell[1:-1] + "}"
    try:
        value = read_value(shell)
    except NotALiteral:
        try:  # `{save_as='report.docx'}`: `=` for `:` after a bare key, outside strings
            value = read_value(_outside_strings(shell, lambda text: EQUALS_KEY.sub(r"\1\2:", text)))
        except NotALiteral:
            return None
    return value if isinstance(value, dict) else None


def _outside_strings(text: str, change: Callable[[str], str]) -> str:
    out: list[str] = []
    index = 0
    for match in STRING.finditer(text):
        out.append(change(text[index : match.start()]))
        out.append(match.group())
        index = match.end()
    out.append(change(text[index:]))
    return "".join(out)
