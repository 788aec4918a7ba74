"""`/v1/chat/completions`: OpenAI's chat API, forwarded to Ollama's own `/v1`, repaired on the way back.

Why forward to Ollama's `/v1` rather than translate to `/api/chat`: Ollama's OpenAI layer is a
one-to-one mapping of its native chat (each native chunk becomes one OpenAI chunk; content,
thinking and the done reason map field for field), so the engine sees the same text either
way. What that layer does besides (the defaults for temperature and top_p, `max_tokens`,
`stop`, `seed`, `response_format`, images as data URLs, `reasoning_effort`, `logprobs`, usage,
its error bodies) stays Ollama's, exactly as an app gets it without the proxy, instead of a
second translation that would drift from it.

Requests: forwarded as they are, except that a `tool` message with a `tool_call_id` and no
`name` gets the name of the call with that id from the earlier assistant messages (Ollama's
`tool_name`, which templates render); recent Ollama versions do that themselves, older ones
do not. Responses: recovered calls become `tool_calls` (`id`, `index`, `type: function`,
`function.name`, `function.arguments` as a JSON string), the call text leaves `content`, and
`finish_reason` becomes `tool_calls`. Streamed, each call arrives whole in one delta, as
Ollama sends the calls it parses itself; OpenAI clients accumulate deltas by `index`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
from ollama import ChatResponse, Message
from pydantic import ValidationError

from ..toolchoice import NONE, none_request
from .choosing import forced_format, read_choice, tool_schemas
from .exchange import Exchange
from .recovering import ResponseRecovery
from .upstream import Upstream, compact_json, line_batches, read_chat_request, repaired_chat, send_error

log = logging.getLogger("ollama_fc.serve")

PATH = "/v1/chat/completions"
DATA = b"data: "
DONE = b"data: [DONE]"


async def chat_completions(exchange: Exchange, upstream: Upstream) -> None:
    body = await exchange.body()
    try:
        payload = dict(read_chat_request(body))
    except ValueError as error:
        await send_error(exchange, PATH, 400, f"malformed chat completions request: {error}")
        return
    changed = name_tool_results(payload)
    model = str(payload.get("model", ""))
    schemas = tool_schemas(payload.get("tools"))
    choice = await read_choice(
        exchange, upstream, PATH, model, schemas, payload.get("tool_choice"), payload.get("parallel_tool_calls")
    )
    if choice is None:
        return
    if choice.mode == NONE:
        # the tools withheld (the template renders none) and, after a tool result, NONE_NOTE last
        sent, tools = none_request(choice, payload.get("messages") or [], payload.get("tools"))
        changed = changed or payload.get("tools") is not None or len(sent) != len(payload.get("messages") or [])
        payload["messages"], payload["tools"] = sent, tools
    forced = forced_format(choice, schemas)
    if forced is not None:
        if payload.get("response_format") not in (None, {"type": "text"}):
            await send_error(
                exchange, PATH, 400, "a forced tool_choice sets the format itself: leave response_format unset"
            )
            return
        payload["response_format"] = {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": forced}}
        changed = True
    if changed:
        body = json.dumps(payload, ensure_ascii=False).encode()
    await repaired_chat(
        exchange,
        upstream,
        PATH,
        body,
        payload,
        reasoning_effort(payload),
        "text/event-stream",
        lambda response, recovery: StreamRepair(recovery).lines(response),
        _repaired_completion,
        choice,
    )


def reasoning_effort(payload: Mapping[str, Any]) -> Any:
    """The request's `think` as Ollama's OpenAI layer reads it: `reasoning_effort`, else
    `reasoning.effort`; None when neither is given (a thinking model then thinks)."""
    effort = payload.get("reasoning_effort")
    reasoning = payload.get("reasoning")
    if effort is None and isinstance(reasoning, Mapping):
        effort = reasoning.get("effort")
    return effort


def name_tool_results(payload: Mapping[str, Any]) -> bool:
    """Give each `tool` message without a `name` the name of the call its `tool_call_id` answers;
    True if any was named (then the request is re-encoded)."""
    names: dict[str, str] = {}
    changed = False
    for message in payload.get("messages") or ():
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name"))
        if message.get("role") == "tool" and not message.get("name") and message.get("tool_call_id") in names:
            message["name"] = names[message["tool_call_id"]]
            changed = True
    return changed


def _engine_message(fields: Mapping[str, Any]) -> Message:
    """An OpenAI message or delta as the engine reads it: text, thinking, calls already made."""
    calls = []
    for call in fields.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        calls.append(
            Message.ToolCall(
                function=Message.ToolCall.Function(
                    name=str(function.get("name", "")), arguments=arguments if isinstance(arguments, dict) else {}
                )
            )
        )
    content = fields.get("content")
    return Message(
        role="assistant",
        content=content if isinstance(content, str) else "",
        thinking=fields.get("reasoning") or None,
        tool_calls=calls or None,
    )


def _apply(fields: dict[str, Any], message: Message, recovery: ResponseRecovery) -> bool:
    """Write the engine's message into an OpenAI message or delta; True if it holds calls."""
    fields["content"] = message.content or ""
    if message.thinking:
        fields["reasoning"] = message.thinking
    calls = recovery.numbered(message)
    if calls:
        fields["tool_calls"] = [
            {
                "id": call_id,
                "index": index,
                "type": "function",
                "function": {
                    "name": call.function.name,
                    "arguments": json.dumps(dict(call.function.arguments), ensure_ascii=False),
                },
            }
            for index, call_id, call in calls
        ]
    return bool(calls)


def _repaired_completion(data: bytes, recovery: ResponseRecovery) -> bytes:
    try:
        completion = json.loads(data)
        choice = completion["choices"][0]
        usage = completion.get("usage") or {}
        response = ChatResponse(
            model=completion.get("model"),
            done=True,
            done_reason=choice.get("finish_reason"),
            eval_count=usage.get("completion_tokens"),
            message=_engine_message(choice["message"]),
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, ValidationError) as error:
        log.warning("passed on a chat completion the proxy could not read: %s", error)
        return data
    message = recovery.whole(response)
    if message is None:
        return data
    if _apply(choice["message"], message, recovery):
        choice["finish_reason"] = "tool_calls"
    return compact_json(completion) + b"\n"


class StreamRepair:
    """Rewrites the server-sent events of one streamed completion, event by event."""

    def __init__(self, recovery: ResponseRecovery) -> None:
        self.recovery = recovery
        self.sent_calls = False
        self.last: dict[str, Any] | None = None  # the last chunk read, the frame of a cut-short one

    async def lines(self, response: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for lines in line_batches(response):
                yield b"".join(
                    [(self.event(line) if line.startswith(DATA) and line != DONE else line) + b"\n" for line in lines]
                )
        except httpx.TransportError:  # Ollama went away mid-stream: what the engine holds is sent first
            message = self.recovery.cut_short()
            if message is not None and self.last is not None:
                delta: dict[str, Any] = {"role": "assistant"}
                _apply(delta, message, self.recovery)
                chunk = {**self.last, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                yield DATA + compact_json(chunk) + b"\n\n"
            raise

    def event(self, line: bytes) -> bytes:
        try:
            chunk = json.loads(line[len(DATA) :])
            self.last = {key: value for key, value in chunk.items() if key not in ("choices", "usage")}
            choice = chunk["choices"][0] if chunk.get("choices") else None
            if choice is None:
                return line  # the usage chunk
            delta = choice.get("delta") or {}
            finish = choice.get("finish_reason")
            engine_chunk = ChatResponse(
                model=chunk.get("model"),
                done=finish is not None,
                done_reason=finish,
                message=_engine_message(delta),
            )
        except (ValueError, KeyError, TypeError, AttributeError, ValidationError) as error:
            log.warning("passed on a completion chunk the proxy could not read: %s", error)
            return line
        message = self.recovery.chunk(engine_chunk)
        changed = message is not None
        if message is not None:
            choice["delta"] = delta
            self.sent_calls = _apply(delta, message, self.recovery) or self.sent_calls
        if finish is not None and self.sent_calls and finish != "tool_calls":
            choice["finish_reason"] = "tool_calls"
            changed = True
        if not changed:
            return line
        return DATA + compact_json(chunk)
