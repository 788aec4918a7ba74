"""One app request as the ASGI server (uvicorn) hands it over, answered in plain ASGI messages.

Why plain ASGI rather than a framework's request and response objects: the proxy answers every
request the same way (a status, headers, body chunks), and on a chat that takes Ollama a few
milliseconds the framework's layers (routing, middleware, a task group per streamed response)
were a large part of the proxy's own CPU time. The HTTP itself stays uvicorn's.

A client that goes away cancels the work done for it. ASGI tells the app by answering
`receive()` with `http.disconnect` once the request body has been read; so when the body is
in, one watcher task waits on `receive()` for the whole exchange, and on a disconnect cancels
the task serving the request, wherever it waits: for Ollama's answer, or for the next chunk of
a stream. The code holding a response to Ollama closes it on the way out (a `finally` or an
`async with`), which closes the connection, and Ollama stops generating.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]


class ClientGone(Exception):
    """The app closed its connection before its request body was read."""


class Exchange:
    """The app's request (method, path, headers, body) and the ASGI calls that answer it."""

    __slots__ = ("_send", "finishing", "gone", "receive", "scope", "task", "watcher")

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope = scope
        self.receive = receive
        self._send = send
        self.task = asyncio.current_task()
        self.watcher: asyncio.Task[None] | None = None
        self.gone = False  # the app disconnected and the exchange's task was cancelled for it
        self.finishing = False  # the last message is on its way: a disconnect now is the normal end

    @property
    def method(self) -> str:
        return str(self.scope["method"])

    @property
    def path(self) -> str:
        return str(self.scope["path"])

    @property
    def headers(self) -> Headers:
        """The request's headers as the server read them (names in lower case)."""
        return list(self.scope["headers"])

    def header(self, name: bytes) -> bytes | None:
        for key, value in self.scope["headers"]:
            if key == name:
                return bytes(value)
        return None

    async def body(self) -> bytes:
        """The whole request body; then the exchange watches for the app going away."""
        chunks = []
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone()
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        self._watch()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def body_stream(self) -> AsyncIterator[bytes]:
        """The request body as it arrives; once it is all in, the exchange watches for a disconnect."""
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone()
            chunk = message.get("body", b"")
            more = message.get("more_body", False)
            if chunk or not more:
                yield chunk
            if not more:
                break
        self._watch()

    def _watch(self) -> None:
        if self.watcher is None and self.task is not None:
            self.watcher = asyncio.ensure_future(self._until_disconnected())

    async def _until_disconnected(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        if not self.finishing and self.task is not None:
            self.gone = True
            self.task.cancel()

    def close(self) -> None:
        """Stop watching (the exchange is over)."""
        self.finishing = True
        if self.watcher is not None and not self.watcher.done():
            self.watcher.cancel()

    async def start(self, status: int, headers: Headers) -> None:
        await self._send({"type": "http.response.start", "status": status, "headers": headers})

    async def chunk(self, data: bytes) -> None:
        """One more piece of the body (more follow)."""
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self, data: bytes = b"") -> None:
        """The body's last piece."""
        self.finishing = True
        await self._send({"type": "http.response.body", "body": data, "more_body": False})

    async def respond(self, status: int, headers: Headers, body: bytes) -> None:
        """A whole response; its length is set here."""
        await self.start(status, [*headers, (b"content-length", str(len(body)).encode())])
        await self.end(body)


async def serve_exchange(
    scope: Scope, receive: Receive, send: Send, handle: Callable[[Exchange], Awaitable[None]]
) -> None:
    """Run `handle` on one request; a client that goes away ends it quietly (nothing is left to
    answer), any other error is the server's (uvicorn answers 500 and logs it)."""
    exchange = Exchange(scope, receive, send)
    try:
        await handle(exchange)
    except ClientGone:
        pass
    except asyncio.CancelledError:
        if not exchange.gone:
            raise  # the server itself is stopping the request
        uncancel = getattr(exchange.task, "uncancel", None)  # Python 3.11+: the cancel is handled
        if uncancel is not None:
            uncancel()
    finally:
        exchange.close()
