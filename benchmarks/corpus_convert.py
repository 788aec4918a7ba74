"""Time to convert the whole reference corpus: ours against @huggingface/ollama-utils.

Both convert the same `../shared/corpus/templates` sources (with the same stand-in tokens as the
fidelity benchmark), best of a few runs. Ours runs in this one process (imports already done) and
is timed in CPU seconds, the time on one core; the anchor is one node process over all templates,
timed on the wall clock (its startup, ~0.05 s, included).
The anchor mostly matches templates against a table and so does far less work: the ratio says
what our checked translation costs, not that either is slow.
Run: python -m benchmarks.corpus_convert [--repeats N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from benchmarks.fidelity import CORPUS, convert_all, hfjs_convert_all
from benchmarks.table import Row, print_table
from ollama_fc.convert.sources import TemplateSource, load_source
from ollama_fc.errors import ConversionError
from ollama_fc.verify.runner import with_stand_in_tokens


def best_seconds(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def best_cpu_seconds(sources: dict[str, TemplateSource], repeats: int) -> float:
    return min(convert_all(sources)[1] for _ in range(repeats))


def measure(repeats: int = 3) -> list[Row]:
    if not CORPUS.is_dir():
        raise SystemExit("reference corpus not found next to the repository (expected ../shared/corpus)")
    sources = {path.name: with_stand_in_tokens(load_source(path)) for path in sorted(CORPUS.glob("*.jinja"))}
    conversions, _ = convert_all(sources)
    refused = sum(isinstance(result, ConversionError) for result in conversions.values())
    crashed = sum(isinstance(result, Exception) for result in conversions.values()) - refused
    ours = best_cpu_seconds(sources, repeats)
    theirs = best_seconds(lambda: hfjs_convert_all(sources), repeats)
    return [
        Row(
            f"corpus conversion, {len(sources)} templates, ours/@huggingface/ollama-utils",
            f"{ours:.2f} s CPU",
            f"{theirs:.2f} s",
            ours / theirs,
            f"best of {repeats}; {ours / len(sources) * 1000:.1f} ms per template; {refused} refused by us (ConversionError), {crashed} crashed",
        )
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    print_table(measure(parser.parse_args().repeats))
