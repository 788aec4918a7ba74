"""Probe conversations rendered with the Hugging Face reference, and the text of their calls.

A probe is one assistant turn with tool calls. Its call text is what the template inserts when
the calls are there: the render with the calls, less the render of the same turn without them
(the way llama.cpp's autoparser compares template outputs), less what the generation prompt
already wrote (gpt-oss's `assistant` before ` to=functions.NAME`): a model writes only what
follows its prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..convert.sources import TemplateSource
from ..hf.reference import ReferenceRenderError, render
from ..hf.shapes import Shape, to_hf

CALL_IDS = ("Xq7Lp2Wm0", "Rt5Kd8Nz3", "Bv4Hs9Jc1", "Mw6Fy3Tg5")
"""Nine characters each: Mistral's templates refuse other ids."""


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Probe:
    """A call shape: the calls of one assistant turn, and the content before them."""

    label: str
    calls: tuple[Call, ...]
    content: str = ""
    extra_tools: tuple[str, ...] = field(default=())

    def tool_names(self) -> list[str]:
        return list(dict.fromkeys([call.name for call in self.calls] + list(self.extra_tools)))


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def tool_definitions(probe: Probe) -> list[dict[str, Any]]:
    """One tool per called name, with a schema typed after the probe's own arguments."""
    properties: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in probe.tool_names()}
    for call in probe.calls:
        for key, value in call.arguments.items():
            kind = json_type(value)
            properties[call.name][key] = {"type": kind} if kind != "null" else {}
            properties[call.name][key]["description"] = f"The {key}."
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"The {name} tool.",
                "parameters": {"type": "object", "properties": props},
            },
        }
        for name, props in properties.items()
    ]


def schemas(probe: Probe) -> dict[str, Any]:
    return {tool["function"]["name"]: tool["function"]["parameters"] for tool in tool_definitions(probe)}


def _turn(probe: Probe, with_calls: bool) -> list[dict[str, Any]]:
    assistant: dict[str, Any] = {"role": "assistant", "content": probe.content if with_calls else ""}
    if with_calls:
        assistant["tool_calls"] = [
            {"id": CALL_IDS[index % len(CALL_IDS)], "function": {"name": call.name, "arguments": call.arguments}}
            for index, call in enumerate(probe.calls)
        ]
    return [{"role": "user", "content": "What is the weather like?"}, assistant]


def _render(
    source: TemplateSource,
    shape: Shape,
    messages: Sequence[Mapping[str, Any]],
    probe: Probe,
    add_generation_prompt: bool = False,
) -> str | None:
    try:
        return render(
            source.template,
            to_hf(messages, shape),  # type: ignore[arg-type]
            tool_definitions(probe),
            add_generation_prompt=add_generation_prompt,
            special_tokens=source.special_tokens,
        )
    except ReferenceRenderError:
        return None


def _render_raw(source: TemplateSource, shape: Shape, messages: list[dict[str, Any]], probe: Probe) -> str | None:
    """Like `_render`, with the final assistant message's content None."""
    converted = to_hf(messages, shape)
    converted[-1]["content"] = None
    try:
        return render(
            source.template,
            converted,
            tool_definitions(probe),
            add_generation_prompt=False,
            special_tokens=source.special_tokens,
        )
    except ReferenceRenderError:
        return None


def inserted(longer: str, shorter: str, starts: str = "") -> str:
    """What `longer` has that `shorter` lacks (see `insertion`)."""
    return insertion(longer, shorter, starts)[1]


def insertion(longer: str, shorter: str, starts: str = "") -> tuple[int, str]:
    """Where in `longer` and what it has that `shorter` lacks: the text between their common
    prefix and suffix.

    A pure insertion can often be slid (`<tool_call>...</tool_call>` inserted before `<|im_end|>`
    is also `tool_call>...</tool_call><`); of the places it fits, the one that starts with
    `starts`, else the one that starts a token (after whitespace or a token's end) is taken.
    """
    limit = min(len(longer), len(shorter))
    prefix = 0
    while prefix < limit and longer[prefix] == shorter[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and longer[-1 - suffix] == shorter[-1 - suffix]:
        suffix += 1
    end = len(longer) - suffix
    if len(shorter) - prefix - suffix != 0:
        start = prefix  # a replacement: start where the token it begins in starts
        while start > max(prefix - 40, 0) and not _ends_token(longer[start - 1]):
            start -= 1
        stop = end  # and end where the token it ends in ends (`<｜tool▁call▁end` of `...end｜>`)
        while stop < min(end + 40, len(longer)) and not _ends_token(longer[stop - 1]):
            stop += 1
        start = start if start > max(prefix - 40, 0) else prefix
        return start, longer[start : stop if stop < end + 40 else end]
    length = end - prefix
    left = prefix
    while left > 0 and longer[left - 1] == longer[left - 1 + length]:
        left -= 1
    candidates = range(left, prefix + 1)

    def score(start: int) -> int:
        text = longer[start : start + length]
        if starts and text.startswith(starts):
            return 3
        before = longer[start - 1] if start else "\n"
        good_start = text[:1] not in (">", "|", "｜", "]", ")")
        good_before = _ends_token(before)
        return int(good_start) + int(good_before)

    best = max(candidates, key=lambda start: (score(start), -start))
    return best, longer[best : best + length]


def _shared_tokens(prompt: str, turn: str) -> int:
    """How much of `turn` the generation prompt writes too, in whole tokens: Nemotron's prompt
    ends `<SPECIAL_11>Assistant\n<think>\n` where a turn of calls has `<SPECIAL_11>Assistant\n<TOOLCALL>`."""
    shared = 0
    limit = min(len(prompt), len(turn))
    while shared < limit and prompt[shared] == turn[shared]:
        shared += 1
    while shared > 0 and not _ends_token(turn[shared - 1]):
        shared -= 1
    return shared


def _ends_token(char: str) -> bool:
    """Does a token end with `char` (whitespace, or a tag's or bracket's closer)?"""
    return char.isspace() or char in ">]}"


_CALL_TEXTS: dict[tuple[str, str, Shape, str], str | None] = {}
"""call_text's answers (learning reads the probes it derived from back): a few hundred at most."""


def call_text(source: TemplateSource, shape: Shape, probe: Probe) -> str | None:
    """The text the template writes for the probe's turn (its content, then its calls) beyond
    an empty turn, or None when the template refuses the probe or writes nothing for it."""
    key = (
        source.template,
        json.dumps(dict(source.special_tokens or {}), sort_keys=True),
        shape,
        json.dumps([probe.content, [(call.name, call.arguments) for call in probe.calls], probe.extra_tools]),
    )
    if key not in _CALL_TEXTS:
        if len(_CALL_TEXTS) >= 512:
            _CALL_TEXTS.clear()
        _CALL_TEXTS[key] = _call_text(source, shape, probe)
    return _CALL_TEXTS[key]


def _call_text(source: TemplateSource, shape: Shape, probe: Probe) -> str | None:
    turn = _turn(probe, True)
    with_calls = _render(source, shape, turn, probe)
    if with_calls is None and not probe.content and shape.content == "string":
        # some templates want no content at all next to calls (None, as OpenAI sends it)
        with_calls = _render_raw(source, shape, turn, probe)
    if with_calls is None:
        return None
    prompt = _render(source, shape, _turn(probe, False)[:1], probe, add_generation_prompt=True)
    without = _render(source, shape, _turn(probe, False), probe)
    if without is None:  # a template that refuses an empty assistant turn: compare with the prompt
        without = prompt
    if without is None or with_calls == without:
        return None
    start, text = insertion(with_calls, without, probe.content)
    if prompt is not None:  # what the prompt wrote (up to where it and the turn part) is not the model's
        shared = len(prompt) if with_calls.startswith(prompt) else _shared_tokens(prompt, with_calls)
        if start < shared:
            text = text[shared - start :]
    return text or None


def calling_shape(source: TemplateSource, shape: Shape) -> Shape:
    """`shape`, or, where its probe saw no calls, the first input shape under which the template
    renders this module's probe calls (Mistral's templates refuse call ids that are not nine
    characters long, as the shape probe's are; ours are)."""
    if shape.tool_calls or "tool_call" not in source.template:
        return shape
    one = Probe("one call", (Call("get_weather", {"city": "Paris"}),))
    two = Probe("two calls", (Call("get_weather", {"city": "Paris"}), Call("get_time", {"zone": "UTC"})))
    offered = Probe("another tool", (Call("get_time", {"zone": "UTC"}),))  # its list names no get_weather
    variants = (
        replace(shape, content=content, call_wrapper=wrapper, arguments=arguments, empty_call_content=empty)
        for content in dict.fromkeys((shape.content, "string", "parts"))
        for wrapper in ("function", "flat")
        for arguments in ("object", "string")
        for empty in ("string", "none")
    )
    for candidate in variants:
        rendered = _render(source, candidate, _turn(one, True), offered)  # one render turns most away
        if rendered is None or "get_weather" not in rendered:
            continue
        text = call_text(source, candidate, one)
        if text is None or "get_weather" not in text:
            continue
        both = call_text(source, candidate, two)
        return replace(candidate, tool_calls=True, parallel_calls=both is not None and "get_time" in both)
    return shape


def turn_end(source: TemplateSource, shape: Shape) -> str:
    """What the template writes after a reply's text to end the model's turn (Nemotron Nano 2's
    `<SPECIAL_12>`), stripped; "" when it cannot tell."""
    done = Probe("a reply", (), content="All done here.")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "What is the weather like?"},
        {"role": "assistant", "content": done.content},
    ]
    rendered = _render(source, shape, messages, done)
    if rendered is None or done.content not in rendered:
        return ""
    return rendered[rendered.rindex(done.content) + len(done.content) :].strip()
