"""Find the conversation shape a Hugging Face template expects, and rewrite battery cases into it.

Chat templates disagree on the input contract: content as a string or as a list of
`{"type": "text", "text": ...}` parts, tool results under role `tool`, `function`, `tools` or
`ipython`, arguments as an object or a JSON string, tool calls wrapped in `function` or flat.
Ollama's /api/chat has one shape. To compare fairly, the reference gets each conversation in
the shape its template was written for, found here by reading the template's role names and by
rendering small probe conversations with needles in them (as minja's capability probes do);
the oracle gets the same conversation as Ollama receives it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..convert.analysis import role_constants
from ..convert.model import TOOL_RESULT_ROLES
from . import battery
from .battery import Case, Message
from .reference import ReferenceRenderError, compile_template, environment, render


@dataclass(frozen=True)
class Shape:
    """The input contract of one template, and which battery features it renders."""

    content: Literal["string", "parts"] = "string"
    tool_role: str = "tool"
    arguments: Literal["object", "string"] = "object"
    call_wrapper: Literal["function", "flat"] = "function"
    needs_ids: bool = False
    system: bool = False
    tools: bool = False
    tool_calls: bool = False
    tool_results: bool = False
    parallel_calls: bool = False

    def supports(self, feature: str) -> bool:
        return bool(getattr(self, feature))

    def missing(self, case: Case) -> list[str]:
        """The features `case` needs that this template does not render."""
        return [feature for feature in battery.FEATURES if feature in case.needs and not self.supports(feature)]


def _content(text: str, shape: Shape) -> Any:
    return [{"type": "text", "text": text}] if shape.content == "parts" else text


def _tool_call(call: Mapping[str, Any], shape: Shape) -> dict[str, Any]:
    function = call["function"]
    arguments: Any = function["arguments"]
    if shape.arguments == "string":
        arguments = json.dumps(arguments, ensure_ascii=False)
    if shape.call_wrapper == "flat":
        converted: dict[str, Any] = {"name": function["name"], "arguments": arguments}
    else:
        converted = {"type": "function", "function": {"name": function["name"], "arguments": arguments}}
    if "id" in call:
        converted = {"id": call["id"], **converted}
    return converted


def to_hf(messages: Sequence[Message], shape: Shape) -> list[dict[str, Any]]:
    """Messages in Ollama's shape rewritten into the shape the template expects.

    A tool result keeps its tool's name under both `name` (the HF convention) and `tool_name`
    (Ollama's), and its `tool_call_id`; templates read whichever they know.
    """
    converted: list[dict[str, Any]] = []
    for message in messages:
        out: dict[str, Any] = {"role": message["role"], "content": _content(message["content"], shape)}
        if message.get("tool_calls"):
            out["tool_calls"] = [_tool_call(call, shape) for call in message["tool_calls"]]
        if message["role"] == "tool":
            out["role"] = shape.tool_role
            if "tool_name" in message:
                out["name"] = message["tool_name"]
                out["tool_name"] = message["tool_name"]
            if "tool_call_id" in message:
                out["tool_call_id"] = message["tool_call_id"]
        converted.append(out)
    return converted


def render_case(template: str, case: Case, shape: Shape, special_tokens: Mapping[str, str] | None = None) -> str:
    """The reference prompt for a battery case: a trailing assistant message is a prefill.

    Ollama has no `add_generation_prompt`: a conversation ending with the assistant's message is
    one the model continues (Ollama's own templates leave that turn open). transformers calls it
    `continue_final_message`; any other conversation gets `add_generation_prompt=True`.
    """
    return render(
        template,
        to_hf(case.messages, shape),
        list(case.tools) or None,
        add_generation_prompt=not case.prefill,
        continue_final_message=case.prefill,
        special_tokens=special_tokens,
    )


# --- static reading: which role names does the template compare against? ---


def role_names(template: str) -> set[str]:
    """String constants the template compares a `role` with (==, !=, in, `is equalto`, selectattr)."""
    return role_constants(environment().parse(template))


# --- probing: render needles and see what comes out ---

USER_NEEDLE = "user-needle-7f3"
SYSTEM_NEEDLE = "system-needle-5c1"
TOOL_NEEDLE = "probe_tool_needle"
CALL_NEEDLES = ("call_needle_one", "call_needle_two")
ARGUMENT_NEEDLE = "argument_needle"
RESULT_NEEDLE = "result-needle-9d2"


def _try(
    template: str,
    messages: Sequence[Message],
    shape: Shape,
    tools: Sequence[Mapping[str, Any]] = (),
    special_tokens: Mapping[str, str] | None = None,
) -> str | None:
    """The reference render of a probe, or None when the template refuses or crashes on it."""
    try:
        return render(
            template,
            to_hf(messages, shape),
            list(tools) or None,
            add_generation_prompt=True,
            special_tokens=special_tokens,
        )
    except ReferenceRenderError:
        return None


def _probe_tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "A probe.",
            "parameters": {"type": "object", "properties": {ARGUMENT_NEEDLE: {"type": "string", "description": "x"}}},
        },
    }


def _call_messages(names: Sequence[str], *, ids: bool, result_role: bool = False) -> list[Message]:
    calls = []
    for index, name in enumerate(names):
        call: dict[str, Any] = {"function": {"name": name, "arguments": {ARGUMENT_NEEDLE: "value"}}}
        if ids:
            call["id"] = f"call{index:05d}x"
        calls.append(call)
    messages: list[Message] = [
        {"role": "user", "content": USER_NEEDLE},
        {"role": "assistant", "content": "", "tool_calls": calls},
    ]
    if result_role:
        for index, name in enumerate(names):
            result: Message = {"role": "tool", "content": RESULT_NEEDLE, "tool_name": name}
            if ids:
                result["tool_call_id"] = f"call{index:05d}x"
            messages.append(result)
    return messages


def probe(template: str, special_tokens: Mapping[str, str] | None = None, roles: set[str] | None = None) -> Shape:
    """The shape this template expects and the features it renders, found by rendering probes.

    `roles` are the template's `role_names` when the caller has parsed it already.
    """
    try:
        compile_template(template)
    except ReferenceRenderError:
        return Shape()
    user = [{"role": "user", "content": USER_NEEDLE}]
    with_system = [{"role": "system", "content": SYSTEM_NEEDLE}, *user]
    shape = Shape()
    # Strings unless some role needs parts: templates that take parts often take both for users
    # but index `content[0]['text']` for the system message (Gemma 3).
    for probe_messages, needles in ((user, (USER_NEEDLE,)), (with_system, (SYSTEM_NEEDLE, USER_NEEDLE))):
        plain = _try(template, probe_messages, shape, special_tokens=special_tokens)
        if plain is None or not all(needle in plain for needle in needles):
            parts = _try(template, probe_messages, replace(shape, content="parts"), special_tokens=special_tokens)
            if parts is not None and all(needle in parts for needle in needles):
                shape = replace(shape, content="parts")
                break

    system = _try(template, with_system, shape, special_tokens=special_tokens)
    shape = replace(shape, system=system is not None and SYSTEM_NEEDLE in system)

    tools = [_probe_tool(TOOL_NEEDLE)]
    with_tools = _try(template, user, shape, tools, special_tokens=special_tokens)
    shape = replace(shape, tools=with_tools is not None and TOOL_NEEDLE in with_tools)

    named = role_names(template) if roles is None else roles
    shape = replace(shape, tool_role=next((role for role in TOOL_RESULT_ROLES if role in named), "tool"))

    # calls name functions the tool list does not, so a rendered tool list is no false hit
    candidates = (
        replace(shape, call_wrapper=wrapper, arguments=arguments, needs_ids=ids)
        for wrapper in ("function", "flat")
        for arguments in ("object", "string")
        for ids in (False, True)
    )
    for candidate in candidates:
        rendered = _try(
            template, _call_messages(CALL_NEEDLES[:1], ids=candidate.needs_ids), candidate, tools, special_tokens
        )
        if rendered is not None and CALL_NEEDLES[0] in rendered:
            shape = replace(candidate, tool_calls=True)
            break

    results = _try(template, _call_messages(CALL_NEEDLES[:1], ids=True, result_role=True), shape, tools, special_tokens)
    shape = replace(shape, tool_results=results is not None and RESULT_NEEDLE in results)
    if shape.tool_calls:
        both = _try(template, _call_messages(CALL_NEEDLES, ids=True), shape, tools, special_tokens)
        shape = replace(shape, parallel_calls=both is not None and all(name in both for name in CALL_NEEDLES))
    return shape
