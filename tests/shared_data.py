"""Locate the reference data that lives next to the repository (`../shared`), read at test time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path under ../shared; missing data skips the test, or fails it when CI=true."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"reference data {Path('shared', *parts)} not found next to the repository"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def seed_template(name: str) -> str:
    return shared_path("seeds", "templates", name).read_text(encoding="utf-8")
