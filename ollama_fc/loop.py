"""Run a conversation with tools until the model answers: call, execute, hand results back.

Every call is checked against its function's schema before it runs; an invalid call, an unknown
tool or a raised exception is handed back to the model as that call's result, so it can fix
its next call. Calls of one round run in parallel threads; results keep the calls' order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from ollama import Message

from .arguments import InvalidToolCall, validate_arguments
from .errors import ToolCallError
from .functions import function_to_tool


def run_tools(
    client: Any,
    model: str,
    messages: Sequence[Mapping[str, Any] | Message],
    tools: Sequence[Callable[..., Any]],
    *,
    max_rounds: int = 8,
    on_invalid: Literal["model", "raise"] = "model",
    **chat_kwargs: Any,
) -> list[dict[str, Any]]:
    """The whole transcript: `messages`, then each assistant turn and its `tool` results.

    Stops when the model answers without calls, or after `max_rounds` model turns (the
    transcript then ends with the last round's tool results). `client` is an ollama_fc.Client
    (or any client with the same `chat`); extra keyword arguments go to `chat`.
    """
    if max_rounds < 1:
        raise ToolCallError(f"max_rounds must be at least 1, got {max_rounds}")
    functions = {function.__name__: function for function in tools}
    offered = [function_to_tool(function) for function in tools]
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in offered}
    transcript = [_as_dict(message) for message in messages]
    for _ in range(max_rounds):
        response = client.chat(model, transcript, tools=offered, validate=False, **chat_kwargs)
        message = response.message
        transcript.append(_as_dict(message))
        if not message.tool_calls:
            break
        calls = [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls]
        with ThreadPoolExecutor(max_workers=max(1, min(8, len(calls)))) as pool:
            results = list(pool.map(lambda call: _run_one(call[0], call[1], functions, schemas, on_invalid), calls))
        transcript.extend(
            {"role": "tool", "tool_name": name, "content": result} for (name, _), result in zip(calls, results)
        )
    return transcript


def _run_one(
    name: str,
    arguments: dict[str, Any],
    functions: Mapping[str, Callable[..., Any]],
    schemas: Mapping[str, Any],
    on_invalid: str,
) -> str:
    """The result text of one call; failures are worded for the model."""
    if name not in functions:
        if on_invalid == "raise":
            raise InvalidToolCall(name, ["no such tool was offered"])
        return f"Error: there is no tool named {name}; use one of: {', '.join(functions)}."
    try:
        checked = validate_arguments(name, schemas[name], arguments)
    except InvalidToolCall as error:
        if on_invalid == "raise":
            raise
        return error.for_model()
    try:
        result = functions[name](**checked)
    except Exception as error:  # handed back to the model, which may retry or explain
        return f"Error: {name} raised {type(error).__name__}: {error}"
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def _as_dict(message: Mapping[str, Any] | Message) -> dict[str, Any]:
    if isinstance(message, Message):
        return message.model_dump(exclude_none=True)
    return dict(message)
