"""Provision the `ollama` binary of a test-bed tier: on PATH, cached, or built now, once.

An `ollama` on PATH is used when it reports exactly the tier's version. Otherwise the binary
is built into the cache (`~/.cache/ollama-fc/ollama/<version>/`, `$OLLAMA_FC_CACHE` moves it)
under a file lock, so a second process waits for the first build instead of building again.
The pinned tier is built by `go build` (cgo engine, `cgo_build`), the current 0.3x tier by
CMake with llama-server (`cmake_build`). See docs/OLLAMA.md.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import OllamaUnavailableError
from ..oracle import cache_dir
from . import cgo_build, cmake_build
from .buildsteps import BuildLog, Report
from .tiers import Tier, tier


def announce(tier_: Tier) -> Report:
    """A report function that prefixes progress lines with the tier and version."""

    def say(message: str) -> None:
        print(f"[ollama {tier_.label}] {message}", file=sys.stderr, flush=True)

    return say


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


def tier_dir(tier_: Tier) -> Path:
    """The cache folder of one tier's build: binary, log and lock."""
    return cache_dir() / "ollama" / tier_.version


def cached_binary(tier_: Tier | str = "pinned") -> Path:
    """Where the built binary of a tier is kept between runs.

    A llama-server build is an installed tree (`bin/ollama` beside `lib/ollama/`, where the
    server looks for llama-server); the cgo build is the one binary.
    """
    tier_ = tier(tier_) if isinstance(tier_, str) else tier_
    if tier_.uses_llama_server:
        return tier_dir(tier_) / "dist" / "bin" / "ollama"
    return tier_dir(tier_) / "ollama"


def recipe(tier_: Tier) -> str:
    """What a cached build must have been built by to be reused (see `_stamp`): the pinned
    tier's names its C flags, which depend on the CPU."""
    return cmake_build.RECIPE if tier_.uses_llama_server else f"cgo {cgo_build.cgo_optimisation()}"


def _stamp(tier_: Tier) -> Path:
    """The file beside a cached build naming the recipe that built it: a binary of the right
    version built with other flags (an unoptimised pinned build, say) is built again."""
    return tier_dir(tier_) / "recipe"


def _is_current(tier_: Tier, target: Path) -> bool:
    stamp = _stamp(tier_)
    built_by = stamp.read_text().strip() if stamp.is_file() else None
    return built_by == recipe(tier_) and target.exists() and binary_version(target) == tier_.version.lstrip("v")


def provision(tier_: Tier | str = "pinned", report: Report | None = None) -> Path:
    """A path to an `ollama` binary of exactly the tier's version: on PATH, cached, or built now."""
    tier_ = tier(tier_) if isinstance(tier_, str) else tier_
    report = report or announce(tier_)
    wanted = tier_.version.lstrip("v")
    on_path = shutil.which("ollama")
    if on_path and binary_version(on_path) == wanted:
        return Path(on_path)
    target = cached_binary(tier_)
    folder = tier_dir(tier_)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits for the first build
        if _is_current(tier_, target):
            return target
        _build(tier_, folder, target, report)
        _stamp(tier_).write_text(recipe(tier_) + "\n")
    return target


def _build(tier_: Tier, folder: Path, target: Path, report: Report) -> None:
    # Fail on a missing tool before the log exists or anything is downloaded.
    if tier_.uses_llama_server:
        cmake_build.check_prerequisites(tier_)
    else:
        cgo_build.check_prerequisites(tier_.version)
    log_path = folder / "build.log"
    work = folder / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    # The build goes to a partial path and is moved into place only once it reports its version.
    partial = folder / ("dist.partial" if tier_.uses_llama_server else "ollama.partial")
    _remove(partial)
    try:
        with BuildLog(log_path) as log:
            how = "CMake, llama-server" if tier_.uses_llama_server else "go build, cgo engine"
            report(f"building Ollama {tier_.version} ({how}; log: {log_path})")
            if tier_.uses_llama_server:
                cmake_build.build(tier_, work, partial, log, report)
                built = partial / "bin" / "ollama"
            else:
                cgo_build.build(tier_.version, work, partial, log, report)
                built = partial
            if binary_version(built) != tier_.version.lstrip("v"):
                raise OllamaUnavailableError(
                    f"the Ollama binary built from the {tier_.version} sources does not report version "
                    f"{tier_.version} (log: {log_path})"
                )
        final = target.parents[1] if tier_.uses_llama_server else target
        _remove(final)
        partial.replace(final)
        report(f"built {target}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        _remove(partial)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
