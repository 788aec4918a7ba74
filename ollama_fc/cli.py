"""The `ollama-fc` command line.

Each command is a thin shell over one library function; errors of type OllamaFcError become
a one-line message on stderr and exit status 1.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, TypeVar

import click

from . import __version__
from .errors import OllamaFcError

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

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ollama-fc")
def main() -> None:
    """Make any model's native function-calling format work in Ollama."""


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
