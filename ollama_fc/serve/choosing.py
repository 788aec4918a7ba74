"""A request's `tool_choice` as every proxy route reads it: checked before anything reaches Ollama.

The rules themselves are `ollama_fc.toolchoice`'s, the same as the client's; this module only
asks Ollama what they need (the model's profile and, where it matters, Ollama's version) and
answers 400 with the one line `ToolChoiceError` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..recovery import offer
from ..toolchoice import ToolChoice, ToolChoiceError, call_schema, check_enforceable, needs_version
from .exchange import Exchange
from .upstream import Upstream, send_error


def tool_schemas(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Each offered tool's parameter schema by name."""
    return offer(tools or None, None).schemas


async def read_choice(
    exchange: Exchange,
    upstream: Upstream,
    path: str,
    model: str,
    schemas: Mapping[str, Any],
    tool_choice: Any,
    parallel_tool_calls: Any = None,
) -> ToolChoice | None:
    """The request's choice, or None once a 400 naming what is wrong has been sent: malformed, a
    tool not offered, or a forced choice this Ollama would not enforce for this model."""
    try:
        choice = ToolChoice.read(tool_choice, parallel_tool_calls)
        choice.check(list(schemas))
        if choice.forced:
            profile = await upstream.profile(model)
            version = await upstream.version() if needs_version(choice, profile) else None
            check_enforceable(choice, profile, version, model)
    except ToolChoiceError as error:
        await send_error(exchange, path, 400, str(error))
        return None
    return choice


def forced_format(choice: ToolChoice, schemas: Mapping[str, Any]) -> dict[str, Any] | None:
    """Ollama's `format` for a forced choice (None otherwise)."""
    return call_schema(schemas, choice.name) if choice.forced else None
