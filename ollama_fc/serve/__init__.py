"""`ollama-fc serve`: a local proxy in front of Ollama that repairs tool calls for any app.

Apps point their Ollama URL (or their OpenAI or Anthropic base URL) at the proxy instead of at
Ollama. `/api/chat`, `/v1/chat/completions`, `/v1/messages` (Anthropic) and `/v1/responses`
(OpenAI Responses) come back with the tool calls Ollama left in the model's text as calls, by
the same engine as `ollama_fc.Client`, and with `tool_choice` and single calls enforced (the
rules of `ollama_fc.toolchoice`); every other endpoint is forwarded to Ollama unchanged.

    app.py            the routes
    exchange.py       one request in plain ASGI, and the watch for a client that goes away
    ollama_api.py     /api/chat
    openai_api.py     /v1/chat/completions
    anthropic_api.py  /v1/messages, translated to /api/chat
    responses_api.py  /v1/responses, translated to /api/chat
    translated.py     what the two translated routes share: the native request, the answer's writer
    choosing.py       a request's tool_choice, checked before anything reaches Ollama
    recovering.py     the engine on one response, and the policy for calls that fail their schema
    upstream.py       forwarding to Ollama, errors, the per-model format cache
    server.py         binding the port and running uvicorn
"""

from __future__ import annotations

from .app import create_app
from .server import DEFAULT_PORT, ProxyThread, default_upstream, serve

__all__ = ["DEFAULT_PORT", "ProxyThread", "create_app", "default_upstream", "serve"]
