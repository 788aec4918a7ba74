"""Drop-in `ollama.Client` / `ollama.AsyncClient` that recover tool calls Ollama left as text.

When Ollama returns no `tool_calls` but the content holds calls in the model's format, the
response comes back with `message.tool_calls` filled (ollama's own ToolCall objects) and the
call text removed from `content`. Responses where Ollama parsed the calls itself pass through
untouched, so their arguments are not schema-checked here (`run_tools` checks every call before
running it). Recovered calls are checked against the offered tool's schema and coerced; an
invalid one raises InvalidToolCall unless `validate=False`, and the exception's `response`
holds the whole reply as the model wrote it (streamed: once the stream has ended), so nothing
is lost. A call missing a required argument, or naming a tool not offered, is not a call at
all: its text stays in `content` (docs/RECOVERY.md).

The format comes from `tool_format=`, else from the model (one `show` per model per client: the
family marker written by `ollama-fc build`; for a model ollama-fc did not build, the format
learned from its own chat template, once per template and weights in a process
(`installed.own_format`); else the tag in the template's `.ToolCalls` block), else every format
is tried.

A model created with `PARSER passthrough` (what `ollama-fc build` makes; `show` says so) gets no
parsing from Ollama: every call in its text is recovered here, and its leading `<think>` block
goes to `message.thinking` whenever Ollama would have split it (`think=True` or a level, or
`think` not given for a model with the thinking capability). Without tools and with
`think=False` the response is plain ollama's, with no `show`.

Ollama itself can lose a response of a model it parses (not passthrough): when the model prints
the template's tool-call tag and what follows does not parse, Ollama returns no content and no
calls (v0.24.0 through at least v0.32). Nothing is left to recover then, so the client says so with a DroppedOutputWarning
instead of returning an empty answer silently.

Errors stay ollama-python's, so code written for it keeps working: `ConnectionError` when no
Ollama answers at the host (start one with `ollama serve`, or set OLLAMA_HOST / `host=`),
`ollama.ResponseError` for a missing model. An unknown `tool_format=` raises ToolCallError
before the request is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, cast, overload

import ollama
from ollama import ChatResponse, Message

from .recovery import (
    DroppedOutputWarning,
    ModelProfile,
    StreamRewriter,
    ToolSpec,
    format_from_template,
    offer,
    recover_response,
)
from .toolchoice import ChoiceEnforcer, ToolChoice, check_enforceable, forced_request, needs_version, none_request

__all__ = [
    "AsyncClient",
    "Client",
    "DroppedOutputWarning",
    "ModelProfile",
    "ToolSpec",
    "chat",
    "format_from_template",
]


class Client(ollama.Client):
    """`ollama.Client` whose `chat` also returns the tool calls Ollama left in the text."""

    def __init__(self, host: str | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._profiles: dict[str, ModelProfile] = {}

    def model_profile(self, model: str) -> ModelProfile:
        """The model's tool-call format, parser and thinking capability (one `show` per model)."""
        if model not in self._profiles:
            self._profiles[model] = ModelProfile.from_show(self.show(model), model)
        return self._profiles[model]

    def tool_format(self, model: str) -> str | None:
        """The model's tool-call format, from its template (asked once per model)."""
        return self.model_profile(model).tool_format

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
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
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
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatResponse]: ...

    def chat(
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: bool = False,
        tool_format: str | None = None,
        validate: bool = True,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> ChatResponse | Iterator[ChatResponse]:
        """`ollama.Client.chat`, plus `tool_format=` (a format name), `validate=` (schema check),
        and `tool_choice=` / `parallel_tool_calls=` as OpenAI's, enforced (see `toolchoice`)."""
        choice = ToolChoice.read(tool_choice, parallel_tool_calls)
        messages, sent_tools = none_request(choice, messages or [], tools)
        offered = offer(sent_tools, tool_format)
        if choice.forced:
            profile = self.model_profile(model)
            version = self._version() if needs_version(choice, profile) else None
            check_enforceable(choice, profile, version, model)
            forced_request(choice, offered.schemas, kwargs)
        response = cast(
            "ChatResponse | Iterator[ChatResponse]",
            super().chat(model, messages, tools=offered.wire, stream=stream, **kwargs),  # type: ignore[call-overload]
        )
        think = kwargs.get("think")
        if offered.wire is None and think is False:
            return response
        profile = self.model_profile(model)
        thinking = profile.splits_thinking(think)
        if offered.wire is None and not thinking:
            return response
        format_name = tool_format or profile.tool_format
        enforcer = ChoiceEnforcer(choice, model) if choice.enforced else None
        if isinstance(response, ChatResponse):
            return _enforced(recover_response(response, offered, format_name, validate, thinking=thinking), enforcer)
        chunks = StreamRewriter(offered, format_name, validate, thinking=thinking).stream(response)
        return chunks if enforcer is None else (_enforced(chunk, enforcer) for chunk in chunks)

    def _version(self) -> str | None:
        """The server's version (`/api/version`), which says whether it enforces `format`."""
        answer = self._request_raw("GET", "/api/version")  # type: ignore[no-untyped-call]
        version = answer.json().get("version")
        return str(version) if version else None


class AsyncClient(ollama.AsyncClient):
    """`ollama.AsyncClient` whose `chat` also returns the tool calls Ollama left in the text."""

    def __init__(self, host: str | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._profiles: dict[str, ModelProfile] = {}

    async def model_profile(self, model: str) -> ModelProfile:
        """The model's tool-call format, parser and thinking capability (one `show` per model)."""
        if model not in self._profiles:
            show = await self.show(model)
            self._profiles[model] = await asyncio.to_thread(ModelProfile.from_show, show, model)
        return self._profiles[model]

    async def tool_format(self, model: str) -> str | None:
        """The model's tool-call format, from its template (asked once per model)."""
        return (await self.model_profile(model)).tool_format

    async def chat(  # type: ignore[override]
        self,
        model: str = "",
        messages: Sequence[Mapping[str, Any] | Message] | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        stream: bool = False,
        tool_format: str | None = None,
        validate: bool = True,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncIterator[ChatResponse]:
        """`ollama.AsyncClient.chat`, plus `tool_format=`, `validate=`, `tool_choice=` and
        `parallel_tool_calls=` as in Client.chat."""
        choice = ToolChoice.read(tool_choice, parallel_tool_calls)
        messages, sent_tools = none_request(choice, messages or [], tools)
        offered = offer(sent_tools, tool_format)
        if choice.forced:
            profile = await self.model_profile(model)
            version = await self._version() if needs_version(choice, profile) else None
            check_enforceable(choice, profile, version, model)
            forced_request(choice, offered.schemas, kwargs)
        response = cast(
            "ChatResponse | AsyncIterator[ChatResponse]",
            await super().chat(model, messages, tools=offered.wire, stream=stream, **kwargs),  # type: ignore[call-overload]
        )
        think = kwargs.get("think")
        if offered.wire is None and think is False:
            return response
        profile = await self.model_profile(model)
        thinking = profile.splits_thinking(think)
        if offered.wire is None and not thinking:
            return response
        format_name = tool_format or profile.tool_format
        enforcer = ChoiceEnforcer(choice, model) if choice.enforced else None
        if isinstance(response, ChatResponse):
            return _enforced(recover_response(response, offered, format_name, validate, thinking=thinking), enforcer)
        rewritten = StreamRewriter(offered, format_name, validate, thinking=thinking).astream(response)
        if enforcer is None:
            return rewritten

        async def enforced() -> AsyncIterator[ChatResponse]:
            async for chunk in rewritten:
                yield _enforced(chunk, enforcer)

        return enforced()

    async def _version(self) -> str | None:
        """The server's version (`/api/version`), which says whether it enforces `format`."""
        answer = await self._request_raw("GET", "/api/version")  # type: ignore[no-untyped-call]
        version = answer.json().get("version")
        return str(version) if version else None


def _enforced(response: ChatResponse, enforcer: ChoiceEnforcer | None) -> ChatResponse:
    """A response (or chunk) with the request's tool_choice enforced on its calls."""
    if enforcer is None:
        return response
    message = enforcer.apply(response.message.model_copy(), bool(response.done))
    return response.model_copy(update={"message": message})


_default_client: Client | None = None


def chat(*args: Any, **kwargs: Any) -> Any:
    """Module-level `chat` like `ollama.chat`, through a default Client (OLLAMA_HOST applies)."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client.chat(*args, **kwargs)
