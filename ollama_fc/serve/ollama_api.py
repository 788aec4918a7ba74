"""`/api/chat`: Ollama's chat, with the tool calls Ollama left in the text moved to `tool_calls`.

The request goes to Ollama byte for byte. A request without tools, an error, and every
response or chunk the engine does not change come back byte for byte too; a changed one is
Ollama's own JSON with `message.content` (and `thinking`, when the engine splits it) replaced
and `message.tool_calls` added in Ollama's shape (`id`, `function.index`, `name`,
`arguments`). Whether the answer streams is Ollama's to say (its `stream` default is true):
the proxy follows the response's content type.

`tool_choice` and `parallel_tool_calls`, which Ollama's `/api/chat` does not know, are read
here as the OpenAI routes read them (`ollama_fc.toolchoice`'s rules) and left out of the
request; a request without them is forwarded untouched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from ollama import ChatResponse, Message
from pydantic import ValidationError

from ..toolchoice import none_request
from .choosing import forced_format, read_choice, tool_schemas
from .exchange import Exchange
from .recovering import ResponseRecovery
from .upstream import Upstream, compact_json, line_batches, read_chat_request, repaired_chat, send_error

log = logging.getLogger("ollama_fc.serve")

PATH = "/api/chat"


async def chat(exchange: Exchange, upstream: Upstream) -> None:
    body = await exchange.body()
    try:
        payload = read_chat_request(body)
    except ValueError as error:
        await send_error(exchange, PATH, 400, f"malformed /api/chat request: {error}")
        return
    choice = None
    if "tool_choice" in payload or "parallel_tool_calls" in payload:
        payload = dict(payload)
        schemas = tool_schemas(payload.get("tools"))
        model = str(payload.get("model", ""))
        picked = payload.pop("tool_choice", None), payload.pop("parallel_tool_calls", None)
        choice = await read_choice(exchange, upstream, PATH, model, schemas, *picked)
        if choice is None:
            return
        messages, tools = none_request(choice, payload.get("messages") or [], payload.get("tools"))
        payload["messages"], payload["tools"] = messages, tools
        forced = forced_format(choice, schemas)
        if forced is not None:
            if payload.get("format") is not None:
                await send_error(exchange, PATH, 400, "a forced tool_choice sets the format itself: leave format unset")
                return
            payload["format"] = forced
        body = json.dumps({key: value for key, value in payload.items() if value is not None}).encode()
    await repaired_chat(
        exchange,
        upstream,
        PATH,
        body,
        payload,
        payload.get("think"),
        "application/x-ndjson",
        _rewritten_lines,
        lambda whole, recovery: _rewritten(whole, recovery, whole_response=True),
        choice,
    )


async def _rewritten_lines(response: httpx.Response, recovery: ResponseRecovery) -> AsyncIterator[bytes]:
    try:
        async for lines in line_batches(response):
            yield b"".join([_rewritten(line, recovery, whole_response=False) + b"\n" for line in lines])
    except httpx.TransportError:  # Ollama went away mid-stream: what the engine holds is sent first
        message = recovery.cut_short()
        if message is not None:
            merged = _merged({"role": "assistant"}, message, recovery)
            yield compact_json({"model": recovery.model, "message": merged, "done": False}) + b"\n"
        raise


def _rewritten(data: bytes, recovery: ResponseRecovery, whole_response: bool) -> bytes:
    """One response (or streamed chunk) with recovered calls, or `data` itself when unchanged."""
    try:
        raw = json.loads(data)
        if not isinstance(raw, dict) or not isinstance(raw.get("message"), dict):
            return data  # an error line, or something newer than we know: Ollama's words stand
        response = ChatResponse.model_validate(raw)
    except (ValueError, ValidationError) as error:
        log.warning("passed on a chat response the proxy could not read: %s", error)
        return data
    message = recovery.whole(response) if whole_response else recovery.chunk(response)
    if message is None:
        return data
    raw["message"] = _merged(raw["message"], message, recovery)
    return compact_json(raw) + (b"\n" if whole_response else b"")


def _merged(original: dict[str, Any], message: Message, recovery: ResponseRecovery) -> dict[str, Any]:
    merged = dict(original)
    merged["content"] = message.content or ""
    if message.thinking:
        merged["thinking"] = message.thinking
    calls = recovery.numbered(message)
    if calls:
        merged["tool_calls"] = [
            {
                "id": call_id,
                "function": {"index": index, "name": call.function.name, "arguments": dict(call.function.arguments)},
            }
            for index, call_id, call in calls
        ]
    return merged
