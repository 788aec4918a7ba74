"""A test-bed Ollama server: start a tier's binary on a free port, stop it cleanly.

Everything that claims to work with Ollama is tested against this real server, never a mock,
on each tier (`tiers.py`): the pinned v0.24.0 and the current 0.3x release. The binary comes
from `provision.py` (on PATH, cached, or built once). See docs/OLLAMA.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..errors import OllamaUnavailableError
from .buildsteps import Report
from .provision import announce, provision
from .tiers import Tier, tier

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_version(host: str, timeout: float = 2.0) -> str | None:
    """The version an Ollama server at `host` reports, or None if it does not answer."""
    try:
        with urllib.request.urlopen(f"{host}/api/version", timeout=timeout) as response:
            return str(json.load(response)["version"])
    except (OSError, ValueError, KeyError, urllib.error.URLError):
        return None


def rendered_prompt(
    host: str, model: str, messages: list[dict[str, Any]], tools: list[Any] | None = None, timeout: float = 120.0
) -> str:
    """The prompt the server at `host` renders for this chat request, without generating.

    Raises urllib.error.HTTPError with the server's JSON error when it refuses the request.
    """
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": False, "_debug_render_only": True}
    if tools:
        body["tools"] = tools
    request = urllib.request.Request(
        f"{host}/api/chat", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return str(json.load(response)["_debug_info"]["rendered_template"])


class OllamaServer:
    """`ollama serve` of one tier on a free loopback port, with its own model store.

    Use as a context manager; `.host` is the base URL for clients, `.log_path` the server log,
    `.tier` and `.version` say which Ollama it is.
    """

    def __init__(self, tier_: Tier | str = "pinned", workdir: Path | None = None, report: Report | None = None) -> None:
        self.tier = tier(tier_) if isinstance(tier_, str) else tier_
        self.version = self.tier.version
        self.report = report or announce(self.tier)
        self.binary: Path | None = None
        self.port = 0
        self.host = ""
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="ollama-fc-server-"))
        self.log_path = self.workdir / "ollama.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The server's process id (also its process group), while it runs."""
        return self._process.pid if self._process else None

    def start(self) -> OllamaServer:
        self.binary = provision(self.tier, self.report)
        self.port = free_port()
        self.host = f"http://127.0.0.1:{self.port}"
        home = self.workdir / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "HOME": str(home),  # the server writes its key pair under ~/.ollama
            "OLLAMA_HOST": f"127.0.0.1:{self.port}",
            "OLLAMA_MODELS": str(self.workdir / "models"),
            "OLLAMA_NO_CLOUD": "1",
        }
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [str(self.binary), "serve"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its runner children share the group: stop() ends them all
            )
        self._wait_until_answering()
        return self

    def _wait_until_answering(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise OllamaUnavailableError(
                    f"ollama serve exited with status {self._process.returncode} "
                    f"(log: {self.log_path}):\n{_tail(self.log_path)}"
                )
            answered = server_version(self.host)
            if answered is not None:
                if answered != self.version.lstrip("v"):
                    self.stop()
                    raise OllamaUnavailableError(
                        f"the server on {self.host} reports Ollama {answered}, not the {self.tier.name} tier's {self.version}"
                    )
                return
            time.sleep(0.2)
        self.stop()
        raise OllamaUnavailableError(
            f"ollama serve did not answer on {self.host} within {STARTUP_TIMEOUT:.0f}s "
            f"(log: {self.log_path}):\n{_tail(self.log_path)}"
        )

    def stop(self) -> None:
        """SIGTERM to the server's process group (server and runners), then SIGKILL."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(process.pid, signal.SIGKILL)  # runners left behind, if any
        if process.poll() is None:
            process.wait(timeout=STOP_TIMEOUT)

    def cleanup(self) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> OllamaServer:
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# The name from before there were tiers; scripts and benchmarks start the pinned server with it.
PinnedServer = OllamaServer


def serve_forever(tier_: Tier | str = "pinned", port: int | None = None) -> None:
    """Become `ollama serve` of a tier's binary (for people; signals reach the server itself)."""
    tier_ = tier(tier_) if isinstance(tier_, str) else tier_
    binary = provision(tier_)
    env = dict(os.environ)
    if port is not None:
        env["OLLAMA_HOST"] = f"127.0.0.1:{port}"
    announce(tier_)(f"serving {binary} on {env.get('OLLAMA_HOST', '127.0.0.1:11434')}")
    os.execve(binary, [str(binary), "serve"], env)
