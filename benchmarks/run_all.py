"""Every speed benchmark in one run, printed as one table of ratios side by side.

    python -m benchmarks.run_all               # ~5 minutes: starts the pinned Ollama
    python -m benchmarks.run_all --fidelity    # also re-measure docs/FIDELITY.md (much longer)

Rows: streaming recovery 200k vs 20k characters, recovery on the worst inputs at 80k vs 40k
characters, argument checking with jsonschema against fastjsonschema, the client against plain
`ollama.chat`, the proxy (`ollama-fc serve`) against direct Ollama, and whole-corpus conversion
against @huggingface/ollama-utils, and hostile templates against the largest corpus template.
Results go to docs/BENCHMARKS.md by
hand, with the machine's load noted.
"""

from __future__ import annotations

import argparse

from benchmarks import (
    argument_validation,
    client_overhead,
    corpus_convert,
    fidelity,
    hostile_convert,
    linear_time,
    proxy_overhead,
    streaming_parse,
)
from benchmarks.table import print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="client: alternating runs per case (default 15)")
    parser.add_argument("--host", help="client: an Ollama already running (default: start the pinned one)")
    parser.add_argument(
        "--requests", type=int, default=10_000, help="proxy: requests of the memory soak (default 10,000)"
    )
    parser.add_argument(
        "--fidelity", action="store_true", help="also run benchmarks/fidelity.py (writes docs/FIDELITY.md)"
    )
    args = parser.parse_args()
    rows = streaming_parse.measure()
    rows += linear_time.measure()
    rows += argument_validation.measure()
    rows += client_overhead.measure(args.seconds, args.host)
    rows += proxy_overhead.measure(args.seconds, args.requests, args.host)
    rows += corpus_convert.measure()
    rows += hostile_convert.measure()
    print_table(rows)
    if args.fidelity:
        fidelity.main([])


if __name__ == "__main__":
    main()
