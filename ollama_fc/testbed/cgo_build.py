"""Build an Ollama release with the cgo engine (v0.11.5 to v0.24.x) by `go build` alone.

The module zip of these releases lacks four vendored headers (module zips drop nested
`vendor/` folders); they are restored from Debian packages and the miniaudio source package on
PyPI before `go build` compiles llama.cpp and ggml through cgo.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

from ..errors import OllamaUnavailableError
from .buildsteps import MODULE, BuildLog, Report, download_module, download_sdist, require_tool, writable_copy

VENDOR = Path("llama/llama.cpp/vendor")

# Headers the module zip drops, and where a Debian system keeps them.
SYSTEM_HEADERS: dict[str, tuple[str, str]] = {
    "nlohmann/json.hpp": ("/usr/include/nlohmann/json.hpp", "nlohmann-json3-dev"),
    "nlohmann/json_fwd.hpp": ("/usr/include/nlohmann/json_fwd.hpp", "nlohmann-json3-dev"),
    "stb/stb_image.h": ("/usr/include/stb/stb_image.h", "libstb-dev"),
}
MINIAUDIO_SDIST = "miniaudio==1.71"
MINIAUDIO_HEADER = "miniaudio/miniaudio.h"
#: What the current tier's CMake build compiles ggml's CPU backend for (x86-64 with AVX2, FMA,
#: F16C, BMI2: the `haswell` variant of Ollama's release builds). Go's default cgo flags (`-O2`,
#: no `-march`) leave ggml's kernels without them: about 15x slower on a real model. Not
#: `-march=native`: on a CPU with AMX it makes ggml reference AMX kernels that cgo does not build.
X86_64_V3 = ("avx2", "fma", "f16c", "bmi2")


def cgo_optimisation() -> str:
    """`-O3`, with `-march=x86-64-v3` where the CPU has its features (elsewhere the binary would
    not run)."""
    try:
        with open("/proc/cpuinfo") as info:
            flags = set(next((line for line in info if line.startswith("flags")), "").split())
    except OSError:
        flags = set()
    return "-O3 -march=x86-64-v3" if flags.issuperset(X86_64_V3) else "-O3"


def check_prerequisites(version: str) -> tuple[str, dict[str, Path]]:
    """Go, gcc/g++ and the Debian headers, before anything is downloaded."""
    go = require_tool("go", version, "Go >= 1.26 builds the server", "install Go")
    for tool in ("gcc", "g++"):
        require_tool(tool, version, "cgo compiles llama.cpp", "install build-essential")
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
    return go, found


def build(version: str, work: Path, output: Path, log: BuildLog, report: Report) -> None:
    """Build `ollama` of `version` into `output`, working in `work` (a fixed, empty folder).

    The folder is fixed because cgo flags hold absolute include paths: only a rebuild in the
    same folder reuses Go's build cache (a re-link instead of compiling llama.cpp again).
    """
    go, headers = check_prerequisites(version)
    src = writable_copy(download_module(go, version, work, log), work / "src")
    for relative, origin in headers.items():
        _place(origin, src / VENDOR / relative)
    _place(_miniaudio_header(work, log), src / VENDOR / MINIAUDIO_HEADER)
    flags_c = cgo_optimisation()
    flags = f"-s -w -X={MODULE}/version.Version={version.lstrip('v')} -X={MODULE}/server.mode=release"
    seconds = log.run_with_progress(
        [go, "build", "-x", "-trimpath", f"-ldflags={flags}", "-o", str(output), "."],
        src,
        f"`go build` of Ollama {version}",
        report,
        lambda: f"{_count_compiles(log.path)} C/C++ files compiled",
        env={**os.environ, "CGO_ENABLED": "1", "CGO_CFLAGS": flags_c, "CGO_CXXFLAGS": flags_c},
    )
    report(f"compiled in {seconds:.0f}s")


def _place(origin: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(origin, destination)


def _miniaudio_header(work: Path, log: BuildLog) -> Path:
    """miniaudio.h from the miniaudio source package on PyPI (no Debian package ships it)."""
    archive_path = download_sdist(MINIAUDIO_SDIST, work, log)
    with tarfile.open(archive_path) as archive:
        member = next((m for m in archive.getmembers() if m.name.endswith("/" + MINIAUDIO_HEADER)), None)
        if member is None:
            raise OllamaUnavailableError(f"the {MINIAUDIO_SDIST} source package has no {MINIAUDIO_HEADER}")
        extracted = archive.extractfile(member)
        assert extracted is not None
        header = work / "miniaudio.h"
        header.write_bytes(extracted.read())
    return header


def _count_compiles(log_path: Path) -> int:
    count = 0
    with open(log_path, errors="replace") as log:
        for line in log:
            if (line.startswith("TERM='dumb' gcc") or line.startswith("TERM='dumb' g++")) and " -c " in line:
                count += 1
    return count
