"""Multi-turn tool use on the real model: does the conversation finish, from the call to the answer?

    python -m benchmarks.real_model_multiturn [--tiers current,pinned] [--arms plain,client,proxy]
                                              [--none client,api-chat,chat-completions,responses,messages]
                                              [--limit N] [--details FILE] [--write-docs]
    python -m benchmarks.real_model_multiturn --from-details current.json pinned.json [--write-docs]

The model is Qwen2.5-Coder-0.5B-Instruct, created as benchmarks/real_model.py creates it. Each
task of benchmarks/data/multi_turn_tasks.json (a question, the tools, scripted results) is run
to its end by each arm, at most 8 model turns:

* plain: `ollama create` from the GGUF alone (Ollama renders the model's own template and parses
  its calls), asked with ollama-python, in the loop ollama-python's examples write: run every
  call, hand back its result, ask again, until a reply without calls;
* library: the GGUF under Ollama's own hand-written qwen2.5-coder TEMPLATE, as `ollama pull
  qwen2.5-coder` leaves it, in the same loop;
* client: `ollama-fc build qwen2.5`, `ollama_fc.run_tools` with `ollama_fc.Client`: a call
  repeated after its result is not run again; the model is asked once more with
  tool_choice none;
* proxy: the same model through `ollama-fc serve`, the openai SDK's chat.completions, in the
  same loop as run_tools (tool_choice "none" after a repeated call).

Scored per task (benchmarks/multi_turn_tasks.py): finished (the last reply is prose, not a call
written as text, and holds the words that show it used the result), calls right (the distinct
calls made are the task's steps), identical calls repeated after their result, model turns,
seconds.

`--none SURFACES` measures what a `tool_choice="none"` turn returns: for each task, the turn
after its first call and that call's scripted result, asked on each surface in two ways:
`before` (the tools withheld and nothing else: what `none` sent before NONE_NOTE) and `none`
(what it sends now: ollama_fc.toolchoice.none_request). On the client it is also asked with
the tools offered and NONE_NOTE (`note`), which tells the two halves of `none` apart (the tools
offered without the note is the arms' own second turn). Every request: temperature 0, seed 42 where the API has one, at
most 256 tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai

from benchmarks.multi_turn_tasks import (
    KINDS,
    NoneReply,
    Run,
    Task,
    TaskSet,
    call_key,
    finishes_when_asked,
    load_tasks,
    none_table,
    runs_table,
    task_functions,
)
from benchmarks.real_model import PLAIN_ARMS, Say, create_models, tier_server, warm_up, with_threads
from benchmarks.real_model_apis import MAX_TOKENS, OPTIONS, SEED, TIMEOUT
from benchmarks.real_model_scoring import Call
from benchmarks.table import write_section
from ollama_fc import Client, DroppedOutputWarning, run_tools
from ollama_fc.loop import MAX_ROUNDS
from ollama_fc.serve import ProxyThread
from ollama_fc.testbed.realmodel import real_model_gguf
from ollama_fc.testbed.tiers import TIERS
from ollama_fc.toolchoice import NONE_NOTE, call_shaped

ARMS = {
    "plain": "plain `ollama create`, ollama-python, a loop running every call",
    "library": "library-style `ollama create` (Ollama's qwen2.5-coder TEMPLATE), the same loop",
    "client": "`ollama-fc build`, `ollama_fc.Client` + `run_tools`",
    "proxy": "`ollama-fc serve`, openai SDK, the loop of `run_tools`",
}
SURFACES = ("client", "api-chat", "chat-completions", "responses", "messages")
WAYS = {
    "tools": "tools offered (auto)",
    "note": "tools offered + NONE_NOTE",
    "before": "`none` before: tools withheld",
    "none": "`none` now: tools withheld + NONE_NOTE",
}


def spread(tasks: Sequence[Task], limit: int | None) -> list[Task]:
    """At most `limit` tasks (default: all), taken from the kinds in turn, so that a run cut
    short has tasks of every kind."""
    if limit is None:
        limit = len(tasks)
    queues = {kind: [task for task in tasks if task.kind == kind] for kind in KINDS}
    chosen: list[Task] = []
    while len(chosen) < limit and any(queues.values()):
        for kind in KINDS:
            if queues[kind] and len(chosen) < limit:
                chosen.append(queues[kind].pop(0))
    return chosen


# --- the arms -------------------------------------------------------------------------------


def run_plain(client: ollama.Client, model: str, task: Task, task_set: TaskSet, run: Run) -> None:
    """ollama-python's loop: every call runs, its result goes back, until a reply without calls."""
    messages: list[Any] = list(task.messages)
    answered: set[str] = set()
    for rounds in range(1, MAX_ROUNDS + 1):
        run.rounds = rounds
        message = client.chat(model, messages, tools=task_set.tool_dicts(task), options=OPTIONS).message
        messages.append(message)
        if not message.tool_calls:
            run.answer, run.stop = message.content or "", "answered"
            return
        for tool_call in message.tool_calls:
            call = Call(tool_call.function.name, dict(tool_call.function.arguments))
            run.calls.append(call)
            run.repeated += call_key(call) in answered
            answered.add(call_key(call))
            result = task.result_of(call.name, call.arguments)
            messages.append({"role": "tool", "tool_name": call.name, "content": result})
    run.stop = "max rounds"


def run_client(client: Client, model: str, task: Task, task_set: TaskSet, run: Run) -> None:
    transcript = run_tools(client, model, task.messages, task_functions(task_set, task), options=OPTIONS)
    for message in transcript:
        for tool_call in message.get("tool_calls") or ():
            run.calls.append(Call(tool_call["function"]["name"], dict(tool_call["function"]["arguments"])))
    run.calls += [Call(name, arguments) for name, arguments in transcript.repeated]
    run.answer, run.stop, run.rounds = transcript.answer, transcript.stop.value, transcript.rounds
    run.repeated = len(transcript.repeated)


def run_proxy(client: openai.OpenAI, model: str, task: Task, task_set: TaskSet, run: Run) -> None:
    """run_tools' loop, written for the openai SDK: a turn whose calls all repeat answered calls
    is dropped and asked again with tool_choice "none"."""
    messages: list[Any] = list(task.messages)
    results: dict[str, str] = {}
    tools = task_set.tool_dicts(task)
    for rounds in range(1, MAX_ROUNDS + 1):
        run.rounds = rounds
        message = _completion(client, model, messages, tools, "auto").message
        calls = [
            (tool_call.id, Call(tool_call.function.name, json.loads(tool_call.function.arguments or "{}")))
            for tool_call in message.tool_calls or ()
            if tool_call.type == "function"
        ]
        shaped = not calls and bool(results) and call_shaped(message.content, tools)
        if not calls and not shaped:
            run.answer, run.stop = message.content or "", "answered"
            return
        run.calls += [call for _, call in calls]
        repeated = [call for _, call in calls if call_key(call) in results]
        if len(repeated) == len(calls):  # every call a repeat, or (none parsed) the call as text
            run.repeated += len(repeated)
            run.rounds += 1
            answer = _completion(client, model, messages, tools, "none").message.content or ""
            shaped = call_shaped(answer, tools)
            run.answer, run.stop = (None, "repeated call") if shaped else (answer, "answered when asked")
            return
        run.repeated += len(repeated)
        messages.append(message.model_dump(exclude_none=True))
        for call_id, call in calls:
            result = results.get(call_key(call))
            if result is None:
                result = results[call_key(call)] = task.result_of(call.name, call.arguments)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    run.stop = "max rounds"


def _completion(client: openai.OpenAI, model: str, messages: list[Any], tools: list[Any], choice: str) -> Any:
    completion = client.chat.completions.create(
        model=model,
        messages=messages,
        tools=tools,
        tool_choice=choice,  # type: ignore[arg-type]
        temperature=0,
        seed=SEED,
        max_tokens=MAX_TOKENS,
    )
    return completion.choices[0]


# --- tool_choice none, turn after the first result ----------------------------------------


def first_call(task: Task) -> tuple[str, dict[str, Any], str]:
    """The task's first step as a concrete call (each argument's first accepted value) and its result."""
    step = task.steps[0]
    arguments = step.arguments()
    return step.call.name, arguments, step.result


def ask_after_result(
    surface: str, way: str, task: Task, task_set: TaskSet, model: str, clients: dict[str, Any]
) -> tuple[str, int]:
    """The reply's text and its number of parsed calls, for the turn after the first result."""
    name, arguments, result = first_call(task)
    tools = task_set.tool_dicts(task)
    offered = tools if way in ("tools", "note", "none") else None
    choice = {"none": "none", "tools": "auto", "note": "auto"}.get(way)
    note = [{"role": "system", "content": NONE_NOTE}] if way == "note" else []
    text = json.dumps(arguments)
    if surface in ("client", "api-chat"):
        call = {"function": {"name": name, "arguments": arguments}}
        messages = [*task.messages, {"role": "assistant", "content": "", "tool_calls": [call]}]
        messages += [{"role": "tool", "tool_name": name, "content": result}, *note]
        if surface == "client":
            kwargs: dict[str, Any] = {"tool_choice": choice} if choice else {}
            reply = clients["client"].chat(model, messages, tools=offered, options=OPTIONS, **kwargs).message
            return reply.content or "", len(reply.tool_calls or ())
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": False, "options": OPTIONS}
        if offered:
            body.update(tools=offered, tool_choice=choice)
        answer = clients["http"].post("/api/chat", json=body).raise_for_status().json()["message"]
        return answer.get("content") or "", len(answer.get("tool_calls") or ())
    if surface == "chat-completions":
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}
        chat = [*task.messages, {"role": "assistant", "content": None, "tool_calls": [call]}]
        chat += [{"role": "tool", "tool_call_id": "call_1", "content": result}]
        extra: dict[str, Any] = {"tools": offered, "tool_choice": choice} if offered else {}
        completion = clients["openai"].chat.completions.create(
            model=model, messages=chat, temperature=0, seed=SEED, max_tokens=MAX_TOKENS, **extra
        )
        message = completion.choices[0].message
        return message.content or "", len(message.tool_calls or ())
    if surface == "responses":
        items = [
            *task.messages,
            {"type": "function_call", "call_id": "call_1", "name": name, "arguments": text},
            {"type": "function_call_output", "call_id": "call_1", "output": result},
        ]
        extra = {}
        if offered:
            extra = {"tools": [{"type": "function", **tool["function"]} for tool in offered], "tool_choice": choice}
        response = clients["openai"].responses.create(
            model=model, input=items, temperature=0, max_output_tokens=MAX_TOKENS, **extra
        )
        return response.output_text, sum(1 for item in response.output if item.type == "function_call")
    assert surface == "messages"
    use = {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}
    conversation = [
        *task.messages,
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]},
    ]
    extra = {}
    if offered:
        extra = {
            "tools": [
                {"name": t["function"]["name"], "description": t["function"]["description"]}
                | {"input_schema": t["function"]["parameters"]}
                for t in offered
            ],
            "tool_choice": {"type": choice},
        }
    message = clients["anthropic"].messages.create(
        model=model, messages=conversation, max_tokens=MAX_TOKENS, extra_body={"temperature": 0}, **extra
    )
    text_out = "".join(block.text for block in message.content if block.type == "text")
    return text_out, sum(1 for block in message.content if block.type == "tool_use")


# --- a tier ---------------------------------------------------------------------------------


def run_tier(
    label: str,
    host: str,
    cli: Path,
    gguf: Path,
    arms: Sequence[str],
    surfaces: Sequence[str],
    task_set: TaskSet,
    tasks: Sequence[Task],
    say: Say,
    keep: Callable[[list[Run], list[NoneReply]], None],
) -> tuple[list[Run], list[NoneReply]]:
    runs: list[Run] = []
    replies: list[NoneReply] = []
    with tempfile.TemporaryDirectory(prefix="ofc-multiturn-") as folder:
        wanted = ["build"] + [arm for arm in PLAIN_ARMS if arm in arms]
        models = create_models(wanted, gguf, cli, host, Path(folder), say)
    built = with_threads(host, models["build"], int(OPTIONS["num_thread"]), say)
    warm_up(ollama.Client(host=host, timeout=TIMEOUT), built)
    plain = ollama.Client(host=host, timeout=TIMEOUT)
    ours = Client(host=host, timeout=TIMEOUT)
    with ProxyThread(host) as proxy, httpx.Client(base_url=proxy.url, timeout=TIMEOUT) as http:
        clients = {
            "client": ours,
            "http": http,
            "openai": openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="ollama", max_retries=0, timeout=TIMEOUT),
            "anthropic": anthropic.Anthropic(base_url=proxy.url, api_key="ollama", max_retries=0, timeout=TIMEOUT),
        }
        started = time.monotonic()
        runner = Runner(plain, built)
        for number, task in enumerate(tasks, 1):  # task by task: a run cut short has every arm's first tasks
            runner.use(built)
            for surface in surfaces:
                ways = ("note", "before", "none") if surface == "client" else ("before", "none")
                for way in ways:
                    reply = ask_none(label, surface, way, task, task_set, built, clients)
                    replies.append(reply)
                    shaped = call_shaped(reply.content, task_set.tool_dicts(task))
                    verdict = reply.error or ("call" if reply.calls else "call as text" if shaped else "prose")
                    say(f"{label} none {surface} {way} {number}/{len(tasks)} {task.id}: {verdict}")
            for arm in arms:
                runner.use(models.get(arm, built))
                run = run_arm(arm, label, task, task_set, {"plain": plain, "client": ours, **clients}, models, built)
                runs.append(run)
                say(
                    f"{label} {arm} {number}/{len(tasks)} {task.id}: {run.error or run.stop}, "
                    f"{run.rounds} turns, {run.repeated} repeated ({run.seconds:.1f} s)"
                )
            keep(runs, replies)
            say(f"{label}: {number} of {len(tasks)} tasks in {time.monotonic() - started:.0f} s")
    return runs, replies


def ask_none(
    label: str, surface: str, way: str, task: Task, task_set: TaskSet, model: str, clients: dict[str, Any]
) -> NoneReply:
    begun = time.perf_counter()
    try:
        content, calls = ask_after_result(surface, way, task, task_set, model, clients)
        return NoneReply(label, surface, way, task.id, content, calls, time.perf_counter() - begun)
    except Exception as error:  # a refused request is counted, the run goes on
        failed = f"{type(error).__name__}: {error}"
        return NoneReply(label, surface, way, task.id, "", 0, time.perf_counter() - begun, failed)


class Runner:
    """Which of the models of the one GGUF blob is loaded. Ollama 0.3x keeps one runner per blob,
    started with or without Jinja for the model that loaded it first, and a plain import asked
    with tools on a runner started without Jinja fails with HTTP 500 ("tools param requires
    --jinja flag"; docs/USAGE.md). So before another model of the blob is asked, the loaded one
    is unloaded (keep_alive 0) and the next starts a runner of its own, as it would for a user
    running that model alone. Loading is not counted in any task's seconds."""

    def __init__(self, client: ollama.Client, loaded: str) -> None:
        self.client, self.loaded = client, loaded

    def use(self, model: str) -> None:
        if model == self.loaded:
            return
        self.client.generate(model=self.loaded, keep_alive=0)
        deadline = time.monotonic() + 60
        while any(same_model(entry.model, self.loaded) for entry in self.client.ps().models):
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"{self.loaded} is still loaded a minute after keep_alive 0; stop it with `ollama stop`"
                )
            time.sleep(0.2)
        warm_up(self.client, model)
        self.loaded = model


def same_model(shown: str | None, name: str) -> bool:
    """`ollama ps` names a model with its tag (`name:latest`)."""
    return shown is not None and shown.removesuffix(":latest") == name.removesuffix(":latest")


def run_arm(
    arm: str, label: str, task: Task, task_set: TaskSet, clients: dict[str, Any], models: dict[str, str], built: str
) -> Run:
    run = Run(label, arm, task.id, task.kind)
    begun = time.perf_counter()
    try:
        if arm in PLAIN_ARMS:
            run_plain(clients["plain"], models[arm], task, task_set, run)
        elif arm == "client":
            run_client(clients["client"], built, task, task_set, run)
        else:
            run_proxy(clients["openai"], built, task, task_set, run)
    except Exception as error:  # a refused request is counted, the run goes on
        run.error = f"{type(error).__name__}: {error}"
    run.seconds = time.perf_counter() - begun
    return run


# --- reports --------------------------------------------------------------------------------


def report(runs: Sequence[Run], replies: Sequence[NoneReply], task_set: TaskSet, notes: Sequence[str]) -> str:
    parts = []
    if runs:
        totals = {run.tier: len(task_set.tasks) for run in runs}
        parts.append(runs_table(runs, task_set, ARMS, totals))
    if replies:
        parts.append("The turn after the first result, asked with `tool_choice` none and the other ways:")
        parts.append(none_table(replies, task_set, WAYS))
        if runs and (asked := finishes_when_asked(runs, replies, task_set)):
            parts.append(asked)
    parts.extend(notes)
    return "\n\n".join(parts)


def save(path: Path | None, runs: Sequence[Run], replies: Sequence[NoneReply], run: dict[str, Any]) -> None:
    if path is not None:
        payload = {"options": OPTIONS, "run": run, "runs": [asdict(r) for r in runs]}
        payload["none"] = [asdict(r) for r in replies]
        path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load(path: Path) -> tuple[list[Run], list[NoneReply], dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = []
        for entry in data["runs"]:
            entry["calls"] = [Call(call["name"], call["arguments"]) for call in entry["calls"]]
            runs.append(Run(**entry))
        return runs, [NoneReply(**entry) for entry in data["none"]], data["run"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path} is not a details file of this benchmark ({type(error).__name__}: {error})") from None


def run_note(run: dict[str, Any]) -> str:
    load_average = run.get("load_average") or [0.0, 0.0]
    return (
        f"{run.get('label', '')}: {run['seconds']:.0f} s, load average {load_average[0]:.1f} to {load_average[1]:.1f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="current,pinned", help="comma-separated tiers (default: current,pinned)")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated among {', '.join(ARMS)}; '' for none")
    parser.add_argument("--none", default="", help=f"surfaces to ask the turn after a result on: {', '.join(SURFACES)}")
    parser.add_argument("--limit", type=int, help="at most N tasks, taken from the kinds in turn")
    parser.add_argument("--gguf", type=Path, help="the model's GGUF (default: the project's cached copy)")
    parser.add_argument("--host", help="an Ollama already running (instead of starting each tier's)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per answer (default 1: on a loaded machine two threads stall each other at every barrier)",
    )
    parser.add_argument("--details", type=Path, help="write every run and reply to this JSON file (as it goes)")
    parser.add_argument("--write-docs", action="store_true", help="replace the table in docs/BENCHMARKS.md")
    parser.add_argument("--from-details", type=Path, nargs="+", metavar="FILE", help="report earlier runs' files")
    args = parser.parse_args(argv)
    task_set = load_tasks()
    if args.from_details:
        loaded = [load(path) for path in args.from_details]
        runs = [run for each, _, _ in loaded for run in each]
        replies = [reply for _, each, _ in loaded for reply in each]
        text = report(runs, replies, task_set, ["Runs: " + "; ".join(run_note(run) for _, _, run in loaded) + "."])
        print(text)
        if args.write_docs:
            write_section("real-model-multiturn", text)
        return
    OPTIONS["num_thread"] = args.threads
    os.environ["LLAMA_ARG_THREADS"] = str(args.threads)
    tiers = [name.strip() for name in args.tiers.split(",") if name.strip()]
    arms = [name.strip() for name in args.arms.split(",") if name.strip()]
    surfaces = [name.strip() for name in args.none.split(",") if name.strip()]
    unknown = [n for n in tiers if n not in TIERS] + [n for n in arms if n not in ARMS]
    unknown += [n for n in surfaces if n not in SURFACES]
    if unknown or not tiers:
        parser.error(f"unknown tier, arm or surface: {', '.join(unknown) or '(no tier)'}")

    def say(message: str) -> None:
        print(f"[multiturn] {message}", file=sys.stderr, flush=True)

    gguf = (args.gguf or real_model_gguf(report=say)).resolve()
    if not gguf.is_file():
        raise SystemExit(f"{gguf} is not a file; pass --gguf with the model's GGUF")
    tasks = spread(task_set.tasks, args.limit)
    warnings.simplefilter("ignore", DroppedOutputWarning)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the servers started here stop too
    started, load_at_start = time.monotonic(), os.getloadavg()[0]
    runs: list[Run] = []
    replies: list[NoneReply] = []
    label = ""

    def keep(so_far: list[Run], replied: list[NoneReply]) -> None:
        note = {
            "label": label,
            "seconds": time.monotonic() - started,
            "load_average": [load_at_start, os.getloadavg()[0]],
        }
        save(args.details, [*runs, *so_far], [*replies, *replied], note)

    for tier_name in tiers[:1] if args.host else tiers:
        with contextlib.ExitStack() as stack:
            label, host, cli = stack.enter_context(tier_server(tier_name, args.host, say))
            say(f"Ollama {label} at {host}: {len(tasks)} tasks, arms {', '.join(arms) or '-'}")
            more_runs, more_replies = run_tier(label, host, cli, gguf, arms, surfaces, task_set, tasks, say, keep)
            runs += more_runs
            replies += more_replies
    keep([], [])
    print(report(runs, replies, task_set, []))


if __name__ == "__main__":
    main()
