"""`python -m ollama_fc.testbed provision|serve`: the pinned server for people and scripts."""

from __future__ import annotations

import argparse
import sys

from ..errors import OllamaUnavailableError
from ..oracle import PINNED
from .server import provision, serve_forever


def main(argv: list[str] | None = None) -> int:
    """`provision` (print the binary) or `serve` (foreground) for people and scripts."""
    parser = argparse.ArgumentParser(prog="ollama-server", description=f"The pinned Ollama {PINNED} server.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("provision", help="build or find the pinned binary; print its path")
    serve = commands.add_parser("serve", help="run `ollama serve` of the pinned binary in the foreground")
    serve.add_argument("--port", type=int, help="loopback port (default: OLLAMA_HOST or 11434)")
    args = parser.parse_args(argv)
    try:
        if args.command == "provision":
            print(provision())
            return 0
        serve_forever(port=args.port)
        return 0
    except OllamaUnavailableError as exc:
        print(f"ollama-server: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
