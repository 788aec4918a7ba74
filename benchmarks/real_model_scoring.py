"""Scoring for benchmarks/real_model.py: replies against a prompt's expected calls, and the tables.

Pure Python (no server, no network), so tests/test_real_model_scoring.py checks it alone.

The exactness rule. A reply to a prompt that expects calls is exact when its calls and the
expected calls pair off one to one, in any order (parallel calls have none), with nothing
left over on either side. A call matches an expected call when the names are equal and its
arguments fit one of the expected argument sets (an expectation may list several, e.g. both
orders of a product's operands):

* every argument the set names is there, with an acceptable value;
* any other argument is one of the expectation's `optional` ones (arguments the prompt does
  not settle, such as a temperature unit), with an acceptable value;
* nothing else: an argument the expectation does not name makes the call wrong.

An acceptable value is given as:

* a list: the value equals one of its items. Strings are compared with case folded, runs of
  whitespace made one space, and surrounding quotes and a final `.`, `!` or `?` dropped
  ("paris" and "Paris" match; "Paris, France" only where the list has it). A number matches
  a number of the same value, or a string that reads as that number (what a schema check
  coerces: "7" is 7). A boolean matches only a boolean.
* `"*"`: any value but null and an empty string (free text such as an email's body);
* `{"contains": [words]}`: a string holding each word, case ignored (a search query).

A prompt of the `none` category expects no call: its reply is right when it has none.

The tool_choice modes (`--modes`) ask a few prompts per mode (the prompt set's `modes` section)
and score each reply against what the mode promises (`kept`) and what a right answer is
(`correct`); see `score_mode`.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ollama_fc.arguments import InvalidToolCall, validate_arguments

CATEGORIES = ("one", "choice", "parallel", "none")
"""One tool offered and it fits; several offered, one fits; two or more calls expected; no offered tool fits."""

QUOTES = "\"'`“”‘’"


@dataclass(frozen=True)
class Call:
    """One tool call as a client returned it; `arguments` as the model wrote them."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    argument_sets: tuple[Mapping[str, Any], ...]
    optional: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExpectedCall:
        sets = data["arguments"]
        return cls(data["name"], tuple(sets) if isinstance(sets, list) else (sets,), data.get("optional") or {})


@dataclass(frozen=True)
class Prompt:
    id: str
    category: str
    messages: list[dict[str, str]]
    tools: tuple[str, ...]
    expected: tuple[ExpectedCall, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Prompt:
        return cls(
            data["id"],
            data["category"],
            list(data["messages"]),
            tuple(data["tools"]),
            tuple(ExpectedCall.from_json(call) for call in data["expected"]),
        )


@dataclass(frozen=True)
class PromptSet:
    tools: dict[str, dict[str, Any]]
    prompts: list[Prompt]
    modes: dict[str, list[Prompt]] = field(default_factory=dict)
    """Per tool_choice mode, the prompts it is asked (the file's `modes` section)."""

    def tool_dicts(self, prompt: Prompt) -> list[dict[str, Any]]:
        """The tools offered with `prompt`, in Ollama's (and OpenAI's) wire shape."""
        return [self.tools[name] for name in prompt.tools]


def load_prompt_set(path: Path) -> PromptSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    tools = {tool["function"]["name"]: tool for tool in data["tools"]}
    prompts = [Prompt.from_json(prompt) for prompt in data["prompts"]]
    by_id = {prompt.id: prompt for prompt in prompts}
    modes = {mode: [by_id[name] for name in names] for mode, names in (data.get("modes") or {}).items()}
    return PromptSet(tools, prompts, modes)


def schema_problems(tools: Mapping[str, Mapping[str, Any]], calls: Sequence[Call]) -> list[str]:
    """What `validate=True` would raise for each call of a tool in `tools` (a call of another
    tool, or with arguments that are not an object, is left to the caller)."""
    problems = []
    for call in calls:
        tool = tools.get(call.name)
        if tool is None or not isinstance(call.arguments, dict):
            continue
        try:
            validate_arguments(call.name, tool["function"]["parameters"], call.arguments)
        except InvalidToolCall as error:
            problems.append(str(error))
    return problems


def spread(prompts: Sequence[Prompt], limit: int | None) -> list[Prompt]:
    """At most `limit` prompts, taken from the categories in turn (so a few cover each)."""
    if limit is None:
        return list(prompts)
    queues = {category: [p for p in prompts if p.category == category] for category in CATEGORIES}
    chosen: list[Prompt] = []
    while len(chosen) < limit and any(queues.values()):
        for category in CATEGORIES:
            if queues[category] and len(chosen) < limit:
                chosen.append(queues[category].pop(0))
    return chosen


@dataclass
class Reply:
    """What one client returned for one prompt: calls and text, or the error it raised."""

    calls: list[Call] = field(default_factory=list)
    content: str = ""
    error: str = ""
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


def _text(value: str) -> str:
    text = " ".join(value.split()).casefold().strip(QUOTES)
    return text.rstrip(".!?").strip(QUOTES).strip()


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _equal(expected: Any, value: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(expected, bool) and isinstance(value, bool) and expected == value
    if isinstance(expected, (int, float)):
        return _number(value) == float(expected)
    if isinstance(expected, str):
        return isinstance(value, str) and _text(value) == _text(expected)
    return bool(expected == value)


def acceptable(matcher: Any, value: Any) -> bool:
    """Whether `value` is acceptable by `matcher` (a list, "*", or {"contains": [...]})."""
    if matcher == "*":
        return value is not None and not (isinstance(value, str) and not value.strip())
    if isinstance(matcher, Mapping) and set(matcher) == {"contains"}:
        return isinstance(value, str) and all(word.casefold() in value.casefold() for word in matcher["contains"])
    if isinstance(matcher, list):
        return any(_equal(item, value) for item in matcher)
    raise ValueError(f"not a value matcher: {matcher!r} (give a list, '*' or {{'contains': [...]}})")


def matches(expected: ExpectedCall, call: Call) -> bool:
    if call.name != expected.name or not isinstance(call.arguments, Mapping):
        return False
    for argument_set in expected.argument_sets:
        required = all(key in call.arguments and acceptable(m, call.arguments[key]) for key, m in argument_set.items())
        others = all(
            key in expected.optional and acceptable(expected.optional[key], value)
            for key, value in call.arguments.items()
            if key not in argument_set
        )
        if required and others:
            return True
    return False


def pair_off(expected: Sequence[ExpectedCall], calls: Sequence[Call]) -> bool:
    """Whether each call matches a different expected call and none is left (backtracking)."""
    if len(expected) != len(calls):
        return False
    if not calls:
        return True
    first, rest = calls[0], calls[1:]
    return any(
        matches(candidate, first) and pair_off([*expected[:i], *expected[i + 1 :]], rest)
        for i, candidate in enumerate(expected)
    )


@dataclass(frozen=True)
class Score:
    """One reply scored. `exact` is False for a `none` prompt (see `no_call`)."""

    refused: bool  # the request failed: the server refused it or the client raised
    called: bool  # answered with at least one call, every call naming an offered tool
    exact: bool  # the calls pair off with the expected ones (names and arguments)
    no_call: bool  # answered without any call
    lost: bool  # no error, no call and no text
    problem: str  # why the reply is not what was expected ("" when it is)


def score(prompt: Prompt, reply: Reply) -> Score:
    if reply.error:
        return Score(True, False, False, True, False, f"error: {reply.error}")
    names = [call.name for call in reply.calls]
    called = bool(names) and all(name in prompt.tools for name in names)
    no_call = not names
    lost = no_call and not reply.content.strip()
    exact = bool(prompt.expected) and pair_off(prompt.expected, reply.calls)
    return Score(False, called, exact, no_call, lost, "" if exact else _problem(prompt, reply, lost))


def _problem(prompt: Prompt, reply: Reply, lost: bool) -> str:
    if lost:
        return "lost: no text and no call"
    if not prompt.expected:
        return "" if not reply.calls else f"called {', '.join(call.name for call in reply.calls)} where no tool fits"
    if not reply.calls:
        return "answered in text, no call"
    unknown = [call.name for call in reply.calls if call.name not in prompt.tools]
    if unknown:
        return f"called {', '.join(unknown)}, not offered"
    if len(reply.calls) != len(prompt.expected):
        return f"{_calls(len(reply.calls))}, expected {len(prompt.expected)}"
    wanted = {call.name for call in prompt.expected}
    wrong = [call.name for call in reply.calls if call.name not in wanted]
    if wrong:
        return f"wrong tool: {', '.join(wrong)} (expected {', '.join(sorted(wanted))})"
    unmatched = [call for call in reply.calls if not any(matches(e, call) for e in prompt.expected)]
    shown = unmatched[0] if unmatched else reply.calls[0]
    return f"arguments: {shown.name} {json.dumps(shown.arguments, ensure_ascii=False)}"


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


@dataclass
class Tally:
    """The scores of one arm on one tier over one category (or "all")."""

    prompts: int = 0
    expecting_calls: int = 0
    called: int = 0
    exact: int = 0
    no_call: int = 0
    lost: int = 0
    refused: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, prompt: Prompt, reply: Reply, result: Score) -> None:
        self.prompts += 1
        self.expecting_calls += bool(prompt.expected)
        self.called += result.called
        self.exact += result.exact
        self.no_call += result.no_call and not result.refused
        self.lost += result.lost
        self.refused += result.refused
        if not result.refused:
            self.seconds.append(reply.seconds)

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None


@dataclass(frozen=True)
class Result:
    """One reply of one arm on one tier, with its score."""

    tier: str
    arm: str
    prompt: Prompt
    reply: Reply
    score: Score


def tallies(results: Iterable[Result]) -> dict[tuple[str, str, str], Tally]:
    """Tally per (tier, arm, category), and per (tier, arm, "all")."""
    table: dict[tuple[str, str, str], Tally] = {}
    for result in results:
        for category in (result.prompt.category, "all"):
            key = (result.tier, result.arm, category)
            table.setdefault(key, Tally()).add(result.prompt, result.reply, result.score)
    return table


def _seconds(tally: Tally) -> str:
    median = tally.median_seconds
    return "-" if median is None else f"{median:.1f}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def headline_table(results: Sequence[Result], arm_labels: Mapping[str, str]) -> str:
    """One row per tier and arm: for each category with prompts expecting calls, prompts answered
    with a call of an offered tool / exactly right; for `none`, prompts left without a call."""
    table = tallies(results)
    rows = list(dict.fromkeys((result.tier, result.arm) for result in results))
    categories = [c for c in CATEGORIES if any(key[2] == c for key in table)]
    header = ["Ollama", "arm"]
    for category in categories:
        sample = next(tally for key, tally in table.items() if key[2] == category)
        header.append(
            f"{category} ({sample.prompts}): no call"
            if category == "none"
            else f"{category} ({sample.prompts}): call / exact"
        )
    header += ["lost", "refused", "median s"]
    lines = [_row(header), _row(["---"] * len(header))]
    for tier, arm in rows:
        cells = [tier, arm_labels.get(arm, arm)]
        for category in categories:
            tally = table.get((tier, arm, category))
            if tally is None:
                cells.append("-")
            elif category == "none":
                cells.append(f"{tally.no_call}")
            else:
                cells.append(f"{tally.called} / {tally.exact}")
        total = table[(tier, arm, "all")]
        cells += [str(total.lost), str(total.refused), _seconds(total)]
        lines.append(_row(cells))
    return "\n".join(lines)


def category_table(results: Sequence[Result]) -> str:
    """One row per tier, arm (by its short name) and category: every count the benchmark reports."""
    table = tallies(results)
    header = ["Ollama", "arm", "category", "prompts", "call of an offered tool", "exact", "no call", "lost"]
    header += ["refused", "median s"]
    lines = [_row(header), _row(["---"] * len(header))]
    keys = [
        (tier, arm, category)
        for tier, arm in dict.fromkeys((result.tier, result.arm) for result in results)
        for category in (*CATEGORIES, "all")
        if (tier, arm, category) in table
    ]
    for tier, arm, category in keys:
        tally = table[(tier, arm, category)]
        exact = f"{tally.exact}" if tally.expecting_calls else "-"
        cells = [tier, arm, category, str(tally.prompts), str(tally.called), exact]
        cells += [str(tally.no_call), str(tally.lost), str(tally.refused), _seconds(tally)]
        lines.append(_row(cells))
    return "\n".join(lines)


MODES = ("auto", "required", "named", "none", "parallel_off")
"""tool_choice auto, required, one named tool and none; and auto with parallel_tool_calls false."""

PROMISES = {
    "auto": "every call names an offered tool",
    "required": "one call of an offered tool, its arguments valid by the tool's schema",
    "named": "one call of the named tool, its arguments valid by the tool's schema",
    "none": "no call, and the text kept",
    "parallel_off": "at most one call, of an offered tool",
}
"""What each mode claims, every time: `ModeScore.kept`."""


def named_tool(prompt: Prompt) -> str:
    """The tool the `named` mode names: the one that fits, else the last one offered (none fits)."""
    return prompt.expected[0].name if prompt.expected else prompt.tools[-1]


def prompt_kind(prompt: Prompt) -> str:
    """How a mode's prompts are grouped in its rows."""
    if prompt.category == "parallel":
        return "parallel"
    return "tool fits" if prompt.expected else "no tool fits"


@dataclass(frozen=True)
class ModeScore:
    """One reply under a tool_choice mode, scored.

    `correct`: the right answer under the mode. Where a tool fits, the calls are exact (under
    `none`, where the tools are withheld: text and no call); where none fits, text and no call
    under `auto`, and under `required` / `named` the forced call itself (the caller asked for
    one). With parallel calls off, exactly one call, matching one of the expected calls."""

    error: bool  # the request failed
    called: bool  # at least one call
    schema_valid: bool  # at least one call, each of an allowed tool, each with schema-valid arguments
    correct: bool
    no_call: bool  # answered without a call (not an error)
    kept: bool  # the mode's promise (PROMISES) held
    problem: str  # what broke the promise, else why the answer is not correct ("" when both hold)


def score_mode(mode: str, prompt: Prompt, reply: Reply, tools: Mapping[str, Mapping[str, Any]]) -> ModeScore:
    if mode not in PROMISES:
        raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    if reply.error:
        return ModeScore(True, False, False, False, False, False, f"error: {reply.error}")
    calls = reply.calls
    allowed = (named_tool(prompt),) if mode == "named" else prompt.tools
    strangers = [call.name for call in calls if call.name not in allowed]
    problems = schema_problems(tools, calls)
    malformed = [call.name for call in calls if not isinstance(call.arguments, Mapping)]
    schema_valid = bool(calls) and not strangers and not problems and not malformed
    answered_in_text = not calls and bool(reply.content.strip())
    if mode == "none":
        kept = correct = answered_in_text
    elif mode == "parallel_off":
        kept = len(calls) <= 1 and not strangers
        correct = len(calls) == 1 and any(matches(expected, calls[0]) for expected in prompt.expected)
    else:
        kept = not strangers if mode == "auto" else len(calls) == 1 and schema_valid
        if prompt.expected:
            correct = pair_off(prompt.expected, calls)
        else:
            correct = answered_in_text if mode == "auto" else kept
    broken = "" if kept else _broken(mode, calls, strangers, problems + malformed, reply)
    wrong = "" if correct else _mode_problem(mode, prompt, reply)
    return ModeScore(False, bool(calls), schema_valid, correct, not calls, kept, broken or wrong)


def _broken(mode: str, calls: Sequence[Call], strangers: Sequence[str], problems: Sequence[str], reply: Reply) -> str:
    if mode == "none":
        return f"called {', '.join(call.name for call in calls)} under none" if calls else "lost: no text and no call"
    if strangers:
        return f"called {', '.join(strangers)}, not {'the named tool' if mode == 'named' else 'offered'}"
    if len(calls) > 1:
        return f"{_calls(len(calls))}, at most one allowed"
    if not calls:
        return f"no call under {mode}; text: {reply.content.strip()[:80]!r}"
    return f"not schema-valid: {problems[0]}"


def _mode_problem(mode: str, prompt: Prompt, reply: Reply) -> str:
    if mode == "none":
        return "lost: no text and no call"
    if mode == "parallel_off":
        if not reply.calls:
            return "answered in text, no call"
        shown = reply.calls[0]
        return f"arguments: {shown.name} {json.dumps(shown.arguments, ensure_ascii=False)} fit no expected call"
    return _problem(prompt, reply, not reply.calls and not reply.content.strip())


@dataclass(frozen=True)
class ModeResult:
    """One reply of one API under one mode on one tier, with its score."""

    tier: str
    api: str
    mode: str
    prompt: Prompt
    reply: Reply
    score: ModeScore


@dataclass
class ModeTally:
    """The scores of one API under one mode on one tier, over one kind of prompt (or "all")."""

    prompts: int = 0
    called: int = 0
    schema_valid: int = 0
    correct: int = 0
    no_call: int = 0
    errors: int = 0
    kept: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, result: ModeResult) -> None:
        outcome = result.score
        self.prompts += 1
        self.called += outcome.called
        self.schema_valid += outcome.schema_valid
        self.correct += outcome.correct
        self.no_call += outcome.no_call
        self.errors += outcome.error
        self.kept += outcome.kept
        if not outcome.error:
            self.seconds.append(result.reply.seconds)


def mode_tallies(results: Iterable[ModeResult]) -> dict[tuple[str, str, str, str], ModeTally]:
    """Tally per (tier, API, mode, kind of prompt), and per (tier, API, mode, "all")."""
    table: dict[tuple[str, str, str, str], ModeTally] = {}
    for result in results:
        for kind in (prompt_kind(result.prompt), "all"):
            table.setdefault((result.tier, result.api, result.mode, kind), ModeTally()).add(result)
    return table


def _median(seconds: Sequence[float]) -> str:
    return f"{statistics.median(seconds):.1f}" if seconds else "-"


def modes_headline(results: Sequence[ModeResult], api_labels: Mapping[str, str]) -> str:
    """One row per tier and API: per mode, replies that kept its promise / that were correct."""
    table = mode_tallies(results)
    rows = list(dict.fromkeys((result.tier, result.api) for result in results))
    modes = [mode for mode in MODES if any(result.mode == mode for result in results)]
    header = ["Ollama", "API"]
    for mode in modes:
        count = max(tally.prompts for key, tally in table.items() if key[2] == mode and key[3] == "all")
        header.append(f"{mode} ({count}): kept / correct")
    header += ["errors", "median s"]
    lines = [_row(header), _row(["---"] * len(header))]
    for tier, api in rows:
        cells = [tier, api_labels.get(api, api)]
        errors, seconds = 0, []
        for mode in modes:
            tally = table.get((tier, api, mode, "all"))
            if tally is None:
                cells.append("-")
                continue
            cells.append(f"{tally.kept} / {tally.correct}")
            errors += tally.errors
            seconds += tally.seconds
        cells += [str(errors), _median(seconds)]
        lines.append(_row(cells))
    return "\n".join(lines)


def modes_table(results: Sequence[ModeResult]) -> str:
    """One row per tier, API, mode and kind of prompt: every count the modes report."""
    table = mode_tallies(results)
    header = ["Ollama", "API", "mode", "kind", "prompts", "calls", "schema-valid", "correct", "no call", "errors"]
    header += ["promise kept", "median s"]
    lines = [_row(header), _row(["---"] * len(header))]
    for tier, api, mode in dict.fromkeys((result.tier, result.api, result.mode) for result in results):
        kinds = [key[3] for key in table if key[:3] == (tier, api, mode) and key[3] != "all"]
        for kind in kinds:
            tally = table[(tier, api, mode, kind)]
            cells = [tier, api, mode, kind, str(tally.prompts), str(tally.called), str(tally.schema_valid)]
            cells += [str(tally.correct), str(tally.no_call), str(tally.errors), str(tally.kept)]
            lines.append(_row([*cells, _median(tally.seconds)]))
    return "\n".join(lines)
