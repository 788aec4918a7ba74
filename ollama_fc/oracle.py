"""Render Go templates with Ollama's own template package.

The Go program in `oracle_src/` is built against a real `github.com/ollama/ollama` module
version and calls its `template.Parse` and `Execute` exactly as the chat handler does. This
module builds it on first use (cached per version and source hash) and talks to it, so the
converter's output is always checked by Ollama's engine, never by a re-implementation.

`Timer` runs the same renders in the oracle's timing mode, for the render-cost benchmark: Go
measures its own parse and execute times, so no process or pipe overhead is counted.

Two versions are built: the pinned server's (`PINNED`), and the newest release on the Go
module proxy (`LATEST`), which is also the test bed's current server tier (`CURRENT`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import OllamaFcError, OllamaUnavailableError

PINNED = "v0.24.0"
LATEST = "v0.34.4"
CURRENT = LATEST  # the test bed's second server tier: the newest 0.3x release built here
VERSIONS: dict[str, str] = {PINNED: "go.mod", LATEST: "latest.mod"}

SOURCE_DIR = Path(__file__).with_name("oracle_src")


class TemplateRejected(OllamaFcError):
    """Ollama's template package refused the template (parse) or failed running it (execute)."""

    def __init__(self, message: str, stage: str, version: str) -> None:
        super().__init__(f"Ollama {version} rejects the template at {stage}: {message}")
        self.reason = message
        self.stage = stage
        self.version = version


def cache_dir() -> Path:
    """Where built binaries live between runs (`OLLAMA_FC_CACHE`, else the user cache)."""
    root = os.environ.get("OLLAMA_FC_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ollama-fc"
    )
    return Path(root)


def _source_digest(modfile: str) -> str:
    digest = hashlib.sha256()
    for name in ("main.go", modfile, modfile.replace(".mod", ".sum")):
        digest.update((SOURCE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def oracle_binary(version: str = PINNED) -> Path:
    """The oracle built against Ollama `version`, building it with Go when not cached."""
    if version not in VERSIONS:
        raise OllamaFcError(f"no oracle for Ollama {version}; known: {', '.join(VERSIONS)}")
    modfile = VERSIONS[version]
    target = cache_dir() / "oracle" / f"{version}-{_source_digest(modfile)}" / "oracle"
    if target.exists():
        return target
    go = shutil.which("go")
    needed = go_version_needed(modfile)
    if go is None:
        raise OllamaUnavailableError(
            f"the template oracle needs Go >= {needed} on PATH to build; install it from https://go.dev/dl"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    result = subprocess.run(
        [go, "build", "-mod=readonly", f"-modfile={modfile}", "-o", str(partial), "."],
        cwd=SOURCE_DIR,
        capture_output=True,
        text=True,
        env={**os.environ, "CGO_ENABLED": "0"},
    )
    if result.returncode != 0:
        raise OllamaUnavailableError(
            f"building the template oracle for Ollama {version} failed: {build_failure(result.stderr, needed)}"
        )
    partial.replace(target)
    return target


def go_version_needed(modfile: str) -> str:
    """The Go version the oracle's module file asks for (its `go` line)."""
    for line in (SOURCE_DIR / modfile).read_text(encoding="utf-8").splitlines():
        if line.startswith("go "):
            return line.split()[1]
    return "1.24"


#: what `go build` prints when it cannot download a module or a toolchain
_OFFLINE = (
    "dial tcp",
    "no such host",
    "i/o timeout",
    "connection refused",
    "network is unreachable",
    "TLS handshake",
    "module lookup disabled",
)


def build_failure(stderr: str, needed: str) -> str:
    """What `go build`'s output means, in one line with what to do."""
    if "requires go >=" in stderr or "toolchain not available" in stderr:
        return f"it needs Go >= {needed}; install it from https://go.dev/dl (`go version` shows yours)"
    if any(sign in stderr for sign in _OFFLINE):
        return (
            "Go could not download the Ollama module (no network?); build it once while online "
            f"(it is then cached in {cache_dir()}), or set GOPROXY to a module proxy you can reach"
        )
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-400:] or "go build failed without output"


def _request(
    template: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    think: bool | str | None,
) -> dict[str, Any]:
    request: dict[str, Any] = {"template": template, "messages": list(messages)}
    if tools:
        request["tools"] = list(tools)
    if think is not None:
        request["think"] = think
    return request


def render(
    template: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    think: bool | str | None = None,
    version: str = PINNED,
) -> str:
    """The prompt Ollama `version` renders for this /api/chat-shaped request."""
    result = subprocess.run(
        [str(oracle_binary(version))],
        input=json.dumps(_request(template, messages, tools, think)).encode(),
        capture_output=True,
    )
    if result.returncode == 1:
        raise TemplateRejected(result.stderr.decode().strip(), "parse or execute", version)
    if result.returncode != 0:
        raise OllamaFcError(f"template oracle failed: {result.stderr.decode().strip()}")
    return result.stdout.decode()


@dataclass(frozen=True)
class Rendered:
    """One batch result: the prompt, or Ollama's error and the stage it came from."""

    prompt: str | None
    error: str | None = None
    stage: str | None = None


class Oracle:
    """A long-running oracle process for many renders (the fidelity benchmark, `verify`).

    Thread-safe; one request line in, one result line out.
    """

    def __init__(self, version: str = PINNED) -> None:
        self.version = version
        self._process = subprocess.Popen(
            [str(oracle_binary(version)), "-batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()
        self._last_template: str | None = None

    def render(
        self,
        template: str,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        think: bool | str | None = None,
    ) -> Rendered:
        assert self._process.stdin is not None and self._process.stdout is not None
        with self._lock:
            request = _request(template, messages, tools, think)
            if template == self._last_template:
                del request["template"]
                request["same_template"] = True
            self._process.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
            self._process.stdin.flush()
            answer = self._process.stdout.readline()
            data = json.loads(answer) if answer else None
            # the oracle keeps a template only once it parsed: otherwise send it again next time
            parsed = data is not None and (data.get("error") is None or data.get("stage") == "execute")
            self._last_template = template if parsed else None
        if data is None:
            raise OllamaFcError(f"template oracle for Ollama {self.version} exited unexpectedly")
        return Rendered(prompt=data.get("prompt"), error=data.get("error"), stage=data.get("stage"))

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=10)

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Timing:
    """Go's own wall-clock times (nanoseconds) of one template on one conversation."""

    parse_ns: tuple[int, ...]
    execute_ns: tuple[int, ...]
    #: the server's truncation loop as a whole, one entry per timed run (empty without `drop`)
    truncate_ns: tuple[int, ...]
    prompt_bytes: int
    truncated_bytes: int


class Timer:
    """A long-running oracle in timing mode: parse and execute times measured inside Go.

    `cpuprofile` makes the process write a Go CPU profile of all timed work when it closes.
    """

    def __init__(self, version: str = PINNED, cpuprofile: Path | None = None) -> None:
        self.version = version
        command = [str(oracle_binary(version)), "-time"]
        if cpuprofile is not None:
            command += ["-cpuprofile", str(cpuprofile)]
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
        )
        self._last_template: str | None = None

    def measure(
        self,
        template: str,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        runs: int = 10,
        budget_ms: int = 200,
        parses: int = 0,
        drop: int = 0,
        think: bool | str | None = None,
    ) -> Timing:
        """Time `template` on one request: up to `runs` executions (at least three, more until
        `budget_ms` is spent), `parses` parses, and with `drop` the truncation loop dropping that
        many messages. Raises TemplateRejected when Ollama refuses the template or the request."""
        assert self._process.stdin is not None and self._process.stdout is not None
        request = _request(template, messages, tools, think)
        if template == self._last_template:
            del request["template"]
            request["same_template"] = True
        request.update(runs=runs, budget_ms=budget_ms, parses=parses, drop=drop)
        self._process.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline()
        if not answer:
            raise OllamaFcError(f"template oracle for Ollama {self.version} exited unexpectedly")
        data = json.loads(answer)
        parsed = data.get("error") is None or data.get("stage") == "execute"
        self._last_template = template if parsed else None
        if data.get("error") is not None:
            raise TemplateRejected(data["error"], data["stage"], self.version)
        return Timing(
            parse_ns=tuple(data["parse_ns"] or ()),
            execute_ns=tuple(data["execute_ns"] or ()),
            truncate_ns=tuple(data["truncate_ns"] or ()),
            prompt_bytes=data["prompt_bytes"],
            truncated_bytes=data["truncated_bytes"],
        )

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=60)

    def __enter__(self) -> Timer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
