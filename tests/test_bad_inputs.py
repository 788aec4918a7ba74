"""Every bad input is one line naming the thing and what to do, and an untrusted template stays
cheap: past the output or time limit the conversion stops with one line naming the construct."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ollama_fc import cli
from ollama_fc.convert import TemplateSource, convert
from ollama_fc.errors import ConversionError, SourceError
from ollama_fc.families import family_names, modelfiles_dir
from ollama_fc.parsers.registry import FORMATS

CLI = [sys.executable, "-c", "from ollama_fc.cli import main; main()"]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def run_cli(*args: str, env: dict[str, str] | None = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300, **kwargs
    )  # type: ignore[call-overload, no-any-return]


# -- untrusted templates stay cheap --------------------------------------------------------------


def test_a_range_longer_than_transformers_sandbox_allows_is_refused_at_once() -> None:
    with pytest.raises(ConversionError, match=r"^line 2: range\(\) of 10,000,000 steps is refused by transformers"):
        convert(template="x\n{% for i in range(10000000) %}{{ i }}{% endfor %}")


def test_nested_unrolled_loops_stop_at_the_output_limit() -> None:
    template = "{% for i in range(100000) %}\n{% for j in range(100000) %}{{ i }}{{ j }}{% endfor %}{% endfor %}"
    with pytest.raises(ConversionError) as raised:
        convert(template=template, max_output=100_000)
    assert str(raised.value).startswith("line 2: the {% for %} loop makes the converted template larger than 100,000")
    assert "max_output=" in str(raised.value)


def test_a_folded_string_repeat_is_refused_before_it_is_built() -> None:
    with pytest.raises(ConversionError, match=r"^line 1: '\*' of a constant makes the converted template larger"):
        convert(template="{{ 'ab' * 10000000000 }}")


def test_a_string_doubled_in_a_loop_stops_at_the_memory_bound() -> None:
    template = (
        "{% set ns = namespace(s='ab') %}\n{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"
    )
    with pytest.raises(ConversionError, match=r"^line 2: the template needs more than 256 MB to render"):
        convert(template=template)


def test_a_template_that_renders_for_minutes_stops_at_the_time_limit() -> None:
    template = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}x{% endmacro %}\n{{ f(40) }}"
    with pytest.raises(ConversionError, match=r"^line \d: the template takes longer than 1 s to render"):
        convert(template=template, max_seconds=1)


def test_cli_limits_are_options(tmp_path: Path) -> None:
    runner = CliRunner()
    template = tmp_path / "t.jinja"
    template.write_text("{% for i in range(1000) %}{{ i }} {% endfor %}")
    small = runner.invoke(cli.main, ["convert", str(template), "--max-output", "500"])
    assert small.exit_code == 1
    assert one_line(small.stderr).startswith("ollama-fc: line 1: the {% for %} loop makes the converted")
    assert "--max-output" in small.stderr
    assert runner.invoke(cli.main, ["convert", str(template)]).exit_code == 0


# -- every bad input, one line -------------------------------------------------------------------


def test_an_empty_template_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SourceError, match="the chat template is empty"):
        convert(template="")
    monkeypatch.chdir(tmp_path)
    Path("empty.jinja").write_text(" \n")
    result = CliRunner().invoke(cli.main, ["convert", "empty.jinja"])
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        "ollama-fc: empty.jinja: the chat template is empty; give the model's chat template "
        "(chat_template.jinja, or tokenizer_config.json with a `chat_template`)"
    )


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead


def test_a_failed_output_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}" + "x" * 5000 + "{{ m.content }}{% endfor %}")
    output = tmp_path / "Modelfile"
    output.write_text("the old Modelfile\n")
    result = run_cli("convert", str(template), "-o", str(output), preexec_fn=_limit_file_size)
    assert result.returncode == 1
    assert one_line(result.stderr).startswith(f"ollama-fc: cannot write {output}: File too large")
    assert output.read_text() == "the old Modelfile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Modelfile", "t.jinja"]  # no temporary left


def test_the_output_is_written_whole(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0].content }}")
    output = tmp_path / "Modelfile"
    output.write_text("old")
    result = CliRunner().invoke(cli.main, ["convert", str(template), "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert output.read_text().startswith("FROM .\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Modelfile", "t.jinja"]


def test_a_malformed_ollama_host_is_one_line_and_help_still_works() -> None:
    env = {"OLLAMA_HOST": "localhost:99999"}
    help_ = run_cli("--help", env=env)
    assert help_.returncode == 0 and "Usage: " in help_.stdout and help_.stderr == ""
    listed = run_cli("list", env=env)
    assert listed.returncode == 0 and "qwen2.5" in listed.stdout
    built = run_cli("build", "qwen2.5", env=env)
    assert built.returncode == 1
    assert one_line(built.stderr) == (
        "ollama-fc: OLLAMA_HOST 'localhost:99999' is not a valid address (Port out of range 0-65535); "
        "give host:port, e.g. 127.0.0.1:11434"
    )


def test_a_path_over_255_characters_says_it_is_too_long(tmp_path: Path) -> None:
    long_name = "t" * 300 + ".jinja"
    runner = CliRunner()
    result = runner.invoke(cli.main, ["convert", str(tmp_path / long_name)])
    assert result.exit_code == 1
    line = one_line(result.stderr)
    assert "the path is too long" in line and "internal error" not in line
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0].content }}")
    written = runner.invoke(cli.main, ["convert", str(template), "-o", str(tmp_path / long_name)])
    assert written.exit_code == 1
    assert "cannot write" in one_line(written.stderr) and "the path is too long" in written.stderr
    for base in ("a" * 300 + ".gguf", "a" * 300):
        built = runner.invoke(cli.main, ["build", "qwen2.5", "--from", str(tmp_path / base)])
        assert built.exit_code == 1
        assert "the path is too long" in one_line(built.stderr) and "internal error" not in built.stderr


def test_build_without_a_family_needs_a_gguf_with_a_chat_template(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli.main, ["build"])
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        "ollama-fc: give a family (`ollama-fc list`), or --from a model your Ollama has (`ollama list`) "
        "or a .gguf file, to build with its own chat template"
    )
    # a name that is not a file is a model of the user's Ollama: with none listening, one line says so
    result = runner.invoke(cli.main, ["build", "--from", "llama3.2"], env={"OLLAMA_HOST": "127.0.0.1:9"})
    assert result.exit_code == 1
    assert one_line(result.stderr).startswith("ollama-fc: cannot reach Ollama at http://127.0.0.1:9 ")
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("hello")
    result = runner.invoke(cli.main, ["build", "--from", str(not_gguf)])
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        f"ollama-fc: {not_gguf}: not a GGUF file (no GGUF header); convert it to GGUF first"
    )


def test_verify_without_go_says_which_go_to_install(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    env = {"OLLAMA_FC_CACHE": str(tmp_path / "cache"), "PATH": str(Path(sys.executable).parent)}
    result = run_cli("verify", str(template), env=env)
    assert result.returncode == 1
    assert one_line(result.stderr) == (
        "ollama-fc: the template oracle needs Go >= 1.26.0 on PATH to build; install it from https://go.dev/dl"
    )


def test_verify_with_an_older_go_says_which_go_to_install(tmp_path: Path) -> None:
    """A Go older than go.mod asks for, refusing with the words Go 1.21+ uses (GOTOOLCHAIN=local)."""
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    old_go = tmp_path / "bin" / "go"
    old_go.parent.mkdir()
    old_go.write_text(
        "#!/bin/sh\necho 'go: go.mod requires go >= 1.26.0 (running go 1.24.4; GOTOOLCHAIN=local)' >&2\nexit 1\n"
    )
    old_go.chmod(0o755)
    env = {"OLLAMA_FC_CACHE": str(tmp_path / "cache"), "PATH": f"{old_go.parent}:{Path(sys.executable).parent}"}
    result = run_cli("verify", str(template), env=env)
    assert result.returncode == 1
    assert one_line(result.stderr) == (
        "ollama-fc: building the template oracle for Ollama v0.24.0 failed: it needs Go >= 1.26.0; "
        "install it from https://go.dev/dl (`go version` shows yours)"
    )


def test_verify_offline_says_what_to_do(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    env = {
        "OLLAMA_FC_CACHE": str(tmp_path / "cache"),
        "GOMODCACHE": str(tmp_path / "gomod"),
        "GOFLAGS": "-modcacherw",
        "GOPROXY": "http://127.0.0.1:9",  # nothing listens there: Go cannot download the module
    }
    result = run_cli("verify", str(template), env=env)
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert line.startswith("ollama-fc: building the template oracle for Ollama v0.24.0 failed: Go could not")
    assert "build it once while online" in line


def test_parse_help_lists_the_format_names() -> None:
    result = CliRunner().invoke(cli.main, ["parse", "--help"])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    for name in FORMATS:
        assert name in flat


def test_convert_takes_template_text_only_by_keyword(tmp_path: Path) -> None:
    text = "{% for m in messages %}{{ m.content }}{% endfor %}"
    from_text = convert(template=text)
    path = tmp_path / "t.jinja"
    path.write_text(text)
    assert convert(path).template == convert(str(path)).template == from_text.template
    assert convert(TemplateSource(text)).template == from_text.template
    with pytest.raises(SourceError, match="no such file or folder"):
        convert(text)  # a str is always a path, never guessed to be a template
    with pytest.raises(TypeError, match="exactly one"):
        convert(path, template=text)


def test_modelfiles_writes_into_the_current_directory_not_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {p: p.stat().st_mtime_ns for p in modelfiles_dir().glob("*/Modelfile")}
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli.main, ["modelfiles"])
    assert result.exit_code == 0, result.output
    written = sorted(tmp_path.glob("modelfiles/*/Modelfile"))
    assert [p.parent.name for p in written] == sorted(family_names())
    assert result.output.splitlines()[0].startswith("wrote modelfiles/")
    into = runner.invoke(cli.main, ["modelfiles", "--into", "elsewhere"])
    assert into.exit_code == 0 and len(list(tmp_path.glob("elsewhere/*/Modelfile"))) == len(written)
    assert runner.invoke(cli.main, ["modelfiles", "--check"]).exit_code == 0
    assert {p: p.stat().st_mtime_ns for p in modelfiles_dir().glob("*/Modelfile")} == before
