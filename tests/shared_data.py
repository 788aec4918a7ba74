"""Locate the reference data that lives next to the repository (`../shared`), read at test time."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(message: str) -> NoReturn:
    """Something a test needs is not here: skip the test, or fail it when CI=true."""
    if IN_CI:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def shared_path(*parts: str) -> Path:
    """A path under ../shared; missing data skips the test, or fails it when CI=true."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        missing(f"reference data {Path('shared', *parts)} not found next to the repository")
    return path


def seed_template(name: str) -> str:
    return shared_path("seeds", "templates", name).read_text(encoding="utf-8")
