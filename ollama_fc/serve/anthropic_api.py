"""`/v1/messages`: Anthropic's Messages API (Claude Code, the anthropic SDK), over Ollama's `/api/chat`.

The request becomes one native chat as Ollama's own Anthropic layer maps it (`system` first,
text blocks joined, base64 images, `tool_use` as the assistant's calls, `tool_result` as tool
messages, `max_tokens` as `num_predict`, `thinking` as `think`), plus what that layer drops:
each tool result carries its tool's name, and `tool_choice` is enforced (`toolchoice`). The
answer: thinking, text and `tool_use` blocks (`id`, `name`, `input`), `stop_reason: tool_use`
when there is a call; streamed as Anthropic's events (`message_start`, each block's
`content_block_start` / `_delta` / `_stop`, a call's input as one `input_json_delta`,
`message_delta`, `message_stop`), which the SDK's stream helpers accumulate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ollama import ChatResponse, Message

from ..thinking import think_enabled
from ..toolchoice import none_request
from .choosing import forced_format, read_choice, tool_schemas
from .exchange import Exchange
from .translated import NativeChat, Numbered, RequestError, native_tool, random_id, sse, translated_chat, usable_tools
from .upstream import ANTHROPIC_PATH, Upstream, compact_json, read_chat_request, send_error

PATH = ANTHROPIC_PATH
EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}


async def messages(exchange: Exchange, upstream: Upstream) -> None:
    body = await exchange.body()
    try:
        payload = read_chat_request(body)
        tools = usable_tools(payload.get("tools"), "custom", _tool)
        chat_messages = _system(payload.get("system")) + [
            message for entry in payload.get("messages") or () for message in _messages(entry)
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        await send_error(exchange, PATH, 400, f"malformed messages request: {error}")
        return
    model = str(payload.get("model", ""))
    schemas = tool_schemas(tools)
    choice = await read_choice(exchange, upstream, PATH, model, schemas, payload.get("tool_choice"))
    if choice is None:
        return
    chat_messages, sent_tools = none_request(choice, chat_messages, tools or None)
    chat = NativeChat(
        model=model,
        messages=chat_messages,
        tools=list(sent_tools) if sent_tools else None,
        choice=choice,
        stream=payload.get("stream") is True,
        think=await _think_if_able(upstream, model, _think(payload)),
        options=_options(payload),
        format=forced_format(choice, schemas),
    )
    await translated_chat(exchange, upstream, PATH, chat, MessageWriter(model))


def _system(system: Any) -> list[dict[str, Any]]:
    text = system if isinstance(system, str) else _text_of(system or [])
    return [{"role": "system", "content": text}] if text else []


def _text_of(blocks: Any) -> str:
    if isinstance(blocks, str):
        return blocks
    return "".join(block.get("text", "") for block in blocks if block.get("type") == "text")


def _messages(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Anthropic message as Ollama messages: a user turn's tool results first, as tool messages."""
    role, content = entry["role"], entry.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    text, images, calls, thinking, results = [], [], [], [], []
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text", ""))
        elif kind == "image":
            images.append(_image(block))
        elif kind == "tool_use":
            calls.append(
                {"id": block["id"], "function": {"name": block["name"], "arguments": block.get("input") or {}}}
            )
        elif kind == "tool_result":
            result = block.get("content")
            message: dict[str, Any] = {
                "role": "tool",
                "content": _text_of(result or ""),
                "tool_call_id": block.get("tool_use_id"),
            }
            result_images = [
                _image(part) for part in result or () if not isinstance(result, str) and part.get("type") == "image"
            ]
            if result_images:
                message["images"] = result_images
            results.append(message)
        elif kind == "thinking":
            thinking.append(block.get("thinking", ""))
    out: list[dict[str, Any]] = list(results)
    if text or images or calls or thinking:
        message = {"role": role, "content": "".join(text)}
        if images:
            message["images"] = images
        if calls:
            message["tool_calls"] = calls
        if thinking:
            message["thinking"] = "".join(thinking)
        out.append(message)
    return out


def _image(block: Mapping[str, Any]) -> str:
    source = block.get("source") or {}
    if source.get("type") != "base64" or not source.get("data"):
        raise RequestError("images must be sent as base64 sources (Ollama fetches no URLs)")
    return str(source["data"])


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    return native_tool(tool.get("name"), tool.get("description"), tool.get("input_schema"))


def _think(payload: Mapping[str, Any]) -> Any:
    thinking = payload.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "disabled"):
        return thinking["type"] == "enabled"
    config = payload.get("output_config")
    effort = config.get("effort") if isinstance(config, Mapping) else None
    return EFFORTS.get(str(effort).strip().lower()) if effort else None


async def _think_if_able(upstream: Upstream, model: str, think: Any) -> Any:
    """Claude Code asks every model to think (`thinking: adaptive` with `output_config.effort`);
    as Ollama's own Anthropic layer does, a model without the thinking capability then answers
    without thinking rather than with a 400 ("does not support thinking")."""
    if think_enabled(think, False) and not (await upstream.profile(model)).thinks:
        return None
    return think


def _options(payload: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if payload.get("max_tokens") is not None:
        options["num_predict"] = payload["max_tokens"]
    for name, option in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k")):
        if payload.get(name) is not None:
            options[option] = payload[name]
    if payload.get("stop_sequences"):
        options["stop"] = payload["stop_sequences"]
    return options


def _stop_reason(response: ChatResponse, calls: bool) -> str:
    if calls:
        return "tool_use"
    return "max_tokens" if response.done_reason == "length" else "end_turn"


class MessageWriter:
    """The answer as an Anthropic message, or as its stream of events."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = random_id("msg_")
        self.block = -1  # the index of the last block opened
        self.open: str | None = None  # the kind of the block still open (thinking, text)
        self.calls = False

    def _message(self, content: list[Any], stop_reason: str | None, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def whole(self, response: ChatResponse, message: Message, calls: Numbered) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if message.thinking:
            content.append({"type": "thinking", "thinking": message.thinking, "signature": ""})
        if message.content or not calls:
            content.append({"type": "text", "text": message.content or ""})
        content += [_tool_use(call_id, call) for _, call_id, call in calls]
        return self._message(content, _stop_reason(response, bool(calls)), _usage(response))

    def opening(self) -> bytes:
        start = self._message([], None, {"input_tokens": 0, "output_tokens": 0})
        return sse("message_start", {"type": "message_start", "message": start})

    def delta(self, message: Message, calls: Numbered) -> bytes:
        events = []
        for kind, text in (("thinking", message.thinking), ("text", message.content)):
            if text:
                if self.open != kind:
                    events.append(self._close())
                    events.append(
                        self._start({"type": kind, kind: "", **({"signature": ""} if kind == "thinking" else {})})
                    )
                    self.open = kind
                delta = {"type": f"{kind}_delta", kind: text}
                events.append(
                    sse("content_block_delta", {"type": "content_block_delta", "index": self.block, "delta": delta})
                )
        for _, call_id, call in calls:
            events.append(self._close())
            events.append(self._start({**_tool_use(call_id, call), "input": {}}))
            partial = {"type": "input_json_delta", "partial_json": compact_json(dict(call.function.arguments)).decode()}
            events.append(
                sse("content_block_delta", {"type": "content_block_delta", "index": self.block, "delta": partial})
            )
            events.append(self._stop())
            self.calls = True
        return b"".join(events)

    def _start(self, block: dict[str, Any]) -> bytes:
        self.block += 1
        return sse("content_block_start", {"type": "content_block_start", "index": self.block, "content_block": block})

    def _stop(self) -> bytes:
        return sse("content_block_stop", {"type": "content_block_stop", "index": self.block})

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        self.open = None
        return self._stop()

    def closing(self, final: ChatResponse) -> bytes:
        delta = {"stop_reason": _stop_reason(final, self.calls), "stop_sequence": None}
        return (
            self._close()
            + sse("message_delta", {"type": "message_delta", "delta": delta, "usage": _usage(final)})
            + sse("message_stop", {"type": "message_stop"})
        )

    def failed(self, reason: str) -> bytes:
        return sse("error", {"type": "error", "error": {"type": "api_error", "message": reason}})


def _tool_use(call_id: str, call: Message.ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": call.function.name, "input": dict(call.function.arguments)}


def _usage(response: ChatResponse) -> dict[str, int]:
    return {"input_tokens": response.prompt_eval_count or 0, "output_tokens": response.eval_count or 0}
