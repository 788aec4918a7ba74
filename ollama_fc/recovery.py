"""The response side of tool-call recovery, shared by `ollama_fc.Client` and the proxy.

A chat response (whole, or streamed chunk by chunk) whose text holds tool calls comes back with
`message.tool_calls` filled (ollama's own ToolCall objects, checked against the offered tools'
schemas) and the call text removed from `content`. Responses where Ollama parsed the calls
itself pass through untouched. The model's format comes from its template (the family marker
written by `ollama-fc build`, else the tag Ollama derives), else every format is tried.

A model created with `PARSER passthrough` (what `ollama-fc build` makes) gets no parsing from
Ollama at all: its raw text arrives here, and the thinking block is split off too
(`thinking=True`), as Ollama would have done. `ModelProfile` reads from `show` which kind of
model it is.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import ollama
from ollama import ChatResponse, Message

from .arguments import InvalidToolCall, validate_arguments
from .errors import ToolCallError
from .functions import function_to_tool
from .markers import PASSTHROUGH_PARSER, parse_tag, read_marker
from .parsers.base import ParsedCall, tool_name
from .parsers.learned import learned_parser
from .parsers.learned_format import LEARNED_PREFIX
from .parsers.registry import PARSERS, format_for_tag, parsers_for
from .parsers.streaming import StreamingRecoverer, recover_text
from .thinking import ThinkingSplitter, think_enabled

ToolSpec = Union[Mapping[str, Any], ollama.Tool, Callable[..., Any]]


def format_from_template(template: str | None) -> str | None:
    """The tool-call format a model's Go template asks for, or None if it does not say.

    A family marker naming a format this version does not know (a model built by a newer
    ollama-fc) warns and gives None, so every format is tried rather than the chat failing. A
    `learned:<token>` format (written by `ollama-fc convert`) carries the format itself.
    """
    if not template:
        return None
    marker = read_marker(template)
    if marker:
        if marker[1] in PARSERS:
            return marker[1]
        if marker[1].startswith(LEARNED_PREFIX):
            try:
                return learned_parser(marker[1]).name
            except ToolCallError as exc:
                warnings.warn(f"{exc}; trying every format", stacklevel=4)
                return None
        warnings.warn(
            f"the model's template names tool-call format {marker[1]!r}, unknown to this "
            "ollama-fc; trying every format (upgrade ollama-fc, or pass tool_format=)",
            stacklevel=4,
        )
        return None
    return format_for_tag(parse_tag(template))


_PARSER_LINE = re.compile(r"^PARSER[ \t]+(\S+)[ \t]*$", re.MULTILINE)


def parser_from_show(show: ollama.ShowResponse) -> str | None:
    """The built-in parser a model was created with (its `PARSER` line), or None.

    Ollama (v0.24.0 through at least v0.34) does not return the parser as a field of `show`,
    but prints it in the Modelfile `show` returns; the template and license are cut out first,
    so a line of theirs cannot pass for it.
    """
    modelfile = show.modelfile or ""
    for text in (show.template, show.license):
        if text:
            modelfile = modelfile.replace(text, "")
    lines = _PARSER_LINE.findall(modelfile)
    return lines[-1].lower() if lines else None


@dataclass(frozen=True)
class ModelProfile:
    """What the response side needs to know about a model, read once from `show`."""

    #: the tool-call format its template names (None: try every format)
    tool_format: str | None = None
    #: created with `PARSER passthrough`: Ollama returns the raw text, calls and thinking included
    passthrough: bool = False
    #: Ollama lists the `thinking` capability (then thinking is on unless a request turns it off)
    thinks: bool = False

    @classmethod
    def from_show(cls, show: ollama.ShowResponse, model: str | None = None) -> ModelProfile:
        """The profile `show` gives. With the model's name, a model ollama-fc did not build (no
        family marker) gets the format learned from its own chat template (`installed.own_format`),
        before the one its Go template's tool tag names."""
        tool_format = format_from_template(show.template)
        if model is not None and show.template is not None and read_marker(show.template) is None:
            from .installed import own_format  # reads the GGUF and learns: only for such a model

            tool_format = own_format(model, show) or tool_format
        return cls(
            tool_format=tool_format,
            passthrough=parser_from_show(show) == PASSTHROUGH_PARSER,
            thinks="thinking" in (show.capabilities or ()),
        )

    def splits_thinking(self, think: Any) -> bool:
        """Whether the response side must split thinking off for a request's `think` value:
        only for a passthrough model, and only where Ollama would have split it."""
        return self.passthrough and think_enabled(think, self.thinks)


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


def keep_reply(
    error: InvalidToolCall, response: ChatResponse, text: str, thinking: str | None, calls: Sequence[ParsedCall]
) -> InvalidToolCall:
    """The error with the whole reply attached as the model wrote it: `text` in content (the
    call text included) and the calls unchecked, so catching it loses nothing."""
    message = response.message.model_copy(
        update={
            "content": text,
            "thinking": thinking or None,
            "tool_calls": OfferedTools(None).tool_calls(calls, validate=False) or None,
        }
    )
    error.response = response.model_copy(update={"message": message})
    return error


class StreamRewriter:
    """Rewrites streamed chunks: held call text is withheld, recovered calls become tool_calls.

    With `thinking`, a leading `<think>` block goes to `message.thinking` chunk by chunk first
    (a passthrough model's raw text). Calls are recovered only when tools were offered.

    With `validate`, a call that fails its schema check is not yielded: `stream()` reads the
    rest of the reply and then raises InvalidToolCall carrying all of it (`keep_reply`), so the
    text after the call is not lost with the stream.
    """

    def __init__(
        self, offered: OfferedTools, format_name: str | None, validate: bool, *, thinking: bool = False
    ) -> None:
        self.offered = offered
        self.validate = validate
        self.recoverer = (
            StreamingRecoverer(parsers_for(format_name), offered.wire) if offered.wire is not None else None
        )
        self.splitter = ThinkingSplitter() if thinking else None
        self.ollama_parsed = False  # set once Ollama returned parsed calls: it parses this model
        self.saw_content = False
        self.failure: InvalidToolCall | None = None
        self._keeps = validate and self.recoverer is not None  # the reply is kept for a failure
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[ParsedCall] = []

    def rewrite(self, chunk: ChatResponse) -> ChatResponse:
        message = chunk.message
        if self.ollama_parsed or message.tool_calls:
            self.ollama_parsed = True  # Ollama parses this model's calls itself
            return chunk
        raw = message.content or ""
        self.saw_content = self.saw_content or bool(raw)
        if chunk.done and not self.saw_content:
            warn_if_dropped(chunk)
        if not raw and not chunk.done:
            if self._keeps and message.thinking:
                self._thinking.append(message.thinking)
            return chunk
        thinking, text = "", raw
        if self.splitter is not None:
            thinking, text = self.splitter.feed(raw)
            if chunk.done:
                more_thinking, more_text = self.splitter.finish()
                thinking, text = thinking + more_thinking, text + more_text
        pieces: list[str | list[ParsedCall]] = [text] if text else []
        if self.recoverer is not None:
            pieces = self.recoverer.feed(text) if text else []
            if chunk.done:
                pieces += self.recoverer.finish()
        calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
        if self._keeps:
            self._text.append(text)
            self._thinking.append((message.thinking or "") + thinking)
            self._calls.extend(calls)
        if not thinking and (pieces == [raw] or (not raw and not pieces)):
            return chunk
        content = "".join(piece for piece in pieces if isinstance(piece, str))
        update: dict[str, Any] = {"content": content}
        if thinking:
            update["thinking"] = (message.thinking or "") + thinking
        if calls and self.failure is None:
            try:
                update["tool_calls"] = self.offered.tool_calls(calls, self.validate)
            except InvalidToolCall as error:
                self.failure = error
        return chunk.model_copy(update={"message": message.model_copy(update=update)})

    def _failed(self, last: ChatResponse) -> InvalidToolCall:
        assert self.failure is not None
        return keep_reply(self.failure, last, "".join(self._text), "".join(self._thinking), self._calls)

    def stream(self, chunks: Iterable[ChatResponse]) -> Iterator[ChatResponse]:
        """The rewritten chunks, up to a call that fails its check (then InvalidToolCall at the end)."""
        last: ChatResponse | None = None
        for chunk in chunks:
            rewritten = self.rewrite(chunk)
            last = chunk
            if self.failure is None:
                yield rewritten
        if last is not None and self.failure is not None:
            raise self._failed(last)

    async def astream(self, chunks: AsyncIterator[ChatResponse]) -> AsyncIterator[ChatResponse]:
        """`stream` for an async iterator of chunks."""
        last: ChatResponse | None = None
        async for chunk in chunks:
            rewritten = self.rewrite(chunk)
            last = chunk
            if self.failure is None:
                yield rewritten
        if last is not None and self.failure is not None:
            raise self._failed(last)


def offer(tools: Sequence[ToolSpec] | None, tool_format: str | None) -> OfferedTools:
    """The request's tools; an unknown `tool_format` fails here, before the request is sent."""
    if tool_format is not None:
        parsers_for(tool_format)
    return OfferedTools(tools)


def recover_response(
    response: ChatResponse,
    offered: OfferedTools,
    format_name: str | None,
    validate: bool,
    *,
    thinking: bool = False,
) -> ChatResponse:
    """A whole (not streamed) response with the calls left in its text moved to `tool_calls`.

    With `thinking`, a leading `<think>` block first goes to `message.thinking`. A call that
    fails its check (with `validate`) raises InvalidToolCall carrying the reply (`keep_reply`).
    """
    message = response.message
    if message.tool_calls or (offered.wire is None and not thinking):
        return response
    if not message.content:
        warn_if_dropped(response)
        return response
    if thinking:
        splitter = ThinkingSplitter()
        thought, content = splitter.feed(message.content)
        more_thought, more_content = splitter.finish()
        message.content = content + more_content
        if thought + more_thought:
            message.thinking = (message.thinking or "") + thought + more_thought
    if offered.wire is None or not message.content:
        return response
    result = recover_text(message.content, parsers_for(format_name), offered.wire)
    if not result.tool_calls:
        return response
    try:
        message.tool_calls = offered.tool_calls(result.tool_calls, validate)
    except InvalidToolCall as error:
        raise keep_reply(error, response, message.content, message.thinking, result.tool_calls) from None
    message.content = result.content
    return response
