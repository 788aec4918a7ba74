"""`/api/chat`: Ollama's chat, with the tool calls Ollama left in the text moved to `tool_calls`.

The request goes to Ollama byte for byte. A request without tools, an error, and every
response or chunk the engine does not change come back byte for byte too; a changed one is
Ollama's own JSON with `message.content` (and `thinking`, when the engine splits it) replaced
and `message.tool_calls` added in Ollama's shape (`id`, `function.index`, `name`,
`arguments`). Whether the answer streams is Ollama's to say (its `stream` default is true):
the proxy follows the response's content type.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from ollama import ChatResponse, Message
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from .recovering import ResponseRecovery
from .upstream import ClientGone, Upstream, error_response, read_chat_request, relay, until_disconnected

log = logging.getLogger("ollama_fc.serve")

PATH = "/api/chat"


async def chat(request: Request) -> Response:
    upstream: Upstream = request.app.state.upstream
    body = await request.body()
    try:
        payload = read_chat_request(body)
    except ValueError as error:
        return error_response(PATH, 400, f"malformed /api/chat request: {error}")
    try:
        response = await upstream.send(request, PATH, body)
    except ClientGone:
        return Response(status_code=499)
    except httpx.TransportError as error:
        return upstream.unreachable(PATH, error)
    tools = payload.get("tools")
    if not tools or response.status_code != 200:
        return relay(response, response.aiter_raw(), keep_length=True)
    streamed = response.headers.get("content-type", "").startswith("application/x-ndjson")
    try:
        model = str(payload.get("model", ""))
        recovery = ResponseRecovery(tools, await upstream.tool_format(model), model)
        if streamed:
            return relay(response, _rewritten_lines(response, recovery), keep_length=False)
        whole = await until_disconnected(request, response.aread())
    except ClientGone:
        return Response(status_code=499)
    except httpx.TransportError as error:
        return upstream.unreachable(PATH, error)
    finally:
        if not streamed:
            await response.aclose()
    headers = {name: value for name, value in response.headers.items() if name.lower() != "content-length"}
    return Response(_rewritten(whole, recovery, whole_response=True), response.status_code, headers)


async def _rewritten_lines(response: httpx.Response, recovery: ResponseRecovery) -> AsyncIterator[bytes]:
    async for line in response.aiter_lines():
        yield _rewritten(line.encode(), recovery, whole_response=False) + b"\n"


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
    return (json.dumps(raw, ensure_ascii=False, separators=(",", ":")) + ("\n" if whole_response else "")).encode()


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
