"""Running the proxy: the upstream's address, the listening socket, uvicorn."""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable

import httpx
import uvicorn

from ..errors import OllamaFcError
from ..recovery import DroppedOutputWarning
from .app import create_app

DEFAULT_PORT = 11435
"""One above Ollama's 11434, so both run side by side."""


def default_upstream() -> str:
    """OLLAMA_HOST read the way ollama-python reads it, else the local Ollama."""
    from ollama._client import _parse_host  # the same reading as ollama.Client and ollama_fc.Client

    return str(_parse_host(os.environ.get("OLLAMA_HOST")))


def bind(host: str, port: int) -> socket.socket:
    """The listening socket; a busy or unusable address is one line naming it."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise OllamaFcError(
            f"cannot listen on {host}: {error.strerror}; pass --host with an address of this machine"
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        if error.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            raise OllamaFcError(
                f"port {port} on {host} is already in use (another `ollama-fc serve`?); pass --port with a free one"
            ) from None
        raise OllamaFcError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def uvicorn_config(upstream: str, transport: httpx.AsyncBaseTransport | None = None) -> uvicorn.Config:
    return uvicorn.Config(
        create_app(upstream, transport),
        # uvloop and httptools when installed (they are dependencies), else asyncio and h11
        loop="auto",
        http="auto",
        log_level="warning",
        access_log=False,
        proxy_headers=False,  # the app's address is not used: no X-Forwarded-For middleware per request
        ws="none",  # Ollama speaks no WebSocket  # a line per request would cost more than the proxy's own work
        server_header=False,
        date_header=False,  # Ollama's own Date header is passed on
        timeout_graceful_shutdown=5,  # then streams still open are cut: Ctrl+C never hangs
    )


def _check_upstream(upstream: str, say: Callable[[str], None]) -> None:
    try:
        version = httpx.get(f"{upstream.rstrip('/')}/api/version", timeout=3.0, trust_env=False).json()["version"]
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        say(f"warning: no Ollama answers at {upstream} yet; start it with `ollama serve` (or pass --upstream URL)")
        return
    say(f"upstream: Ollama {version} at {upstream}")


def _log_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    logging.getLogger("ollama_fc.serve").warning("%s: %s", category.__name__, message)


def serve(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    upstream: str | None = None,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> None:
    """Serve the proxy until interrupted."""
    upstream = (upstream or default_upstream()).rstrip("/")
    if not upstream.startswith(("http://", "https://")):
        raise OllamaFcError(f"--upstream {upstream!r} is not a URL; give one like http://127.0.0.1:11434")
    sock = bind(host, port)
    listening = sock.getsockname()
    if httpx.URL(upstream).port == listening[1] and httpx.URL(upstream).host in ("127.0.0.1", "localhost", host):
        sock.close()
        raise OllamaFcError(
            f"the upstream {upstream} is this proxy itself (is OLLAMA_HOST pointing at it?); pass --upstream with Ollama's URL"
        )
    _check_upstream(upstream, say)
    # The proxy's own lines only (httpx would log every upstream request at INFO).
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("ollama-fc serve: %(message)s"))
    logger = logging.getLogger("ollama_fc.serve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    warnings.simplefilter("always", DroppedOutputWarning)  # every lost response, not only the first
    warnings.showwarning = _log_warning
    config = uvicorn_config(upstream)
    display = f"[{listening[0]}]" if sock.family == socket.AF_INET6 else listening[0]
    say(
        f"ollama-fc serve: http://{display}:{listening[1]} (Ollama API) and http://{display}:{listening[1]}/v1 (OpenAI API); Ctrl+C stops it"
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shuts down gracefully, then re-raises Ctrl+C
        pass
    finally:
        sock.close()
    say("ollama-fc serve: stopped")


class ProxyThread:
    """The proxy on a loopback port in a background thread of this process (for tests, benchmarks
    and programs that embed it). Use as a context manager; `.url` is the proxy's base URL."""

    def __init__(
        self, upstream: str, host: str = "127.0.0.1", port: int = 0, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.sock = bind(host, port)
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn_config(upstream.rstrip("/"), transport))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ProxyThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise OllamaFcError(f"the proxy on {self.url} did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
