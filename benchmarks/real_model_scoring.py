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
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

    def tool_dicts(self, prompt: Prompt) -> list[dict[str, Any]]:
        """The tools offered with `prompt`, in Ollama's (and OpenAI's) wire shape."""
        return [self.tools[name] for name in prompt.tools]


def load_prompt_set(path: Path) -> PromptSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    tools = {tool["function"]["name"]: tool for tool in data["tools"]}
    return PromptSet(tools, [Prompt.from_json(prompt) for prompt in data["prompts"]])


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


def _pair_off(expected: Sequence[ExpectedCall], calls: Sequence[Call]) -> bool:
    """Whether each call matches a different expected call and none is left (backtracking)."""
    if len(expected) != len(calls):
        return False
    if not calls:
        return True
    first, rest = calls[0], calls[1:]
    return any(
        matches(candidate, first) and _pair_off([*expected[:i], *expected[i + 1 :]], rest)
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
    exact = bool(prompt.expected) and _pair_off(prompt.expected, reply.calls)
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
