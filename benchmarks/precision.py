"""The corpus of model outputs scored precision first, as public benchmarks of tool-call
repairers score: unsafe fabrications (a call on text that does not commit to one), then
precision and recall over calls, then streamed against whole; in the corpus, and leaving each
public source out.

    python -m benchmarks.precision [--details] [--sources] [--write-docs]

In the corpus: every record of tests/data/model_outputs/ is parsed with its format and its
offered tools (`parse_tool_calls`, the engine the client and the proxy share) and, in random
chunks, by the streaming recoverer. Rows per format and for the whole corpus; `--details` lists
the records behind each failing count. Targets (docs/RECOVERY.md): 0 unsafe, precision >= 0.98,
recall >= 0.97, streamed == whole everywhere.

Leaving a source out (docs/RECOVERY.md, "Held out"): the real records are grouped by their
public source (a parser's test file, an issue thread, a model card) and each group is scored by
a recovery that had no rule written for it, in two readings:

- format unknown: `format=None` with the offered tools, as a new user whose model's format the
  recovery was never told (every built-in shape, in registry order);
- format held out: the same, and the parser of the record's own format is taken out of the
  registry: only the shapes written for other formats can read it.

Pooled rows sum the held-out sources; `--sources` prints the table per source, `--write-docs`
writes both tables into docs/BENCHMARKS.md. Targets pooled over held-out sources: precision >=
0.99, 0 fabricated calls, recall >= 0.90.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from benchmarks.table import Row, print_table, write_section
from ollama_fc.parsers import PARSERS, ParsedCall, ToolCallParser, parsers_for
from ollama_fc.parsers.streaming import recover_text
from tests.test_output_corpus import FIELD_FORMATS, SAMPLES, Parsers, Sample, Score, own_format_first, score, tally


def format_unknown(sample: Sample) -> Sequence[ToolCallParser]:
    """`format=None`: every built-in shape, none first."""
    return parsers_for(None)


def format_held_out(sample: Sample) -> Sequence[ToolCallParser]:
    """`format=None` without the parser of the record's own format."""
    return [parser for name, parser in PARSERS.items() if name != sample.format]


READINGS: dict[str, Parsers] = {"format unknown": format_unknown, "format held out": format_held_out}
HELD_OUT_TARGETS = {"precision": 0.99, "recall": 0.90}


def rows(label: str, result: Score, precision_target: float = 0.98, recall_target: float = 0.97) -> list[Row]:
    note = f"{result.records} records, {result.expected} calls expected, {result.emitted} emitted"
    out = [
        Row(f"precision-first, {label}: unsafe fabrications", str(len(result.unsafe)), "0", len(result.unsafe), note),
        Row(
            f"precision-first, {label}: precision",
            f"{result.precision:.3f}",
            f"{precision_target}",
            result.precision / precision_target,
        ),
        Row(
            f"precision-first, {label}: recall",
            f"{result.recall:.3f}",
            f"{recall_target}",
            result.recall / recall_target,
        ),
    ]
    if label == "in corpus, all":
        count = len(result.stream_differs)
        out.append(Row(f"precision-first, {label}: streamed != whole", str(count), "0", count))
    return out


def real_by_source(samples: Sequence[Sample]) -> dict[str, list[Sample]]:
    groups: dict[str, list[Sample]] = {}
    for sample in samples:
        if sample.real:
            groups.setdefault(sample.source, []).append(sample)
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def measure() -> list[Row]:
    out = rows("in corpus, all", score(SAMPLES))
    built_in = [sample for sample in SAMPLES if sample.built_in]
    if len(built_in) < len(SAMPLES):
        out += rows("in corpus, built-in formats", score(built_in, stream=False))
    for format_name in sorted({sample.format for sample in SAMPLES}):
        of_format = [sample for sample in SAMPLES if sample.format == format_name]
        label = (
            format_name
            if format_name not in FIELD_FORMATS or of_format[0].built_in
            else f"{format_name} (not built in)"
        )
        out += rows(f"in corpus, {label}", score(of_format, stream=False))
    real = [sample for sample in SAMPLES if sample.real]
    sources = len(real_by_source(real))
    for reading, parsers in READINGS.items():
        result = score(real, parsers, stream=False)
        out += rows(
            f"held out ({reading}), {sources} sources pooled",
            result,
            HELD_OUT_TARGETS["precision"],
            HELD_OUT_TARGETS["recall"],
        )
    return out


def short(source: str) -> str:
    """A source's link without the host and the branch part of a file's address."""
    text = source.removeprefix("https://github.com/").replace("/blob/main/", ": ").replace("/blob/master/", ": ")
    return text.replace("/issues/", "#").replace("/pull/", "!")


def cells(result: Score) -> list[str]:
    recall = f"{result.recall:.3f} ({result.correct}/{result.expected})" if result.expected else "-"
    precision = f"{result.precision:.3f}" if result.emitted else "-"
    return [recall, precision, f"{len(result.unsafe)} / {result.fabricated}"]


# Prose after a call (docs/RECOVERY.md, "Prose after a call"). The recovery reads a call without
# a marker of its own (bare JSON, a fenced block, a bare `f(x=1)`) only as the last thing in the
# reply. The other reading takes it when prose follows too; it is measured, not built, by cutting
# the reply right after a closing bracket or fence with prose after it: the calls the recovery
# finds in the text up to the cut (where that is more than it finds in the whole reply) and the
# calls it finds in the rest.
CLOSERS = frozenset("}])`")


def calls_reading_prose_after(sample: Sample, parsers: Parsers = own_format_first) -> list[ParsedCall]:
    """The calls of `sample` when a markerless call followed by prose counts as a call."""
    chosen = parsers(sample)
    tools = sample.tool_dicts()
    text = sample.text
    strict = recover_text(text, chosen, tools).tool_calls
    best: tuple[int, list[ParsedCall]] | None = None
    for index, char in enumerate(text):
        end = index + 1
        if char not in CLOSERS or not text[end:].strip():
            continue
        before = recover_text(text[:end], chosen, tools).tool_calls
        if len(before) > len(strict) and (best is None or len(before) > len(best[1])):
            best = (end, before)
    if best is None:
        return strict
    end, before = best
    return before + recover_text(text[end:], chosen, tools).tool_calls


def prose_table(samples: Sequence[Sample]) -> str:
    """Markdown: both readings of prose after a markerless call, on the real records and on the
    whole corpus (whose constructed negatives hold the documentation examples reports show)."""
    real = [sample for sample in samples if sample.real]
    header = [
        "records",
        "recovery",
        "reading",
        "recall",
        "precision",
        "unsafe records / calls not expected",
        "records that differ",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    groups = (("real, formats built in", [s for s in real if s.built_in]), ("all real", real), ("all", list(samples)))
    for label, group in groups:
        for recovery, parsers in (("format given", own_format_first), ("format unknown", format_unknown)):
            strict = score(group, parsers, stream=False)
            loose_calls = {sample.id: calls_reading_prose_after(sample, parsers) for sample in group}
            loose = tally(group, lambda sample: loose_calls[sample.id], [])
            differ = sum(
                1
                for sample in group
                if loose_calls[sample.id] != recover_text(sample.text, parsers(sample), sample.tool_dicts()).tool_calls
            )
            for reading, result in (("call only as the last thing", strict), ("call with prose after it", loose)):
                line = [f"{label} ({len(group)})", recovery, reading, *cells(result)]
                line.append(str(differ) if reading.endswith("after it") else "")
                lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines)


def source_table(samples: Sequence[Sample]) -> str:
    """Markdown: per public source, in corpus and under each held-out reading."""
    header = ["source", "records (calls / negatives)", "in corpus: recall", "precision", "unsafe / wrong"]
    for reading in READINGS:
        header += [f"{reading}: recall", "precision", "unsafe / wrong"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    groups = real_by_source(samples)

    def row(label: str, group: list[Sample]) -> str:
        positives = sum(not sample.negative for sample in group)
        line = [label, f"{positives} / {len(group) - positives}", *cells(score(group, stream=False))]
        for parsers in READINGS.values():
            line += cells(score(group, parsers, stream=False))
        return "| " + " | ".join(line) + " |"

    lines += [row(f"[{short(source)}]({source})", group) for source, group in groups.items()]
    lines.append(row(f"**pooled, {len(groups)} sources**", [sample for group in groups.values() for sample in group]))
    return "\n".join(lines)


def real_model_prose(paths: Sequence[Path]) -> str:
    """Markdown: both readings of prose after a call on the replies a real-model run saved
    (`python -m benchmarks.real_model --details FILE`), per tier and arm. A reply of an ollama-fc arm
    with no call kept the whole text as content; the second reading reads that content again."""
    from benchmarks.real_model import PROMPTS, from_details
    from benchmarks.real_model_scoring import Call, Reply, load_prompt_set
    from benchmarks.real_model_scoring import score as score_reply

    prompt_set = load_prompt_set(PROMPTS)
    header = [
        "tier",
        "arm",
        "prompts",
        "exact: last thing",
        "exact: prose after",
        "none answered with a call: last thing",
    ]
    header.append("none answered with a call: prose after")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows: dict[tuple[str, str], list[int]] = {}
    for path in paths:
        results, _, _ = from_details(path, prompt_set)
        for result in results:
            if result.arm == "plain":
                continue  # Ollama's own parsing: the text it consumed is not in the reply
            reply = result.reply
            if not reply.calls and not reply.error:
                functions = [tool["function"] for tool in prompt_set.tool_dicts(result.prompt)]
                sample = Sample(result.prompt.id, "json", reply.content, functions, [], reply.content, "real model", "")
                found = calls_reading_prose_after(sample, format_unknown)
                reply = Reply([Call(call.name, call.arguments) for call in found], reply.content, "", reply.seconds)
            loose = score_reply(result.prompt, reply)
            none = result.prompt.category == "none"
            row = rows.setdefault((result.tier, result.arm), [0, 0, 0, 0, 0])
            row[0] += 1
            row[1] += result.score.exact
            row[2] += loose.exact
            row[3] += none and not result.score.no_call
            row[4] += none and not loose.no_call
    for (tier, arm), row in sorted(rows.items()):
        lines.append("| " + " | ".join([tier, arm, *(str(value) for value in row)]) + " |")
    return "\n".join(lines)


def pooled_table(samples: Sequence[Sample]) -> str:
    """Markdown: pooled over held-out sources, split by whether the format is built in."""
    real = [sample for sample in samples if sample.real]
    parts = {
        "all real records": real,
        "formats built in": [sample for sample in real if sample.built_in],
        "formats not built in yet": [sample for sample in real if not sample.built_in],
    }
    header = [
        "records",
        "recovery",
        "records (calls / negatives)",
        "recall",
        "precision",
        "unsafe records / calls not expected",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, group in parts.items():
        if not group:
            continue
        positives = sum(not sample.negative for sample in group)
        for reading, parsers in {"in corpus (format given)": None, **READINGS}.items():
            result = score(group, parsers, stream=False) if parsers else score(group, stream=False)
            lines.append(
                f"| {label} | {reading} | {positives} / {len(group) - positives} | " + " | ".join(cells(result)) + " |"
            )
    return "\n".join(lines)


def counts_table(samples: Sequence[Sample]) -> str:
    """Markdown: records per format, real and constructed, with calls and negatives."""
    header = ["format", "built in", "records", "real", "constructed", "with calls", "negatives", "sources"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    groups = {name: [s for s in samples if s.format == name] for name in sorted({s.format for s in samples})}
    groups["all"] = list(samples)
    for name, group in groups.items():
        real = sum(sample.real for sample in group)
        positives = sum(not sample.negative for sample in group)
        built = "" if name == "all" else ("yes" if group[0].built_in else "no")
        sources = len({sample.source for sample in group if sample.real})
        values = [name, built, len(group), real, len(group) - real, positives, len(group) - positives, sources]
        lines.append("| " + " | ".join(str(value) for value in values) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list the records behind each count")
    parser.add_argument("--sources", action="store_true", help="print the per-source held-out table")
    parser.add_argument("--prose", action="store_true", help="print both readings of prose after a call")
    parser.add_argument(
        "--prose-details",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="also score both readings on the replies of real_model.py --details FILE runs",
    )
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/BENCHMARKS.md")
    args = parser.parse_args()
    print_table(measure())
    if args.details:
        real = sum(sample.real for sample in SAMPLES)
        print(f"\n{len(SAMPLES)} records ({real} real, {len(SAMPLES) - real} constructed)")
        for reading, parsers in {"in corpus": None, **READINGS}.items():
            result = score(SAMPLES, parsers) if parsers else score(SAMPLES)
            print(f"\n{reading}:")
            for label, ids in (
                ("unsafe", result.unsafe),
                ("wrong", result.wrong),
                ("missed", result.missed),
                ("streamed != whole", result.stream_differs),
            ):
                print(f"  {label}: {', '.join(ids) or '-'}")
    if args.sources:
        print()
        print(source_table(SAMPLES))
    if args.prose:
        print()
        print(prose_table(SAMPLES))
    if args.prose_details:
        print()
        print(real_model_prose(args.prose_details))
    if args.write_docs:
        write_section("precision-prose", prose_table(SAMPLES))
        write_section("precision-counts", counts_table(SAMPLES))
        write_section("precision-held-out", pooled_table(SAMPLES))
        write_section("precision-sources", source_table(SAMPLES))


if __name__ == "__main__":
    main()
