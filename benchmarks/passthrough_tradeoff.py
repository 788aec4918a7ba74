"""Who should parse the model's text: Ollama (`--ollama-parses`) or ollama-fc (`PARSER passthrough`)?

For each seed family, a scripted model prints each tricky output of
tests/test_families_passthrough.py in the family's own format; the family is built both ways on
the pinned Ollama, and each output is read by plain `ollama.Client` and by `ollama_fc.Client`
(whole and streamed). Each reading is `ok` (the calls and content a caller wants), `raw` (no
calls, but the whole text as content: nothing lost) or `lost` (text dropped, cut or repeated, or
a call that should not be there). Prints a table per shape and the totals; docs/USAGE.md quotes it.

Run: python -m benchmarks.passthrough_tradeoff [--host URL]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import ollama

from ollama_fc import Client
from ollama_fc.testbed.server import PinnedServer
from tests.test_families_passthrough import CASE_IDS, SHAPES, build_tricky, chat, outcome, tricky

COLUMNS = (
    ("ollama.Client", "ollama parses", False),
    ("ollama.Client", "passthrough", False),
    ("ollama_fc.Client", "ollama parses", False),
    ("ollama_fc.Client", "ollama parses", True),
    ("ollama_fc.Client", "passthrough", False),
    ("ollama_fc.Client", "passthrough", True),
)


@contextlib.contextmanager
def server(host: str | None) -> Iterator[str]:
    if host:
        yield host
        return
    with PinnedServer() as pinned:
        yield str(pinned.host)


def measure(host: str, folder: Path) -> dict[tuple[str, int], Counter[str]]:
    """Outcome counts per (shape, column)."""
    counts: dict[tuple[str, int], Counter[str]] = {}
    for family, shape in CASE_IDS:
        case = tricky(family, shape)
        assert case is not None
        models = {
            "ollama parses": build_tricky(host, folder, family, shape, ollama_parses=True),
            "passthrough": build_tricky(host, folder, family, shape, ollama_parses=False),
        }
        for index, (client_name, build_mode, stream) in enumerate(COLUMNS):
            client = ollama.Client(host=host) if client_name == "ollama.Client" else Client(host=host)
            calls, content = chat(client, models[build_mode], stream)
            result = outcome(case, calls, content)
            counts.setdefault((shape, index), Counter())[result] += 1
            if result == "lost":
                print(f"lost: {family} {shape} {client_name} {build_mode}: {calls} {content!r}", file=sys.stderr)
    return counts


def cell(counter: Counter[str]) -> str:
    total = sum(counter.values())
    return f"{counter['ok']}/{total} ok, {counter['raw']} raw, {counter['lost']} lost"


def print_table(counts: dict[tuple[str, int], Counter[str]]) -> None:
    header = ["output"] + [f"{c} on {b}{' (streamed)' if s else ''}" for c, b, s in COLUMNS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    totals = [Counter[str]() for _ in COLUMNS]
    for shape in SHAPES:
        row = [shape]
        for index in range(len(COLUMNS)):
            counter = counts.get((shape, index), Counter())
            totals[index] += counter
            row.append(cell(counter))
        print("| " + " | ".join(row) + " |")
    print("| **all** | " + " | ".join(f"**{cell(total)}**" for total in totals) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="an Ollama v0.24.0 already running (default: start the pinned one)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # DroppedOutputWarning: the table counts those as lost
    with server(args.host) as host, tempfile.TemporaryDirectory() as folder:
        print_table(measure(host, Path(folder)))


if __name__ == "__main__":
    main()
