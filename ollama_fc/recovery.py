"""The response side of tool-call recovery, shared by `ollama_fc.Client` and the proxy.

A chat response (whole, or streamed chunk by chunk) whose text holds tool calls comes back with
`message.tool_calls` filled (ollama's own ToolCall objects, checked against the offered tools'
schemas) and the call text removed from `content`. Responses where Ollama parsed the calls
itself pass through untouched. The model's format comes from its template (the family marker
written by `ollama-fc build`, else the tag Ollama derives), else every format is tried.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

import ollama
from ollama import ChatResponse, Message

from .convert.api import parse_tag, read_marker
from .functions import function_to_tool
from .parsers.base import ParsedCall, tool_name
from .parsers.registry import PARSERS, parsers_for
from .parsers.streaming import StreamingRecoverer, recover_text
from .schema import validate_arguments

ToolSpec = Union[Mapping[str, Any], ollama.Tool, Callable[..., Any]]


# Tag (the text Ollama derives from the template) -> our format name, most specific first.
_TAG_FORMATS: tuple[tuple[str, str], ...] = (
    ("<tool_call>", "hermes"),
    ("<function_call>", "minimax_ts"),
    ("```typescript", "minimax_ts"),
    ("functools", "functools"),
    ("[TOOL_CALLS]", "mistral"),
    ("<|python_tag|>", "llama3_json"),
)


def format_from_template(template: str | None) -> str | None:
    """The tool-call format a model's Go template asks for, or None if it does not say.

    A family marker naming a format this version does not know (a model built by a newer
    ollama-fc) warns and gives None, so every format is tried rather than the chat failing.
    """
    if not template:
        return None
    marker = read_marker(template)
    if marker:
        if marker[1] in PARSERS:
            return marker[1]
        warnings.warn(
            f"the model's template names tool-call format {marker[1]!r}, unknown to this "
            "ollama-fc; trying every format (upgrade ollama-fc, or pass tool_format=)",
            stacklevel=4,
        )
        return None
    tag = parse_tag(template)
    for needle, format_name in _TAG_FORMATS:
        if needle in tag:
            return format_name
    return None


class DroppedOutputWarning(UserWarning):
    """Ollama generated tokens but returned neither content nor tool calls."""


def warn_if_dropped(response: ChatResponse) -> None:
    """Warn when Ollama's own tool parser swallowed the whole response (see module docstring)."""
    if (response.eval_count or 0) > 1:
        warnings.warn(
            f"Ollama returned no content and no tool calls although the model generated "
            f"{response.eval_count} tokens: its tool-call parser consumed text after the template's "
            "tool tag that it could not parse, and dropped it. Nothing is left to recover; ask again, "
            "or build the model with a template whose tag the model does not print",
            DroppedOutputWarning,
            stacklevel=4,
        )


class OfferedTools:
    """The tools of one request: what is sent to Ollama, and the schemas to check calls against."""

    def __init__(self, tools: Sequence[ToolSpec] | None) -> None:
        self.wire: list[Any] | None = None
        self.schemas: dict[str, Any] = {}
        if tools is None:
            return
        self.wire = [function_to_tool(tool) if callable(tool) else tool for tool in tools]
        for tool in self.wire:
            name = tool_name(tool)
            function = tool.get("function") if isinstance(tool, Mapping) else getattr(tool, "function", None)
            parameters = (
                function.get("parameters") if isinstance(function, Mapping) else getattr(function, "parameters", None)
            )
            if isinstance(parameters, ollama.Tool.Function.Parameters):
                parameters = parameters.model_dump(by_alias=True, exclude_none=True)
            if name:
                self.schemas[name] = parameters

    def tool_calls(self, calls: Sequence[ParsedCall], validate: bool) -> list[Message.ToolCall]:
        """Ollama's ToolCall objects for recovered calls, checked against the schemas."""
        return [
            Message.ToolCall(
                function=Message.ToolCall.Function(
                    name=call.name,
                    arguments=validate_arguments(call.name, self.schemas.get(call.name), call.arguments)
                    if validate
                    else call.arguments,
                )
            )
            for call in calls
        ]


class StreamRewriter:
    """Rewrites streamed chunks: held call text is withheld, recovered calls become tool_calls."""

    def __init__(self, offered: OfferedTools, format_name: str | None, validate: bool) -> None:
        self.offered = offered
        self.validate = validate
        self.recoverer = StreamingRecoverer(parsers_for(format_name), offered.wire)
        self.passthrough = False
        self.saw_content = False

    def rewrite(self, chunk: ChatResponse) -> ChatResponse:
        message = chunk.message
        if self.passthrough or message.tool_calls:
            self.passthrough = True  # Ollama parses this model's calls itself
            return chunk
        text = message.content or ""
        self.saw_content = self.saw_content or bool(text)
        if chunk.done and not self.saw_content:
            warn_if_dropped(chunk)
        if not text and not chunk.done:
            return chunk
        pieces = self.recoverer.feed(text) if text else []
        if chunk.done:
            pieces += self.recoverer.finish()
        if len(pieces) == 1 and pieces[0] == text:
            return chunk
        content = "".join(piece for piece in pieces if isinstance(piece, str))
        calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
        update: dict[str, Any] = {"content": content}
        if calls:
            update["tool_calls"] = self.offered.tool_calls(calls, self.validate)
        return chunk.model_copy(update={"message": message.model_copy(update=update)})


def offer(tools: Sequence[ToolSpec] | None, tool_format: str | None) -> OfferedTools:
    """The request's tools; an unknown `tool_format` fails here, before the request is sent."""
    if tool_format is not None:
        parsers_for(tool_format)
    return OfferedTools(tools)


def recover_response(
    response: ChatResponse, offered: OfferedTools, format_name: str | None, validate: bool
) -> ChatResponse:
    """A whole (not streamed) response with the calls left in its text moved to `tool_calls`."""
    message = response.message
    if offered.wire is None or message.tool_calls:
        return response
    if not message.content:
        warn_if_dropped(response)
        return response
    result = recover_text(message.content, parsers_for(format_name), offered.wire)
    if not result.tool_calls:
        return response
    message.tool_calls = offered.tool_calls(result.tool_calls, validate)
    message.content = result.content
    return response
