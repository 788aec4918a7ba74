"""`/v1/responses`: OpenAI's Responses API (Codex, the openai SDK's `client.responses`), over `/api/chat`.

The request becomes one native chat as Ollama's own Responses layer maps it (`instructions` as
the system message, `input` text or items, `function_call` items as the assistant's calls,
`function_call_output` items as tool messages, `max_output_tokens` as `num_predict`,
`reasoning.effort` as `think`, `text.format` json_schema as `format`), plus what that layer
drops: each tool result carries its tool's name, and `tool_choice` / `parallel_tool_calls` are
enforced (`toolchoice`). The answer's output items: `reasoning` (the thinking, as a summary),
`message` (`output_text`), one `function_call` per call (`call_id`, `name`, `arguments` as a
JSON string); streamed as the Responses events (`response.created`, each item's
`output_item.added` / deltas / `output_item.done`, `response.completed`), which the SDK's
`responses.stream` accumulates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ollama import ChatResponse, Message

from ..toolchoice import none_request
from .choosing import forced_format, read_choice, tool_schemas
from .exchange import Exchange
from .translated import NativeChat, Numbered, RequestError, native_tool, random_id, sse, translated_chat, usable_tools
from .upstream import Upstream, compact_json, read_chat_request, send_error

PATH = "/v1/responses"
EFFORTS = {"none": False, "minimal": False, "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
TEXT_PARTS = ("input_text", "output_text", "text")


async def responses(exchange: Exchange, upstream: Upstream) -> None:
    body = await exchange.body()
    try:
        payload = read_chat_request(body)
        tools = usable_tools(payload.get("tools"), "function", _tool)
        chat_messages = _input(payload)
        text_format = _text_format(payload)
        think = _think(payload)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        await send_error(exchange, PATH, 400, f"malformed responses request: {error}")
        return
    model = str(payload.get("model", ""))
    schemas = tool_schemas(tools)
    choice = await read_choice(
        exchange, upstream, PATH, model, schemas, payload.get("tool_choice"), payload.get("parallel_tool_calls")
    )
    if choice is None:
        return
    forced = forced_format(choice, schemas)
    if forced is not None and text_format is not None:
        await send_error(exchange, PATH, 400, "a forced tool_choice sets the format itself: leave text.format unset")
        return
    chat_messages, sent_tools = none_request(choice, chat_messages, tools or None)
    chat = NativeChat(
        model=model,
        messages=chat_messages,
        tools=list(sent_tools) if sent_tools else None,
        choice=choice,
        stream=payload.get("stream") is True,
        think=think,
        options=_options(payload),
        format=forced if forced is not None else text_format,
    )
    await translated_chat(exchange, upstream, PATH, chat, ResponseWriter(payload, choice.parallel))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or () if part.get("type") in TEXT_PARTS)


def _images(content: Any) -> list[str]:
    if isinstance(content, str):
        return []
    return [_image(part) for part in content or () if part.get("type") == "input_image"]


def _image(part: Mapping[str, Any]) -> str:
    url = str(part.get("image_url") or "")
    if not url.startswith("data:") or "," not in url:
        raise RequestError("images must be sent as data URLs (Ollama fetches no URLs)")
    return url.split(",", 1)[1]


def _input(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`instructions` and `input` as Ollama messages: consecutive calls join one assistant message."""
    messages: list[dict[str, Any]] = []
    if payload.get("instructions"):
        messages.append({"role": "system", "content": str(payload["instructions"])})
    items = payload.get("input")
    if isinstance(items, str):
        return messages + [{"role": "user", "content": items}]
    thinking = ""
    for item in items or ():
        kind = item.get("type", "message")
        if kind == "message":
            role = "system" if item["role"] == "developer" else item["role"]
            message: dict[str, Any] = {"role": role, "content": _text(item.get("content"))}
            images = _images(item.get("content"))
            if images:
                message["images"] = images
            if role == "assistant" and thinking:
                message["thinking"], thinking = thinking, ""
            messages.append(message)
        elif kind == "function_call":
            call = {"id": item["call_id"], "function": {"name": item["name"], "arguments": _arguments(item)}}
            last = messages[-1] if messages else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": ""}
                messages.append(last)
            last.setdefault("tool_calls", []).append(call)
            if thinking:
                last["thinking"], thinking = thinking, ""
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "content": _text(output), "tool_call_id": item["call_id"]})
        elif kind == "reasoning":
            thinking += "".join(part.get("text", "") for part in item.get("summary") or ())
    return messages


def _arguments(item: Mapping[str, Any]) -> Any:
    text = item.get("arguments") or "{}"
    try:
        return json.loads(text)
    except ValueError:
        raise RequestError(f"the arguments of call {item.get('call_id')} are not JSON") from None


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    return native_tool(tool.get("name"), tool.get("description"), tool.get("parameters"))


def _text_format(payload: Mapping[str, Any]) -> Any:
    text = payload.get("text")
    text_format = text.get("format") if isinstance(text, Mapping) else None
    if isinstance(text_format, Mapping) and text_format.get("type") == "json_schema":
        return text_format.get("schema")
    if isinstance(text_format, Mapping) and text_format.get("type") == "json_object":
        return "json"
    return None


def _think(payload: Mapping[str, Any]) -> Any:
    reasoning = payload.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, Mapping) else None
    if effort is None:
        return None
    if effort not in EFFORTS:
        raise RequestError(f"unknown reasoning effort {effort!r}: use none, low, medium or high")
    return EFFORTS[effort]


def _options(payload: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if payload.get("max_output_tokens") is not None:
        options["num_predict"] = payload["max_output_tokens"]
    for name in ("temperature", "top_p"):
        if payload.get(name) is not None:
            options[name] = payload[name]
    return options


class ResponseWriter:
    """The answer as a Responses object, or as its stream of events."""

    def __init__(self, request: Mapping[str, Any], parallel: bool) -> None:
        self.request = request
        self.parallel = parallel
        self.id = random_id("resp_")
        self.created = int(time.time())
        self.sequence = 0
        self.output: list[dict[str, Any]] = []  # the items done, in order
        self.open: dict[str, Any] | None = None  # the reasoning or message item still receiving text

    def _response(self, status: str, output: list[dict[str, Any]], final: ChatResponse | None) -> dict[str, Any]:
        incomplete = final is not None and final.done_reason == "length"
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": "incomplete" if incomplete else status,
            "model": self.request.get("model"),
            "output": output,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": self.request.get("instructions"),
            "metadata": self.request.get("metadata") or {},
            "parallel_tool_calls": self.parallel,
            "temperature": self.request.get("temperature"),
            "top_p": self.request.get("top_p"),
            "max_output_tokens": self.request.get("max_output_tokens"),
            "tool_choice": self.request.get("tool_choice") or "auto",
            "tools": self.request.get("tools") or [],
            "text": self.request.get("text") or {"format": {"type": "text"}},
            "usage": _usage(final) if final is not None else None,
        }

    def whole(self, response: ChatResponse, message: Message, calls: Numbered) -> dict[str, Any]:
        output = []
        if message.thinking:
            output.append(_reasoning(message.thinking))
        if message.content or not calls:
            output.append(_message(message.content or ""))
        output += [_function_call(call_id, call) for _, call_id, call in calls]
        return self._response("completed", output, response)

    def _event(self, kind: str, **fields: Any) -> bytes:
        self.sequence += 1
        return sse(kind, {"type": kind, "sequence_number": self.sequence - 1, **fields})

    def opening(self) -> bytes:
        start = self._response("in_progress", [], None)
        return self._event("response.created", response=start) + self._event("response.in_progress", response=start)

    def delta(self, message: Message, calls: Numbered) -> bytes:
        events = []
        if message.thinking:
            events.append(self._text("reasoning", message.thinking))
        if message.content:
            events.append(self._text("message", message.content))
        for _, call_id, call in calls:
            events.append(self._close())
            item = _function_call(call_id, call)
            index = len(self.output)
            events.append(
                self._event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
            )
            arguments = item["arguments"]
            events.append(
                self._event(
                    "response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=arguments
                )
            )
            events.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    name=item["name"],
                    arguments=arguments,
                )
            )
            events.append(self._event("response.output_item.done", output_index=index, item=item))
            self.output.append(item)
        return b"".join(events)

    def _text(self, kind: str, text: str) -> bytes:
        """Text for the open item of `kind` (reasoning or message), opening it first if need be."""
        events = []
        if self.open is None or self.open["type"] != kind:
            events.append(self._close())
            self.open = _reasoning("") if kind == "reasoning" else _message("")
            item = self.open
            index = len(self.output)
            if kind == "reasoning":
                events.append(
                    self._event("response.output_item.added", output_index=index, item={**item, "summary": []})
                )
                part = {"type": "summary_text", "text": ""}
                events.append(
                    self._event(
                        "response.reasoning_summary_part.added",
                        item_id=item["id"],
                        output_index=index,
                        summary_index=0,
                        part=part,
                    )
                )
            else:
                events.append(
                    self._event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "content": [], "status": "in_progress"},
                    )
                )
                events.append(
                    self._event(
                        "response.content_part.added",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        part=_part(""),
                    )
                )
        item, index = self.open, len(self.output)
        if kind == "reasoning":
            item["summary"][0]["text"] += text
            events.append(
                self._event(
                    "response.reasoning_summary_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    delta=text,
                )
            )
        else:
            item["content"][0]["text"] += text
            events.append(
                self._event(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=text,
                    logprobs=[],
                )
            )
        return b"".join(events)

    def _close(self) -> bytes:
        """The open item's closing events; it joins the output."""
        item, index = self.open, len(self.output)
        if item is None:
            return b""
        self.open = None
        self.output.append(item)
        if item["type"] == "reasoning":
            part = item["summary"][0]
            return (
                self._event(
                    "response.reasoning_summary_text.done",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    text=part["text"],
                )
                + self._event(
                    "response.reasoning_summary_part.done",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    part=part,
                )
                + self._event("response.output_item.done", output_index=index, item=item)
            )
        part = item["content"][0]
        return (
            self._event(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=part["text"],
                logprobs=[],
            )
            + self._event(
                "response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=part
            )
            + self._event("response.output_item.done", output_index=index, item=item)
        )

    def closing(self, final: ChatResponse) -> bytes:
        events = self._close()
        response = self._response("completed", self.output, final)
        kind = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
        return events + self._event(kind, response=response)

    def failed(self, reason: str) -> bytes:
        return self._event("error", code="upstream_error", message=reason, param=None)


def _part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": random_id("msg_"),
        "status": "completed",
        "role": "assistant",
        "content": [_part(text)],
    }


def _reasoning(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": random_id("rs_"), "summary": [{"type": "summary_text", "text": text}]}


def _function_call(call_id: str, call: Message.ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": random_id("fc_"),
        "call_id": call_id,
        "name": call.function.name,
        "arguments": compact_json(dict(call.function.arguments)).decode(),
        "status": "completed",
    }


def _usage(response: ChatResponse) -> dict[str, Any]:
    prompt, output = response.prompt_eval_count or 0, response.eval_count or 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }
