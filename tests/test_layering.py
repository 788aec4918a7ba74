"""The package's shape: no import cycles between modules nor between packages, each layer imports
only the ones below it, and no module (nor converter function) grows past the size a reader takes
in at once. Read from the source with ast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ollama_fc"
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py") if "oracle_src" not in path.parts}


def imports_of(name: str) -> set[str]:
    """The package's modules `name` imports, anywhere in it (a function-level import counts)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in MODULES and target != name}
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def reaches(start: str, goal: str, graph: dict[str, set[str]] = GRAPH) -> bool:
    seen, todo = set(), [start]
    while todo:
        current = todo.pop()
        for nxt in graph.get(current, ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def under(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_no_import_cycle() -> None:
    cycles = sorted(name for name in GRAPH if reaches(name, name))
    assert cycles == []


def unit_of(name: str) -> str:
    """The package a module belongs to for the package rule: a subpackage of ollama_fc with all it
    holds (`ollama_fc.convert.ops.emit` is `ollama_fc.convert`), or a top-level module itself."""
    parts = name.split(".")
    is_package = MODULES[name].name == "__init__.py"
    return ".".join(parts[:2]) if len(parts) > 2 or is_package else name


PACKAGE_GRAPH: dict[str, set[str]] = {}
for _name, _targets in GRAPH.items():
    PACKAGE_GRAPH.setdefault(unit_of(_name), set()).update(unit_of(t) for t in _targets if unit_of(t) != unit_of(_name))


def test_no_package_cycle() -> None:
    """Two packages never import each other, even through modules that have no cycle between
    them (`parsers` reading the learned format's data model while `learn` checks a format with the
    parsers): one of the two must sit below the other."""
    cycles = sorted(
        f"{package} <-> {other}"
        for package, others in PACKAGE_GRAPH.items()
        for other in others
        if package < other and reaches(other, package, PACKAGE_GRAPH)
    )
    assert cycles == []


# (who, what it must never import): the layering, lower layers first
RULES = [
    # the transformers environment and the Hugging Face side sit below the converter and verifier
    (("ollama_fc.jinja", "ollama_fc.hf"), ("ollama_fc.convert", "ollama_fc.verify", "ollama_fc.oracle")),
    # the converter does not depend on the verifier (the verifier checks the converter)
    (("ollama_fc.convert",), ("ollama_fc.verify", "ollama_fc.oracle", "ollama_fc.client")),
    # what the syntax lowers to never reaches back into the visitor; the Go builders know no Jinja
    (("ollama_fc.convert.ops",), ("ollama_fc.convert.translate", "ollama_fc.convert.api")),
    (("ollama_fc.convert.go",), ("ollama_fc.convert.ops", "ollama_fc.convert.translate", "ollama_fc.convert.api")),
    # the format parsers sit below the client, which the markers serve without the converter
    (("ollama_fc.parsers",), ("ollama_fc.client",)),
    (("ollama_fc.markers",), ("ollama_fc.convert", "ollama_fc.verify", "ollama_fc.hf", "ollama_fc.oracle")),
]


@pytest.mark.parametrize(("lower", "higher"), RULES, ids=[rule[0][0] for rule in RULES])
def test_layers_import_only_downwards(lower: tuple[str, ...], higher: tuple[str, ...]) -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if under(name, *lower)
        for target in targets
        if under(target, *higher)
    )
    assert wrong == []


def test_no_module_is_past_the_size_a_reader_takes_in() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert {name: size for name, size in sizes.items() if size > MAX_LINES} == {}


#: the longest function of the converter, in lines from its `def` (or first decorator) to its end
MAX_CONVERTER_FUNCTION_LINES = 80


def test_no_converter_function_is_past_the_length_a_reader_takes_in() -> None:
    """A converter function longer than a screenful decides several things at once; split
    along the concepts inside it (stmt_Assign, for_loop and expr_Call were 124 to 201 lines)."""
    converter = PACKAGE / "convert"
    long: dict[str, int] = {}
    for path in sorted(converter.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - start + 1
                if length > MAX_CONVERTER_FUNCTION_LINES:
                    long[f"{path.relative_to(converter)}:{node.lineno} {node.name}"] = length
    assert long == {}, f"functions over {MAX_CONVERTER_FUNCTION_LINES} lines: {long}"


def loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after running `statement`."""
    script = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()


def test_importing_the_client_loads_neither_converter_nor_verifier() -> None:
    """`ollama_fc.client` reads the family marker and tool tag (markers.py) only; a program using
    the client does not pay for the translator, the verifier or the render oracle."""
    loaded = loaded_by("import ollama_fc.client")
    assert "ollama_fc.markers" in loaded
    heavy = [
        name
        for name in loaded
        if under(name, "ollama_fc.convert", "ollama_fc.verify", "ollama_fc.oracle", "ollama_fc.hf")
    ]
    assert heavy == []


@pytest.mark.parametrize(
    "statement",
    ["import ollama_fc.convert.sources", "from ollama_fc.convert import TemplateSource, Conversion, load_source"],
)
def test_importing_the_source_dataclasses_loads_no_translator(statement: str) -> None:
    """A program that reads a template source or names a result's type (the learner, the
    families, a caller's type hint) does not load the translator, its Go builders or Jinja;
    `convert` loads them when first used."""
    loaded = loaded_by(statement)
    assert "ollama_fc.convert.sources" in loaded
    translator = [
        name
        for name in loaded
        if under(name, "ollama_fc.convert.api", "ollama_fc.convert.translate", "ollama_fc.convert.ops")
        or under(name, "ollama_fc.convert.go", "ollama_fc.convert.analysis", "ollama_fc.jinja", "jinja2")
    ]
    assert translator == []
    assert "ollama_fc.convert.translate" in loaded_by("from ollama_fc.convert import convert")
