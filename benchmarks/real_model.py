"""A real tool-calling model with and without ollama-fc: the project's prompt set on both Ollama tiers.

    python benchmarks/real_model.py [--tiers pinned,current] [--arms plain,convert,build,serve,any]
                                    [--limit N] [--gguf PATH] [--host URL] [--details FILE]
                                    [--write-docs]
    python benchmarks/real_model.py --from-details pinned.json current.json [--write-docs]

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
"""

from __future__ import annotations

import argparse
import contextlib
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

import ollama
import openai

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_model_scoring import (  # noqa: E402
    Call,
    Prompt,
    PromptSet,
    Reply,
    Result,
    category_table,
    headline_table,
    load_prompt_set,
    score,
    spread,
)
from table import write_section  # noqa: E402

from ollama_fc import Client, DroppedOutputWarning  # noqa: E402
from ollama_fc.arguments import InvalidToolCall, validate_arguments  # noqa: E402
from ollama_fc.serve import ProxyThread  # noqa: E402
from ollama_fc.testbed.provision import provision  # noqa: E402
from ollama_fc.testbed.realmodel import real_model_gguf  # noqa: E402
from ollama_fc.testbed.server import OllamaServer, server_version  # noqa: E402
from ollama_fc.testbed.tiers import TIERS  # noqa: E402

PROMPTS = HERE / "data" / "real_model_prompts.json"
SEED = 42
MAX_TOKENS = 256
OPTIONS = {"temperature": 0, "seed": SEED, "num_predict": MAX_TOKENS}
ARMS = {
    "plain": "plain `ollama create`, ollama.Client",
    "convert": "`ollama-fc convert` + `ollama create`, ollama_fc.Client",
    "build": "`ollama-fc build qwen2.5`, ollama_fc.Client",
    "serve": "`ollama-fc serve` (build's model), openai SDK",
    "any": "`ollama-fc build --from` (no family), ollama_fc.Client",
}
DEFAULT_ARMS = ("plain", "convert", "build", "serve")
NATIVE_ARMS = ("plain", "convert", "build", "any")
FAMILY = "qwen2.5"
TIMEOUT = 900.0
MODEL_PREFIX = "ollama-fc-real-model-"

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


def native_stats(response: ollama.ChatResponse) -> dict[str, Any]:
    fields = ("eval_count", "eval_duration", "prompt_eval_count", "prompt_eval_duration", "load_duration")
    return {"done_reason": response.done_reason, **{name: getattr(response, name) for name in fields}}


def schema_problems(prompt_set: PromptSet, calls: Sequence[Call]) -> list[str]:
    """What `validate=True` would have raised for each call (offered tools only)."""
    problems = []
    for call in calls:
        tool = prompt_set.tools.get(call.name)
        if tool is None or not isinstance(call.arguments, dict):
            continue
        try:
            validate_arguments(call.name, tool["function"]["parameters"], call.arguments)
        except InvalidToolCall as error:
            problems.append(str(error))
    return problems


def ask_native(client: ollama.Client, model: str, prompt: Prompt, prompt_set: PromptSet) -> Reply:
    """One whole chat through ollama-python's API (plain or ollama_fc.Client)."""
    tools = prompt_set.tool_dicts(prompt)
    started = time.perf_counter()
    try:
        if isinstance(client, Client):
            response = client.chat(model, prompt.messages, tools=tools, options=OPTIONS, validate=False)
        else:
            response = client.chat(model, prompt.messages, tools=tools, options=OPTIONS)
    except Exception as error:  # refused ("does not support tools"), or a timeout: scored, the run goes on
        return Reply(error=f"{type(error).__name__}: {error}", seconds=time.perf_counter() - started)
    seconds = time.perf_counter() - started
    message = response.message
    calls = [Call(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or ()]
    stats = native_stats(response)
    stats["schema_problems"] = schema_problems(prompt_set, calls)
    return Reply(calls, message.content or "", "", seconds, stats)


def ask_openai(client: openai.OpenAI, model: str, prompt: Prompt, prompt_set: PromptSet) -> Reply:
    """One whole chat completion through the proxy, as an OpenAI app sends it."""
    started = time.perf_counter()
    try:
        completion = client.chat.completions.create(
            model=model,
            messages=prompt.messages,  # type: ignore[arg-type]
            tools=prompt_set.tool_dicts(prompt),  # type: ignore[arg-type]
            temperature=0,
            seed=SEED,
            max_tokens=MAX_TOKENS,
        )
    except Exception as error:  # scored as refused, the run goes on
        return Reply(error=f"{type(error).__name__}: {error}", seconds=time.perf_counter() - started)
    seconds = time.perf_counter() - started
    choice = completion.choices[0]
    calls = []
    for call in choice.message.tool_calls or ():
        function = getattr(call, "function", None)
        if function is None:
            continue
        try:
            arguments: Any = json.loads(function.arguments)
        except ValueError:
            arguments = function.arguments
        calls.append(Call(function.name, arguments))
    usage = completion.usage
    stats: dict[str, Any] = {
        "finish_reason": choice.finish_reason,
        "completion_tokens": usage.completion_tokens if usage else None,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "schema_problems": schema_problems(prompt_set, calls),
    }
    return Reply(calls, choice.message.content or "", "", seconds, stats)


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
    # the runner loads once (every arm's model is the same GGUF): not counted in any answer's time
    plain.chat(next(iter(models.values())), [{"role": "user", "content": "Hi"}], options={"num_predict": 1})
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
                    reply = ask_native(plain if arm == "plain" else ours, models[arm], prompt, prompt_set)
                result = Result(label, arm, prompt, reply, score(prompt, reply))
                results.append(result)
                verdict = "exact" if result.score.exact else result.score.problem or "text, no call"
                say(f"{label} {arm} {number}/{len(prompts)} {prompt.id}: {verdict} ({reply.seconds:.1f} s)")
            say(f"{label} {arm}: {len(prompts)} prompts in {time.monotonic() - started:.0f} s")
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


def report(results: Sequence[Result], runs: Sequence[dict[str, Any]]) -> str:
    prompts = len({result.prompt.id for result in results})
    notes = "; ".join(
        f"{run['seconds']:.0f} s"
        + (
            f" at load average {run['load_average'][0]:.1f} to {run['load_average'][1]:.1f}"
            if "load_average" in run
            else ""
        )
        for run in runs
    )
    return "\n\n".join(
        [
            headline_table(results, ARMS),
            "Each cell: prompts answered with a call of an offered tool / with every call exactly right "
            "(names and arguments); for `none`, prompts left without a call. Lost: no text and no call. "
            "Refused: the request failed.",
            category_table(results),
            rates_table(token_rates(results)),
            f"{prompts} prompts per arm, {len(results)} replies ({notes}).",
        ]
    )


def details(results: Sequence[Result], gguf: Path, run: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": str(gguf),
        "options": OPTIONS,
        "arms": ARMS,
        "run": run,
        "token_rates": token_rates(results),
        "replies": [
            {
                "tier": r.tier,
                "arm": r.arm,
                "prompt": r.prompt.id,
                "category": r.prompt.category,
                "messages": r.prompt.messages,
                "reply": asdict(r.reply),
                "score": asdict(r.score),
            }
            for r in results
        ],
    }


def from_details(path: Path, prompt_set: PromptSet) -> tuple[list[Result], dict[str, Any]]:
    """The replies of an earlier run's details file, scored again (with today's scoring)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        by_id = {prompt.id: prompt for prompt in prompt_set.prompts}
        results = []
        for entry in data["replies"]:
            prompt, raw = by_id[entry["prompt"]], entry["reply"]
            calls = [Call(call["name"], call["arguments"]) for call in raw["calls"]]
            reply = Reply(calls, raw["content"], raw["error"], raw["seconds"], raw["stats"])
            results.append(Result(entry["tier"], entry["arm"], prompt, reply, score(prompt, reply)))
        return results, data["run"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path} is not a details file of this benchmark ({type(error).__name__}: {error})") from None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="pinned,current", help="comma-separated tiers (default: pinned,current)")
    parser.add_argument(
        "--arms",
        default=",".join(DEFAULT_ARMS),
        help=f"comma-separated arms among {', '.join(ARMS)} (default: {','.join(DEFAULT_ARMS)})",
    )
    parser.add_argument("--limit", type=int, help="at most N prompts, taken from the categories in turn")
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
        text = report([result for results, _ in loaded for result in results], [run for _, run in loaded])
        print(text)
        if args.write_docs:
            write_section("real-model", text)
        return

    tiers = [name.strip() for name in args.tiers.split(",") if name.strip()]
    arms = [name.strip() for name in args.arms.split(",") if name.strip()]
    unknown = [name for name in tiers if name not in TIERS] + [name for name in arms if name not in ARMS]
    if unknown or not tiers or not arms:
        parser.error(
            f"unknown or missing tier or arm {', '.join(unknown)}; tiers: {', '.join(TIERS)}; arms: {', '.join(ARMS)}"
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
    say(f"{len(prompts)} prompts, arms {', '.join(arms)}, tiers {', '.join(tiers)}, model {gguf.name}")
    warnings.simplefilter("ignore", DroppedOutputWarning)  # counted as lost replies instead
    started, load_at_start = time.monotonic(), os.getloadavg()[0]
    results: list[Result] = []
    for tier_name in tiers:
        with tier_server(tier_name, args.host, say) as (label, host, cli):
            say(f"Ollama {label} at {host}")
            results += run_tier(label, host, cli, gguf, arms, prompt_set, prompts, say)
    run = {"seconds": time.monotonic() - started, "load_average": [load_at_start, os.getloadavg()[0]]}
    text = report(results, [run])
    print(text)
    if args.details:
        payload = details(results, gguf, run)
        args.details.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.write_docs:
        write_section("real-model", text)


if __name__ == "__main__":
    main()
