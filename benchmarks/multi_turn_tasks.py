"""The multi-turn tasks (benchmarks/data/multi_turn_tasks.json): loading, scripted tools, scoring.

A task is a question, the tools offered, the calls a right run makes (`steps`, in order, each
with the result its tool returns, scripted), and `must`: groups of words, one word of each
group (case-insensitive) in the final answer, so that an answer that does not use the result
fails. The tools are Python functions (`task_functions`) whose schema, as `function_to_tool`
reads it, is the file's, so `run_tools` runs them as a user's functions.
"""

from __future__ import annotations

import inspect
import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.real_model_scoring import Call, ExpectedCall, matches, pair_off
from ollama_fc.toolchoice import call_shaped

TASKS = Path(__file__).resolve().parent / "data" / "multi_turn_tasks.json"
KINDS = ("one_call", "two_calls", "error_result", "result_suffices")
"""One call then the answer; two dependent calls; a call whose result is an error; a call whose
result makes the offered second call unnecessary."""
NO_DATA = "Error: {name} has no data for this request."
_TYPES: dict[str, Any] = {"string": str, "number": float, "integer": int, "boolean": bool}


@dataclass(frozen=True)
class Step:
    call: ExpectedCall
    result: str

    def arguments(self) -> dict[str, Any]:
        """The call's arguments made concrete: each one's first accepted value."""
        return {
            key: " ".join(matcher["contains"]) if isinstance(matcher, Mapping) else matcher[0]
            for key, matcher in self.call.argument_sets[0].items()
        }


@dataclass(frozen=True)
class Task:
    id: str
    kind: str
    question: str
    tools: tuple[str, ...]
    steps: tuple[Step, ...]
    must: tuple[tuple[str, ...], ...]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "user", "content": self.question}]

    def result_of(self, name: str, arguments: Any) -> str:
        """The scripted result of a call: the step it matches, else the first step of its tool
        (so a run goes on with a slightly wrong call, which is scored apart), else an error."""
        call = Call(name, arguments)
        for step in self.steps:
            if matches(step.call, call):
                return step.result
        for step in self.steps:
            if step.call.name == name:
                return step.result
        return NO_DATA.format(name=name)

    def uses_result(self, answer: str | None) -> bool:
        """Whether `answer` holds one word of every `must` group."""
        text = (answer or "").casefold()
        return bool(text.strip()) and all(any(word.casefold() in text for word in group) for group in self.must)

    def calls_right(self, calls: Sequence[Call]) -> bool:
        """Whether the run's distinct calls are the steps' calls (names and arguments), no more."""
        distinct: list[Call] = []
        for call in calls:
            if call_key(call) not in {call_key(seen) for seen in distinct}:
                distinct.append(call)
        return pair_off([step.call for step in self.steps], distinct)


@dataclass(frozen=True)
class TaskSet:
    tools: dict[str, dict[str, Any]]
    tasks: list[Task]

    def tool_dicts(self, task: Task) -> list[dict[str, Any]]:
        """The tools offered with `task`, in Ollama's (and OpenAI's) wire shape."""
        return [self.tools[name] for name in task.tools]


def load_tasks(path: Path = TASKS) -> TaskSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    tools = {tool["function"]["name"]: tool for tool in data["tools"]}
    tasks = [
        Task(
            entry["id"],
            entry["kind"],
            entry["question"],
            tuple(entry["tools"]),
            tuple(Step(ExpectedCall.from_json(step["call"]), step["result"]) for step in entry["steps"]),
            tuple(tuple(group) for group in entry["must"]),
        )
        for entry in data["tasks"]
    ]
    return TaskSet(tools, tasks)


def call_key(call: Call) -> str:
    return json.dumps([call.name, call.arguments], sort_keys=True, ensure_ascii=False, default=str)


def task_functions(task_set: TaskSet, task: Task) -> list[Callable[..., str]]:
    """The task's tools as Python functions (name, signature and docstring from the file's
    schema) that return each call's scripted result."""
    return [_function(task_set.tools[name], task) for name in task.tools]


def _function(tool: Mapping[str, Any], task: Task) -> Callable[..., str]:
    spec = tool["function"]
    name, properties = spec["name"], spec["parameters"]["properties"]
    required = spec["parameters"].get("required", [])

    def scripted(**arguments: Any) -> str:
        return task.result_of(name, {key: value for key, value in arguments.items() if value is not None})

    parameters, annotations, lines = [], {}, []
    for key, schema in properties.items():
        kind = Literal[tuple(schema["enum"])] if "enum" in schema else _TYPES[schema["type"]]
        default = inspect.Parameter.empty if key in required else None
        parameters.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind))
        annotations[key] = kind
        lines.append(f"    {key}: {schema['description']}")
    scripted.__name__ = scripted.__qualname__ = name
    scripted.__doc__ = spec["description"] + "\n\nArgs:\n" + "\n".join(lines)
    scripted.__annotations__ = {**annotations, "return": str}
    scripted.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return scripted


@dataclass
class Run:
    """One task run by one arm: what the model called and answered, and how the run ended."""

    tier: str
    arm: str
    task: str
    kind: str
    calls: list[Call] = field(default_factory=list)
    answer: str | None = None
    stop: str = ""
    rounds: int = 0
    repeated: int = 0
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class Verdict:
    finished: bool  # a prose answer (not a call written as text) that uses the result
    calls_right: bool
    call_shaped: bool  # the run's last reply is a call written as text


def judge(task: Task, task_set: TaskSet, run: Run) -> Verdict:
    shaped = call_shaped(run.answer, task_set.tool_dicts(task))
    finished = not run.error and not shaped and task.uses_result(run.answer)
    return Verdict(finished, not run.error and task.calls_right(run.calls), shaped)


def _median(values: Iterable[float]) -> str:
    listed = list(values)
    return f"{statistics.median(listed):.1f}" if listed else "-"


def runs_table(runs: Sequence[Run], task_set: TaskSet, arm_labels: Mapping[str, str], totals: Mapping[str, int]) -> str:
    """Per tier and arm: finished, calls right, repeated calls, rounds, median seconds; then
    finished per kind. `totals`: tier -> tasks in the set (n run of N)."""
    by_id = {task.id: task for task in task_set.tasks}
    lines = [
        "| Ollama | arm | tasks run | finished with an answer that uses the result | calls right "
        "| tasks where a call was written again after its result (of them, parsed repeats) "
        "| model turns (mean) | median s per task | refused by Ollama (HTTP error) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    kinds: list[str] = ["| Ollama | arm | " + " | ".join(KINDS) + " |", "|---|---|" + "---|" * len(KINDS)]
    for tier, arm in dict.fromkeys((run.tier, run.arm) for run in runs):
        chosen = [run for run in runs if (run.tier, run.arm) == (tier, arm)]
        verdicts = [judge(by_id[run.task], task_set, run) for run in chosen]
        n = len(chosen)
        again = sum(1 for run in chosen if run.repeated or run.stop in ("answered when asked", "repeated call"))
        parsed = sum(1 for run in chosen if run.repeated)
        lines.append(
            f"| {tier} | {arm_labels.get(arm, arm)} | {n} of {totals.get(tier, n)} "
            f"| {sum(v.finished for v in verdicts)}/{n} | {sum(v.calls_right for v in verdicts)}/{n} "
            f"| {again} ({parsed}) "
            f"| {statistics.mean(run.rounds for run in chosen):.1f} | {_median(run.seconds for run in chosen)} "
            f"| {sum(1 for run in chosen if run.error)} |"
        )
        cells = []
        for kind in KINDS:
            of_kind = [(run, v) for run, v in zip(chosen, verdicts) if run.kind == kind]
            cells.append(f"{sum(v.finished for _, v in of_kind)}/{len(of_kind)}" if of_kind else "-")
        kinds.append(f"| {tier} | {arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nFinished, per kind of task:\n\n" + "\n".join(kinds)


@dataclass
class NoneReply:
    """The reply to the turn after the first call's result, asked one way on one surface."""

    tier: str
    surface: str
    way: str
    task: str
    content: str
    calls: int
    seconds: float
    error: str = ""


def none_table(replies: Sequence[NoneReply], task_set: TaskSet, way_labels: Mapping[str, str]) -> str:
    """Per tier, surface and way of asking: replies that are a call written as text, replies
    with a parsed call, and prose replies (neither, not empty)."""
    by_id = {task.id: task for task in task_set.tasks}
    lines = [
        "| Ollama | surface | request | replies | call written as text | parsed call | prose |",
        "|---|---|---|---|---|---|---|",
    ]
    for tier, surface, way in dict.fromkeys((r.tier, r.surface, r.way) for r in replies):
        chosen = [r for r in replies if (r.tier, r.surface, r.way) == (tier, surface, way)]
        shaped = sum(call_shaped(r.content, task_set.tool_dicts(by_id[r.task])) for r in chosen)
        prose = sum(
            1
            for r in chosen
            if not r.error
            and not r.calls
            and r.content.strip()
            and not call_shaped(r.content, task_set.tool_dicts(by_id[r.task]))
        )
        n = len(chosen)
        lines.append(
            f"| {tier} | {surface} | {way_labels.get(way, way)} | {n} | {shaped}/{n} "
            f"| {sum(1 for r in chosen if r.calls)}/{n} | {prose}/{n} |"
        )
    return "\n".join(lines)


#: the kinds whose answer needs one result only, so the turn after the first result (the `none`
#: probe) is the turn the answer is due in
ONE_RESULT_KINDS = ("one_call", "error_result", "result_suffices")


def finishes_when_asked(runs: Sequence[Run], replies: Sequence[NoneReply], task_set: TaskSet) -> str:
    """Per tier and loop arm: of the tasks the model answers when asked without tools (its
    client `none` reply after the first result is prose that uses the result; one-result kinds),
    how many the arm finished, and which it did not."""
    by_id = {task.id: task for task in task_set.tasks}
    lines = []
    for tier in dict.fromkeys(reply.tier for reply in replies):
        answerable = {
            reply.task
            for reply in replies
            if (reply.tier, reply.surface, reply.way) == (tier, "client", "none")
            and by_id[reply.task].kind in ONE_RESULT_KINDS
            and not reply.error
            and not reply.calls
            and not call_shaped(reply.content, task_set.tool_dicts(by_id[reply.task]))
            and by_id[reply.task].uses_result(reply.content)
        }
        for arm in ("client", "proxy"):
            chosen = [run for run in runs if (run.tier, run.arm) == (tier, arm) and run.task in answerable]
            if not chosen:
                continue
            missed = [run.task for run in chosen if not judge(by_id[run.task], task_set, run).finished]
            lines.append(
                f"{tier}, {arm}: the model answers {len(chosen)} one-result tasks with their result when asked "
                f"without tools; the loop finished {len(chosen) - len(missed)} of them"
                + (f" (not: {', '.join(missed)})" if missed else "")
                + "."
            )
    return "\n".join(lines)
