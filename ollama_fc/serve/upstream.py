"""The Ollama behind the proxy: forwarding requests to it, and what it says about its models.

Forwarding keeps everything the app and Ollama say to each other: method, path, query, headers
(less the hop-by-hop ones), body and status, with the body streamed both ways, so a
response arrives chunk by chunk as Ollama writes it. A client that goes away cancels the
request to Ollama (see `exchange`): the task waiting on Ollama is cancelled, and the response
to Ollama is closed on the way out, which closes its connection; Ollama then stops generating.

The requests are httpx's (`httpx.Request`, `httpx.Response`, any httpx transport), sent by
default over aiohttp's client (`AiohttpTransport`): reading Ollama's answers with httpcore and
h11, in pure Python, was the larger part of the proxy's CPU per request; aiohttp parses HTTP in
C and writes a request's head and body in one send.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from functools import lru_cache
from typing import Any

import aiohttp
import httpx
import ollama

from ..recovery import ModelProfile
from ..toolchoice import ToolChoice
from .exchange import Exchange, Headers
from .recovering import ResponseRecovery

log = logging.getLogger("ollama_fc.serve")

# Connection-level headers (RFC 9110, 7.6.1) belong to one hop; `host` names the proxy, and the
# length is recomputed when a body is rewritten.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    }
)
HOP_BY_HOP_AND_LENGTH = HOP_BY_HOP | {b"content-length"}

SMALL_BODY = 1 << 20
"""Request bodies up to this size are read whole before forwarding (so the disconnect watcher
may listen at once); larger ones (model blobs) are streamed through."""

BODILESS = ("GET", "HEAD", "DELETE", "OPTIONS")

FORMAT_TTL = 60.0
"""Seconds a model's tool-call format is trusted before `show` is asked again (a model can be
re-created under the same name directly on Ollama)."""

UPSTREAM_TIMEOUT = httpx.Timeout(None, connect=10.0)
"""Generation and model loads take as long as they take; only connecting is bounded."""
TIMEOUT_EXTENSION = UPSTREAM_TIMEOUT.as_dict()

MUTATING = ("/api/create", "/api/delete", "/api/copy", "/api/pull", "/api/push")

JSON_TYPE = [(b"content-type", b"application/json")]

ANTHROPIC_PATH = "/v1/messages"

_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> bytes:
    """`value` as JSON the way Ollama writes it: UTF-8, no spaces (one encoder for every chunk)."""
    return _COMPACT_JSON.encode(value).encode()


_url = lru_cache(maxsize=256)(httpx.URL)
"""The parsed URL of a request to Ollama: the same few paths come again and again."""


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An httpx transport that sends over aiohttp's client: one pool of kept-alive connections,
    no cookies, no redirects, no proxy from the environment, bodies passed as they are (never
    decompressed), no header the caller did not give but `Host`. aiohttp's errors become
    httpx's: ConnectError when Ollama cannot be reached, ReadError when it goes away."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on first use, inside the event loop that serves
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=UPSTREAM_TIMEOUT.connect),
                auto_decompress=False,
                trust_env=False,
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        stream = request.stream
        data: Any = request.content if isinstance(stream, httpx.ByteStream) else stream
        # aiohttp frames the body itself (a length, or chunks when the length is unknown)
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in request.headers.raw
            if name.lower() != b"transfer-encoding"
        ]
        try:
            response = await self._client().request(
                request.method, str(request.url), headers=headers, data=data, allow_redirects=False
            )
        except aiohttp.ClientConnectorError as error:
            raise httpx.ConnectError(str(error), request=request) from error
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__, request=request) from error
        return httpx.Response(
            response.status, headers=list(response.raw_headers), stream=_AiohttpBody(response), request=request
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _AiohttpBody(httpx.AsyncByteStream):
    """A response body as aiohttp reads it, chunk by chunk as it arrives."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from error

    async def aclose(self) -> None:
        """Back to the pool when read to the end; closed (Ollama sees the hang-up) otherwise."""
        if self.response.content.at_eof():
            self.response.release()
        else:
            self.response.close()


class Upstream:
    """One Ollama server: an httpx connection pool, and what the response side knows of each model."""

    def __init__(self, base_url: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        # One pool of kept-alive connections. The app's requests go straight to it: the client's
        # layer (default headers, a cookie jar shared by every app, redirects) is no proxy's
        # business and cost as much CPU as the forwarding itself.
        self.transport = transport or AiohttpTransport()
        # The proxy's own requests (`show`), on the same pool.
        self.client = httpx.AsyncClient(base_url=self.base_url, timeout=UPSTREAM_TIMEOUT, transport=self.transport)
        self._profiles: dict[str, tuple[float, asyncio.Future[tuple[ModelProfile, bool]]]] = {}
        self._version: str | None = None

    async def version(self) -> str | None:
        """Ollama's version (`/api/version`, asked once), which says whether it enforces `format`;
        None when it does not say."""
        if self._version is None:
            try:
                response = await self.client.get("/api/version")
                response.raise_for_status()
                self._version = str(response.json()["version"])
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
                log.warning("cannot read the version of Ollama at %s (%s)", self.base_url, error)
                return None
        return self._version

    async def close(self) -> None:
        await self.client.aclose()  # and the transport with it

    async def unreachable(self, exchange: Exchange, path: str, error: Exception) -> None:
        """502 with one line naming the upstream and how to start it (OpenAI's error shape on /v1)."""
        reason = (
            f"cannot reach Ollama at {self.base_url} ({type(error).__name__}): "
            "start it with `ollama serve`, or point the proxy at it with --upstream URL or OLLAMA_HOST"
        )
        log.warning(reason)  # the log's lines already begin with "ollama-fc serve: "
        await send_error(exchange, path, 502, f"ollama-fc serve {reason}")

    async def send(self, exchange: Exchange, path: str, body: bytes | None = None) -> httpx.Response:
        """Send the app's request on to Ollama (its body, or `body` when already read) and
        return Ollama's response with the body still to be streamed."""
        method = exchange.method
        if body is None:
            length = exchange.header(b"content-length")
            if (method in BODILESS and length is None) or (length is not None and int(length) <= SMALL_BODY):
                body = await exchange.body()
        if body is None:  # a large upload, streamed through
            content: bytes | AsyncIterator[bytes] = exchange.body_stream()
            headers = [(name, value) for name, value in exchange.headers if name not in HOP_BY_HOP]
        else:  # httpx sets the length of the body it is given (maybe re-encoded)
            content = body
            headers = [(name, value) for name, value in exchange.headers if name not in HOP_BY_HOP_AND_LENGTH]
        query = exchange.scope.get("query_string")
        upstream_request = httpx.Request(
            method,
            _url(self.base_url + path + ("?" + query.decode("latin-1") if query else "")),
            headers=headers,
            content=content,
            extensions={"timeout": TIMEOUT_EXTENSION},
        )
        response = await self.transport.handle_async_request(upstream_request)
        response.request = upstream_request
        return response

    async def forward(self, exchange: Exchange) -> None:
        """Any endpoint the proxy does not repair: Ollama's response as it is, streamed."""
        raw_path = exchange.scope.get("raw_path")
        path = raw_path.decode("latin-1") if raw_path else exchange.path  # as the app encoded it
        if exchange.path in MUTATING:
            self._profiles.clear()  # a model may have changed under its name
        try:
            response = await self.send(exchange, path)
        except httpx.TransportError as error:
            await self.unreachable(exchange, path, error)
            return
        await relay(exchange, response, response.stream, keep_length=True)  # type: ignore[arg-type]

    async def profile(self, model: str) -> ModelProfile:
        """The model's tool-call format, parser and thinking capability from `show` (cached per
        model; concurrent first requests share one `show`). When `show` fails every format is
        tried, nothing is split off as thinking, and the next request asks again."""
        now = time.monotonic()
        cached = self._profiles.get(model)
        if cached is None or now - cached[0] > FORMAT_TTL:
            cached = (now, asyncio.ensure_future(self._read_profile(model)))
            self._profiles[model] = cached
        future = cached[1]
        profile, known = future.result() if future.done() else await asyncio.shield(future)
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
        # learning a format from the model's own template reads its GGUF: off the event loop
        return await asyncio.to_thread(ModelProfile.from_show, show, model), True


async def repaired_chat(
    exchange: Exchange,
    upstream: Upstream,
    path: str,
    body: bytes,
    payload: Mapping[str, Any],
    think: Any,
    stream_type: str,
    repair_stream: Callable[[httpx.Response, ResponseRecovery], AsyncIterator[bytes]],
    repair_whole: Callable[[bytes, ResponseRecovery], bytes],
    choice: ToolChoice | None = None,
) -> None:
    """A chat request sent to Ollama as it is, and its answer repaired by the engine: the two
    chat endpoints differ only in their wire format (`stream_type`, `repair_*`) and in where
    the request says whether to think. A request without tools to a model whose thinking needs
    no split, and an error, come back byte for byte."""
    try:
        response = await upstream.send(exchange, path, body)
    except httpx.TransportError as error:
        await upstream.unreachable(exchange, path, error)
        return
    try:
        tools = payload.get("tools")
        model = str(payload.get("model", ""))
        profile = await upstream.profile(model) if response.status_code == 200 else None
        thinking = profile is not None and profile.splits_thinking(think)
        if profile is None or not (tools or thinking):
            await relay(exchange, response, response.stream, keep_length=True)  # type: ignore[arg-type]
            return
        recovery = ResponseRecovery(tools, profile.tool_format, model, thinking=thinking, choice=choice)
        if response.headers.get("content-type", "").startswith(stream_type):
            await relay(exchange, response, repair_stream(response, recovery), keep_length=False)
            return
        whole = await response.aread()
    except httpx.TransportError as error:
        await upstream.unreachable(exchange, path, error)
        return
    finally:
        await response.aclose()  # once more is harmless; on a cancel it closes the connection
    await exchange.respond(
        response.status_code, response_headers(response, keep_length=False), repair_whole(whole, recovery)
    )


async def line_batches(response: httpx.Response) -> AsyncIterator[list[bytes]]:
    """The lines of a streamed answer (JSON lines, server-sent events) without their newline, as
    they arrive: the complete lines of each piece read, together, so that they go on to the app
    in one write."""
    pending = b""
    async for chunk in response.stream:  # type: ignore[union-attr]
        lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
        pending = lines.pop()
        if lines:
            yield lines
    if pending:
        yield [pending]


def response_headers(response: httpx.Response, keep_length: bool) -> Headers:
    """Ollama's response headers for the app: less the hop-by-hop ones (and the length, when the
    body is rewritten), names in lower case as ASGI wants them."""
    skip = HOP_BY_HOP if keep_length else HOP_BY_HOP_AND_LENGTH
    return [(name, value) for raw, value in response.headers.raw if (name := raw.lower()) not in skip]


async def relay(exchange: Exchange, response: httpx.Response, body: AsyncIterator[bytes], keep_length: bool) -> None:
    """Ollama's status and headers around `body`, chunk by chunk as it comes; the connection to
    Ollama is closed at the end, on an error, or when the app goes away."""
    try:
        await exchange.start(response.status_code, response_headers(response, keep_length))
        async for chunk in body:
            if chunk:
                await exchange.chunk(chunk)
    except httpx.TransportError as error:  # Ollama went away mid-stream: end the stream
        log.warning("Ollama closed the stream of %s early: %s", response.request.url.path, error)
    finally:
        await response.aclose()
    await exchange.end()


async def send_error(exchange: Exchange, path: str, status: int, message: str) -> None:
    """An error in the shape the app's client reads: Anthropic's on /v1/messages, OpenAI's under
    /v1, Ollama's elsewhere."""
    error: dict[str, Any]
    if path.startswith(ANTHROPIC_PATH):
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        error = {"type": "error", "error": {"type": kind, "message": message}}
    elif path.startswith("/v1/"):
        kind = "invalid_request_error" if status == 400 else "api_error"
        error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    else:
        error = {"error": message}
    await exchange.respond(status, JSON_TYPE, compact_json(error))


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
