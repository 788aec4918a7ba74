"""The CLI's promise: a failure is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ollama_fc import cli, families


def test_version_and_help() -> None:
    runner = CliRunner()
    version = runner.invoke(cli.main, ["--version"])
    assert version.exit_code == 0 and "ollama-fc, version" in version.output
    help_ = runner.invoke(cli.main, ["--help"])
    assert help_.exit_code == 0
    for command in ("build", "convert", "verify", "parse", "list", "show"):
        assert command in help_.output


def test_unexpected_exception_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(families, "family_names", broken)
    monkeypatch.delenv("OLLAMA_FC_DEBUG", raising=False)
    result = CliRunner().invoke(cli.main, ["list"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "internal error (RuntimeError: boom)" in lines[0]
    assert "Traceback" not in result.output


def test_debug_variable_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(families, "family_names", broken)
    monkeypatch.setenv("OLLAMA_FC_DEBUG", "1")
    result = CliRunner().invoke(cli.main, ["list"])
    assert isinstance(result.exception, RuntimeError)
