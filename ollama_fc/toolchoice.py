"""`tool_choice` and single calls, enforced: one place for `ollama_fc.Client` and every proxy route.

Ollama ignores `tool_choice` and `parallel_tool_calls` on every API, so the caller's side
enforces them:

* `none`: the tools are withheld from the model (the template renders none), so no call is
  recovered or parsed; and once the conversation holds a tool result, a closing system
  message (NONE_NOTE) asks for the answer in plain language (`none_request`). Small models
  write their last call again as text when only the tools are withheld.
* `required`, or one named tool (Anthropic `any` / `tool`): the request carries Ollama's
  `format`, a JSON schema of one call of an allowed tool (`{"name": ..., "arguments": ...}`, the
  arguments being the tool's own parameter schema), so the model's reply is a call, every time,
  with schema-valid arguments. That reply comes back as a tool call like any other; the next
  turn sends it back as the assistant's call, which the template writes in the model's own
  format. A forced reply is one call.
* `parallel_tool_calls: false` (Anthropic `disable_parallel_tool_use`): the first call is kept;
  the model's further calls are dropped, each named in one warning line.

Where Ollama cannot enforce `format` (before v0.30, for a model built with `PARSER passthrough`
whose template thinks: Ollama waits for the end of a thinking block it never sees), a forced
choice fails with ToolChoiceError before anything is sent, rather than quietly being `auto`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ollama import Message

from .errors import OllamaFcError
from .parsers import parse_tool_calls
from .recovery import ModelProfile, offer

log = logging.getLogger("ollama_fc.toolchoice")

AUTO, NONE, REQUIRED = "auto", "none", "required"

#: the first Ollama release that runs llama-server, which applies `format` from the first token
FORMAT_FROM_FIRST_TOKEN = (0, 30)

#: the closing system message of a `none` request whose conversation holds a tool result
NONE_NOTE = (
    "Answer the user's question now, in plain language, using the tool results above. "
    "Do not call a tool and do not write a tool call."
)


class ToolChoiceError(OllamaFcError, ValueError):
    """A `tool_choice` that is malformed, names a tool not offered, or cannot be enforced."""


@dataclass(frozen=True)
class ToolChoice:
    """What the caller allows: `mode` (auto, none, required), the one tool a forced call must
    name (`name`), and whether more than one call may come back (`parallel`)."""

    mode: str = AUTO
    name: str | None = None
    parallel: bool = True

    @property
    def forced(self) -> bool:
        return self.mode == REQUIRED

    @property
    def enforced(self) -> bool:
        """Whether anything differs from Ollama's own behaviour (`auto`, parallel calls)."""
        return self.mode != AUTO or not self.parallel

    @classmethod
    def read(cls, choice: Any = None, parallel_tool_calls: Any = None) -> ToolChoice:
        """The choice in any API's spelling: OpenAI's `"auto" | "none" | "required"` and
        `{"type": "function", "function": {"name": ...}}`, the Responses API's
        `{"type": "function", "name": ...}`, Anthropic's `{"type": "auto" | "any" | "tool" |
        "none", "name": ..., "disable_parallel_tool_use": ...}`."""
        if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
            raise ToolChoiceError(f"parallel_tool_calls must be true or false, not {parallel_tool_calls!r}")
        parallel = parallel_tool_calls is not False
        if choice is None:
            return cls(AUTO, None, parallel)
        if isinstance(choice, str):
            mode = {"auto": AUTO, "none": NONE, "required": REQUIRED, "any": REQUIRED}.get(choice)
            if mode is None:
                raise ToolChoiceError(f"unknown tool_choice {choice!r}: use auto, none, required, or name one function")
            return cls(mode, None, parallel)
        if not isinstance(choice, Mapping):
            raise ToolChoiceError(f"tool_choice must be a string or an object, not {type(choice).__name__}")
        kind = choice.get("type")
        if choice.get("disable_parallel_tool_use") is True:
            parallel = False
        if kind in ("auto", "none", "any"):
            return cls.read(kind, parallel)
        if kind in ("function", "tool"):
            function = choice.get("function")
            name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
            if not isinstance(name, str) or not name:
                raise ToolChoiceError(f"tool_choice of type {kind!r} must name the tool to call")
            return cls(REQUIRED, name, parallel)
        raise ToolChoiceError(f"unknown tool_choice type {kind!r}: use auto, none, required, or a function")

    def check(self, tool_names: Sequence[str]) -> None:
        """A forced choice needs its tool among the offered ones (any tool, for `required`)."""
        if not self.forced:
            return
        if not tool_names:
            raise ToolChoiceError("tool_choice requires a tool call, but the request offers no tools")
        if self.name is not None and self.name not in tool_names:
            raise ToolChoiceError(
                f"tool_choice names {self.name!r}, which is not among the offered tools ({', '.join(tool_names)})"
            )


def call_schema(schemas: Mapping[str, Any], name: str | None = None) -> dict[str, Any]:
    """The JSON schema of one call of an allowed tool (`name`, else any in `schemas`): Ollama's
    `format` for a forced choice. `name` comes first, so a streamed call is named early."""
    variants = []
    for tool, parameters in schemas.items():
        if name is not None and tool != name:
            continue
        arguments = dict(parameters) if isinstance(parameters, Mapping) else {}
        arguments.setdefault("type", "object")
        variants.append(
            {
                "type": "object",
                "properties": {"name": {"enum": [tool]}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def version_tuple(version: str) -> tuple[int, ...] | None:
    """`0.24.0` as (0, 24, 0); None for a version that is not numbers (a development build)."""
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    return tuple(int(part or 0) for part in match.groups()) if match else None


def needs_version(choice: ToolChoice, profile: ModelProfile) -> bool:
    """Whether enforcing `choice` for this model depends on the Ollama version (ask it only then)."""
    return choice.forced and profile.passthrough and profile.thinks


def check_enforceable(choice: ToolChoice, profile: ModelProfile, version: str | None, model: str) -> None:
    """ToolChoiceError when this Ollama would not enforce the `format` a forced choice sends."""
    if not needs_version(choice, profile):
        return
    parsed = version_tuple(version) if version else None
    if parsed is not None and parsed >= FORMAT_FROM_FIRST_TOKEN:
        return
    raise ToolChoiceError(
        f"tool_choice {choice.name or REQUIRED!r} cannot be enforced for {model} on Ollama {version or '(unknown)'}: "
        "before v0.30 Ollama holds back structured output until a thinking template's thinking ends, which it "
        "never sees in a PARSER passthrough model; use Ollama 0.30 or later, or tool_choice auto"
    )


class ChoiceEnforcer:
    """One response's enforcement of a ToolChoice, whole or chunk by chunk: a forced reply's JSON
    becomes its call, and calls past the first are dropped when parallel calls are off."""

    def __init__(self, choice: ToolChoice, model: str = "") -> None:
        self.choice = choice
        self.model = model
        self.calls_kept = 0
        self.forced_text: list[str] = []

    def apply(self, message: Message, done: bool) -> Message:
        """The message (a whole response's, or a streamed chunk's) as the choice allows it. A
        forced reply's text is held until the reply is whole: it is the call's JSON (and the
        whitespace the grammar lets follow it), not text for the user."""
        if self.choice.forced:
            self.forced_text.append(message.content or "")
            message.content = ""
            if done:
                text = "".join(self.forced_text)
                call = None if self.calls_kept or message.tool_calls else forced_call(text, self.choice)
                if call is not None:
                    message.tool_calls, text = [call], ""
                # a reply that is not a call (cut short) stands as the model's text
                message.content = text if text.strip() else ""
        return self._limited(message)

    def _limited(self, message: Message) -> Message:
        calls = list(message.tool_calls or ())
        if not calls:
            return message
        keep = calls if self.choice.parallel else calls[: max(0, 1 - self.calls_kept)]
        for dropped in calls[len(keep) :]:
            log.warning(
                "%s: dropped a further call of %s (parallel_tool_calls is off, one call was already made)",
                self.model or "the model",
                dropped.function.name,
            )
        self.calls_kept += len(keep)
        message.tool_calls = keep or None
        return message


def forced_request(choice: ToolChoice, schemas: Mapping[str, Any], request: dict[str, Any]) -> None:
    """Set a forced choice's `format` in an /api/chat request (its keyword arguments, for a client)."""
    choice.check(list(schemas))
    if not choice.forced:
        return
    if request.get("format") is not None:
        raise ToolChoiceError("a forced tool_choice sets the format itself: leave format unset")
    request["format"] = call_schema(schemas, choice.name)


def forced_call(text: str, choice: ToolChoice) -> Message.ToolCall | None:
    """The call a forced reply's JSON holds, or None when the text is not one (cut short by a
    token limit)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments")
    if not isinstance(arguments, dict) or (choice.name is not None and value["name"] != choice.name):
        return None
    return Message.ToolCall(function=Message.ToolCall.Function(name=value["name"], arguments=arguments))


def holds_tool_result(messages: Sequence[Mapping[str, Any] | Message]) -> bool:
    """Whether a conversation holds a tool result (a `tool` message; an Anthropic conversation's
    results are `tool` messages once translated)."""
    return any(_role(message) == "tool" for message in messages)


def none_request(
    choice: ToolChoice, messages: Sequence[Mapping[str, Any] | Message], tools: Sequence[Any] | None
) -> tuple[list[Any], Sequence[Any] | None]:
    """What a request sends for `choice`: its messages and tools. For `none`, no tools (the
    template renders none) and, when the conversation holds a tool result, one more system
    message, NONE_NOTE, at its end; any other choice sends both as they are."""
    if choice.mode != NONE:
        return list(messages), tools
    if not holds_tool_result(messages):
        return list(messages), None
    return [*messages, {"role": "system", "content": NONE_NOTE}], None


def call_shaped(text: str | None, tools: Sequence[Any] | None) -> bool:
    """Whether a reply's text is a call of one of `tools` written as text: a call the parsers
    recover (in any format they know), or a JSON object naming an offered tool anywhere in the
    text, with its arguments or with them flattened beside the name (`{"name": "place_order",
    "quantity": 20}`, as Qwen2.5-Coder-0.5B writes after a result). The recovery engine leaves
    those as text, rightly; as a reply that should be a sentence, they are still a call."""
    if not text or not tools:
        return False
    if parse_tool_calls(text, None, list(tools)).tool_calls:
        return True
    names = set(offer(tools, None).schemas)
    decoder = json.JSONDecoder()
    for start in (match.start() for match in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"] in names:
            return True
    return False


def _role(message: Mapping[str, Any] | Message) -> Any:
    return message.get("role") if isinstance(message, Mapping) else getattr(message, "role", None)
