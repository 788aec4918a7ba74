"""The Ollama behind the proxy: forwarding requests to it, and what it says about its models.

Forwarding keeps everything the app and Ollama say to each other: method, path, query, headers
(less the hop-by-hop ones), body and status, with the body streamed both ways, so a
response arrives chunk by chunk as Ollama writes it. A client that goes away cancels the
request to Ollama: while the proxy waits for Ollama's answer, a watcher listens for the
disconnect; once the answer streams, Starlette stops the stream and its `finally` closes the
connection to Ollama, which then stops generating.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx
import ollama
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ..recovery import ModelProfile
from .recovering import ResponseRecovery

log = logging.getLogger("ollama_fc.serve")

T = TypeVar("T")

# Connection-level headers (RFC 9110, 7.6.1) belong to one hop; `host` names the proxy, and the
# length is recomputed when a body is rewritten.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)

SMALL_BODY = 1 << 20
"""Request bodies up to this size are read whole before forwarding (so the disconnect watcher
may listen at once); larger ones (model blobs) are streamed through."""

FORMAT_TTL = 60.0
"""Seconds a model's tool-call format is trusted before `show` is asked again (a model can be
re-created under the same name directly on Ollama)."""

UPSTREAM_TIMEOUT = httpx.Timeout(None, connect=10.0)
"""Generation and model loads take as long as they take; only connecting is bounded."""

MUTATING = ("/api/create", "/api/delete", "/api/copy", "/api/pull", "/api/push")


class ClientGone(Exception):
    """The app closed its connection before Ollama answered."""


class Upstream:
    """One Ollama server: an httpx connection pool, and what the response side knows of each model."""

    def __init__(self, base_url: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        # One pool of kept-alive connections. The app's requests go straight to it: the client's
        # layer (default headers, a cookie jar shared by every app, redirects) is no proxy's
        # business and cost as much CPU as the forwarding itself.
        self.transport = transport or httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            trust_env=False,  # the upstream is addressed directly, never through HTTP_PROXY
        )
        # The proxy's own requests (`show`), on the same pool.
        self.client = httpx.AsyncClient(base_url=self.base_url, timeout=UPSTREAM_TIMEOUT, transport=self.transport)
        self._profiles: dict[str, tuple[float, asyncio.Future[tuple[ModelProfile, bool]]]] = {}

    async def close(self) -> None:
        await self.client.aclose()

    def unreachable(self, path: str, error: Exception) -> JSONResponse:
        """502 with one line naming the upstream and how to start it (OpenAI's error shape on /v1)."""
        message = (
            f"ollama-fc serve cannot reach Ollama at {self.base_url} ({type(error).__name__}): "
            "start it with `ollama serve`, or point the proxy at it with --upstream URL or OLLAMA_HOST"
        )
        log.warning(message)
        return error_response(path, 502, message)

    async def send(self, request: Request, path: str, body: bytes | None = None) -> httpx.Response:
        """Send the app's request on to Ollama (its body, or `body` when already read) and
        return Ollama's response with the body still to be streamed; raises ClientGone."""
        headers = [(name, value) for name, value in request.headers.items() if name not in HOP_BY_HOP]
        if body is None:
            length = request.headers.get("content-length")
            if request.method in ("GET", "HEAD", "DELETE", "OPTIONS") and length is None:
                body = b""
            elif length is not None and int(length) <= SMALL_BODY:
                body = await request.body()
        content: bytes | AsyncIterator[bytes] = request.stream() if body is None else body
        if body is not None:  # httpx sets the length of the body it is given (maybe re-encoded)
            headers = [(name, value) for name, value in headers if name != "content-length"]
        query = request.scope.get("query_string")
        upstream_request = httpx.Request(
            request.method,
            self.base_url + path + ("?" + query.decode("latin-1") if query else ""),
            headers=headers,
            content=content,
            extensions={"timeout": UPSTREAM_TIMEOUT.as_dict()},
        )
        if body is None:  # a large upload: its stream owns `receive` until Ollama answers
            return await self._send(upstream_request)
        return await until_disconnected(request, self._send(upstream_request))

    async def _send(self, upstream_request: httpx.Request) -> httpx.Response:
        response = await self.transport.handle_async_request(upstream_request)
        response.request = upstream_request
        return response

    async def forward(self, request: Request) -> Response:
        """Any endpoint the proxy does not repair: Ollama's response as it is, streamed."""
        raw_path = request.scope.get("raw_path")
        path = raw_path.decode("latin-1") if raw_path else request.url.path  # as the app encoded it
        if request.url.path in MUTATING:
            self._profiles.clear()  # a model may have changed under its name
        try:
            response = await self.send(request, path)
        except ClientGone:
            return Response(status_code=499)
        except httpx.TransportError as error:
            return self.unreachable(path, error)
        return relay(response, response.aiter_raw(), keep_length=True)

    async def profile(self, model: str) -> ModelProfile:
        """The model's tool-call format, parser and thinking capability from `show` (cached per
        model; concurrent first requests share one `show`). When `show` fails every format is
        tried, nothing is split off as thinking, and the next request asks again."""
        now = time.monotonic()
        cached = self._profiles.get(model)
        if cached is None or now - cached[0] > FORMAT_TTL:
            cached = (now, asyncio.ensure_future(self._read_profile(model)))
            self._profiles[model] = cached
        profile, known = await asyncio.shield(cached[1])
        if not known and self._profiles.get(model) is cached:
            del self._profiles[model]
        return profile

    async def _read_profile(self, model: str) -> tuple[ModelProfile, bool]:
        try:
            response = await self.client.post("/api/show", json={"model": model})
            response.raise_for_status()
            show = ollama.ShowResponse.model_validate(response.json())
        except (httpx.HTTPError, ValueError) as error:
            log.warning("cannot read the template of %s from Ollama (%s); trying every tool-call format", model, error)
            return ModelProfile(), False
        return ModelProfile.from_show(show), True


async def repaired_chat(
    request: Request,
    path: str,
    body: bytes,
    payload: Mapping[str, Any],
    think: Any,
    stream_type: str,
    repair_stream: Callable[[httpx.Response, ResponseRecovery], AsyncIterator[bytes]],
    repair_whole: Callable[[bytes, ResponseRecovery], bytes],
) -> Response:
    """A chat request sent to Ollama as it is, and its answer repaired by the engine: the two
    chat endpoints differ only in their wire format (`stream_type`, `repair_*`) and in where
    the request says whether to think. A request without tools to a model whose thinking needs
    no split, and an error, come back byte for byte."""
    upstream: Upstream = request.app.state.upstream
    try:
        response = await upstream.send(request, path, body)
    except ClientGone:
        return Response(status_code=499)
    except httpx.TransportError as error:
        return upstream.unreachable(path, error)
    tools = payload.get("tools")
    model = str(payload.get("model", ""))
    profile = await upstream.profile(model) if response.status_code == 200 else None
    thinking = profile is not None and profile.splits_thinking(think)
    if profile is None or not (tools or thinking):
        return relay(response, response.aiter_raw(), keep_length=True)
    streamed = response.headers.get("content-type", "").startswith(stream_type)
    try:
        recovery = ResponseRecovery(tools, profile.tool_format, model, thinking=thinking)
        if streamed:
            return relay(response, repair_stream(response, recovery), keep_length=False)
        whole = await until_disconnected(request, response.aread())
    except ClientGone:
        return Response(status_code=499)
    except httpx.TransportError as error:
        return upstream.unreachable(path, error)
    finally:
        if not streamed:
            await response.aclose()
    headers = {name: value for name, value in response.headers.items() if name.lower() != "content-length"}
    return Response(repair_whole(whole, recovery), response.status_code, headers)


def relay(response: httpx.Response, body: AsyncIterator[bytes], keep_length: bool) -> StreamingResponse:
    """A streamed response carrying Ollama's status and headers around `body`; closing it (the
    end, an error, or the app going away) closes the connection to Ollama."""

    async def stream() -> AsyncIterator[bytes]:
        try:
            async for chunk in body:
                yield chunk
        except httpx.TransportError as error:  # Ollama went away mid-stream: end the stream
            log.warning("Ollama closed the stream of %s early: %s", response.request.url.path, error)
        finally:
            await response.aclose()

    skip = HOP_BY_HOP if keep_length else HOP_BY_HOP | {"content-length"}
    headers = {name: value for name, value in response.headers.items() if name not in skip}
    return StreamingResponse(stream(), status_code=response.status_code, headers=headers)


async def until_disconnected(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result, or ClientGone (with `work` cancelled) if the app disconnects first.

    Only for requests whose body was read: the watcher takes the ASGI `receive` channel."""
    task = asyncio.ensure_future(work)

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    try:
        response = await task
    except (asyncio.CancelledError, httpx.HTTPError):
        raise ClientGone() from None
    if isinstance(response, httpx.Response):  # finished just as it was cancelled
        await response.aclose()
    raise ClientGone()


def error_response(path: str, status: int, message: str) -> JSONResponse:
    """An error in the shape the app's client reads: OpenAI's under /v1, Ollama's elsewhere."""
    if path.startswith("/v1/"):
        kind = "invalid_request_error" if status == 400 else "api_error"
        return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": None}}, status)
    return JSONResponse({"error": message}, status)


def read_chat_request(body: bytes) -> Mapping[str, Any]:
    """The JSON object of a chat request; ValueError naming what is wrong with it."""
    try:
        payload = json.loads(body)
    except ValueError as error:
        raise ValueError(f"the request body is not valid JSON ({error})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"the request body must be a JSON object, not {type(payload).__name__}")
    tools = payload.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(tool, dict) for tool in tools)):
        raise ValueError('"tools" must be a list of tool definitions (JSON objects)')
    messages = payload.get("messages")
    if messages is not None and not (
        isinstance(messages, list) and all(isinstance(message, dict) for message in messages)
    ):
        raise ValueError('"messages" must be a list of message objects')
    return payload
