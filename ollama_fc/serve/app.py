"""The proxy's ASGI app: two repaired chat routes, and everything else forwarded to Ollama."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .ollama_api import chat
from .openai_api import chat_completions
from .upstream import Upstream

EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def create_app(upstream_url: str, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
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

    routes = [
        Route("/api/chat", chat, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/{path:path}", forward, methods=EVERY_METHOD),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
