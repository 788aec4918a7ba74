"""The CLI's promise: a failure is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def one_line_error(result: Any) -> str:
    """The single stderr line of a failed command (exit 1, no traceback)."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ollama-fc: "), result.stderr
    return lines[0]


def test_convert_to_an_unwritable_path_names_it(tmp_path: Path) -> None:
    source = tmp_path / "chat.jinja"
    source.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    target = tmp_path / "no-such-folder" / "Modelfile"
    line = one_line_error(CliRunner().invoke(cli.main, ["convert", str(source), "-o", str(target)]))
    assert f"cannot write {target}" in line and "writable" in line


TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read tools from"),
        ("{not json", "is not valid JSON"),
        (json.dumps(TOOL), "must hold a JSON list of tool definitions, not a dict"),
        (json.dumps([TOOL, {"type": "function"}]), "tool 1 has no function name"),
    ],
)
def test_parse_with_a_bad_tools_file_says_what_is_wrong(content: str | None, message: str, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    if content is not None:
        tools.write_text(content)
    line = one_line_error(CliRunner().invoke(cli.main, ["parse", "--tools", str(tools)], input="hi"))
    assert message in line and str(tools) in line


def test_parse_with_an_unknown_format_lists_the_known_ones() -> None:
    line = one_line_error(CliRunner().invoke(cli.main, ["parse", "--format", "nope"], input="hi"))
    assert "unknown tool-call format 'nope'" in line and "hermes" in line


def test_parse_of_empty_output_has_no_calls_and_no_content() -> None:
    result = CliRunner().invoke(cli.main, ["parse"], input="")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"tool_calls": [], "content": ""}


def test_convert_writes_passthrough_unless_ollama_parses(tmp_path: Path) -> None:
    source = tmp_path / "chat.jinja"
    source.write_text("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}")
    default = CliRunner().invoke(cli.main, ["convert", str(source), "--from", "base.gguf"])
    assert default.exit_code == 0, default.output
    lines = default.stdout.splitlines()
    assert lines[0] == "FROM base.gguf" and lines.count("PARSER passthrough") == 1
    ollama_parses = CliRunner().invoke(cli.main, ["convert", str(source), "--ollama-parses"])
    assert ollama_parses.exit_code == 0, ollama_parses.output
    assert "PARSER" not in ollama_parses.stdout
    assert ollama_parses.stdout == default.stdout.replace("base.gguf", ".").replace("PARSER passthrough\n", "")


def test_show_prints_the_modelfile_build_creates_with_either_parsing() -> None:
    default = CliRunner().invoke(cli.main, ["show", "qwen2.5"])
    assert default.exit_code == 0 and "\nPARSER passthrough\n" in default.stdout
    ollama_parses = CliRunner().invoke(cli.main, ["show", "qwen2.5", "--ollama-parses"])
    assert ollama_parses.exit_code == 0 and "\nPARSER " not in ollama_parses.stdout
