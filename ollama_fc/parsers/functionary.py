"""functionary v3.2 (`>>>NAME` then the JSON arguments on the next line) and v2
(`<|recipient|>NAME` then `<|content|>` and the JSON arguments).

Both templates end the prompt inside the first message's header (`>>>`, `<|recipient|>`), so
the reply starts with the bare name: `get_weather\\n{...}` or `get_weather\\n<|content|>{...}`.
v3.2 calls (`>>>NAME` or the bare first one) are read after an offered name, and only as the
last thing in the reply, as the template ends a turn after its calls: a name and an object in
the middle of prose stay text. The recipient `all` is text
for the user, never a call. functionary v3.1's `<function=NAME>{...}</function>` is the
`wrapped` format's.

Sources: MeetKai's functionary chat templates (functionary-medium-v2.2, -v3.2) and its prompt
template docs (github.com/MeetKai/functionary), llama.cpp's functionary chat parser tests.
"""

from __future__ import annotations

import re

from .base import Marker, ParsedCall, ToolCallParser
from .tagged import json_object_at

RECIPIENT = "<|recipient|>"
FROM = "<|from|>"
FROM_ASSISTANT = "<|from|>assistant"
HEAD = re.compile(
    r"(?:<\|from\|>assistant\s*)?(?:>>>|<\|recipient\|>)?\s*([A-Za-z_][\w\-.]*)[ \t]*\r?\n?\s*(?:<\|content\|>)?"
)
TEXT_RECIPIENT = "all"


class FunctionaryParser(ToolCallParser):
    name = "functionary"
    models = "functionary v2.2, v3.2"
    markers = (
        Marker(">>>{name}", "bracket", must_end=True, per_tool=True),
        Marker(RECIPIENT, "tag", closers=((FROM, False),)),
        Marker(FROM_ASSISTANT, "tag", closers=((FROM, False),)),
        Marker("{name}\n<|content|>", "tag", closers=((FROM, False),), per_tool=True),
        Marker("{name}\n{", "bracket", must_end=True, per_tool=True),
    )
    tags = (RECIPIENT,)

    def read_prefix(self, region: str) -> tuple[list[ParsedCall], int] | None:
        head = HEAD.match(region)
        if head is None or head.group(1) == TEXT_RECIPIENT:
            return None
        found = json_object_at(region, head.end())
        if found is None:
            return None
        arguments, end = found
        return [ParsedCall(head.group(1), arguments)], end
