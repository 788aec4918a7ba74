"""The routes whose API the proxy translates to Ollama's `/api/chat` and back: `/v1/messages`
(Anthropic) and `/v1/responses` (OpenAI Responses).

Why not forward them to Ollama's own layers for these APIs, as `/v1/chat/completions` is:
neither layer (v0.24.0, nor through v0.34) carries what the proxy must give the template and
the model. A tool result reaches the template without its tool's name (the layers set only the
call id, and templates render `.ToolName`), `tool_choice` is read and ignored, and the
Anthropic layer has no field for `format`, which a forced call needs. So each route turns its
request into one `/api/chat` request (`translate`), and writes the engine's answer in its API
(`ApiWriter`): whole, or as the API's server-sent events. The engine, the tool-choice rules and
the disconnect handling are the ones every route shares.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from ollama import ChatResponse, Message
from pydantic import ValidationError

from ..toolchoice import ToolChoice
from .exchange import Exchange
from .recovering import ResponseRecovery
from .upstream import JSON_TYPE, Upstream, compact_json, line_batches, send_error

log = logging.getLogger("ollama_fc.serve")

NATIVE_CHAT = "/api/chat"
EVENT_STREAM = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]

Numbered = list[tuple[int, str, Message.ToolCall]]


class RequestError(ValueError):
    """A request the route cannot translate; its message is the 400's one line."""


def random_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def sse(event: str, data: Mapping[str, Any]) -> bytes:
    """One server-sent event, named as both APIs name them (`event:` and the data's `type`)."""
    return b"event: " + event.encode() + b"\ndata: " + compact_json(data) + b"\n\n"


@dataclass
class NativeChat:
    """An app's request as one `/api/chat` request, with what the answer's writer needs."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    choice: ToolChoice
    stream: bool
    think: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    format: Any = None

    def body(self) -> bytes:
        request: dict[str, Any] = {"model": self.model, "messages": self.messages, "stream": self.stream}
        if self.tools:
            request["tools"] = self.tools
        if self.think is not None:
            request["think"] = self.think
        if self.options:
            request["options"] = self.options
        if self.format is not None:
            request["format"] = self.format
        return compact_json(request)


class ApiWriter(Protocol):
    """One answer written in an app's API, from the engine's messages."""

    def whole(self, response: ChatResponse, message: Message, calls: Numbered) -> dict[str, Any]: ...

    def opening(self) -> bytes: ...

    def delta(self, message: Message, calls: Numbered) -> bytes: ...

    def closing(self, final: ChatResponse) -> bytes: ...

    def failed(self, reason: str) -> bytes: ...


def named_results(messages: list[dict[str, Any]]) -> None:
    """Give each tool result the name of the call it answers (`tool_name`, which templates render),
    from the calls of the assistant messages before it."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[str(call.get("id"))] = str(call["function"]["name"])
        if message.get("role") == "tool" and not message.get("tool_name"):
            name = names.get(str(message.get("tool_call_id")))
            if name:
                message["tool_name"] = name


def native_tool(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    """A tool in Ollama's shape; a nameless one is a RequestError."""
    if not isinstance(name, str) or not name:
        raise RequestError("every tool needs a name")
    function: dict[str, Any] = {"name": name, "parameters": parameters or {"type": "object", "properties": {}}}
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


def usable_tools(tools: Any, kind: str, convert: Callable[[Mapping[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's tools of `kind` (a tool without a type is one) in Ollama's shape. Tools the
    API's server would run itself (web search, a shell, a freeform tool) have no counterpart in
    Ollama: they are left out and named in one log line, so an agent that always offers them
    (Codex) still works with its function tools."""
    usable, skipped = [], []
    for tool in tools or ():
        if tool.get("type", kind) == kind:
            usable.append(convert(tool))
        else:
            skipped.append(str(tool.get("name") or tool.get("type")))
    if skipped:
        log.warning(
            "left out tools that Ollama cannot run: %s (only %s tools are offered to the model)",
            ", ".join(skipped),
            kind,
        )
    return usable


async def translated_chat(
    exchange: Exchange, upstream: Upstream, path: str, chat: NativeChat, writer: ApiWriter
) -> None:
    """Send `chat` to Ollama's `/api/chat` and answer the app in its API through `writer`."""
    named_results(chat.messages)
    try:
        response = await upstream.send(exchange, NATIVE_CHAT, chat.body())
    except httpx.TransportError as error:
        await upstream.unreachable(exchange, path, error)
        return
    try:
        if response.status_code != 200:
            await send_error(exchange, path, response.status_code, _error_of(await response.aread()))
            return
        profile = await upstream.profile(chat.model)
        recovery = ResponseRecovery(
            chat.tools,
            profile.tool_format,
            chat.model,
            thinking=profile.splits_thinking(chat.think),
            choice=chat.choice,
        )
        if chat.stream:
            await _stream(exchange, response, recovery, writer)
            return
        whole = await response.aread()
    except httpx.TransportError as error:
        await upstream.unreachable(exchange, path, error)
        return
    finally:
        await response.aclose()
    try:
        answer = ChatResponse.model_validate_json(whole)
    except ValidationError as error:
        await send_error(exchange, path, 502, f"Ollama's answer could not be read: {_error_of(whole) or error}")
        return
    message = recovery.whole(answer) or answer.message
    body = writer.whole(answer, message, recovery.numbered(message))
    await exchange.respond(200, JSON_TYPE, compact_json(body))


async def _stream(exchange: Exchange, response: httpx.Response, recovery: ResponseRecovery, writer: ApiWriter) -> None:
    await exchange.start(200, EVENT_STREAM)
    await exchange.chunk(writer.opening())
    try:
        async for lines in line_batches(response):
            events = []
            for line in lines:
                if not line.strip():
                    continue
                try:
                    chunk = ChatResponse.model_validate_json(line)
                except ValidationError:
                    events.append(writer.failed(_error_of(line) or "Ollama sent a line the proxy could not read"))
                    continue
                message = recovery.chunk(chunk) or chunk.message
                events.append(writer.delta(message, recovery.numbered(message)))
                if chunk.done:
                    events.append(writer.closing(chunk))
            if events:
                await exchange.chunk(b"".join(events))
    except httpx.TransportError as error:
        log.warning("Ollama closed the stream of %s early: %s", NATIVE_CHAT, error)
        await exchange.chunk(writer.failed(f"Ollama closed the stream early ({error})"))
    await exchange.end()


def _error_of(data: bytes) -> str:
    """Ollama's error message (`{"error": ...}`), else the text it sent."""
    try:
        value = json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace").strip()
    if isinstance(value, dict) and isinstance(value.get("error"), str):
        return str(value["error"])
    return data.decode("utf-8", "replace").strip()
