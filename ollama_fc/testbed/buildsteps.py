"""Steps both Ollama build recipes share: a build log, the Go module, a PyPI source package.

Every step writes its command and output to one log file; a failing step raises one line that
names the step, the first error it printed, and the log, so a user knows what to fix.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from ..errors import OllamaUnavailableError

MODULE = "github.com/ollama/ollama"
PROGRESS_EVERY = 20.0

Report = Callable[[str], None]
Progress = Callable[[], str]

# The line that names what went wrong, best first: a compiler or CMake error, then other errors,
# then anything that failed (git and make print harmless "fatal"/"failed" lines too).
_ERROR_LINES = [
    re.compile(r"error:|CMake Error"),
    re.compile(r"\berror\b", re.IGNORECASE),
    re.compile(r"\bfatal\b|\bfailed\b|\bnot found\b", re.IGNORECASE),
]


def require_tool(name: str, version: str, why: str, install: str) -> str:
    """The path of tool `name`, or one line saying what building `version` needs."""
    path = shutil.which(name)
    if path is None:
        raise OllamaUnavailableError(f"building Ollama {version} needs {name} on PATH ({why}); {install}")
    return path


class BuildLog:
    """The build's log file; `run` and `run_with_progress` execute one named step each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = open(path, "w")  # noqa: SIM115 (closed by close() / the with block)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BuildLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def note(self, line: str) -> None:
        self._file.write(line + "\n")
        self._file.flush()

    def run(self, command: list[str], cwd: Path, what: str, env: Mapping[str, str] | None = None) -> str:
        """Run a step with its output in the log; return its standard output."""
        start = self._begin(command)
        result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=self._file, text=True, env=env)
        self._file.write(result.stdout)
        self._file.flush()
        if result.returncode != 0:
            self.fail(what, start)
        return result.stdout

    def run_with_progress(
        self,
        command: list[str],
        cwd: Path,
        what: str,
        report: Report,
        progress: Progress,
        env: Mapping[str, str] | None = None,
    ) -> float:
        """Run a long step, reporting `progress()` every 20 seconds; return its duration."""
        start = self._begin(command)
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=cwd, stdout=self._file, stderr=self._file, env=env)
        while True:
            try:
                process.wait(timeout=PROGRESS_EVERY)
                break
            except subprocess.TimeoutExpired:
                report(f"still building: {time.monotonic() - started:.0f}s, {progress()}")
        if process.returncode != 0:
            self.fail(what, start)
        return time.monotonic() - started

    def fail(self, what: str, start: int = 0) -> None:
        """Raise one line: the step, the first error line it logged, the log file."""
        self._file.flush()
        lines = [line.strip() for line in self._text(start).splitlines() if line.strip()]
        detail = _first_error(lines)
        if len(detail) > 240:
            detail = detail[:237] + "..."
        raise OllamaUnavailableError(f"{what} failed: {detail} (log: {self.path})")

    def text(self) -> str:
        self._file.flush()
        return self._text(0)

    def _begin(self, command: list[str]) -> int:
        self.note(f"$ {' '.join(command)}")
        return self._file.tell()

    def _text(self, start: int) -> str:
        with open(self.path, errors="replace") as log:
            log.seek(start)
            return log.read()


def _first_error(lines: list[str]) -> str:
    """The most telling error line; one ending in a colon gets its next line (CMake's message)."""
    for pattern in _ERROR_LINES:
        for index, line in enumerate(lines):
            if pattern.search(line):
                if line.endswith(":") and index + 1 < len(lines):
                    return f"{line} {lines[index + 1]}"
                return line
    return lines[-1] if lines else "no output"


def download_module(go: str, version: str, work: Path, log: BuildLog) -> Path:
    """The read-only folder of `github.com/ollama/ollama@version` in Go's module cache."""
    out = log.run(
        [go, "mod", "download", "-json", f"{MODULE}@{version}"],
        work,
        f"downloading {MODULE}@{version} from the Go module proxy",
    )
    return Path(json.loads(out)["Dir"])


def writable_copy(source: Path, destination: Path) -> Path:
    """A writable copy of a read-only module folder (the builds write into their sources)."""
    shutil.copytree(source, destination)
    for path in [destination, *destination.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    return destination


def download_sdist(requirement: str, work: Path, log: BuildLog) -> Path:
    """The source archive of a PyPI package (`name==version`), fetched with pip."""
    name = requirement.split("==")[0]
    downloads = work / "sdists"
    log.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            name,
            requirement,
            "-d",
            str(downloads),
        ],
        work,
        f"downloading the {requirement} source package with pip",
    )
    archives = sorted(downloads.glob("*.tar.gz"))
    if not archives:
        raise OllamaUnavailableError(f"pip fetched no source archive of {requirement} (log: {log.path})")
    return archives[0]
