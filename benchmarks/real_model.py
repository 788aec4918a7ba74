"""A real tool-calling model with and without ollama-fc: the project's prompt set on both Ollama tiers.

    python -m benchmarks.real_model [--tiers pinned,current] [--arms plain,convert,build,serve,any]
                                    [--limit N] [--gguf PATH] [--host URL] [--details FILE]
                                    [--write-docs]
    python -m benchmarks.real_model --modes [auto,required,named,none,parallel_off]
                                    [--apis client,chat-completions,responses,messages] [...]
    python -m benchmarks.real_model --from-details pinned.json current.json [--write-docs]

The model is Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, its own Hermes tools template), provisioned
once by `ollama_fc.testbed.realmodel` unless --gguf names a copy. Each tier's server is started
(or --host names one already running) and the model is created four ways, as a user would:

* plain: `ollama create` from a Modelfile holding only `FROM model.gguf`, asked with ollama.Client
  (what a user gets without ollama-fc; a server that refuses tools for it counts as refused);
* convert: `ollama-fc convert model.gguf --from model.gguf -o Modelfile` and `ollama create`,
  asked with ollama_fc.Client;
* build: `ollama-fc build qwen2.5 --from model.gguf`, asked with ollama_fc.Client;
* serve: the build arm's model through `ollama-fc serve` (in this process), asked with the
  `openai` SDK's chat.completions;
* any (only when --arms names it): `ollama-fc build --from model.gguf` without a family (the
  model's own template, as convert makes it, in one command), asked with ollama_fc.Client.

Every prompt of benchmarks/data/real_model_prompts.json is asked once per arm, the arms one
after another (each arm sees the prompts in the same order, so the server's prompt cache helps
each alike), whole responses, with temperature 0, seed 42 and at most 256 tokens generated.
ollama_fc.Client is called with `validate=False`, so a call whose arguments fail the tool's
schema is scored as the model wrote it (with `validate=True` it raises InvalidToolCall; the
details say which calls would). Scoring (benchmarks/real_model_scoring.py): per arm, tier and
category, prompts answered with a call of an offered tool, calls exactly right, prompts left
without a call, replies lost (no text and no call), requests refused, median seconds per answer;
and per tier, generation and prompt tokens per second as Ollama reports them (eval_count over
eval_duration, summed over the replies of the arms that use Ollama's native API).

--modes asks, instead of the arms, each tool_choice mode's prompts (the prompt set's `modes`
section: about eight per mode) through each API on build's model: ollama_fc.Client (which
enforces the mode itself) and, through `ollama-fc serve`, the openai SDK's chat.completions and
responses and the anthropic SDK's messages (benchmarks/real_model_apis.py). The modes: auto,
required, one named tool (the one that fits, else the last offered), none, and auto with
parallel calls off. Each reply is scored against what the mode promises and what a right answer
is (real_model_scoring.score_mode); the report goes to its own block of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anthropic
import ollama
import openai

from benchmarks.real_model_apis import OPTIONS, TIMEOUT, ask_messages, ask_native, ask_openai, ask_responses
from benchmarks.real_model_scoring import (
    MODES,
    PROMISES,
    Call,
    ModeResult,
    Prompt,
    PromptSet,
    Reply,
    Result,
    category_table,
    headline_table,
    load_prompt_set,
    modes_headline,
    modes_table,
    score,
    score_mode,
    spread,
)
from benchmarks.table import write_section
from ollama_fc import Client, DroppedOutputWarning
from ollama_fc.build import create_model
from ollama_fc.markers import PASSTHROUGH_PARSER
from ollama_fc.recovery import parser_from_show
from ollama_fc.serve import ProxyThread
from ollama_fc.testbed.provision import provision
from ollama_fc.testbed.realmodel import real_model_gguf
from ollama_fc.testbed.server import OllamaServer, server_version
from ollama_fc.testbed.tiers import TIERS

HERE = Path(__file__).resolve().parent

PROMPTS = HERE / "data" / "real_model_prompts.json"
ARMS = {
    "plain": "plain `ollama create`, ollama.Client",
    "convert": "`ollama-fc convert` + `ollama create`, ollama_fc.Client",
    "build": "`ollama-fc build qwen2.5`, ollama_fc.Client",
    "serve": "`ollama-fc serve` (build's model), openai SDK",
    "any": "`ollama-fc build --from` (no family), ollama_fc.Client",
    "library": "library-style `ollama create` (Ollama's own qwen2.5-coder TEMPLATE), ollama.Client",
}
DEFAULT_ARMS = ("plain", "convert", "build", "serve")
NATIVE_ARMS = ("plain", "library", "convert", "build", "any")
#: the arms asked as plain Ollama: ollama-python, Ollama's own parser
PLAIN_ARMS = ("plain", "library")
FAMILY = "qwen2.5"
MODEL_PREFIX = "ollama-fc-real-model-"
#: Ollama's hand-written TEMPLATE of its qwen2.5-coder library model, as `ollama pull` leaves it
LIBRARY_TEMPLATE = ("corpus", "ollama-templates", "hfjs-automap", "qwen2.5-coder_1.5b.ollama.gotmpl")
APIS = {
    "client": "ollama_fc.Client (Ollama's native API)",
    "chat-completions": "`ollama-fc serve`, openai SDK chat.completions",
    "responses": "`ollama-fc serve`, openai SDK responses",
    "messages": "`ollama-fc serve`, anthropic SDK messages",
}

Say = Callable[[str], None]


def ollama_fc_command() -> list[str]:
    """The `ollama-fc` command installed beside this Python (the venv's), else the one on PATH."""
    beside = Path(sys.executable).with_name("ollama-fc")
    found = str(beside) if beside.is_file() else shutil.which("ollama-fc")
    if not found:
        raise SystemExit("no `ollama-fc` command beside this Python or on PATH; run `bash scripts/python-env` first")
    return [found]


def run(command: Sequence[str], host: str, say: Say) -> None:
    """One command a user would type, against `host`; a failure ends the run with its last line."""
    say("$ " + " ".join(command))
    env = {**os.environ, "OLLAMA_HOST": host}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["(no output)"]
        raise SystemExit(f"`{' '.join(command)}` failed (status {done.returncode}): {lines[-1]}")


def create_models(
    arms: Sequence[str], gguf: Path, ollama_cli: Path, host: str, folder: Path, say: Say
) -> dict[str, str]:
    """Each arm's model, created as a user would; arm -> model name."""
    models: dict[str, str] = {}
    ofc = ollama_fc_command()
    if "plain" in arms:
        modelfile = folder / "Modelfile.plain"
        modelfile.write_text(f"FROM {gguf}\n", encoding="utf-8")
        run([str(ollama_cli), "create", MODEL_PREFIX + "plain", "-f", str(modelfile)], host, say)
        models["plain"] = MODEL_PREFIX + "plain"
    if "library" in arms:
        template = Path(__file__).resolve().parents[1].parent.joinpath("shared", *LIBRARY_TEMPLATE)
        if not template.is_file():
            raise SystemExit(
                f"{Path('shared', *LIBRARY_TEMPLATE)} not found next to the repository (the library arm's TEMPLATE)"
            )
        modelfile = folder / "Modelfile.library"
        modelfile.write_text(f'FROM {gguf}\nTEMPLATE """{template.read_text(encoding="utf-8")}"""\n', encoding="utf-8")
        run([str(ollama_cli), "create", MODEL_PREFIX + "library", "-f", str(modelfile)], host, say)
        models["library"] = MODEL_PREFIX + "library"
    if "convert" in arms:
        modelfile = folder / "Modelfile.convert"
        run([*ofc, "convert", str(gguf), "--from", str(gguf), "-o", str(modelfile)], host, say)
        run([str(ollama_cli), "create", MODEL_PREFIX + "convert", "-f", str(modelfile)], host, say)
        models["convert"] = MODEL_PREFIX + "convert"
    if "any" in arms:
        run([*ofc, "build", "--from", str(gguf), "--name", MODEL_PREFIX + "any"], host, say)
        models["any"] = MODEL_PREFIX + "any"
    if "build" in arms or "serve" in arms:
        run([*ofc, "build", FAMILY, "--from", str(gguf), "--name", MODEL_PREFIX + "build"], host, say)
        models.update({arm: MODEL_PREFIX + "build" for arm in ("build", "serve") if arm in arms})
    return models


@contextlib.contextmanager
def tier_server(tier_name: str, host: str | None, say: Say) -> Iterator[tuple[str, str, Path]]:
    """(label, host, ollama CLI) of the tier's server: started here, or the one at `host`."""
    if host:
        version = server_version(host)
        if version is None:
            raise SystemExit(f"no Ollama answers at {host}; start it, or leave out --host")
        matching = [t for t in TIERS.values() if t.version.lstrip("v") == version]
        on_path = shutil.which("ollama")
        cli = provision(matching[0]) if matching else Path(on_path) if on_path else None
        if cli is None:
            raise SystemExit(f"no `ollama` command for the Ollama {version} at {host}; put one on PATH")
        yield f"v{version}", host, cli
        return
    with OllamaServer(tier_name) as server:
        assert server.binary is not None
        yield f"{server.version} ({tier_name})", server.host, server.binary


def run_tier(
    label: str,
    host: str,
    cli: Path,
    gguf: Path,
    arms: Sequence[str],
    prompt_set: PromptSet,
    prompts: Sequence[Prompt],
    say: Say,
) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="ofc-real-model-") as folder:
        models = create_models(arms, gguf, cli, host, Path(folder), say)
    plain = ollama.Client(host=host, timeout=TIMEOUT)
    ours = Client(host=host, timeout=TIMEOUT)
    warm_up(plain, next(iter(models.values())))
    with contextlib.ExitStack() as stack:
        for arm in arms:
            if arm == "serve":
                proxy = stack.enter_context(ProxyThread(host))
                client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="ollama", max_retries=0, timeout=TIMEOUT)
            started = time.monotonic()
            for number, prompt in enumerate(prompts, 1):
                if arm == "serve":
                    reply = ask_openai(client, models[arm], prompt, prompt_set)
                else:
                    reply = ask_native(plain if arm in PLAIN_ARMS else ours, models[arm], prompt, prompt_set)
                result = Result(label, arm, prompt, reply, score(prompt, reply))
                results.append(result)
                verdict = "exact" if result.score.exact else result.score.problem or "text, no call"
                say(f"{label} {arm} {number}/{len(prompts)} {prompt.id}: {verdict} ({reply.seconds:.1f} s)")
            say(f"{label} {arm}: {len(prompts)} prompts in {time.monotonic() - started:.0f} s")
    return results


def warm_up(client: ollama.Client, model: str) -> None:
    """Load the runner once (every arm's model is the same GGUF): not counted in any answer's time."""
    client.chat(model, [{"role": "user", "content": "Hi"}], options={**OPTIONS, "num_predict": 1})


def with_threads(host: str, model: str, threads: int, say: Say) -> str:
    """`model` again with PARAMETER num_thread: the proxied requests carry no thread count, and
    v0.24.0 has no server default, so without it they would reload the runner with every core."""
    name = f"{model}-threads"
    client = ollama.Client(host=host, timeout=TIMEOUT)
    for _ in create_model(client, name, parser=PASSTHROUGH_PARSER, from_=model, parameters={"num_thread": threads}):
        pass
    shown = client.show(name)
    say(f"{name}: parser {parser_from_show(shown)}, parameters {' '.join((shown.parameters or '').split())}")
    return name


def run_modes(
    label: str,
    host: str,
    cli: Path,
    gguf: Path,
    apis: Sequence[str],
    modes: Sequence[str],
    prompt_set: PromptSet,
    say: Say,
    done: Callable[[list[ModeResult]], None] = lambda results: None,
) -> list[ModeResult]:
    """Each mode's prompts through each API, on build's model (with the run's thread count); the
    API outermost. `done` gets the results so far after each API (a long run keeps them)."""
    results: list[ModeResult] = []
    with tempfile.TemporaryDirectory(prefix="ofc-real-model-") as folder:
        model = create_models(["build"], gguf, cli, host, Path(folder), say)["build"]
    model = with_threads(host, model, int(OPTIONS["num_thread"]), say)
    warm_up(ollama.Client(host=host, timeout=TIMEOUT), model)
    ours = Client(host=host, timeout=TIMEOUT)
    with ProxyThread(host) as proxy:
        openai_client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="ollama", max_retries=0, timeout=TIMEOUT)
        anthropic_client = anthropic.Anthropic(base_url=proxy.url, api_key="ollama", max_retries=0, timeout=TIMEOUT)
        for api in apis:
            started = time.monotonic()
            for mode in modes:
                for number, prompt in enumerate(prompt_set.modes[mode], 1):
                    if api == "client":
                        reply = ask_native(ours, model, prompt, prompt_set, mode)
                    elif api == "chat-completions":
                        reply = ask_openai(openai_client, model, prompt, prompt_set, mode)
                    elif api == "responses":
                        reply = ask_responses(openai_client, model, prompt, prompt_set, mode)
                    else:
                        reply = ask_messages(anthropic_client, model, prompt, prompt_set, mode)
                    outcome = score_mode(mode, prompt, reply, prompt_set.tools)
                    results.append(ModeResult(label, api, mode, prompt, reply, outcome))
                    verdict = outcome.problem or ("correct" if outcome.correct else "kept")
                    count = len(prompt_set.modes[mode])
                    say(f"{label} {api} {mode} {number}/{count} {prompt.id}: {verdict} ({reply.seconds:.1f} s)")
            replies = len([result for result in results if result.api == api])
            say(f"{label} {api}: {replies} replies in {time.monotonic() - started:.0f} s")
            done(results)
    return results


def token_rates(results: Sequence[Result]) -> dict[str, dict[str, float | int]]:
    """Per tier: generation and prompt tokens per second, summed over the native arms' replies."""
    rates: dict[str, dict[str, float | int]] = {}
    for tier_label in dict.fromkeys(result.tier for result in results):
        stats = [r.reply.stats for r in results if r.tier == tier_label and r.arm in NATIVE_ARMS and r.reply.stats]
        totals = {
            name: sum(s.get(name) or 0 for s in stats)
            for name in ("eval_count", "eval_duration", "prompt_eval_count", "prompt_eval_duration")
        }
        rates[tier_label] = {
            "replies": len(stats),
            "generated_tokens": totals["eval_count"],
            "generation_tokens_per_s": totals["eval_count"] / (totals["eval_duration"] / 1e9)
            if totals["eval_duration"]
            else 0.0,
            "prompt_tokens": totals["prompt_eval_count"],
            "prompt_tokens_per_s": totals["prompt_eval_count"] / (totals["prompt_eval_duration"] / 1e9)
            if totals["prompt_eval_duration"]
            else 0.0,
        }
    return rates


def rates_table(rates: dict[str, dict[str, float | int]]) -> str:
    lines = [
        "| Ollama | replies | tokens generated | generation tokens/s | prompt tokens evaluated | prompt tokens/s |",
        "|---|---|---|---|---|---|",
    ]
    for label, rate in rates.items():
        lines.append(
            f"| {label} | {rate['replies']} | {rate['generated_tokens']} | {rate['generation_tokens_per_s']:.1f} "
            f"| {rate['prompt_tokens']} | {rate['prompt_tokens_per_s']:.1f} |"
        )
    labels = list(rates)
    if len(labels) == 2 and all(rates[label]["generation_tokens_per_s"] for label in labels):
        first, second = (rates[label] for label in labels)
        lines.append("")
        lines.append(
            f"Generation speed {labels[0]} / {labels[1]}: "
            f"{float(first['generation_tokens_per_s']) / float(second['generation_tokens_per_s']):.2f}; "
            f"prompt evaluation {float(first['prompt_tokens_per_s']) / float(second['prompt_tokens_per_s']):.2f}."
        )
    return "\n".join(lines)


def runs_note(runs: Sequence[dict[str, Any]]) -> str:
    """Each run's seconds and the load average at its start and end."""
    return "; ".join(
        f"{run['seconds']:.0f} s"
        + (
            f" at load average {run['load_average'][0]:.1f} to {run['load_average'][1]:.1f}"
            if "load_average" in run
            else ""
        )
        for run in runs
    )


def report(results: Sequence[Result], runs: Sequence[dict[str, Any]]) -> str:
    prompts = len({result.prompt.id for result in results})
    return "\n\n".join(
        [
            headline_table(results, ARMS),
            "Each cell: prompts answered with a call of an offered tool / with every call exactly right "
            "(names and arguments); for `none`, prompts left without a call. Lost: no text and no call. "
            "Refused: the request failed.",
            category_table(results),
            rates_table(token_rates(results)),
            f"{prompts} prompts per arm, {len(results)} replies ({runs_note(runs)}).",
        ]
    )


def modes_report(results: Sequence[ModeResult], runs: Sequence[dict[str, Any]]) -> str:
    promises = "; ".join(f"{mode}: {promise}" for mode, promise in PROMISES.items())
    return "\n\n".join(
        [
            modes_headline(results, APIS),
            f"Each cell: replies that kept the mode's promise / that were correct. Promises: {promises}.",
            modes_table(results),
            f"{len(results)} replies ({runs_note(runs)}).",
        ]
    )


def _entry(result: Result | ModeResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"tier": result.tier}
    if isinstance(result, ModeResult):
        entry.update(api=result.api, mode=result.mode)
    else:
        entry["arm"] = result.arm
    entry.update(prompt=result.prompt.id, category=result.prompt.category, messages=result.prompt.messages)
    return {**entry, "reply": asdict(result.reply), "score": asdict(result.score)}


def details(
    results: Sequence[Result], gguf: Path, run: dict[str, Any], mode_results: Sequence[ModeResult] = ()
) -> dict[str, Any]:
    return {
        "model": str(gguf),
        "options": OPTIONS,
        "arms": ARMS,
        "apis": APIS,
        "run": run,
        "token_rates": token_rates(results),
        "replies": [_entry(r) for r in results],
        "modes": [_entry(r) for r in mode_results],
    }


def from_details(path: Path, prompt_set: PromptSet) -> tuple[list[Result], list[ModeResult], dict[str, Any]]:
    """The replies of an earlier run's details file (the arms' and the modes'), scored again
    (with today's scoring)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        by_id = {prompt.id: prompt for prompt in prompt_set.prompts}

        def read(entry: dict[str, Any]) -> tuple[Prompt, Reply]:
            raw = entry["reply"]
            calls = [Call(call["name"], call["arguments"]) for call in raw["calls"]]
            return by_id[entry["prompt"]], Reply(calls, raw["content"], raw["error"], raw["seconds"], raw["stats"])

        results = []
        for entry in data["replies"]:
            prompt, reply = read(entry)
            results.append(Result(entry["tier"], entry["arm"], prompt, reply, score(prompt, reply)))
        mode_results = []
        for entry in data.get("modes", ()):
            prompt, reply = read(entry)
            outcome = score_mode(entry["mode"], prompt, reply, prompt_set.tools)
            mode_results.append(ModeResult(entry["tier"], entry["api"], entry["mode"], prompt, reply, outcome))
        return results, mode_results, data["run"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path} is not a details file of this benchmark ({type(error).__name__}: {error})") from None


def save_details(
    path: Path | None,
    results: Sequence[Result],
    mode_results: Sequence[ModeResult],
    gguf: Path,
    started: float,
    load_at_start: float,
) -> dict[str, Any]:
    """The run so far (seconds, load average at its start and now), with its replies written to
    `path` when one is given."""
    run = {"seconds": time.monotonic() - started, "load_average": [load_at_start, os.getloadavg()[0]]}
    if path is not None:
        payload = details(results, gguf, run, mode_results)
        path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return run


def write_reports(
    results: Sequence[Result], mode_results: Sequence[ModeResult], runs: Sequence[dict[str, Any]], docs: bool
) -> None:
    """Print the arms' report and the modes' (whichever ran), and put each in docs/BENCHMARKS.md."""
    for name, text in (
        ("real-model", report(results, runs) if results else ""),
        ("real-model-modes", modes_report(mode_results, runs) if mode_results else ""),
    ):
        if text:
            print(text)
            if docs:
                write_section(name, text)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="pinned,current", help="comma-separated tiers (default: pinned,current)")
    parser.add_argument(
        "--arms",
        default=",".join(DEFAULT_ARMS),
        help=f"comma-separated arms among {', '.join(ARMS)} (default: {','.join(DEFAULT_ARMS)})",
    )
    parser.add_argument(
        "--limit", type=int, help="at most N prompts, taken from the categories in turn (with --modes: per mode)"
    )
    parser.add_argument("--gguf", type=Path, help="the model's GGUF (default: the project's cached copy)")
    parser.add_argument("--host", help="an Ollama already running (instead of starting each tier's)")
    parser.add_argument("--details", type=Path, help="write every reply and its score to this JSON file")
    parser.add_argument("--write-docs", action="store_true", help="replace the tables in docs/BENCHMARKS.md")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per answer (default 1: two tiers can run side by side on two cores, and a loaded machine "
        "does not stall a barrier; the proxy arm's OpenAI requests get the server's default, which is this on 0.3x)",
    )
    parser.add_argument(
        "--modes",
        nargs="?",
        const=",".join(MODES),
        help=f"run the tool_choice modes instead of the arms: comma-separated among {', '.join(MODES)} "
        "(default when given alone: all), each mode's prompts through each of --apis, on build's model",
    )
    parser.add_argument(
        "--apis",
        default=",".join(APIS),
        help=f"with --modes: comma-separated APIs among {', '.join(APIS)} (default: all)",
    )
    parser.add_argument(
        "--from-details",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="run nothing: report the replies of earlier runs' details files together (e.g. one per tier)",
    )
    args = parser.parse_args(argv)
    OPTIONS["num_thread"] = args.threads
    os.environ["LLAMA_ARG_THREADS"] = str(args.threads)  # llama-server's default, for requests without options
    prompt_set = load_prompt_set(PROMPTS)
    if args.from_details:
        loaded = [from_details(path, prompt_set) for path in args.from_details]
        arm_results = [result for each, _, _ in loaded for result in each]
        modes_results = [result for _, each, _ in loaded for result in each]
        write_reports(arm_results, modes_results, [run for _, _, run in loaded], args.write_docs)
        return

    tiers = [name.strip() for name in args.tiers.split(",") if name.strip()]
    arms = [name.strip() for name in args.arms.split(",") if name.strip()]
    modes = [name.strip() for name in (args.modes or "").split(",") if name.strip()]
    apis = [name.strip() for name in args.apis.split(",") if name.strip()]
    unknown = [name for name in tiers if name not in TIERS] + [name for name in arms if name not in ARMS]
    unknown += [name for name in modes if name not in MODES] + [name for name in apis if name not in APIS]
    if unknown or not tiers or not arms or not apis:
        parser.error(
            f"unknown or missing tier, arm, mode or API {', '.join(unknown)}; tiers: {', '.join(TIERS)}; "
            f"arms: {', '.join(ARMS)}; modes: {', '.join(MODES)}; APIs: {', '.join(APIS)}"
        )
    if args.host:
        tiers = tiers[:1]  # one server: the tier it runs is whatever it reports

    def say(message: str) -> None:
        print(f"[real-model] {message}", file=sys.stderr, flush=True)

    gguf = args.gguf or real_model_gguf(report=say)
    if not gguf.is_file():
        raise SystemExit(f"{gguf} is not a file; pass --gguf with the model's GGUF")
    gguf = gguf.resolve()
    prompts = spread(prompt_set.prompts, args.limit)
    if args.limit is not None:
        asked = {mode: chosen[: args.limit] for mode, chosen in prompt_set.modes.items()}
        prompt_set = dataclasses.replace(prompt_set, modes=asked)
    if modes:
        say(f"modes {', '.join(modes)}, APIs {', '.join(apis)}, tiers {', '.join(tiers)}, model {gguf.name}")
    else:
        say(f"{len(prompts)} prompts, arms {', '.join(arms)}, tiers {', '.join(tiers)}, model {gguf.name}")
    warnings.simplefilter("ignore", DroppedOutputWarning)  # counted as lost replies instead
    started, load_at_start = time.monotonic(), os.getloadavg()[0]
    results: list[Result] = []
    mode_results: list[ModeResult] = []
    for tier_name in tiers:
        with tier_server(tier_name, args.host, say) as (label, host, cli):
            say(f"Ollama {label} at {host}")
            if modes:  # the details file is written after each API, with the earlier tiers' replies

                def keep(so_far: list[ModeResult]) -> None:
                    save_details(args.details, [], [*mode_results, *so_far], gguf, started, load_at_start)

                mode_results += run_modes(label, host, cli, gguf, apis, modes, prompt_set, say, keep)
            else:
                results += run_tier(label, host, cli, gguf, arms, prompt_set, prompts, say)
    run = save_details(args.details, results, mode_results, gguf, started, load_at_start)
    write_reports(results, mode_results, [run], args.write_docs)


if __name__ == "__main__":
    main()
