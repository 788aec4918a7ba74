"""Tests and benchmarks import each other as packages of the repository root (`tests.NAME`,
`benchmarks.NAME`; pytest's `pythonpath` and `python -m benchmarks.NAME` put the root on the
path), never through `sys.path` edits: an edit makes an import work only after the file that made
it ran, and hides which module a name comes from. Read from the source with ast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tests", "benchmarks")
SOURCES = sorted(path for folder in (*PACKAGES, "scripts") for path in (ROOT / folder).glob("*.py"))
#: module name -> the package it lives in, for every module of tests/ and benchmarks/
OWN_MODULES = {path.stem: path.parent.name for folder in PACKAGES for path in (ROOT / folder).glob("*.py")}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def path_edits(tree: ast.AST) -> list[int]:
    """Lines that reach `sys.path` (`sys.path.insert`, `from sys import path`) or `site.addsitedir`."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in {("sys", "path"), ("site", "addsitedir")}:
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in {"sys", "site"}:
            if any(alias.name in {"path", "addsitedir"} for alias in node.names):
                lines.append(node.lineno)
    return lines


def bare_imports(tree: ast.AST) -> list[str]:
    """Imports of a tests/ or benchmarks/ module by its bare name (`from table import ...`), which
    resolve only when that folder itself is on the path."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in names if name.split(".")[0] in OWN_MODULES]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_no_module_edits_the_import_path(path: Path) -> None:
    assert path_edits(ast.parse(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_imports_of_tests_and_benchmarks_name_their_package(path: Path) -> None:
    assert bare_imports(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_checks_see_an_edit_and_a_bare_import() -> None:
    source = (
        "import sys\nfrom sys import path\nsys.path.insert(0, 'x')\nfrom table import Row\nimport benchmarks.table\n"
    )
    tree = ast.parse(source)
    assert path_edits(tree) == [2, 3]
    assert bare_imports(tree) == ["line 4: table"]


def test_every_benchmark_imports_as_run_from_the_root() -> None:
    """What `python -m benchmarks.NAME` needs before it measures anything: its imports resolve
    with only the root on the path."""
    names = sorted(f"benchmarks.{path.stem}" for path in (ROOT / "benchmarks").glob("*.py") if path.stem != "__init__")
    imported = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(names)}"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert imported.returncode == 0, imported.stderr
