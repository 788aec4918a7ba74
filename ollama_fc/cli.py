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
