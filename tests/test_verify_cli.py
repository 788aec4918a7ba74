"""`ollama-fc verify`: one line per case, `exact N/M` last, exit status, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ollama_fc import oracle
from ollama_fc.verify.battery import CASES
from tests.shared_data import shared_path

SEEDS = (
    "gemma3-tools.jinja",
    "minimax-text-01.jinja",
    "phi4-mini-functools.jinja",
    "qwen2.5-hermes.jinja",
    "typhoon2-llama3.1-function-list.jinja",
)
CASE_LINE = re.compile(r"^(?P<name>\S+) +(?P<status>exact|diff: .+|error: .+|cannot-render: .+)$")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from ollama_fc.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def case_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if not line.startswith(("warning: ", "note: "))]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_seed_template_is_exact(seed: str) -> None:
    result = run_cli("verify", str(shared_path("seeds", "templates", seed)))
    lines = case_lines(result.stdout)
    assert lines[-1] == f"exact {len(CASES)}/{len(CASES)}", result.stdout
    assert [CASE_LINE.match(line)["name"] for line in lines[:-1]] == [case.name for case in CASES]
    assert all(CASE_LINE.match(line)["status"] == "exact" for line in lines[:-1])
    assert result.returncode == 0


def test_json_report() -> None:
    result = run_cli("verify", str(shared_path("seeds", "templates", "qwen2.5-hermes.jinja")), "--json")
    report = json.loads(result.stdout)
    assert report["versions"] == [oracle.PINNED, oracle.LATEST]
    assert report["exact"] == report["rendered"] == len(CASES)
    assert report["shape"]["tool_role"] == "tool"
    first = report["cases"][0]
    assert first["name"] == CASES[0].name and first["status"] == "exact"
    assert set(first["versions"]) == {oracle.PINNED, oracle.LATEST}
    assert result.returncode == 0


def test_nothing_renderable_is_not_a_pass(tmp_path: Path) -> None:
    source = tmp_path / "refuses.jinja"
    source.write_text("{{ raise_exception('this template renders nothing') }}", encoding="utf-8")
    result = run_cli("verify", str(source))
    lines = case_lines(result.stdout)
    assert lines[-1] == "exact 0/0"
    assert all("cannot-render: TemplateError: this template renders nothing" in line for line in lines[:-1])
    assert result.returncode == 1


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("missing.jinja", None, "no such file"),
        ("broken.jinja", "{% if %}", "line 1"),
        ("folder", "", "no chat template found"),
    ],
)
def test_bad_sources_fail_in_one_line(tmp_path: Path, name: str, content: str | None, expected: str) -> None:
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    result = run_cli("verify", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("ollama-fc: ") and expected in result.stderr
