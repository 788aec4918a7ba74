"""Render cost: converted templates against Ollama's hand-written ones, timed inside Go.

    python -m benchmarks.render_cost            # both Ollama versions, every pair and corpus template
    python -m benchmarks.render_cost --quick    # a few pairs and corpus templates, fewer runs
    python -m benchmarks.render_cost --json out.json   # also every measurement, per template

For each of the 97 `../shared/corpus/ollama-templates/hfjs-automap/` pairs, the model's Jinja is
converted by `ollama_fc.convert` and both the conversion and Ollama's hand-written template for
the model render, through Ollama's own template package (the oracle's timing mode, which times
Parse and Execute in Go, so no process or pipe overhead is counted):

- (a) one long tool conversation: a system prompt, 8 tools, 25 rounds of user question,
  assistant tool call, tool result and assistant answer, then a last question (102 messages);
- (b) the same with about 100 KB more message content (user, tool and answer messages);
- (c) Ollama's truncation loop on (a) dropping 50 messages: chatPrompt (server/prompt.go)
  renders once per message dropped and then the final prompt (52 renders; tokenizing is left out).

Beside them each pair's floor is timed on the same loads (render_floor.py): a range over the
messages with one builtin call per message where the pair's Jinja surely makes one (a role
comparison, a trim), else the bare range. No exact conversion of the Jinja can execute less, so
a target under the floor's ratio to the hand-written template is out of reach without changing
what the model is shown.

A template that refuses (a) (a Jinja template written for user/assistant turns only) is timed on
the same rounds without tools on both sides, and counted as such. Each time is the median of its
runs; ratios are converted / hand-written per pair, summarised as median, 90th percentile and
worst over the pairs. The added cost per byte is ((b) - (a)) / the bytes of content added, from
the fastest run of each (the difference is tiny for hand-written templates, about what copying the
bytes costs, and medians under load scatter more than that); a hand-written cost under
COPY_NS is counted as COPY_NS. Every
conversion of the corpus (`../shared/corpus/templates`) is parsed a few times for its parse time
and measured for its size. Targets (issue 11): execute at most 1.5x / 3x / 10x hand-written at
the median / p90 / worst, per-byte cost at most 2x, every conversion at most 150 KB, parsed in at
most 5 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.render_floor import floor_template
from ollama_fc import oracle
from ollama_fc.convert import convert, load_source
from ollama_fc.oracle import TemplateRejected, Timer, Timing
from ollama_fc.verify.runner import with_stand_in_tokens

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "templates"
PAIRS = SHARED / "corpus" / "ollama-templates" / "hfjs-automap"
VERSIONS = (oracle.PINNED, oracle.LATEST)

ROUNDS = 25
DROP = 50
EXTRA_CONTENT = 100_000
TARGETS = {"median": 1.5, "p90": 3.0, "worst": 10.0}
PER_BYTE_TARGET = 2.0
SIZE_TARGET = 150_000
PARSE_TARGET_MS = 5.0
#: per-byte costs below this (about what copying a byte into the prompt costs) are measurement
#: noise: a hand-written template's measured cost is raised to it before dividing by it
COPY_NS = 0.1

Message = dict[str, Any]


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


TOOLS = [
    _tool("get_weather", "Get the current weather in a city.", {"location": _string("City name")}, ["location"]),
    _tool(
        "book_trip",
        "Book a trip for a group of travelers.",
        {
            "seat": {"type": "string", "enum": ["aisle", "window"], "description": "Seat preference."},
            "travelers": {"type": "array", "items": {"type": "string"}, "description": "Names of the travelers."},
        },
        ["travelers"],
    ),
    _tool("search_web", "Search the web and return the top results.", {"query": _string("Search terms")}, ["query"]),
    _tool("read_file", "Read a text file from the workspace.", {"path": _string("Path of the file")}, ["path"]),
    _tool(
        "run_python",
        "Run a Python snippet and return its output.",
        {"code": _string("The code"), "timeout": {"type": "integer", "description": "Seconds."}},
        ["code"],
    ),
    _tool(
        "send_email",
        "Send an email.",
        {"body": _string("Text of the mail"), "subject": _string("Subject line"), "to": _string("Address")},
        ["body", "subject", "to"],
    ),
    _tool("get_stock_price", "Latest price of a stock.", {"symbol": _string("Ticker symbol")}, ["symbol"]),
    _tool(
        "create_event",
        "Create a calendar event.",
        {"start": _string("ISO 8601 start time"), "title": _string("Event title")},
        ["start", "title"],
    ),
]

ARGUMENTS = [
    {"location": "Paris"},
    {"seat": "window", "travelers": ["Ann", "Bo"]},
    {"query": "fastest sorting algorithm for small arrays"},
    {"path": "notes/plan.md"},
    {"code": "print(sum(range(10)))", "timeout": 5},
    {"body": "See you at 10.", "subject": "Meeting", "to": "ann@example.com"},
    {"symbol": "ACME"},
    {"start": "2026-03-01T10:00:00", "title": "Review"},
]

PROSE = (
    "The committee reviewed the quarterly figures and found that shipping costs rose by a fifth, "
    "mostly on the northern routes. Several members asked whether the new warehouse could absorb "
    "the seasonal peak without extra staff.\n"
    "  - Inventory turnover improved slightly.\n"
    "  - Returns stayed flat at 3 percent.\n"
    "A follow-up meeting will look at supplier contracts, fuel surcharges and the delayed "
    "software rollout in the southern depots. "
)


def _padding(size: int) -> str:
    return "" if size <= 0 else (PROSE * (size // len(PROSE) + 1))[:size]


def conversation(extra_content: int = 0, tools: bool = True) -> list[Message]:
    """The long conversation: system prompt, ROUNDS rounds, a last question; `extra_content`
    bytes of prose spread over the user, tool-result and answer messages. Without tools each
    round is question, short reply, follow-up, answer: the same number of messages."""
    padded = 3 * ROUNDS
    per_message = extra_content // padded
    messages: list[Message] = [
        {"role": "system", "content": "You are a careful assistant. Use the tools when they help; answer briefly."}
    ]
    for turn in range(ROUNDS):
        pad = _padding(per_message)
        tool = TOOLS[turn % len(TOOLS)]["function"]["name"]
        question = f"Round {turn}: please use {tool} for me.\n{pad}"
        answer = f"Done with round {turn}; here is what I found.\n{pad}"
        if tools:
            call = {"function": {"name": tool, "arguments": ARGUMENTS[turn % len(ARGUMENTS)]}}
            result = json.dumps({"round": turn, "status": "ok", "text": pad or "short result"})
            messages += [
                {"role": "user", "content": question},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "content": result, "tool_name": tool},
                {"role": "assistant", "content": answer},
            ]
        else:
            messages += [
                {"role": "user", "content": question},
                {"role": "assistant", "content": f"Working on round {turn}."},
                {"role": "user", "content": f"Any details?\n{pad}"},
                {"role": "assistant", "content": answer},
            ]
    messages.append({"role": "user", "content": "Thanks. Summarise everything in one line."})
    return messages


def content_bytes(messages: Sequence[Message]) -> int:
    return sum(len(message["content"].encode()) for message in messages)


@dataclass
class Side:
    """One template's medians (milliseconds) on the three loads, or why it could not render."""

    execute_ms: float = 0.0
    long_ms: float = 0.0
    #: the fastest run of (a) and of (b): the least disturbed, for the small per-byte differences
    execute_min_ms: float = 0.0
    long_min_ms: float = 0.0
    truncate_ms: float = 0.0
    parse_ms: float = 0.0
    size: int = 0
    prompt_bytes: int = 0
    error: str | None = None


@dataclass
class PairResult:
    name: str
    version: str
    tools: bool = True  # timed on the tool conversation (else its tool-free variant)
    #: the hand-written template ranges over `.Messages`; else it is a legacy `.Prompt` template
    #: that Ollama runs once per turn, leaving out what the turns do not hold (tool messages)
    messages_template: bool = True
    added_bytes: int = 0
    converted: Side = field(default_factory=Side)
    hand_written: Side = field(default_factory=Side)
    #: the least any exact conversion of the pair's Jinja executes (render_floor.py), and the
    #: call its Jinja surely makes per message (None: the floor is the bare range)
    floor: Side = field(default_factory=Side)
    floor_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.converted.error is None and self.hand_written.error is None and self.floor.error is None

    def per_byte_ns(self, side: Side) -> float:
        return (side.long_min_ms - side.execute_min_ms) * 1e6 / self.added_bytes


@dataclass
class CorpusResult:
    name: str
    version: str
    size: int = 0
    parse_ms: float = 0.0
    parse_min_ms: float = 0.0
    error: str | None = None


def median_ms(times_ns: Sequence[int]) -> float:
    return statistics.median(times_ns) / 1e6


def time_side(
    timer: Timer,
    template: str,
    loads: Mapping[str, list[Message]],
    tools: list[dict[str, Any]] | None,
    runs: int,
    budget_ms: int,
) -> Side:
    """(a), (b) and (c) for one template; raises TemplateRejected when it refuses a load."""
    base = timer.measure(template, loads["a"], tools, runs=runs, budget_ms=budget_ms, parses=3, drop=DROP)
    long = timer.measure(template, loads["b"], tools, runs=runs, budget_ms=budget_ms)
    return Side(
        execute_ms=median_ms(base.execute_ns),
        long_ms=median_ms(long.execute_ns),
        execute_min_ms=min(base.execute_ns) / 1e6,
        long_min_ms=min(long.execute_ns) / 1e6,
        truncate_ms=median_ms(base.truncate_ns),
        parse_ms=median_ms(base.parse_ns),
        size=len(template.encode()),
        prompt_bytes=base.prompt_bytes,
    )


def measure_pair(
    name: str, converted: str | None, hand_written: str, jinja: str, timer: Timer, runs: int, budget_ms: int
) -> PairResult:
    """Both templates and the floor on the tool conversation; on the tool-free one if either
    template refuses it."""
    floor, reason = floor_template(jinja)
    result = PairResult(name, timer.version, messages_template=".Messages" in hand_written, floor_reason=reason)
    if converted is None:
        result.converted.error = "conversion refused"
        return result
    for tools in (True, False):
        loads = {"a": conversation(0, tools), "b": conversation(EXTRA_CONTENT, tools)}
        result.tools = tools
        result.added_bytes = content_bytes(loads["b"]) - content_bytes(loads["a"])
        sides: dict[str, Side] = {}
        for side, template in (("hand_written", hand_written), ("converted", converted), ("floor", floor)):
            try:
                sides[side] = time_side(timer, template, loads, TOOLS if tools else None, runs, budget_ms)
            except TemplateRejected as rejected:
                sides[side] = Side(size=len(template.encode()), error=f"{rejected.stage}: {rejected.reason}")
        result.converted, result.hand_written, result.floor = sides["converted"], sides["hand_written"], sides["floor"]
        if result.ok:
            break
    return result


def measure_corpus(name: str, template: str | None, timer: Timer, parses: int) -> CorpusResult:
    if template is None:
        return CorpusResult(name, timer.version, error="conversion refused")
    try:
        timing: Timing = timer.measure(template, [{"role": "user", "content": "Hi"}], runs=0, parses=parses)
    except TemplateRejected as rejected:
        return CorpusResult(name, timer.version, len(template.encode()), error=rejected.reason)
    return CorpusResult(
        name, timer.version, len(template.encode()), median_ms(timing.parse_ns), min(timing.parse_ns) / 1e6
    )


def converted_templates(paths: Sequence[Path], strip: Callable[[Path], str]) -> dict[str, str | None]:
    """Each path's conversion (None where the converter refuses it)."""
    templates: dict[str, str | None] = {}
    for path in paths:
        try:
            templates[strip(path)] = convert(with_stand_in_tokens(load_source(path))).template
        except Exception as exc:  # a refusal or crash: reported as missing, not allowed to stop the run
            print(f"{path.name}: not converted ({type(exc).__name__}: {exc})", file=sys.stderr)
            templates[strip(path)] = None
    return templates


def quantiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Median, 90th percentile (nearest rank) and worst."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, max(0, -(-9 * len(ordered) // 10) - 1))]
    return statistics.median(ordered), p90, ordered[-1]


def _verdict(values: Sequence[float], targets: Sequence[float]) -> str:
    return "met" if all(value <= target for value, target in zip(values, targets)) else "**not met**"


def _x(value: float) -> str:
    return f"{value:.1f}x" if value < 100 else f"{value:.0f}x"


def _floor_rows(done: Sequence[PairResult], version: str) -> list[str]:
    """The floor against the hand-written template (where it is over a target, no exact
    conversion can meet that target), and the conversion against the floor (what is left)."""
    lines = []
    targets = tuple(TARGETS.values())
    floors: list[tuple[str, Callable[[Side], float]]] = [
        ("(a) floor: the least an exact conversion executes", lambda side: side.execute_ms),
        ("(a) floor, best run of each side", lambda side: side.execute_min_ms),
        ("(c) floor, truncation loop", lambda side: side.truncate_ms),
    ]
    for label, value in floors:
        ratios = quantiles([value(p.floor) / value(p.hand_written) for p in done])
        below = [name for name, ratio, target in zip(TARGETS, ratios, targets) if ratio > target]
        verdict = f"the {' and '.join(below)} target{'s are' if len(below) > 1 else ' is'} below it" if below else ""
        lines.append(
            f"| {label} | {version} | {len(done)} | {' | '.join(_x(r) for r in ratios)} | "
            f"{' / '.join(f'{t:g}x' for t in targets)} | {verdict} |"
        )
    ratios = quantiles([p.converted.execute_ms / p.floor.execute_ms for p in done])
    lines.append(f"| (a) converted / floor | {version} | {len(done)} | {' | '.join(_x(r) for r in ratios)} | | |")
    return lines


def report(pairs: Sequence[PairResult], corpus: Sequence[CorpusResult]) -> list[str]:
    """Markdown tables: one summary row per (load, version), the corpus, the worst pairs."""
    lines = [
        "| measure | Ollama | pairs | median | p90 | worst | target | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    targets = tuple(TARGETS.values())
    for version in VERSIONS:
        done = [p for p in pairs if p.version == version and p.ok]
        if not done:
            continue
        # the best run of each side beside the median: on shared cores the median also measures
        # the machine's load, the best run is the template's own cost
        loads: list[tuple[str, Callable[[Side], float]]] = [
            ("(a) execute, long tool conversation", lambda side: side.execute_ms),
            ("(a) execute, best run of each side", lambda side: side.execute_min_ms),
            ("(b) execute, +100 KB of content", lambda side: side.long_ms),
            ("(b) execute, best run of each side", lambda side: side.long_min_ms),
            ("(c) truncation loop, 50 dropped", lambda side: side.truncate_ms),
        ]
        for label, value in loads:
            ratios = quantiles([value(p.converted) / value(p.hand_written) for p in done])
            lines.append(
                f"| {label} | {version} | {len(done)} | {' | '.join(_x(r) for r in ratios)} | "
                f"{' / '.join(f'{t:g}x' for t in targets)} | {_verdict(ratios, targets)} |"
            )
        for label, kind in (
            ("(a), hand-written template over `.Messages`", True),
            ("(a), hand-written legacy `.Prompt` template", False),
        ):
            some = [p for p in done if p.messages_template == kind]
            if some:
                ratios = quantiles([p.converted.execute_ms / p.hand_written.execute_ms for p in some])
                lines.append(f"| {label} | {version} | {len(some)} | {' | '.join(_x(r) for r in ratios)} | | |")
        lines += _floor_rows(done, version)
        per_byte = [p.per_byte_ns(p.converted) / max(p.per_byte_ns(p.hand_written), COPY_NS) for p in done]
        ratios = quantiles(per_byte)
        lines.append(
            f"| added cost per byte of content | {version} | {len(done)} | {' | '.join(_x(r) for r in ratios)} | "
            f"{PER_BYTE_TARGET:g}x | {_verdict(ratios[2:], (PER_BYTE_TARGET,))} |"
        )
        for side_name, side_ns in (
            ("converted", [p.per_byte_ns(p.converted) for p in done]),
            ("hand-written", [p.per_byte_ns(p.hand_written) for p in done]),
        ):
            ns = quantiles(side_ns)
            lines.append(
                f"| ns per byte of content, {side_name} | {version} | {len(done)} | "
                f"{' | '.join(f'{n:.2f}' if n < 10 else f'{n:.0f}' for n in ns)} | | |"
            )
    lines.append("")
    lines += [
        "| corpus conversions | Ollama | templates | median | p90 | worst | over target | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for version in VERSIONS:
        parsed = [c for c in corpus if c.version == version and c.error is None]
        if not parsed:
            continue
        sizes = quantiles([c.size / 1000 for c in parsed])
        over = sum(c.size > SIZE_TARGET for c in parsed)
        lines.append(
            f"| size (KB) | {version} | {len(parsed)} | {' | '.join(f'{s:.0f}' for s in sizes)} | {over} | "
            f"{SIZE_TARGET // 1000} KB |"
        )
        for label, parse_ms in (
            ("parse time (ms)", [c.parse_ms for c in parsed]),
            ("parse time, best of runs (ms)", [c.parse_min_ms for c in parsed]),
        ):
            parse = quantiles(parse_ms)
            over = sum(ms > PARSE_TARGET_MS for ms in parse_ms)
            lines.append(
                f"| {label} | {version} | {len(parsed)} | {' | '.join(f'{s:.2f}' for s in parse)} | {over} | "
                f"{PARSE_TARGET_MS:g} ms |"
            )
    lines.append("")
    pinned = sorted(
        (p for p in pairs if p.version == VERSIONS[0] and p.ok),
        key=lambda p: p.converted.execute_ms / p.hand_written.execute_ms,
        reverse=True,
    )
    lines += [
        f"Worst pairs on (a), Ollama {VERSIONS[0]} (milliseconds, converted / hand-written; size and parse of the "
        "conversion; per byte in ns):",
        "",
        "| pair | (a) execute | (b) +100 KB | (c) truncation | per byte | size | parse |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in pinned[:12]:
        c, h = p.converted, p.hand_written
        lines.append(
            f"| {p.name}{'' if p.tools else ' (no tools)'} | {c.execute_ms:.2f} / {h.execute_ms:.2f} | "
            f"{c.long_ms:.1f} / {h.long_ms:.1f} | {c.truncate_ms:.0f} / {h.truncate_ms:.0f} | "
            f"{p.per_byte_ns(c):.1f} / {p.per_byte_ns(h):.1f} | {c.size / 1000:.0f} KB | {c.parse_ms:.2f} |"
        )
    lines.append("")
    over = [p for p in pinned if p.floor.execute_ms > TARGETS["p90"] * p.hand_written.execute_ms]
    lines.append(
        f"- Pairs whose floor alone is over {TARGETS['p90']:g}x their hand-written template on (a), Ollama "
        f"{VERSIONS[0]}: {len(over)} of {len(pinned)}"
        + "".join(
            f"{'; ' if n else ' ('}{p.name} {p.floor.execute_ms / p.hand_written.execute_ms:.1f}x"
            for n, p in enumerate(sorted(over, key=lambda p: p.name))
        )
        + (")" if over else "")
        + f"; the Jinja of {sum(p.floor_reason is not None for p in pinned)} pairs makes a call per message."
    )
    failed = [p for p in pairs if not p.ok]
    tool_free = sorted({p.name for p in pairs if p.ok and not p.tools})
    lines.append(
        f"- Pairs timed on the tool-free conversation (the Jinja refuses tool messages): {len(tool_free)}"
        + (f" ({', '.join(tool_free)})" if tool_free else "")
        + "."
    )
    reasons: dict[str, set[str]] = {}
    for p in failed:
        reasons.setdefault((p.converted.error or p.hand_written.error or "")[:100], set()).add(p.name)
    lines.append(
        f"- Pairs not timed: {len({p.name for p in failed})}"
        + "".join(f"; {reason}: {', '.join(sorted(names))}" for reason, names in reasons.items())
        + "."
    )
    refused = sorted({c.name for c in corpus if c.error is not None})
    lines.append(f"- Corpus templates without a parsed conversion: {len(refused)} ({', '.join(refused)}).")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 pairs and 10 corpus templates, fewer runs")
    parser.add_argument("--versions", nargs="+", default=list(VERSIONS), help="Ollama versions (default: both)")
    parser.add_argument("--pairs", nargs="*", help="only these pairs (names without .gguf.jinja)")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    args = parser.parse_args(argv)
    if not PAIRS.is_dir() or not CORPUS.is_dir():
        raise SystemExit("reference corpus not found next to the repository (expected ../shared/corpus)")
    pair_paths = sorted(PAIRS.glob("*.gguf.jinja"))
    corpus_paths = sorted(CORPUS.glob("*.jinja"))
    if args.pairs:
        pair_paths = [path for path in pair_paths if path.name.removesuffix(".gguf.jinja") in args.pairs]
    if args.quick:
        pair_paths, corpus_paths = pair_paths[::16], corpus_paths[::23]
    runs, budget_ms, parses = (20, 50, 2) if args.quick else (200, 300, 5)

    started = time.monotonic()
    pair_templates = converted_templates(pair_paths, lambda path: path.name.removesuffix(".gguf.jinja"))
    corpus_templates = converted_templates(corpus_paths, lambda path: path.name)
    pairs: list[PairResult] = []
    corpus: list[CorpusResult] = []
    for version in args.versions:
        with Timer(version) as timer:
            for name, template in pair_templates.items():
                hand_written = (PAIRS / f"{name}.ollama.gotmpl").read_text(encoding="utf-8")
                jinja = (PAIRS / f"{name}.gguf.jinja").read_text(encoding="utf-8")
                pairs.append(measure_pair(name, template, hand_written, jinja, timer, runs, budget_ms))
                done = pairs[-1]
                print(
                    f"{version} {name}: (a) {done.converted.execute_ms:.2f} / {done.hand_written.execute_ms:.2f} ms"
                    + (f" [{done.converted.error or done.hand_written.error}]" if not done.ok else ""),
                    file=sys.stderr,
                )
            for name, template in corpus_templates.items():
                corpus.append(measure_corpus(name, template, timer, parses))
    print(f"measured in {time.monotonic() - started:.0f} s", file=sys.stderr)
    print("\n".join(report(pairs, corpus)))
    if args.json:
        records = {"pairs": [asdict(p) for p in pairs], "corpus": [asdict(c) for c in corpus]}
        args.json.write_text(json.dumps(records, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
