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

from jinja2 import nodes

from ..jinja import environment
from ..jinja_index import TreeIndex
from .reference import ReferenceRenderError, compile_template, render

#: A message as a dict (Ollama's shape in, the template's shape out).
Message = dict[str, Any]

#: Roles templates give tool results, most common first (Ollama's is always `tool`).
TOOL_RESULT_ROLES = ("tool", "function", "tools", "ipython", "observation", "tool_response", "tool_results")


@dataclass(frozen=True)
class Shape:
    """The input contract of one template, and which battery features it renders."""

    content: Literal["string", "parts"] = "string"
    tool_role: str = "tool"
    arguments: Literal["object", "string"] = "object"
    call_wrapper: Literal["function", "flat"] = "function"
    needs_ids: bool = False
    #: what an assistant message with tool calls and no text carries: transformers users pass
    #: None (OpenAI's shape) where the template takes it, Ollama always sends ""
    empty_call_content: Literal["string", "none"] = "string"
    system_role: bool = False
    tools: bool = False
    tool_calls: bool = False
    tool_results: bool = False
    parallel_calls: bool = False


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
        if shape.empty_call_content == "none" and message.get("tool_calls") and message["content"] == "":
            out["content"] = None
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


# --- static reading: which role names does the template compare against? ---


def role_constants(index: TreeIndex) -> set[str]:
    """Strings the template compares a `role` with: its role names (a tool's `type` is no role).

    The reference renders tool results under the first of these it finds in
    TOOL_RESULT_ROLES, and the translation maps Ollama's `tool` to the same name: one reading
    for both sides.
    """

    def is_role(node: nodes.Node) -> bool:
        """`x.role`, `x['role']` or a variable named for a role, possibly inside a filter or call."""
        return any(
            (isinstance(sub, nodes.Getattr) and sub.attr == "role")
            or (isinstance(sub, nodes.Getitem) and isinstance(sub.arg, nodes.Const) and sub.arg.value == "role")
            or (isinstance(sub, nodes.Name) and "role" in sub.name)
            for sub in (node, *index.find_all(node, (nodes.Getattr, nodes.Getitem, nodes.Name)))
        )

    def strings(node: nodes.Node) -> set[str]:
        return {c.value for c in index.find_all(node, nodes.Const) if isinstance(c.value, str)} | (
            {node.value} if isinstance(node, nodes.Const) and isinstance(node.value, str) else set()
        )

    found: set[str] = set()
    for compare in index.all(nodes.Compare):
        operands = [compare.expr, *(op.expr for op in compare.ops)]
        if any(is_role(o) for o in operands):
            for operand in operands:
                if not is_role(operand):
                    found |= strings(operand)
    for call in index.all((nodes.Test, nodes.Filter)):
        if call.name in {"equalto", "eq", "sameas"} and call.node is not None and is_role(call.node):
            found |= {v for a in call.args for v in strings(a)}
        if call.name in {"selectattr", "rejectattr"} and call.args and strings(call.args[0]) == {"role"}:
            found |= {v for a in call.args[2:] for v in strings(a)}
    return found


def role_names(template: str) -> set[str]:
    """String constants the template compares a `role` with (==, !=, in, `is equalto`, selectattr)."""
    return role_constants(TreeIndex(environment().parse(template)))


# --- probing: render needles and see what comes out ---

USER_NEEDLE = "user-needle-7f3"
SYSTEM_NEEDLE = "system-needle-5c1"
TOOL_NEEDLE = "probe_tool_needle"
CALL_NEEDLES = ("call_needle_one", "call_needle_two")
ARGUMENT_NEEDLE = "argument_needle"
RESULT_NEEDLE = "result-needle-9d2"


def try_render(
    template: str,
    messages: Sequence[Message],
    shape: Shape,
    tools: Sequence[Mapping[str, Any]] = (),
    special_tokens: Mapping[str, str] | None = None,
    *,
    add_generation_prompt: bool = True,
) -> str | None:
    """The reference render of a probe, or None when the template refuses or crashes on it."""
    try:
        return render(
            template,
            to_hf(messages, shape),
            list(tools) or None,
            add_generation_prompt=add_generation_prompt,
            special_tokens=special_tokens,
        )
    except ReferenceRenderError:
        return None


def probe_tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "A probe.",
            "parameters": {"type": "object", "properties": {ARGUMENT_NEEDLE: {"type": "string", "description": "x"}}},
        },
    }


def call_messages(names: Sequence[str], *, ids: bool, result_role: bool = False) -> list[Message]:
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


#: how a template prints a None it was given: as Python writes it, or through `tojson`
NONE_SHOWN = ("None", "null")


def _empty_call_content(
    template: str, shape: Shape, tools: Sequence[Mapping[str, Any]], special_tokens: Mapping[str, str] | None
) -> Literal["string", "none"]:
    """None where the template renders a text-less call with content None (printing the call,
    if it prints calls at all) and prints no None for it (DeepSeek's templates print the calls
    only then); "" where None crashes or is printed (LFM2 writes `content | tojson`: null)."""
    for results in (False, True):  # the call last, and the call followed by its result
        messages = call_messages(CALL_NEEDLES[:1], ids=True, result_role=results)
        with_none = try_render(template, messages, replace(shape, empty_call_content="none"), tools, special_tokens)
        with_empty = try_render(template, messages, shape, tools, special_tokens)
        if with_none is None and with_empty is None:
            continue  # the template refuses this conversation either way
        if with_none is None or (shape.tool_calls and CALL_NEEDLES[0] not in with_none):
            return "string"
        if with_empty is not None and any(with_none.count(shown) > with_empty.count(shown) for shown in NONE_SHOWN):
            return "string"
    return "none"


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
        plain = try_render(template, probe_messages, shape, special_tokens=special_tokens)
        if plain is None or not all(needle in plain for needle in needles):
            parts = try_render(template, probe_messages, replace(shape, content="parts"), special_tokens=special_tokens)
            if parts is not None and all(needle in parts for needle in needles):
                shape = replace(shape, content="parts")
                break

    system = try_render(template, with_system, shape, special_tokens=special_tokens)
    shape = replace(shape, system_role=system is not None and SYSTEM_NEEDLE in system)

    tools = [probe_tool(TOOL_NEEDLE)]
    with_tools = try_render(template, user, shape, tools, special_tokens=special_tokens)
    shape = replace(shape, tools=with_tools is not None and TOOL_NEEDLE in with_tools)

    named = role_names(template) if roles is None else roles
    shape = replace(shape, tool_role=next((role for role in TOOL_RESULT_ROLES if role in named), "tool"))

    # calls name functions the tool list does not, so a rendered tool list is no false hit
    candidates = (
        replace(shape, call_wrapper=wrapper, arguments=arguments, needs_ids=ids, empty_call_content=empty)
        for wrapper in ("function", "flat")
        for arguments in ("object", "string")
        for ids in (False, True)
        for empty in ("string", "none")
    )
    for candidate in candidates:
        rendered = try_render(
            template, call_messages(CALL_NEEDLES[:1], ids=candidate.needs_ids), candidate, tools, special_tokens
        )
        if rendered is not None and CALL_NEEDLES[0] in rendered:
            shape = replace(candidate, tool_calls=True)
            break

    if shape.empty_call_content == "string":
        shape = replace(shape, empty_call_content=_empty_call_content(template, shape, tools, special_tokens))
    results = try_render(
        template, call_messages(CALL_NEEDLES[:1], ids=True, result_role=True), shape, tools, special_tokens
    )
    shape = replace(shape, tool_results=results is not None and RESULT_NEEDLE in results)
    if shape.tool_calls:
        both = try_render(template, call_messages(CALL_NEEDLES, ids=True), shape, tools, special_tokens)
        shape = replace(shape, parallel_calls=both is not None and all(name in both for name in CALL_NEEDLES))
    return shape
