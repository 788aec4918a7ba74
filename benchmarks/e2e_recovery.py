"""End-to-end recovery: every model output of our corpus, replayed through the real Ollama server.

    python -m benchmarks.e2e_recovery [--formats hermes,json] [--limit N] [--passthrough]
                                      [--host URL] [--details FILE] [--write-docs]

Each record of tests/data/model_outputs/ becomes a scripted model (a tiny GGUF that prints the
record's text, ollama_fc.testbed.scripted) created under the template a user of that format runs
(FORMAT_TEMPLATES below), and is asked one question with the record's tools offered. What comes
back is scored per format and per client:

* recall: the share of records with calls whose calls came back exactly (names, arguments, order);
* negatives -> calls: records with no call in them that came back with a call;
* lost: records whose response had neither content nor calls although the model printed text;
* content: the share of records whose content came back as expected (up to whitespace);
* errors: requests that raised (for ollama_fc.Client, InvalidToolCall from the schema check).

Clients: plain `ollama.Client` (whole and streamed), `ollama_fc.Client` (whole and streamed) and,
with --passthrough, `ollama_fc.Client` on the same model created with `parser: "passthrough"` (the
create request's field, sent through ollama-python's own request machinery), where Ollama leaves
the text to the client. The pinned server is started unless --host is given. Targets (issue 9):
ollama_fc.Client recall >= 0.97, no output lost, at most one negative turned into a call.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ollama
from ollama import ProgressResponse

from benchmarks.client_overhead import server_host
from benchmarks.table import write_section
from ollama_fc import Client, DroppedOutputWarning
from ollama_fc.convert import convert
from ollama_fc.families import family_template, load_family
from ollama_fc.testbed.scripted import ScriptError, write_scripted_gguf
from tests.test_output_corpus import Sample, canonical_call, load_samples, same_words

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared"
OLLAMA_TEMPLATES = SHARED / "corpus" / "ollama-templates" / "hfjs-automap"
CORPUS_TEMPLATES = SHARED / "corpus" / "templates"

# The template a record of each format is replayed under: the family `ollama-fc build` makes for
# the format; for formats without a family, the template Ollama itself ships for a model that
# prints that format, or else the model's own chat template as `ollama-fc convert` converts it
# (both read from ../shared at run time, never copied into the project).
FORMAT_TEMPLATES: dict[str, tuple[str, str]] = {
    "hermes": ("family", "qwen2.5"),
    "json": ("family", "qwen2.5"),  # bare and fenced JSON come mostly from Hermes-prompted models
    "minimax_ts": ("family", "minimax"),
    "functools": ("family", "phi4-mini"),
    "function_list": ("family", "typhoon2"),
    "mistral": ("ollama", "mistral-small_24b"),  # [TOOL_CALLS] JSON list template
    "llama3_json": ("ollama", "llama3.1_8b"),  # asks for {"name": ..., "parameters": ...}
    "pythonic": ("ollama", "llama3.2_3b"),  # Llama 3.2 is trained on pythonic calls
    "gemma4": ("converted", "gemma-4-e2b-it"),  # Ollama's own Gemma 4 support is a Go renderer
    "wrapped": ("family", "qwen2.5"),  # foreign wrappers (<function_invocation>, <tools>, ...) drifted into
}

QUESTION = [{"role": "user", "content": "Please help me with this, using a tool if one fits."}]
CLIENTS = ("ollama", "ollama stream", "ollama_fc", "ollama_fc stream")
PASSTHROUGH_CLIENTS = ("ollama_fc passthrough", "ollama_fc passthrough stream")


@dataclass(frozen=True)
class Setup:
    """How models of one format are created: template, parameters, the GGUF's special tokens."""

    label: str
    template: str
    parameters: dict[str, Any]
    special_tokens: tuple[str, ...]


def setup_for(format_name: str) -> Setup:
    kind, name = FORMAT_TEMPLATES[format_name]
    if kind == "family":
        built = family_template(name)
        tokens = tuple(load_family(name).recipe.special_tokens.control)
        return Setup(f"family {name}", built.template, dict(built.parameters), tokens)
    if kind == "converted":
        jinja_path = CORPUS_TEMPLATES / f"{name}.jinja"
        if not jinja_path.is_file():
            raise SystemExit(
                f"the chat template {jinja_path.name} (for format {format_name}) is not in {CORPUS_TEMPLATES}; "
                "put the reference data next to the repository, or pick other --formats"
            )
        conversion = convert(str(jinja_path))
        return Setup(f"{name} converted", conversion.template, dict(conversion.parameters), ())
    template_path = OLLAMA_TEMPLATES / f"{name}.ollama.gotmpl"
    meta_path = OLLAMA_TEMPLATES / f"{name}.ollama.meta.json"
    if not template_path.is_file():
        raise SystemExit(
            f"Ollama's own template {template_path.name} (for format {format_name}) is not in "
            f"{OLLAMA_TEMPLATES}; put the reference data next to the repository, or pick other --formats"
        )
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    return Setup(
        f"Ollama's {meta['model']} template",
        template_path.read_text(encoding="utf-8"),
        dict(meta.get("params") or {}),
        tuple(meta.get("tokens") or ()),
    )


@dataclass
class Outcome:
    """What one client got back for one record."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    content: str = ""
    error: str = ""


@dataclass
class Tally:
    records: int = 0
    positives: int = 0
    recalled: int = 0
    negatives: int = 0
    false_calls: int = 0
    lost: int = 0
    content_ok: int = 0
    errors: int = 0

    def add(self, sample: Sample, outcome: Outcome) -> None:
        self.records += 1
        if outcome.error:
            self.errors += 1
        if sample.negative:
            self.negatives += 1
            self.false_calls += bool(outcome.calls)
        else:
            self.positives += 1
            self.recalled += outcome.calls == sample.expected_calls()
        if not outcome.error and not outcome.calls and not outcome.content.strip():
            self.lost += 1
        self.content_ok += not outcome.error and same_words(outcome.content, sample.content)

    @property
    def recall(self) -> float:
        return self.recalled / self.positives if self.positives else 1.0


def calls_of(message: Any) -> list[tuple[str, str]]:
    return [canonical_call(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or []]


def ask(client: ollama.Client, model: str, sample: Sample, stream: bool) -> Outcome:
    """One chat with the record's tools; the calls and content a caller sees, streamed or not."""
    try:
        if not stream:
            response = client.chat(model, QUESTION, tools=sample.tool_dicts())
            return Outcome(calls_of(response.message), response.message.content or "")
        outcome = Outcome()
        for chunk in client.chat(model, QUESTION, tools=sample.tool_dicts(), stream=True):
            outcome.calls += calls_of(chunk.message)
            outcome.content += chunk.message.content or ""
        return outcome
    except Exception as exc:  # scored as an error of this client, the run goes on
        return Outcome(error=f"{type(exc).__name__}: {exc}")


def create(client: ollama.Client, name: str, digest: str, filename: str, setup: Setup, passthrough: bool) -> None:
    """Create the model; with `passthrough`, with Ollama's `parser: passthrough` (ollama-python's
    `create` has no such argument, so the request goes through the client's own `_request`)."""
    body: dict[str, Any] = {
        "model": name,
        "files": {filename: digest},
        "template": setup.template,
        "parameters": setup.parameters,
        "stream": False,
    }
    if passthrough:
        body["parser"] = "passthrough"
    client._request(ProgressResponse, "POST", "/api/create", json=body)


def replay(
    samples: Sequence[Sample],
    host: str,
    passthrough: bool,
    progress: Callable[[str], None],
) -> tuple[dict[str, dict[str, Outcome]], list[str]]:
    """Every record through every client: outcomes[record id][client], and records not replayable."""
    plain = ollama.Client(host=host, timeout=300)
    ours = Client(host=host, timeout=300)
    setups = {name: setup_for(name) for name in sorted({sample.format for sample in samples})}
    outcomes: dict[str, dict[str, Outcome]] = {}
    skipped: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ofc-e2e-") as folder:
        for number, sample in enumerate(samples, 1):
            setup = setups[sample.format]
            path = Path(folder) / f"{number}.gguf"
            try:
                write_scripted_gguf(path, sample.text, special_tokens=setup.special_tokens)
            except ScriptError as exc:
                skipped.append(f"{sample.id}: {exc}")
                continue
            try:
                digest = plain.create_blob(path)
                model = f"ofc-e2e-{number}"
                create(plain, model, digest, path.name, setup, passthrough=False)
                if passthrough:  # before any delete: deleting a model prunes the blob both share
                    create(plain, model + "-pt", digest, path.name, setup, passthrough=True)
                results = {
                    "ollama": ask(plain, model, sample, stream=False),
                    "ollama stream": ask(plain, model, sample, stream=True),
                    "ollama_fc": ask(ours, model, sample, stream=False),
                    "ollama_fc stream": ask(ours, model, sample, stream=True),
                }
                if passthrough:
                    results["ollama_fc passthrough"] = ask(ours, model + "-pt", sample, stream=False)
                    results["ollama_fc passthrough stream"] = ask(ours, model + "-pt", sample, stream=True)
                    plain.delete(model + "-pt")
                plain.delete(model)
            except ollama.ResponseError as exc:  # the server refused a create: say which record
                skipped.append(f"{sample.id}: {exc}")
                continue
            finally:
                path.unlink()
            outcomes[sample.id] = results
            if number % 20 == 0 or number == len(samples):
                progress(f"{number}/{len(samples)} records replayed in {time.monotonic() - started:.0f}s")
    return outcomes, skipped


def tallies(samples: Sequence[Sample], outcomes: dict[str, dict[str, Outcome]]) -> dict[str, dict[str, Tally]]:
    """tally[format or "all"][client]."""
    result: dict[str, dict[str, Tally]] = {}
    for sample in samples:
        for client, outcome in outcomes.get(sample.id, {}).items():
            for key in (sample.format, "all"):
                result.setdefault(key, {}).setdefault(client, Tally()).add(sample, outcome)
    return result


def markdown_table(table: dict[str, dict[str, Tally]], clients: Sequence[str]) -> str:
    """Per format: records, then recall / negatives turned into calls / lost for each client."""
    header = ["format (template)", "records (calls / negatives)"] + [f"{client}" for client in clients]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    order = [name for name in FORMAT_TEMPLATES if name in table] + ["all"]
    for format_name in order:
        row = table[format_name]
        first = next(iter(row.values()))
        label = format_name if format_name == "all" else f"{format_name} ({setup_label(format_name)})"
        cells = [f"**{label}**" if format_name == "all" else label, f"{first.positives} / {first.negatives}"]
        for client in clients:
            tally = row.get(client)
            cells.append(
                "-"
                if tally is None
                else f"{tally.recall:.2f} / {tally.false_calls} / {tally.lost}"
                + (f" ({tally.errors} err)" if tally.errors else "")
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def content_line(table: dict[str, dict[str, Tally]], clients: Sequence[str]) -> str:
    overall = table["all"]
    parts = [
        f"{client} {overall[client].content_ok}/{overall[client].records}" for client in clients if client in overall
    ]
    return "Content as expected (up to whitespace), all formats: " + ", ".join(parts) + "."


def setup_label(format_name: str) -> str:
    kind, name = FORMAT_TEMPLATES[format_name]
    return {"family": name, "converted": f"{name}, converted"}.get(kind, f"Ollama's {name}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", help=f"comma-separated formats (default: all of {', '.join(FORMAT_TEMPLATES)})")
    parser.add_argument("--limit", type=int, help="at most N records per format")
    parser.add_argument(
        "--passthrough",
        action="store_true",
        help="also measure ollama_fc.Client on models created with PARSER passthrough",
    )
    parser.add_argument("--host", help="an Ollama already running (default: start the pinned one)")
    parser.add_argument("--details", type=Path, help="write every record's outcome per client to this JSON file")
    parser.add_argument("--write-docs", action="store_true", help="replace the table in docs/BENCHMARKS.md")
    args = parser.parse_args(argv)

    formats = args.formats.split(",") if args.formats else list(FORMAT_TEMPLATES)
    unknown = [name for name in formats if name not in FORMAT_TEMPLATES]
    if unknown:
        parser.error(f"unknown format {', '.join(unknown)}; use some of {', '.join(FORMAT_TEMPLATES)}")
    samples = [sample for sample in load_samples() if sample.format in formats]
    if args.limit is not None:
        samples = [sample for name in formats for sample in [s for s in samples if s.format == name][: args.limit]]

    def say(message: str) -> None:
        print(f"[e2e] {message}", file=sys.stderr, flush=True)

    say(f"{len(samples)} records in {len(formats)} formats")
    warnings.simplefilter("ignore", DroppedOutputWarning)  # counted as lost outputs instead
    started = time.monotonic()
    with server_host(args.host) as host:
        say(f"Ollama at {host}")
        outcomes, skipped = replay(samples, host, args.passthrough, say)
    seconds = time.monotonic() - started
    clients = CLIENTS + (PASSTHROUGH_CLIENTS if args.passthrough else ())
    table = tallies(samples, outcomes)
    table_text = (
        markdown_table(table, clients)
        + "\n\nEach cell: recall / negatives turned into calls / outputs lost. "
        + content_line(table, clients)
        + f" {len(outcomes)} records replayed in {seconds:.0f} s"
        + (f"; not replayable as a scripted model: {'; '.join(skipped)}" if skipped else "")
        + "."
    )
    print(table_text)
    if args.details:
        details = {
            sample.id: {
                "format": sample.format,
                "expected": {"calls": sample.expected_calls(), "content": sample.content},
                **{client: outcome.__dict__ for client, outcome in outcomes.get(sample.id, {}).items()},
            }
            for sample in samples
        }
        args.details.write_text(json.dumps(details, indent=1, ensure_ascii=False), encoding="utf-8")
    if args.write_docs:
        write_section("e2e-recovery", table_text)


if __name__ == "__main__":
    main()
