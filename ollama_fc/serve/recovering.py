"""The recovery engine applied to one response passing through the proxy.

The engine is `ollama_fc.recovery` itself (recover_response for a whole response, one
StreamRewriter per stream), fed ollama's ChatResponse objects made from the wire; a response
the engine leaves as it is goes back to the app byte for byte. What the proxy adds is its
policy for a recovered call whose arguments fail the offered tool's schema: an app cannot
catch an exception raised in the proxy, and a model that meant to call a tool should not have
its call shown to the user as text. So a failing call is passed on as the model wrote it (as
Ollama passes on the calls it parses itself, unchecked) and one warning line is logged; calls
that pass are coerced to the schema ("7" to 7 for an integer). An app checks arguments
before running a tool anyway, and a tool loop hands the error back to the model, as
`run_tools` does.

A call that does not commit (it leaves out an argument its tool requires, or names a tool
that was not offered) is no call at all: its text reaches the app as content, as for the
client (docs/RECOVERY.md). And the proxy fails open: should the engine itself fail on some
output, the response (or, from then on, the stream) goes back as Ollama sent it, with one
log line, never a 500 or an empty reply.
"""

from __future__ import annotations

import logging
import secrets
import string
from collections.abc import Mapping, Sequence
from typing import Any

from ollama import ChatResponse, Message

from ..arguments import InvalidToolCall, validate_arguments
from ..recovery import StreamRewriter, offer, recover_response
from ..toolchoice import ChoiceEnforcer, ToolChoice

log = logging.getLogger("ollama_fc.serve")

_ID_ALPHABET = string.ascii_lowercase + string.digits


def tool_call_id() -> str:
    """A call id in Ollama's own shape (`call_` and 8 characters), unique enough per conversation."""
    return "call_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


class ResponseRecovery:
    """The engine's state for one response (whole or streamed) to one request."""

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]] | None,
        format_name: str | None,
        model: str,
        *,
        thinking: bool = False,
        choice: ToolChoice | None = None,
    ) -> None:
        self.offered = offer(tools or None, None)
        self.format_name = format_name
        self.model = model
        self.thinking = thinking
        self.rewriter = StreamRewriter(self.offered, format_name, validate=False, thinking=thinking)
        self.enforcer = ChoiceEnforcer(choice, model) if choice is not None and choice.enforced else None
        self.calls_sent = 0
        self.failed = False  # the engine failed on this stream: the rest passes as Ollama sent it

    def whole(self, response: ChatResponse) -> Message | None:
        """The message with recovered calls, or None when the response stays as Ollama sent it."""
        before = response.message.model_copy()
        try:
            message = recover_response(
                response, self.offered, self.format_name, validate=False, thinking=self.thinking
            ).message
        except Exception as error:  # fail open: Ollama's answer beats none
            self._failed(error, "response")
            if self.enforcer is None:
                return None
            message = before.model_copy()  # Ollama's answer, still under the request's tool_choice
        if self.enforcer is not None:
            message = self.enforcer.apply(message, done=True)
        return None if message == before else self._checked(message)

    def chunk(self, chunk: ChatResponse) -> Message | None:
        """The rewritten message of one streamed chunk, or None when the chunk stays as it is.
        A chunk with calls Ollama parsed itself is rewritten too, so that every call of the
        stream gets its own index and id (Ollama numbers some paths' calls all 0)."""
        if self.failed and self.enforcer is None:
            return None
        try:
            rewritten = chunk if self.failed else self.rewriter.rewrite(chunk)
        except Exception as error:  # fail open, as in `whole`
            self.failed = True
            self._failed(error, "stream")
            if self.enforcer is None:
                return None
            rewritten = chunk
        message = rewritten.message
        as_sent = rewritten is chunk  # Ollama's own calls are not checked (as in a whole answer)
        if self.enforcer is not None:
            message = self.enforcer.apply(message.model_copy(), done=bool(chunk.done))
        elif as_sent:
            return message if message.tool_calls else None
        return message if as_sent else self._checked(message)

    def _failed(self, error: Exception, what: str) -> None:
        log.warning(
            "%s: recovery failed (%s: %s); %s passed on as Ollama sent it",
            self.model,
            type(error).__name__,
            error,
            what,
        )

    def cut_short(self) -> Message | None:
        """Ollama's stream ended without its last chunk: what the engine still holds (text of a
        call begun but not finished stays text), or None when it holds nothing."""
        if self.failed:
            return None
        return self.chunk(ChatResponse(done=True, message=Message(role="assistant", content="")))

    def _checked(self, message: Message) -> Message:
        for call in message.tool_calls or ():
            function = call.function
            try:
                function.arguments = validate_arguments(
                    function.name, self.offered.schemas.get(function.name), function.arguments
                )
            except InvalidToolCall as error:
                log.warning("%s: %s; passed on to the app as the model wrote it", self.model, error)
        return message

    def numbered(self, message: Message) -> list[tuple[int, str, Message.ToolCall]]:
        """The message's calls with their index in the response and a fresh id."""
        calls = [
            (self.calls_sent + offset, tool_call_id(), call) for offset, call in enumerate(message.tool_calls or ())
        ]
        self.calls_sent += len(calls)
        return calls
