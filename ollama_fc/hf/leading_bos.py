"""Is `bos_token` only ever printed first? Then a converted template may print it as nothing.

Ollama's runner adds BOS itself (unless the model says otherwise), so a template that prints the
BOS as its first output gives the model two. The translator drops a BOS it can see is first
(literal text before anything else, outside loops); this probe covers the rest: a BOS printed
inside the message loop at `loop.first`, prepended to a value (`bos_token + content`), or guarded
by a namespace flag. It renders probe conversations twice, with the tokenizer's BOS and with an
empty one: when every render with it is the render without it, or that render with one BOS in
front, and at least one has it in front, then `bos_token` stands for the leading BOS and nothing
else, so translating it as "" leaves out exactly the BOS the runner adds.
"""

from __future__ import annotations

from collections.abc import Mapping

from .shapes import (
    CALL_NEEDLES,
    SYSTEM_NEEDLE,
    TOOL_NEEDLE,
    USER_NEEDLE,
    Message,
    Shape,
    call_messages,
    probe_tool,
    try_render,
)


def _conversations(shape: Shape) -> list[tuple[list[Message], bool]]:
    """Probe conversations in Ollama's shape, each with whether to add the generation prompt."""
    user: Message = {"role": "user", "content": USER_NEEDLE}
    system: Message = {"role": "system", "content": SYSTEM_NEEDLE}
    answer: Message = {"role": "assistant", "content": "answer"}
    conversations: list[tuple[list[Message], bool]] = [
        ([user], True),
        ([system, user], True),
        ([user, answer, user], True),
        ([user, answer], False),
    ]
    if shape.tool_calls:
        conversations.append((call_messages(CALL_NEEDLES[:1], ids=True, result_role=True), True))
    return conversations


def bos_only_leads(template: str, special_tokens: Mapping[str, str], shape: Shape) -> bool:
    """True when `bos_token` renders only as the first output, on every probe that renders."""
    bos = special_tokens.get("bos_token") or ""
    if not bos:
        return False
    without_bos = {**special_tokens, "bos_token": ""}
    tools = [probe_tool(TOOL_NEEDLE)] if shape.tools else []
    leads = False
    for messages, generation in _conversations(shape):
        with_it, without = (
            try_render(template, messages, shape, tools, tokens, add_generation_prompt=generation)
            for tokens in (special_tokens, without_bos)
        )
        if with_it is None and without is None:
            continue  # the template refuses this conversation either way
        if with_it is None or without is None:
            return False
        if with_it == bos + without:
            leads = True
        elif with_it != without:
            return False
    return leads
