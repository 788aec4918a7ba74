"""The proxy's ASGI app: two repaired chat routes, and everything else forwarded to Ollama."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .ollama_api import PATH as OLLAMA_CHAT
from .ollama_api import chat
from .openai_api import PATH as OPENAI_CHAT
from .openai_api import chat_completions
from .upstream import Upstream

EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

Endpoint = Callable[[Request], Awaitable[Response]]


class ProxyApp:
    """The ASGI entry point: a POST to one of the two chat routes goes straight to its endpoint,
    everything else (other methods, other paths, the lifespan) through Starlette.

    Why: the chat routes carry nearly all of an app's traffic, and Starlette's two middleware
    layers and its router wrap every request and every streamed chunk in calls of their own.
    What the shortcut keeps: the endpoints and their responses are the same objects, an error
    the endpoint does not handle still ends as uvicorn's plain 500, and every other request
    (a GET on a chat route gets Starlette's 405) is Starlette's as before."""

    def __init__(self, starlette: Starlette, chat_routes: dict[str, Endpoint]) -> None:
        self.starlette = starlette
        self.chat_routes = chat_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.chat_routes.get(scope["path"]) if scope["type"] == "http" else None
        if endpoint is None or scope["method"] != "POST":
            await self.starlette(scope, receive, send)
            return
        scope["app"] = self.starlette  # where `request.app.state` finds the upstream
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)


def create_app(upstream_url: str, transport: httpx.AsyncBaseTransport | None = None) -> ProxyApp:
    """The proxy in front of the Ollama at `upstream_url` (served by uvicorn, or any ASGI server);
    `transport` is httpx's, for a caller that wants to watch or route the upstream traffic."""
    upstream = Upstream(upstream_url, transport)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.upstream = upstream
        try:
            yield
        finally:
            await upstream.close()

    async def forward(request: Request) -> Response:
        return await upstream.forward(request)

    chat_routes: dict[str, Endpoint] = {OLLAMA_CHAT: chat, OPENAI_CHAT: chat_completions}
    routes = [Route(path, endpoint, methods=["POST"]) for path, endpoint in chat_routes.items()]
    routes.append(Route("/{path:path}", forward, methods=EVERY_METHOD))
    return ProxyApp(Starlette(routes=routes, lifespan=lifespan), chat_routes)
