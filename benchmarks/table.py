"""One row type and one printer for every benchmark, so `run_all.py` shows them side by side."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS_DOC = Path(__file__).resolve().parents[1] / "docs" / "BENCHMARKS.md"


@dataclass(frozen=True)
class Row:
    """One comparison: our measurement, the one it is compared with, their ratio and a note."""

    benchmark: str
    ours: str
    against: str
    ratio: float
    note: str = ""


def print_table(rows: Sequence[Row]) -> None:
    headers = ("benchmark", "ours", "against", "ratio", "spread / note")
    cells = [(row.benchmark, row.ours, row.against, f"{row.ratio:.3f}", row.note) for row in rows]
    widths = [max(len(str(line[column])) for line in [headers, *cells]) for column in range(4)]
    for line in [headers, *cells]:
        print("  ".join(str(value).ljust(width) for value, width in zip(line, widths)) + "  " + line[4])


def median_ratio_spread(
    ours: Sequence[float], plain: Sequence[float], resamples: int = 2000
) -> tuple[float, float, float]:
    """The median of the paired ratios ours[i] / plain[i] (neighbouring calls share the machine's
    load, so each ratio cancels most of it), and the 5th and 95th percentile of that median over
    bootstrap resamples: how far noise alone moves it."""
    ratios = [o / p for o, p in zip(ours, plain)]
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.05 * resamples)], medians[int(0.95 * resamples) - 1]


def write_section(name: str, text: str, docs: Path = BENCHMARKS_DOC) -> None:
    """Replace the generated block between `<!-- name:start -->` and `<!-- name:end -->` in `docs`."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    content = docs.read_text(encoding="utf-8")
    if start not in content or end not in content:
        raise SystemExit(f"{docs} has no {start} ... {end} block to replace")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    docs.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")
