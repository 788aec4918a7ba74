"""`python -m ollama_fc.testbed provision|serve [--tier NAME] | real-model [--model NAME]`: the test bed for
people and scripts."""

from __future__ import annotations

import argparse
import sys

from ..errors import OllamaFcError
from .provision import provision
from .realmodel import REAL_MODEL, REAL_MODELS, real_model_gguf
from .server import serve_forever
from .tiers import TIERS, tier


def _report(line: str) -> None:
    print(f"[real model] {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """`provision` (print the version and binary) or `serve` (foreground) of one tier."""
    choices = ", ".join(f"{t.name} = {t.version}" for t in TIERS.values())
    parser = argparse.ArgumentParser(prog="ollama-server", description=f"The test bed's Ollama servers ({choices}).")
    commands = parser.add_subparsers(dest="command", required=True)
    provision_command = commands.add_parser("provision", help="build or find a tier's binary; print version and path")
    serve = commands.add_parser("serve", help="run `ollama serve` of a tier's binary in the foreground")
    real_model = commands.add_parser(
        "real-model", help=f"download (once) and check a real model; print its path (default {REAL_MODEL.name})"
    )
    real_model.add_argument("--model", choices=list(REAL_MODELS), default=REAL_MODEL.name, help="which real model")
    for command in (provision_command, serve):
        command.add_argument("--tier", choices=list(TIERS), default="pinned", help="which Ollama (default: pinned)")
    serve.add_argument("--port", type=int, help="loopback port (default: OLLAMA_HOST or 11434)")
    args = parser.parse_args(argv)
    try:
        if args.command == "real-model":
            print(real_model_gguf(report=_report, model=REAL_MODELS[args.model]))
            return 0
        chosen = tier(args.tier)
        if args.command == "provision":
            print(f"ollama {chosen.version} ({chosen.name}): {provision(chosen)}")
            return 0
        serve_forever(chosen, port=args.port)
        return 0
    except OllamaFcError as exc:
        print(f"ollama-server: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
