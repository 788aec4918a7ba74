"""What one call of each template builtin costs in Ollama's template package, and what an exact
`|trim` of a message costs: the unit every lowering in docs/RENDER_COST.md is counted in.

    python -m benchmarks.call_cost              # both Ollama versions
    python -m benchmarks.call_cost --rounds 3   # fewer alternating rounds

Each builtin is timed in a loop over the messages of render_cost.py's long conversation (102
messages), ten calls per message, against the same loop with ten reads of a field instead of the
calls: (best time - best time of the field reads) / 1,020 is the cost of one call. The templates
alternate round by round in one oracle process (best of its runs each round, best over the
rounds), so load and heap state fall on all of them alike.

The trim rows convert `{{ m.content | trim }}` with ollama_fc.convert and time it against the
conversion of `{{ m.content }}`, per message, on 100 messages alternating user and assistant
(Ollama merges consecutive messages of one role) whose text ends in a kept character, in one
newline, or is empty: what an exact `trim` costs where Ollama's hand-written templates print
`.Content` untrimmed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from benchmarks.render_cost import VERSIONS, _padding, content_bytes, conversation
from ollama_fc.convert import convert
from ollama_fc.oracle import Timer

CALLS_PER_MESSAGE = 10
#: the builtin calls timed, each as Go template code of one call on a message `$m` at index `$i`
BUILTINS: dict[str, str] = {
    "`and` (no reflective call: it evaluates its operands itself)": "and $m.Role $i",
    "`not`": "not $m.Role",
    "`len`": "len $m.Role",
    "`lt` (two ints)": "lt $i 3",
    "`html`": "html $m.Role",
    "`json` (Ollama's)": "json $m.Role",
    "`index` (a byte)": "index $m.Role 0",
    "`slice`": "slice $m.Role 1",
    "`eq` (two strings)": 'eq $m.Role "user"',
    "`eq` (one of four strings)": 'eq $m.Role "a" "b" "c" "user"',
    '`printf "%.1s"`': 'printf "%.1s" $m.Role',
    '`printf "%s%v"` (an append)': 'printf "%s%v" $m.Role $i',
}
#: the baseline row, timed whole; every other row is its time over this one
FIELD_READ = "a field read (the whole action, `{{$x = $m.Role}}`)"
#: a `define` called with a value: the cost of a helper call, beside the builtins
DEFINE_CALL = "`template` (a define call, over a field read)"
DEFINE = '{{define "ofc_noop"}}{{end}}'


def loop(action: str, define: str = "") -> str:
    body = "".join("{{" + action + "}}" for _ in range(CALLS_PER_MESSAGE))
    return define + "{{range $i, $m := .Messages}}{{$x := 0}}" + body + "{{$m.Content}}{{end}}"


def converted(jinja: str) -> str:
    return convert(template=jinja).template


def best_times(timer: Timer, templates: dict[str, str], messages: list[Any], rounds: int) -> dict[str, float]:
    """Each template's best execute time in ns over `rounds` rounds, the templates alternating."""
    best = dict.fromkeys(templates, float("inf"))
    for _ in range(rounds):
        for name, template in templates.items():
            timing = timer.measure(template, messages, runs=60, budget_ms=200)
            best[name] = min(best[name], min(timing.execute_ns))
    return best


#: message texts the trim rows are timed on
TRIM_TEXTS = {
    "ends in a kept character": "Round 1: please use get_weather for me.",
    "ends in one newline": "Round 1: please use get_weather for me.\n",
    "is empty": "",
}


#: what reading each byte of a message's text costs: a copy (printing it), and one pass of each
#: builtin that reads every byte (the only way a template can search or escape a text)
PER_BYTE: dict[str, str] = {
    "a copy (the text printed)": "{{$m.Content}}",
    "`html`": "{{$x = html $m.Content}}",
    "`js`": "{{$x = js $m.Content}}",
    "`json` (Ollama's)": "{{$x = json $m.Content}}",
    '`printf "%q"`': '{{$x = printf "%q" $m.Content}}',
}
#: bytes of prose per message for the per-byte rows
PER_BYTE_TEXT = 4000


def alternating(text: str) -> list[dict[str, str]]:
    return [{"role": ("user", "assistant")[i % 2], "content": text} for i in range(100)]


def measure(version: str, rounds: int) -> dict[str, float]:
    """ns per call of each builtin (and of a define call); µs per message of an exact trim."""
    templates = {FIELD_READ: loop("$x = $m.Role")}
    templates.update({name: loop(f"$x = {code}") for name, code in BUILTINS.items()})
    templates[DEFINE_CALL] = loop('template "ofc_noop" $m.Role', DEFINE)
    messages = conversation(0, tools=False)
    with Timer(version) as timer:
        best = best_times(timer, templates, messages, rounds)
        calls = CALLS_PER_MESSAGE * len(messages)
        result = {name: (best[name] - best[FIELD_READ]) / calls for name in templates}
        result[FIELD_READ] = best[FIELD_READ] / calls
        printed = converted("{% for m in messages %}{{ m.content }}{% endfor %}")
        trimmed = converted("{% for m in messages %}{{ m.content | trim }}{% endfor %}")
        for label, text in TRIM_TEXTS.items():
            pair = best_times(timer, {"print": printed, "trim": trimmed}, alternating(text), rounds)
            result[f"trim: {label}"] = (pair["trim"] - pair["print"]) / 100 / 1000
        passes = {
            name: "{{range $i, $m := .Messages}}{{$x := 0}}" + action + "{{end}}" for name, action in PER_BYTE.items()
        }
        prose = alternating(_padding(PER_BYTE_TEXT))
        full, empty = best_times(timer, passes, prose, rounds), best_times(timer, passes, alternating(""), rounds)
        for name in PER_BYTE:
            result[f"byte: {name}"] = (full[name] - empty[name]) / content_bytes(prose)
    return result


def report(results: dict[str, dict[str, float]]) -> list[str]:
    versions = list(results)
    first = results[versions[0]]
    lines = ["| call | " + " | ".join(f"ns per call, {v}" for v in versions) + " |", "|---|" + "---|" * len(versions)]
    for name in sorted((n for n in first if not n.startswith(("trim: ", "byte: "))), key=first.__getitem__):
        lines.append(f"| {name} | " + " | ".join(f"{results[v][name]:.0f}" for v in versions) + " |")
    lines += ["", "| exact `trim` of a message whose text | " + " | ".join(f"µs, {v}" for v in versions) + " |"]
    lines.append("|---|" + "---|" * len(versions))
    for label in TRIM_TEXTS:
        lines.append(f"| {label} | " + " | ".join(f"{results[v]['trim: ' + label]:.2f}" for v in versions) + " |")
    lines += ["", "| each byte of message text read by | " + " | ".join(f"ns per byte, {v}" for v in versions) + " |"]
    lines.append("|---|" + "---|" * len(versions))
    for name in PER_BYTE:
        lines.append(f"| {name} | " + " | ".join(f"{results[v]['byte: ' + name]:.2f}" for v in versions) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=list(VERSIONS), help="Ollama versions (default: both)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (default 6)")
    args = parser.parse_args(argv)
    results = {version: measure(version, args.rounds) for version in args.versions}
    print("\n".join(report(results)))


if __name__ == "__main__":
    main()
