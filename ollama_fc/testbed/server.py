"""The pinned Ollama server: provision the binary, start it on a free port, stop it cleanly.

Everything that claims to work with Ollama is tested against this real server, never a mock.
The binary comes from an `ollama` on PATH when it is exactly the pinned version; otherwise the
pinned release is built from the Go module proxy into the cache, once. The module zip of
releases v0.11.5 to v0.24.x lacks four vendored headers (module zips drop nested `vendor/`
folders); they are restored from Debian packages and the miniaudio source package on PyPI.
See docs/OLLAMA.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import OllamaUnavailableError
from ..oracle import PINNED, cache_dir

MODULE = "github.com/ollama/ollama"
VENDOR = Path("llama/llama.cpp/vendor")

# Headers the module zip drops, and where a Debian system keeps them.
SYSTEM_HEADERS: dict[str, tuple[str, str]] = {
    "nlohmann/json.hpp": ("/usr/include/nlohmann/json.hpp", "nlohmann-json3-dev"),
    "nlohmann/json_fwd.hpp": ("/usr/include/nlohmann/json_fwd.hpp", "nlohmann-json3-dev"),
    "stb/stb_image.h": ("/usr/include/stb/stb_image.h", "libstb-dev"),
}
MINIAUDIO_SDIST = "miniaudio==1.71"
MINIAUDIO_HEADER = "miniaudio/miniaudio.h"

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
PROGRESS_EVERY = 20.0

Report = Callable[[str], None]


def _say(message: str) -> None:
    print(f"[ollama {PINNED}] {message}", file=sys.stderr, flush=True)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def binary_version(binary: Path | str) -> str | None:
    """The version an `ollama` binary reports (`ollama -v`), or None if it does not run."""
    try:
        result = subprocess.run(
            [str(binary), "-v"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "OLLAMA_HOST": "127.0.0.1:1"},  # never ask a running server
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version is (\S+)", result.stdout + result.stderr)
    return match.group(1) if match else None


def cached_binary(version: str = PINNED) -> Path:
    """Where the built binary of `version` is kept between runs."""
    return cache_dir() / "ollama" / version / "ollama"


def provision(version: str = PINNED, report: Report = _say) -> Path:
    """A path to an `ollama` binary of exactly `version`: on PATH, cached, or built now."""
    wanted = version.lstrip("v")
    on_path = shutil.which("ollama")
    if on_path and binary_version(on_path) == wanted:
        return Path(on_path)
    target = cached_binary(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits for the first build
        if target.exists() and binary_version(target) == wanted:
            return target
        _build(version, target, report)
    return target


def _build(version: str, target: Path, report: Report) -> None:
    go = shutil.which("go")
    if go is None:
        raise OllamaUnavailableError(
            f"building Ollama {version} needs the Go toolchain (go >= 1.26) on PATH; install Go, "
            f"or put an `ollama` {version} binary on PATH"
        )
    for tool in ("gcc", "g++"):
        if shutil.which(tool) is None:
            raise OllamaUnavailableError(f"building Ollama {version} needs {tool} (cgo); install build-essential")
    headers = _find_system_headers(version)
    log_path = target.parent / "build.log"
    # A fixed path: cgo flags hold absolute include paths, so only a rebuild in the same folder
    # reuses Go's build cache (a re-link instead of compiling llama.cpp again).
    work = target.parent / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        with open(log_path, "w") as log:
            report(f"building Ollama {version} from the Go module proxy (log: {log_path})")
            source = _download_module(go, version, work, log, log_path)
            src = work / "src"
            shutil.copytree(source, src)
            for path in [src, *src.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
            for relative, origin in headers.items():
                _place(origin, src / VENDOR / relative)
            _place(_miniaudio_header(work, log, log_path), src / VENDOR / MINIAUDIO_HEADER)
            partial = target.with_name("ollama.partial")
            _go_build(go, version, src, partial, log, log_path, report)
        if binary_version(partial) != version.lstrip("v"):
            raise OllamaUnavailableError(
                f"the Ollama binary built from {MODULE}@{version} does not report version {version}"
            )
        partial.replace(target)
        report(f"built {target}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _find_system_headers(version: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    missing: set[str] = set()
    for relative, (location, package) in SYSTEM_HEADERS.items():
        if Path(location).is_file():
            found[relative] = Path(location)
        else:
            missing.add(package)
    if missing:
        raise OllamaUnavailableError(
            f"building Ollama {version} needs headers its module zip lacks; install the Debian "
            f"packages: apt-get install {' '.join(sorted(missing))}"
        )
    return found


def _place(origin: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(origin, destination)


def _run_logged(command: list[str], cwd: Path, log: IO[str], log_path: Path, what: str) -> str:
    """Run a build step with its output in the log; a failure names the step and shows the tail."""
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=log, text=True)
    log.write(result.stdout)
    log.flush()
    if result.returncode != 0:
        raise OllamaUnavailableError(f"{what} failed (log: {log_path}):\n{_tail(log_path)}")
    return result.stdout


def _download_module(go: str, version: str, work: Path, log: IO[str], log_path: Path) -> Path:
    out = _run_logged(
        [go, "mod", "download", "-json", f"{MODULE}@{version}"],
        work,
        log,
        log_path,
        f"downloading {MODULE}@{version} from the Go module proxy",
    )
    return Path(json.loads(out)["Dir"])


def _miniaudio_header(work: Path, log: IO[str], log_path: Path) -> Path:
    """miniaudio.h from the miniaudio source package on PyPI (no Debian package ships it)."""
    downloads = work / "miniaudio"
    _run_logged(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            MINIAUDIO_SDIST,
            "-d",
            str(downloads),
        ],
        work,
        log,
        log_path,
        f"downloading the {MINIAUDIO_SDIST} source package (for miniaudio.h) with pip",
    )
    archives = list(downloads.glob("miniaudio-*.tar.gz"))
    if not archives:
        raise OllamaUnavailableError(f"pip did not fetch the {MINIAUDIO_SDIST} source package (log: {log_path})")
    with tarfile.open(archives[0]) as archive:
        member = next((m for m in archive.getmembers() if m.name.endswith("/" + MINIAUDIO_HEADER)), None)
        if member is None:
            raise OllamaUnavailableError(f"the {MINIAUDIO_SDIST} source package has no {MINIAUDIO_HEADER}")
        extracted = archive.extractfile(member)
        assert extracted is not None
        header = downloads / "miniaudio.h"
        header.write_bytes(extracted.read())
    return header


def _go_build(go: str, version: str, src: Path, output: Path, log: IO[str], log_path: Path, report: Report) -> None:
    """`go build` of the writable module copy, with a progress line every 20 seconds."""
    flags = f"-s -w -X={MODULE}/version.Version={version.lstrip('v')} -X={MODULE}/server.mode=release"
    command = [go, "build", "-x", "-trimpath", f"-ldflags={flags}", "-o", str(output), "."]
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=src, stdout=log, stderr=log, env={**os.environ, "CGO_ENABLED": "1"})
    while True:
        try:
            process.wait(timeout=PROGRESS_EVERY)
            break
        except subprocess.TimeoutExpired:
            compiled = _count_compiles(log_path)
            report(f"still building: {time.monotonic() - started:.0f}s, {compiled} C/C++ files compiled")
    if process.returncode != 0:
        errors = [line for line in log_path.read_text(errors="replace").splitlines() if "error" in line.lower()]
        detail = "\n".join(errors[-10:]) or _tail(log_path)
        raise OllamaUnavailableError(f"`go build` of Ollama {version} failed (log: {log_path}):\n{detail}")
    report(f"compiled in {time.monotonic() - started:.0f}s")


def _count_compiles(log_path: Path) -> int:
    count = 0
    with open(log_path, errors="replace") as log:
        for line in log:
            if (line.startswith("TERM='dumb' gcc") or line.startswith("TERM='dumb' g++")) and " -c " in line:
                count += 1
    return count


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


class PinnedServer:
    """`ollama serve` of the pinned version on a free loopback port, with its own model store.

    Use as a context manager; `.host` is the base URL for clients, `.log_path` the server log.
    """

    def __init__(self, version: str = PINNED, workdir: Path | None = None, report: Report = _say) -> None:
        self.version = version
        self.report = report
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

    def start(self) -> PinnedServer:
        self.binary = provision(self.version, self.report)
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
                        f"the server on {self.host} reports Ollama {answered}, not the pinned {self.version}"
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

    def __enter__(self) -> PinnedServer:
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


def serve_forever(version: str = PINNED, port: int | None = None) -> None:
    """Become `ollama serve` of the pinned binary (for people; signals reach the server itself)."""
    binary = provision(version)
    env = dict(os.environ)
    if port is not None:
        env["OLLAMA_HOST"] = f"127.0.0.1:{port}"
    _say(f"serving {binary} on {env.get('OLLAMA_HOST', '127.0.0.1:11434')}")
    os.execve(binary, [str(binary), "serve"], env)
