"""The corpus of model outputs scored precision first, as public benchmarks of tool-call
repairers score: unsafe fabrications (a call on text that does not commit to one), then
precision and recall over calls, then streamed against whole.

    python benchmarks/precision.py [--details]

Every record of tests/data/model_outputs/ is parsed with its format and its offered tools
(`parse_tool_calls`, the engine the client and the proxy share) and, in random chunks, by the
streaming recoverer. Rows per format and for the whole corpus; `--details` lists the records
behind each failing count. Targets (docs/RECOVERY.md): 0 unsafe, precision >= 0.98, recall >=
0.97, streamed == whole everywhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from table import Row, print_table  # noqa: E402
from test_output_corpus import SAMPLES, Score, score  # noqa: E402


def rows(label: str, result: Score) -> list[Row]:
    note = f"{result.records} records, {result.expected} calls expected, {result.emitted} emitted"
    return [
        Row(f"precision-first, {label}: unsafe fabrications", str(len(result.unsafe)), "0", len(result.unsafe), note),
        Row(f"precision-first, {label}: precision", f"{result.precision:.3f}", "0.98", result.precision / 0.98),
        Row(f"precision-first, {label}: recall", f"{result.recall:.3f}", "0.97", result.recall / 0.97),
        Row(
            f"precision-first, {label}: streamed != whole",
            str(len(result.stream_differs)),
            "0",
            len(result.stream_differs),
        ),
    ]


def measure() -> list[Row]:
    out = rows("all", score(SAMPLES))
    for format_name in sorted({sample.format for sample in SAMPLES}):
        out += rows(format_name, score([sample for sample in SAMPLES if sample.format == format_name]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list the records behind each count")
    args = parser.parse_args()
    print_table(measure())
    if args.details:
        result = score(SAMPLES)
        real = sum(sample.real for sample in SAMPLES)
        print(f"\n{len(SAMPLES)} records ({real} real, {len(SAMPLES) - real} constructed)")
        for label, ids in (
            ("unsafe", result.unsafe),
            ("wrong", result.wrong),
            ("missed", result.missed),
            ("streamed != whole", result.stream_differs),
        ):
            print(f"{label}: {', '.join(ids) or '-'}")


if __name__ == "__main__":
    main()
