"""Fidelity benchmark: how exactly converted templates render, next to the two anchors.

    python -m benchmarks.fidelity            # writes docs/FIDELITY.md

Every template of the reference corpus (`../shared/corpus/templates`, next to this repository)
and the five seed templates are converted, then each battery case is rendered by the Hugging
Face reference and by Ollama's own template package (pinned and newest version); a case is
exact when both give the same bytes. The anchors go through the same battery and oracle:
Ollama's hand-written templates for the 97 library models of `hfjs-automap/`, and the
`@huggingface/ollama-utils` npm package's conversion of the same Jinja (installed with
`npm ci` in `benchmarks/node/`). The time to convert the whole corpus is measured on one core.

A corpus `.jinja` file comes without its tokenizer, so when a template has no special tokens the
common `<s>` / `</s>` stand in for `bos_token` / `eos_token` (the same for every side).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ollama_fc import oracle
from ollama_fc.convert.sources import TemplateSource, load_source
from ollama_fc.errors import OllamaFcError
from ollama_fc.hf.reference import ReferenceRenderError
from ollama_fc.hf.shapes import Shape, probe
from ollama_fc.verify.battery import CASES, render_case
from ollama_fc.verify.runner import CaseResult, compare, open_oracles, with_stand_in_tokens

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "templates"
PAIRS = SHARED / "corpus" / "ollama-templates" / "hfjs-automap"
SEEDS = SHARED / "seeds" / "templates"
NODE_DIR = REPO / "benchmarks" / "node"
OUTPUT = REPO / "docs" / "FIDELITY.md"

VERSIONS = (oracle.PINNED, oracle.LATEST)


@dataclass
class Score:
    """One template rendered through one converter (or hand-written template), case by case."""

    #: case name -> exact / diff / error, for every case the reference renders
    statuses: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing: bool = False  # the converter gave no template at all
    #: cases on which the Ollama versions do not agree (each with the compact explanation)
    split: list[str] = field(default_factory=list)

    @property
    def rendered(self) -> int:
        return len(self.statuses)

    @property
    def exact(self) -> int:
        return sum(status == "exact" for status in self.statuses.values())

    @property
    def failing(self) -> list[str]:
        return [name for name, status in self.statuses.items() if status != "exact"]

    @property
    def full(self) -> bool:
        return self.rendered > 0 and self.exact == self.rendered and not self.errors

    @property
    def explained(self) -> bool:
        return self.full or bool(self.errors or self.warnings)


@dataclass
class Row:
    name: str
    tool_capable: bool
    source: TemplateSource
    shape: Shape
    ours: Score
    hfjs: Score
    ollama: Score | None = None  # hand-written, for the hfjs-automap pairs


def tool_capability_from_sources() -> dict[str, bool]:
    """SOURCES.md marks each corpus file `yes`, `partial: ...` or `no` for tools."""
    capable: dict[str, bool] = {}
    for line in (CORPUS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) > 7 and cells[1].startswith("`") and cells[1].endswith(".jinja`"):
            capable[cells[1].strip("`")] = cells[6] == "yes" or cells[6].startswith("partial")
    return capable


def renderable(source: TemplateSource, shape: Shape) -> list[str]:
    """The cases the reference can render (all failed when a conversion fails)."""
    names = []
    for case in CASES:
        try:
            render_case(source.template, case, shape, source.special_tokens)
        except ReferenceRenderError:
            continue
        names.append(case.name)
    return names


def score_results(results: Sequence[CaseResult]) -> Score:
    score = Score()
    for result in results:
        if result.status == "cannot-render":
            continue
        score.statuses[result.name] = result.status
        if len({(v.status, v.detail) for v in result.versions.values()}) > 1:
            score.split.append(f"{result.name}: {result.detail}")
        if result.status == "error":
            score.errors.append(f"{result.name}: {result.detail}")
    return score


def score_template(
    source: TemplateSource, shape: Shape, template: str | None, oracles: Mapping[str, oracle.Oracle]
) -> Score:
    if template is None:
        failed = dict.fromkeys(renderable(source, shape), "error")
        return Score(statuses=failed, missing=True, errors=["no template produced"])
    _, results = compare(source, template, oracles, shape=shape)
    return score_results(results)


def warning_text(warning: Any) -> str:
    return f"line {getattr(warning, 'line', '?')}: {getattr(warning, 'construct', warning)}"


def convert_all(sources: Mapping[str, TemplateSource]) -> tuple[dict[str, Any], float]:
    """Convert every source in this process (one core); the CPU seconds it took in total."""
    from ollama_fc.convert import convert

    conversions: dict[str, Any] = {}
    started = time.process_time()
    for name, source in sources.items():
        try:
            conversions[name] = convert(source)
        except Exception as exc:  # a crash is reported as a converter bug, not allowed to stop the run
            conversions[name] = exc
    return conversions, time.process_time() - started


def hfjs_convert_all(sources: Mapping[str, TemplateSource]) -> dict[str, str | None]:
    """The @huggingface/ollama-utils conversion of every source, through a small node script."""
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "@huggingface" / "ollama-utils").is_dir():
        raise SystemExit("the hfjs anchor needs node and `npm ci` run in benchmarks/node/")
    requests = "".join(
        json.dumps({"name": name, "chat_template": source.template, **source.special_tokens}) + "\n"
        for name, source in sources.items()
    )
    result = subprocess.run(
        [node, "hfjs_convert.mjs"], cwd=NODE_DIR, input=requests, capture_output=True, text=True, check=True
    )
    answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return {answer["name"]: answer.get("template") for answer in answers}


def our_score(source: TemplateSource, shape: Shape, conversion: Any, oracles: Mapping[str, oracle.Oracle]) -> Score:
    if isinstance(conversion, Exception):
        failed = dict.fromkeys(renderable(source, shape), "error")
        kind = (
            "conversion" if isinstance(conversion, OllamaFcError) else f"converter crash ({type(conversion).__name__})"
        )
        return Score(statuses=failed, errors=[f"{kind}: {conversion}"])
    score = score_template(source, shape, conversion.template, oracles)
    score.warnings = [warning_text(warning) for warning in conversion.warnings]
    return score


def rate(scores: Sequence[Score]) -> str:
    """`templates fully exact` and `cases exact`, as counts and percentages."""
    if not scores:
        return "n/a | n/a"
    full = sum(score.full for score in scores)
    exact = sum(score.exact for score in scores)
    rendered = sum(score.rendered for score in scores)
    return (
        f"{full}/{len(scores)} ({100 * full / len(scores):.1f}%) | "
        f"{exact}/{rendered} ({100 * exact / max(rendered, 1):.1f}%)"
    )


def cell(score: Score) -> str:
    if score.missing:
        return "none"
    text = f"{score.exact}/{score.rendered}"
    return f"**{text}**" if score.full else text


def not_exact(score: Score) -> str:
    if score.rendered and not score.exact:
        return "all"
    return ", ".join(score.failing)


def escape(text: str, limit: int = 140) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_report(
    rows: Sequence[Row], seeds: Sequence[Row], pairs: Sequence[Row], seconds: float, corpus_count: int, output: Path
) -> None:
    tool_rows = [row for row in rows if row.tool_capable]
    unexplained = [row.name for row in rows + list(seeds) if not row.ours.explained]
    lines = [
        "# Fidelity of converted templates",
        "",
        "Generated by `python -m benchmarks.fidelity` (needs Go for the oracle, node + `npm ci` in",
        "`benchmarks/node/` for the hfjs anchor, and the reference corpus in `../shared`). Do not edit by hand.",
        "",
        f"Each template is rendered on the {len(CASES)}-case battery of `ollama_fc/verify/battery.py` by the",
        "Hugging Face reference (jinja2 configured as transformers' `apply_chat_template`, conversation in the",
        "template's own input shape) and by Ollama's template package on the Go template, for Ollama",
        f"{' and '.join(VERSIONS)}. A case counts as exact only when every version gives the reference's bytes",
        "(a leading BOS the runner adds itself is not counted). Cases the Jinja template itself refuses",
        "(`raise_exception`, a crash, a final message it does not print) are not rendered cases. Templates without special tokens get `<s>`/`</s>`",
        "as `bos_token`/`eos_token` on every side.",
        "",
        "## Summary",
        "",
        "| set | converter | templates fully exact | cases exact |",
        "|---|---|---|---|",
        f"| corpus, all ({len(rows)}) | ollama-fc | {rate([r.ours for r in rows])} |",
        f"| corpus, all ({len(rows)}) | @huggingface/ollama-utils | {rate([r.hfjs for r in rows])} |",
        f"| corpus, tool-capable ({len(tool_rows)}) | ollama-fc | {rate([r.ours for r in tool_rows])} |",
        f"| corpus, tool-capable ({len(tool_rows)}) | @huggingface/ollama-utils | {rate([r.hfjs for r in tool_rows])} |",
        f"| seeds ({len(seeds)}) | ollama-fc | {rate([r.ours for r in seeds])} |",
        f"| seeds ({len(seeds)}) | @huggingface/ollama-utils | {rate([r.hfjs for r in seeds])} |",
        f"| hfjs-automap pairs ({len(pairs)}) | ollama-fc | {rate([r.ours for r in pairs])} |",
        f"| hfjs-automap pairs ({len(pairs)}) | Ollama's hand-written templates | {rate([r.ollama for r in pairs if r.ollama])} |",
        f"| hfjs-automap pairs ({len(pairs)}) | @huggingface/ollama-utils | {rate([r.hfjs for r in pairs])} |",
        "",
        f"- Whole corpus ({corpus_count} templates) converted in {seconds:.2f} s of CPU time, in one process on one core.",
        f"- (template, case) pairs where {' and '.join(VERSIONS)} render differently: ollama-fc "
        f"{sum(len(r.ours.split) for r in rows)}, ollama-utils {sum(len(r.hfjs.split) for r in rows)}, "
        f"hand-written {sum(len(r.ollama.split) for r in pairs if r.ollama)}"
        + "".join(f"; {r.name} {note}" for r in rows for note in r.ours.split[:1])[:600]
        + ".",
        f"- Templates not fully exact and explained by neither a warning nor an error: {len(unexplained)}"
        + (f" ({', '.join(unexplained[:12])}{', ...' if len(unexplained) > 12 else ''})" if unexplained else "")
        + ".",
        "- @huggingface/ollama-utils first looks the Jinja up in its table of Ollama library templates (by the",
        "  first 128 characters, so it may pick another tag's template), then matches by special tokens, and",
        "  converts only plain linear chat templates itself, never tools.",
        "- The `prefill` case ends with the assistant's message, which Ollama continues: the reference renders",
        "  it as transformers' `continue_final_message` does (the closed render, cut right after the final",
        "  message's text), so a template must leave that turn open to be exact there.",
        "",
    ]
    lines += _case_breakdown(rows)
    lines += _table("Seeds", seeds, with_ollama=False)
    lines += _table(
        "hfjs-automap pairs (Jinja of an Ollama library model vs its hand-written template)", pairs, with_ollama=True
    )
    lines += _table("Corpus", rows, with_ollama=False)
    output.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    # error messages name the files they are about; keep the report free of this machine's layout
    text = text.replace(str(SHARED.resolve()), "../shared").replace(str(REPO), ".")
    output.write_text(text, encoding="utf-8")


def _case_breakdown(rows: Sequence[Row]) -> list[str]:
    """Per battery case: on how many corpus templates it is exact, for each converter."""
    lines = [
        "## Per case (corpus)",
        "",
        "| case | ollama-fc exact / rendered | ollama-utils exact / rendered |",
        "|---|---|---|",
    ]
    for case in CASES:
        cells = []
        for scores in ([row.ours for row in rows], [row.hfjs for row in rows]):
            statuses = [score.statuses[case.name] for score in scores if case.name in score.statuses]
            cells.append(f"{statuses.count('exact')}/{len(statuses)}")
        lines.append(f"| {case.name} | {cells[0]} | {cells[1]} |")
    return lines + [""]


def _table(title: str, rows: Sequence[Row], *, with_ollama: bool) -> list[str]:
    header = "| template | tools | ollama-fc | warnings / errors | not exact |"
    rule = "|---|---|---|---|---|"
    if with_ollama:
        header += " Ollama hand-written | not exact |"
        rule += "---|---|"
    header += " ollama-utils |"
    rule += "---|"
    lines = [f"## {title}", "", header, rule]
    for row in rows:
        notes = row.ours.errors + row.ours.warnings
        explained = "; ".join(escape(note, 90) for note in notes[:3]) + (
            f" (+{len(notes) - 3})" if len(notes) > 3 else ""
        )
        line = (
            f"| {row.name} | {'yes' if row.tool_capable else 'no'} | {cell(row.ours)} | {explained} | "
            f"{not_exact(row.ours)} |"
        )
        if with_ollama and row.ollama is not None:
            line += f" {cell(row.ollama)} | {not_exact(row.ollama)} |"
        line += f" {cell(row.hfjs)} |"
        lines.append(line)
    return lines + [""]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--limit", type=int, default=None, help="only the first N corpus templates (a quick look)")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        raise SystemExit("reference corpus not found next to the repository (expected ../shared/corpus)")

    capability = tool_capability_from_sources()
    pair_index = json.loads((PAIRS / "index.json").read_text(encoding="utf-8"))
    pair_tools = {entry["file_base"]: bool(entry["jinja_has_tools"]) for entry in pair_index}
    corpus_paths = sorted(CORPUS.glob("*.jinja"))[: args.limit]
    groups = {
        "corpus": {path.name: with_stand_in_tokens(load_source(path)) for path in corpus_paths},
        "seeds": {path.name: with_stand_in_tokens(load_source(path)) for path in sorted(SEEDS.glob("*.jinja"))},
        "pairs": {
            path.name.removesuffix(".gguf.jinja"): with_stand_in_tokens(load_source(path))
            for path in sorted(PAIRS.glob("*.gguf.jinja"))[: args.limit]
        },
    }
    _, seconds = convert_all(groups["corpus"])  # timed on its own, nothing else in the loop
    conversions = {group: convert_all(sources)[0] for group, sources in groups.items()}
    hfjs = {group: hfjs_convert_all(sources) for group, sources in groups.items()}

    built: dict[str, list[Row]] = {}
    with open_oracles(VERSIONS) as oracles:
        for group, sources in groups.items():
            built[group] = []
            for name, source in sources.items():
                shape = probe(source.template, source.special_tokens)
                tool_capable = capability.get(name, shape.tools or shape.tool_calls)
                row = Row(
                    name=name,
                    tool_capable=tool_capable,
                    source=source,
                    shape=shape,
                    ours=our_score(source, shape, conversions[group][name], oracles),
                    hfjs=score_template(source, shape, hfjs[group].get(name), oracles),
                )
                if group == "pairs":
                    hand_written = (PAIRS / f"{name}.ollama.gotmpl").read_text(encoding="utf-8")
                    row.ollama = score_template(source, shape, hand_written, oracles)
                    row.tool_capable = pair_tools.get(name, shape.tools or shape.tool_calls)
                built[group].append(row)
                print(f"{group}/{name}: ours {cell(row.ours)} hfjs {cell(row.hfjs)}", file=sys.stderr)
    write_report(built["corpus"], built["seeds"], built["pairs"], seconds, len(groups["corpus"]), args.output)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
