"""Run a conversation with tools until the model answers: call, execute, hand results back.

Every call is checked against its function's schema before it runs; an invalid call, an unknown
tool or a raised exception is handed back to the model as that call's result, so it can fix
its next call. Calls of one round run in parallel threads; results keep the calls' order.

A call identical to one whose result is already in the conversation (same name, same
arguments) is never run again. Small models often write their last call again instead of
answering once its result is in the prompt; when every call of a turn is such a repeat, or
the reply after a result is a call written as text (`toolchoice.call_shaped`), the loop drops
that turn and asks once more with `tool_choice="none"` (no tools in the prompt and
a closing note asking for the answer, see `ollama_fc.toolchoice.none_request`). The result
says why the loop stopped (`ToolRun.stop`).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from ollama import Message

from .arguments import InvalidToolCall, validate_arguments
from .errors import ToolCallError
from .functions import function_to_tool
from .toolchoice import NONE, call_shaped

#: model turns `run_tools` allows by default (the answer asked for after a repeat is one more)
MAX_ROUNDS = 8


class StopReason(enum.Enum):
    """Why `run_tools` stopped."""

    ANSWERED = "answered"
    """The model replied without a call: its reply is the answer."""
    ANSWERED_WHEN_ASKED = "answered when asked"
    """The model repeated a call whose result it had (parsed, or written as text instead of an
    answer); asked with tool_choice none, it answered."""
    REPEATED_CALL = "repeated call"
    """The model repeated a call whose result it had, and asked with tool_choice none it wrote a
    call again as text: there is no answer (`ToolRun.answer` is None)."""
    MAX_ROUNDS = "max rounds"
    """`max_rounds` model turns each made a new call; the transcript ends with their results."""


class ToolRun(list[dict[str, Any]]):
    """The transcript `run_tools` returns (a list of messages), and how the run ended: `stop`,
    `rounds` (model turns asked, the answer asked for after a repeat included), `repeated` (the
    calls the model repeated, as `(name, arguments)`; not run again) and `answer` (the final
    reply's text, None when the run ended without one)."""

    def __init__(
        self,
        messages: Sequence[dict[str, Any]],
        stop: StopReason,
        rounds: int,
        repeated: Sequence[tuple[str, dict[str, Any]]] = (),
        answer: str | None = None,
    ) -> None:
        super().__init__(messages)
        self.stop = stop
        self.rounds = rounds
        self.repeated = list(repeated)
        self.answer = answer

    @property
    def finished(self) -> bool:
        """Whether the run ended with the model's answer."""
        return self.stop in (StopReason.ANSWERED, StopReason.ANSWERED_WHEN_ASKED)


def run_tools(
    client: Any,
    model: str,
    messages: Sequence[Mapping[str, Any] | Message],
    tools: Sequence[Callable[..., Any]],
    *,
    max_rounds: int = MAX_ROUNDS,
    on_invalid: Literal["model", "raise"] = "model",
    **chat_kwargs: Any,
) -> ToolRun:
    """The whole transcript: `messages`, then each assistant turn and its `tool` results, as a
    ToolRun saying why it stopped.

    Stops when the model answers without calls (StopReason.ANSWERED), or after `max_rounds` model turns
    that each made a new call (StopReason.MAX_ROUNDS; the transcript then ends with the last round's
    tool results). A turn whose calls all repeat calls already answered in the conversation, or
    a reply after a result that is a call written as text (a call of an offered tool the
    recovery leaves as text, e.g. followed by the result copied out), is dropped, not run, and
    the model is asked once more with `tool_choice="none"`: its reply is
    the answer (StopReason.ANSWERED_WHEN_ASKED) unless it is a call written as text again
    (StopReason.REPEATED_CALL). In a turn mixing new and repeated calls, the new ones run and each
    repeated one gets its earlier result again. `client` is an ollama_fc.Client (or any client
    whose `chat` takes its `tool_choice=`); extra keyword arguments go to `chat`.
    """
    if max_rounds < 1:
        raise ToolCallError(f"max_rounds must be at least 1, got {max_rounds}")
    functions = {function.__name__: function for function in tools}
    offered = [function_to_tool(function) for function in tools]
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in offered}
    transcript = [_as_dict(message) for message in messages]
    answered = answered_calls(transcript)
    for rounds in range(1, max_rounds + 1):
        response = client.chat(model, transcript, tools=offered, validate=False, **chat_kwargs)
        message = response.message
        if not message.tool_calls:
            if answered and call_shaped(message.content, offered):  # the call again, as text
                return _ask_for_answer(client, model, transcript, offered, rounds, [], chat_kwargs)
            transcript.append(_as_dict(message))
            return ToolRun(transcript, StopReason.ANSWERED, rounds, answer=message.content or "")
        calls = [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls]
        repeated = [call for call in calls if call_key(*call) in answered]
        if len(repeated) == len(calls):
            return _ask_for_answer(client, model, transcript, offered, rounds, repeated, chat_kwargs)
        transcript.append(_as_dict(message))
        # each distinct new call runs once, however often the turn writes it
        fresh = list({call_key(*call): call for call in calls if call_key(*call) not in answered}.values())
        with ThreadPoolExecutor(max_workers=max(1, min(8, len(fresh)))) as pool:
            ran = list(pool.map(lambda call: _run_one(call[0], call[1], functions, schemas, on_invalid), fresh))
        answered.update((call_key(*call), result) for call, result in zip(fresh, ran))
        transcript.extend(
            {"role": "tool", "tool_name": name, "content": answered[call_key(name, arguments)]}
            for name, arguments in calls
        )
    return ToolRun(transcript, StopReason.MAX_ROUNDS, max_rounds)


def _ask_for_answer(
    client: Any,
    model: str,
    transcript: list[dict[str, Any]],
    offered: list[dict[str, Any]],
    rounds: int,
    repeated: list[tuple[str, dict[str, Any]]],
    chat_kwargs: Mapping[str, Any],
) -> ToolRun:
    """The turn after a repeated call: the same conversation asked with tool_choice none."""
    kwargs = {**chat_kwargs, "tool_choice": NONE}
    message = client.chat(model, transcript, tools=offered, validate=False, **kwargs).message
    transcript.append(_as_dict(message))
    if call_shaped(message.content, offered):
        return ToolRun(transcript, StopReason.REPEATED_CALL, rounds + 1, repeated)
    return ToolRun(transcript, StopReason.ANSWERED_WHEN_ASKED, rounds + 1, repeated, message.content or "")


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """One call as a key: its name and its arguments, whatever their order."""
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)


def answered_calls(transcript: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The calls a conversation already holds results for, by call_key: each assistant turn's
    calls matched in order with the `tool` messages that follow it."""
    answered: dict[str, str] = {}
    pending: list[str] = []
    for message in transcript:
        if message.get("role") == "assistant":
            pending = [
                call_key(call["function"]["name"], dict(call["function"].get("arguments") or {}))
                for call in message.get("tool_calls") or ()
            ]
        elif message.get("role") == "tool" and pending:
            answered[pending.pop(0)] = str(message.get("content", ""))
    return answered


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
