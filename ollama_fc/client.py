"""Drop-in `ollama.Client` / `ollama.AsyncClient` that recover tool calls Ollama left as text.

When Ollama returns no `tool_calls` but the content holds calls in the model's format, the
response comes back with `message.tool_calls` filled (ollama's own ToolCall objects) and the
call text removed from `content`. Responses where Ollama parsed the calls itself pass through
untouched, so their arguments are not schema-checked here (`run_tools` checks every call before
running it). Recovered calls are checked against the offered tool's schema and coerced; an
invalid one raises InvalidToolCall unless `validate=False`.

The format comes from `tool_format=`, else from the model (one `show` per model per client: the
family marker written by `ollama-fc build`, else the tag in the template's `.ToolCalls` block),
else every format is tried.

Ollama itself can lose a response: when the model prints the template's tool-call tag and what
follows does not parse, Ollama returns no content and no calls (v0.24.0 through at least
v0.32). Nothing is left to recover then, so the client says so with a DroppedOutputWarning
instead of returning an empty answer silently.

Errors stay ollama-python's, so code written for it keeps working: `ConnectionError` when no
Ollama answers at the host (start one with `ollama serve`, or set OLLAMA_HOST / `host=`),
`ollama.ResponseError` for a missing model. An unknown `tool_format=` raises ToolCallError
before the request is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, overload

import ollama
from ollama import ChatResponse, Message

from .recovery import (
    DroppedOutputWarning,
    StreamRewriter,
    ToolSpec,
    format_from_template,
    offer,
    recover_response,
)

__all__ = ["AsyncClient", "Client", "DroppedOutputWarning", "ToolSpec", "chat", "format_from_template"]


class Client(ollama.Client):
    """`ollama.Client` whose `chat` also returns the tool calls Ollama left in the text."""

    def __init__(self, host: str | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._formats: dict[str, str | None] = {}

    def tool_format(self, model: str) -> str | None:
        """The model's tool-call format, from its template (asked once per model)."""
        if model not in self._formats:
            self._formats[model] = format_from_template(self.show(model).template)
        return self._formats[model]

    @overload
    def chat(
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: Literal[False] = False,
        tool_format: str | None = None,
        validate: bool = True,
        **kwargs: Any,
    ) -> ChatResponse: ...

    @overload
    def chat(
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: Literal[True] = True,
        tool_format: str | None = None,
        validate: bool = True,
        **kwargs: Any,
    ) -> Iterator[ChatResponse]: ...

    def chat(  # type: ignore[override]
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: bool = False,
        tool_format: str | None = None,
        validate: bool = True,
        **kwargs: Any,
    ) -> ChatResponse | Iterator[ChatResponse]:
        """`ollama.Client.chat`, plus `tool_format=` (a format name) and `validate=` (schema check)."""
        offered = offer(tools, tool_format)
        response = super().chat(model, messages, tools=offered.wire, stream=stream, **kwargs)
        if offered.wire is None:
            return response
        format_name = tool_format or self.tool_format(model)
        if not stream:
            return recover_response(response, offered, format_name, validate)  # type: ignore[arg-type]
        rewriter = StreamRewriter(offered, format_name, validate)
        return (rewriter.rewrite(chunk) for chunk in response)  # type: ignore[union-attr]


class AsyncClient(ollama.AsyncClient):
    """`ollama.AsyncClient` whose `chat` also returns the tool calls Ollama left in the text."""

    def __init__(self, host: str | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._formats: dict[str, str | None] = {}

    async def tool_format(self, model: str) -> str | None:
        """The model's tool-call format, from its template (asked once per model)."""
        if model not in self._formats:
            self._formats[model] = format_from_template((await self.show(model)).template)
        return self._formats[model]

    async def chat(  # type: ignore[override]
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: bool = False,
        tool_format: str | None = None,
        validate: bool = True,
        **kwargs: Any,
    ) -> ChatResponse | AsyncIterator[ChatResponse]:
        """`ollama.AsyncClient.chat`, plus `tool_format=` and `validate=` as in Client.chat."""
        offered = offer(tools, tool_format)
        response = await super().chat(model, messages, tools=offered.wire, stream=stream, **kwargs)
        if offered.wire is None:
            return response
        format_name = tool_format or await self.tool_format(model)
        if not stream:
            return recover_response(response, offered, format_name, validate)  # type: ignore[arg-type]
        rewriter = StreamRewriter(offered, format_name, validate)

        async def rewritten() -> AsyncIterator[ChatResponse]:
            async for chunk in response:  # type: ignore[union-attr]
                yield rewriter.rewrite(chunk)

        return rewritten()


_default_client: Client | None = None


def chat(*args: Any, **kwargs: Any) -> Any:
    """Module-level `chat` like `ollama.chat`, through a default Client (OLLAMA_HOST applies)."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client.chat(*args, **kwargs)
