"""The proxy's ASGI app: four repaired chat routes, and everything else forwarded to Ollama."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx

from .anthropic_api import PATH as ANTHROPIC_MESSAGES
from .anthropic_api import messages
from .exchange import Exchange, Receive, Scope, Send, serve_exchange
from .ollama_api import PATH as OLLAMA_CHAT
from .ollama_api import chat
from .openai_api import PATH as OPENAI_CHAT
from .openai_api import chat_completions
from .responses_api import PATH as OPENAI_RESPONSES
from .responses_api import responses
from .upstream import Upstream

ChatRoute = Callable[[Exchange, Upstream], Awaitable[None]]


class ProxyApp:
    """The ASGI app (served by uvicorn, or any ASGI server): a POST to one of the chat routes
    goes to its endpoint, every other request (any method, any path) to Ollama as it is."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.chat_routes: dict[str, ChatRoute] = {
            OLLAMA_CHAT: chat,
            OPENAI_CHAT: chat_completions,
            ANTHROPIC_MESSAGES: messages,
            OPENAI_RESPONSES: responses,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route = self.chat_routes.get(scope["path"]) if scope["method"] == "POST" else None
            await serve_exchange(scope, receive, send, self.upstream.forward if route is None else self._chat(route))
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    def _chat(self, route: ChatRoute) -> Callable[[Exchange], Awaitable[None]]:
        return lambda exchange: route(exchange, self.upstream)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Nothing to start; at shutdown the connections to Ollama are closed."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.upstream.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(upstream_url: str, transport: httpx.AsyncBaseTransport | None = None) -> ProxyApp:
    """The proxy in front of the Ollama at `upstream_url`; `transport` is httpx's, for a caller
    that wants to watch or route the upstream traffic."""
    return ProxyApp(Upstream(upstream_url, transport))
