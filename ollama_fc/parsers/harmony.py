"""gpt-oss (OpenAI's harmony format): a call is a message to a function recipient,
`<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`.

The recipient may come before the channel (`<|start|>assistant to=functions.NAME<|channel|>
commentary json<|message|>{...}`), the content type may be written bare (` json`) or left out,
the channel may be `analysis`, and `<|call|>` (a stop token) is often not printed. The analysis
message before the call, a preamble on the commentary channel and the final answer are content.
With the special tokens not printed, `to=functions.NAME json{...}` is read after an offered name.
The body must be a JSON object; text sent to a recipient (a browser tool's query) is not a call
of an offered function.

Sources: OpenAI's harmony response format guide (cookbook.openai.com/articles/openai-harmony),
vLLM's `openai_tool_parser.py` tests, llama.cpp's gpt-oss chat parser tests.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_object_at

START = "<|start|>"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
CALL = "<|call|>"
ENDS = ("<|end|>", "<|return|>")
# The header before `<|message|>`: a role, a channel, a recipient and a content type, in any order.
RECIPIENT = re.compile(r"\bto=(?:functions\.)?([A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)*)")
HEADER_WORDS = re.compile(r"(?:\s|<\|constrain\|>|<\|channel\|>|[A-Za-z_]+)*")
# Where the stripped form's JSON starts: after the name, an optional content type.
BARE_TYPE = re.compile(r"\s*(?:<\|constrain\|>)?\s*(?:json|code)?\s*(?:<\|message\|>)?")
MAX_HEADER = 200


class HarmonyParser(ToolCallParser):
    name = "harmony"
    models = "gpt-oss 20B / 120B"
    markers = (
        Marker(START, "tag", closers=((CALL, True), *((end, True) for end in ENDS))),
        Marker(CHANNEL, "tag", closers=((CALL, True), *((end, True) for end in ENDS), (START, False))),
        Marker(
            "to=functions.{name}",
            "tag",
            closers=((CALL, True), *((end, True) for end in ENDS), (START, False)),
            per_tool=True,
        ),
    )
    tags = ("to=functions.",)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        message = region.find(MESSAGE, 0, MAX_HEADER)
        if message >= 0:
            header = region[:message]
            recipient = RECIPIENT.search(header)
            # the rest of the header holds nothing but a role, a channel and a content type
            rest = (
                header[: recipient.start()].removeprefix(START) + " " + header[recipient.end() :] if recipient else ""
            )
            if recipient is not None and HEADER_WORDS.fullmatch(rest):
                return _read_body(recipient.group(1), region, message + len(MESSAGE))
        return _read_bare(region) if region.startswith("to=") else None


def _read_bare(region: str) -> tuple[list[ParsedCall], int] | None:
    """`to=functions.NAME json{...}`, the special tokens not printed."""
    recipient = RECIPIENT.match(region)
    if recipient is None:
        return None
    start = BARE_TYPE.match(region, recipient.end())
    assert start is not None  # every part of it is optional
    if not region.startswith("{", start.end()):
        return None
    return _read_body(recipient.group(1), region, start.end())


def _read_body(name: str, region: str, start: int) -> tuple[list[ParsedCall], int] | None:
    """The JSON object of a message to `name` from `start`, and where the message ends (after
    `<|call|>` when it is printed)."""
    found = json_object_at(region, start)
    if found is None:
        if region[start:].strip() == "" or region[start:].strip() == CALL:
            return ([ParsedCall(name, {})], len(region)) if region.rstrip().endswith(CALL) else None
        return None
    arguments, end = found
    after = end
    while after < len(region) and region[after].isspace():
        after += 1
    if region.startswith(CALL, after):
        end = after + len(CALL)
    return [ParsedCall(name, arguments)], end
