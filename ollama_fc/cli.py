"""The `ollama-fc` command line.

Each command is a thin shell over one library function; errors of type OllamaFcError become
a one-line message on stderr and exit status 1. Anything else is a bug of ours: it is still
reported in one line (exit status 2), with the traceback only when OLLAMA_FC_DEBUG is set.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import OllamaFcError
from .parsers.registry import FORMATS
from .tools_section import TOOLS_FORMATS

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn a library error into `ollama-fc: <reason>` and exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OllamaFcError as exc:
            click.echo(f"ollama-fc: {exc}", err=True)
            sys.exit(1)
        except Exception as exc:
            if os.environ.get("OLLAMA_FC_DEBUG"):
                raise
            click.echo(
                f"ollama-fc: internal error ({type(exc).__name__}: {exc}); this is a bug in "
                "ollama-fc, please report it (OLLAMA_FC_DEBUG=1 shows the traceback)",
                err=True,
            )
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ollama-fc")
def main() -> None:
    """Make any model's native function-calling format work in Ollama."""


@main.command("convert")
@click.argument("source")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the result to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print template, parameters, warnings and capabilities as JSON.")
@click.option("--from", "from_", default=".", show_default=True, help="The Modelfile's FROM line.")
@click.option(
    "--ollama-parses",
    is_flag=True,
    help="Leave out `PARSER passthrough`: Ollama parses tool calls itself (for apps that talk to Ollama directly).",
)
@click.option(
    "--max-output",
    type=click.IntRange(min=1),
    help="Refuse a template whose Go template grows past this many characters (default 4,000,000).",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    help="Refuse a template that takes longer than this many seconds to convert (default 20).",
)
@click.option(
    "--tools-format",
    type=click.Choice(TOOLS_FORMATS),
    help="For a chat template without tools: add a tools section in this tool-call format (docs/USAGE.md).",
)
@friendly_errors
def convert_command(
    source: str,
    output: str | None,
    as_json: bool,
    from_: str,
    ollama_parses: bool,
    max_output: int | None,
    max_seconds: float | None,
    tools_format: str | None,
) -> None:
    """Convert a chat template (.jinja, tokenizer_config.json, HF folder, .gguf) to an Ollama Modelfile.

    The Modelfile has `PARSER passthrough`: Ollama returns the model's text untouched and
    ollama_fc.Client parses tool calls and thinking (see docs/USAGE.md, "Who parses the model's text").
    The tool-call format the template writes is learned from it and recorded in the TEMPLATE's
    first comment, where `ollama_fc.Client` finds it through `show`.
    """
    from .files import write_text_atomically
    from .learn import convert_with_format
    from .markers import PASSTHROUGH_PARSER
    from .tools_section import convert_with_tools_section, tool_capable, tool_less_note

    limits = {k: v for k, v in {"max_output": max_output, "max_seconds": max_seconds}.items() if v is not None}
    note = ""
    if tools_format:
        conversion = convert_with_tools_section(Path(source), tools_format, **limits)
    else:
        conversion, learned, reason = convert_with_format(Path(source), **limits)
        if not tool_capable(conversion.capabilities):
            note = tool_less_note(source)
        elif learned is None and conversion.capabilities.tools:
            note = f"{reason}; clients try the built-in formats"
    parser = None if ollama_parses else PASSTHROUGH_PARSER
    text = conversion.model_dump_json(indent=2) + "\n" if as_json else conversion.modelfile(from_, parser=parser)
    if output:
        write_text_atomically(output, text, hint="give -o a path in a writable folder")
    else:
        click.echo(text, nl=False)
    if note:
        click.echo(f"note: {note}", err=True)
    for warning in conversion.warnings:
        click.echo(f"warning: {warning}", err=True)


@main.command("verify")
@click.argument("source")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@friendly_errors
def verify_command(source: str, as_json: bool) -> None:
    """Convert SOURCE and check every battery case against the Hugging Face reference.

    Prints one line per case (exact, a compact diff, an Ollama error, or why the Jinja template
    cannot render the case), then `exact N/M` over the cases the template can render. Exit
    status 0 when all of those are exact on every Ollama version checked, 1 otherwise.
    """
    import json

    from .verify import verify

    report = verify(source)
    if as_json:
        payload = report.model_dump()
        payload.update(exact=report.exact, rendered=report.rendered)
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        width = max(len(case.name) for case in report.cases)
        for warning in report.warnings:
            click.echo(f"warning: {warning}")
        for note in report.notes:
            click.echo(f"note: {note}")
        for case in report.cases:
            line = case.status if case.status == "exact" else f"{case.status}: {case.detail}"
            click.echo(f"{case.name:<{width}}  {line}")
        click.echo(f"exact {report.exact}/{report.rendered}")
    sys.exit(0 if report.all_exact else 1)


class _ProgressPrinter:
    """Progress bars on stderr for build steps: one bar per sized step, one line per other step."""

    def __init__(self) -> None:
        self._step: str | None = None
        self._bar: Any = None

    def __call__(self, step: str, done: int | None, total: int | None) -> None:
        if step != self._step:
            self.close()
            self._step = step
            if total:
                self._bar = click.progressbar(length=total, label=step, file=sys.stderr, show_pos=False)
                self._bar.__enter__()
            else:
                click.echo(step, err=True)
        if self._bar is not None and done is not None:
            self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@main.command("build")
@click.argument("family", required=False)
@click.option(
    "--from",
    "from_",
    metavar="BASE",
    help="Ollama model name or .gguf file (default: the family's suggested base); without FAMILY, "
    "a .gguf file or a model your Ollama has, built with its own chat template.",
)
@click.option("--name", help="Name of the model to create (default: FAMILY-fc, or the GGUF's file name and -fc).")
@click.option("--faithful", is_flag=True, help="Skip every curated fix: the pure conversion of the source template.")
@click.option(
    "--skip-fix",
    "skip_fixes",
    multiple=True,
    metavar="FIX",
    help="Skip one curated fix (repeatable; see `ollama-fc show`).",
)
@click.option(
    "--ollama-parses",
    is_flag=True,
    help="Let Ollama parse tool calls (for apps that talk to Ollama directly) instead of `PARSER passthrough`.",
)
@click.option(
    "--tools-format",
    type=click.Choice(TOOLS_FORMATS),
    help="For a chat template without tools: add a tools section in this tool-call format (docs/USAGE.md).",
)
@friendly_errors
def build_command(
    family: str | None,
    from_: str | None,
    name: str | None,
    faithful: bool,
    skip_fixes: tuple[str, ...],
    ollama_parses: bool,
    tools_format: str | None,
) -> None:
    """Create an Ollama model of FAMILY over BASE with its curated template (honours OLLAMA_HOST).

    Without FAMILY, `--from model.gguf` builds any GGUF with its own chat template, converted
    faithfully, its tool-call format learned from that template; `--from NAME` does the same for
    a model your Ollama has (NAME-fc, from the same weights, with its parameters and adapters).

    The model has `PARSER passthrough`: Ollama returns its text untouched and ollama_fc.Client
    parses tool calls and thinking. With --ollama-parses, Ollama parses them itself, and drops
    or cuts some outputs it cannot read (docs/USAGE.md, "Who parses the model's text").
    """
    from .build import build, is_gguf_path
    from .markers import read_marker

    if family is None and from_ and not is_gguf_path(from_):
        _build_installed(from_, name, ollama_parses, tools_format)  # a model the user's Ollama has
        return
    printer = _ProgressPrinter()
    try:
        result = build(
            family,
            from_=from_,
            name=name,
            faithful=faithful,
            skip_fixes=skip_fixes,
            progress=printer,
            ollama_parses=ollama_parses,
            tools_format=tools_format,
        )
    finally:
        printer.close()
    for warning in [*result.conversion.warnings, *result.notes]:
        click.echo(f"warning: {warning}", err=True)
    if result.built is None:
        marker = read_marker(result.conversion.template)
        how = f"its own chat template, tool-call format {marker[1] if marker else 'not learned'}"
        if tools_format:
            how = f"its own chat template with a {tools_format} tools section added"
    else:
        how = f"fixes: {', '.join(result.fixes) or 'none (faithful)'}"
    parsing = f"PARSER {result.parser}" if result.parser else "Ollama parses tool calls"
    click.echo(f"created {result.name} from {result.base} in {result.seconds:.1f}s ({how}; {parsing})")


def _build_installed(from_: str, name: str | None, ollama_parses: bool, tools_format: str | None) -> None:
    """`build --from NAME`: the model NAME of the user's Ollama, with its own chat template (with
    `tools_format`, a tools section in that format added to it)."""
    from .fromname import build_installed

    printer = _ProgressPrinter()
    try:
        result, choice = build_installed(
            from_, name=name, progress=printer, ollama_parses=ollama_parses, tools_format=tools_format
        )
    finally:
        printer.close()
    for warning in [*result.conversion.warnings, *result.notes]:
        click.echo(f"warning: {warning}", err=True)
    click.echo(choice.line())
    parsing = f"PARSER {result.parser}" if result.parser else "Ollama parses tool calls"
    how = f"its own chat template with a {tools_format} tools section added; " if tools_format else ""
    click.echo(f"created {result.name} from {result.base} in {result.seconds:.1f}s ({how}{parsing})")


@main.command("check")
@click.argument("model")
@friendly_errors
def check_command(model: str) -> None:
    """Ask the Ollama model MODEL a few tool questions; say whether its tool calls work as they are.

    Each question goes to plain Ollama; per question the reply Ollama gave and what ollama-fc
    recovers from it are printed, then the tool-call format the template declares and the one
    the model writes, and the command that fixes the model (or "nothing to fix"). Exit status
    0 when tool calls work as they are, 1 when they do not.
    """
    from .build import is_gguf_path
    from .diagnose import diagnose, report

    if is_gguf_path(model):
        raise OllamaFcError(
            f"{model} is a file, not an Ollama model; check takes a model name (`ollama list`); "
            f"`ollama-fc build --from {model}` builds a model from a GGUF file"
        )
    diagnosis = diagnose(model, progress=lambda line: click.echo(line, err=True))
    for line in report(diagnosis):
        click.echo(line)
    sys.exit(0 if diagnosis.works else 1)


@main.command("list")
@friendly_errors
def list_command() -> None:
    """The families `build` knows, with the tool-call format their client parser reads."""
    from .families import family_names, load_family

    for name in family_names():
        recipe = load_family(name).recipe
        base = recipe.base or "(no local base)"
        click.echo(f"{name:<14} {recipe.tool_format:<14} {base}")


@main.command("show")
@click.argument("family")
@click.option("--faithful", is_flag=True, help="Show the pure conversion, without the curated fixes.")
@click.option("--ollama-parses", is_flag=True, help="Show the model `build --ollama-parses` creates (no PARSER).")
@friendly_errors
def show_command(family: str, faithful: bool, ollama_parses: bool) -> None:
    """Print the Modelfile `build FAMILY` creates (edit FROM to use it with `ollama create -f`)."""
    from .families import family_template, modelfile
    from .markers import PASSTHROUGH_PARSER

    parser = None if ollama_parses else PASSTHROUGH_PARSER
    click.echo(modelfile(family_template(family, faithful=faithful), parser=parser), nl=False)


@main.command("modelfiles")
@click.option(
    "--into",
    "folder",
    type=click.Path(file_okay=False),
    default="modelfiles",
    show_default=True,
    help="Folder to write <family>/Modelfile into (relative to the current directory).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a Modelfile in the folder is stale.")
@friendly_errors
def modelfiles_command(folder: str, check: bool) -> None:
    """Write <folder>/<family>/Modelfile for every family, from converters/.

    Run in a checkout, the default folder is the checked-in modelfiles/; anywhere else it is
    ./modelfiles, never the installed package.
    """
    from .families import write_modelfiles

    changed = write_modelfiles(Path(folder), check=check)
    for path in changed:
        click.echo(f"{'stale' if check else 'wrote'} {path}")
    if check and changed:
        sys.exit(1)


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=11435, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--upstream",
    metavar="URL",
    help="The Ollama to forward to (default: OLLAMA_HOST, else http://127.0.0.1:11434).",
)
@friendly_errors
def serve_command(host: str, port: int, upstream: str | None) -> None:
    """Run a proxy in front of Ollama that repairs tool calls for any app.

    Point an app's Ollama URL at http://HOST:PORT, or its OpenAI base URL at http://HOST:PORT/v1:
    /api/chat and /v1/chat/completions come back with the tool calls Ollama left in the text
    moved into tool_calls; every other endpoint is forwarded to Ollama unchanged.
    """
    from .serve import serve

    serve(host, port, upstream)


@main.group("formats")
def formats_group() -> None:
    """Tool-call formats: the built-in ones, and formats learned from chat templates."""


@formats_group.command("learn")
@click.argument("source")
@click.option(
    "--response-template",
    "as_response_template",
    is_flag=True,
    help="Print the format as a transformers `response_template` (for tokenizer_config.json) instead.",
)
@friendly_errors
def formats_learn_command(source: str, as_response_template: bool) -> None:
    """Print the tool-call format SOURCE's chat template writes, as JSON (with its format name).

    A tokenizer_config.json or model folder with a `response_template` gives that format."""
    import json

    from .learn import learn_format

    learned = learn_format(source)
    if as_response_template:
        from .convert.sources import load_source
        from .learn.response_template import start_anchor, to_response_template

        template = to_response_template(learned, start_anchor(load_source(source)))
        click.echo(json.dumps(template, indent=2, ensure_ascii=False))
        return
    payload = {"name": learned.format_name(), **learned.model_dump(mode="json")}
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


@formats_group.command("list")
def formats_list_command() -> None:
    """The built-in formats, in the order they are tried, and the models that write each (any chat
    template's own format can be learned: `formats learn`)."""
    from .parsers import PARSERS

    width = max(map(len, PARSERS))
    for name, parser in PARSERS.items():
        click.echo(f"{name:<{width}}  {parser.models}".rstrip())


@main.command("parse")
@click.option(
    "--format",
    "format_name",
    default=None,
    metavar="FORMAT",
    help=f"Tool-call format: {', '.join(FORMATS)} (default: try all).",
)
@click.option(
    "--template",
    "template_source",
    default=None,
    help="Chat template (.jinja, tokenizer_config.json, HF folder, .gguf) whose own format to parse with.",
)
@click.option(
    "--tools",
    "tools_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="JSON file with the offered tools (a list of tool definitions); other names are not calls.",
)
@friendly_errors
def parse_command(format_name: str | None, template_source: str | None, tools_file: str | None) -> None:
    """Recover tool calls from model text on stdin; print them and the remaining content as JSON.

    Empty input is a model that printed nothing: no calls, empty content. With --template, the
    format is learned from that chat template (when it cannot be, every format is tried).
    """
    import json

    from .parsers import parse_tool_calls

    tools = None if tools_file is None else _read_tools_file(tools_file)
    if sys.stdin.isatty():
        raise OllamaFcError("parse reads the model's text on stdin; pipe it in, e.g. `echo '...' | ollama-fc parse`")
    if template_source is not None:
        if format_name is not None:
            raise OllamaFcError("give --format or --template, not both")
        from .learn import FormatNotLearned, learn_format

        try:
            format_name = learn_format(template_source).format_name()
        except FormatNotLearned as exc:
            click.echo(f"note: {exc}; trying every built-in format", err=True)
    result = parse_tool_calls(sys.stdin.read(), format=format_name, tools=tools)
    click.echo(json.dumps(result.to_dict(), ensure_ascii=False))


def _read_tools_file(tools_file: str) -> list[Any]:
    """The tool definitions in a JSON file, each with a name (only named tools count as calls)."""
    import json

    from .parsers.base import tool_name

    try:
        tools = json.loads(Path(tools_file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise OllamaFcError(
            f"cannot read tools from {tools_file}: {exc.strerror or exc}; give --tools a JSON file"
        ) from None
    except ValueError as exc:
        raise OllamaFcError(
            f"{tools_file} is not valid JSON ({exc}); give --tools a JSON list of tool definitions"
        ) from None
    if not isinstance(tools, list):
        raise OllamaFcError(f"{tools_file} must hold a JSON list of tool definitions, not a {type(tools).__name__}")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool_name(tool) is None:
            raise OllamaFcError(
                f"{tools_file}: tool {index} has no function name; each tool looks like "
                '{"type": "function", "function": {"name": ..., "parameters": {...}}}'
            )
    return tools
