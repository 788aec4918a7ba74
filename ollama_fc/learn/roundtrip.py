"""Round trips: render calls with a template, read them back with the format learned from it.

The text of a turn is what the template writes for it (see `probes.call_text`), so a round
trip is exact when the learned format returns the same calls (names and arguments, checked and
coerced against the offered tools' schemas as `ollama_fc.Client` does) and the same content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..arguments import validate_arguments
from ..convert.sources import TemplateSource
from ..errors import ToolCallError
from ..hf.shapes import Shape
from ..parsers.base import ToolCallParser
from ..parsers.learned import LearnedParser
from ..parsers.learned_format import SPECIAL_TOKEN, LearnedFormat
from ..parsers.streaming import recover_text
from .probes import Call, Probe, call_text, schemas, tool_definitions

Status = Literal["exact", "mismatch", "skipped"]


@dataclass(frozen=True)
class Outcome:
    probe: str
    status: Status
    detail: str = ""


def round_trip(
    spec: LearnedFormat,
    source: TemplateSource,
    shape: Shape,
    probe: Probe,
    others: Sequence[ToolCallParser] = (),
) -> tuple[Outcome, Outcome | None]:
    """Render `probe` with the template and read it back with `spec` (and, to compare, with
    the parsers `others` on the same text)."""
    if len(probe.calls) > 1 and not shape.parallel_calls:
        skipped = Outcome(probe.label, "skipped", "the template renders one call per turn")
        return skipped, skipped if others else None
    text = call_text(source, shape, probe)
    reason = ""
    if text is None:
        reason = "the template refuses this conversation"
    elif probe.content and probe.content not in text:
        reason = "the template drops content next to calls"
    elif probe.content and not text.lstrip().startswith(probe.content):
        reason = "the template writes the content after the calls, or inside them"
    elif not all(call.name in text for call in probe.calls):
        reason = "the template drops calls next to content"
    elif probe.content and _own_turn(spec, text.lstrip()[len(probe.content) :]):
        reason = "the template writes the content in a turn of its own"
    if text is None or reason:
        skipped = Outcome(probe.label, "skipped", reason)
        return skipped, skipped if others else None
    if spec.end and spec.end in text:  # a stop sequence: Ollama ends the output there
        text = text[: text.index(spec.end)]
    learned = compare([LearnedParser(spec)], text, probe)
    return learned, compare(others, text, probe) if others else None


def _own_turn(spec: LearnedFormat, after_content: str) -> bool:
    """Whether special tokens that are not the format's own stand between the content and the
    calls (Nemotron Nano 2 ends the content's turn and opens another for the calls)."""
    at = after_content.find(spec.opener) if spec.opener else -1
    between = after_content[:at] if at > 0 else ""
    return any(token.group() not in spec.special_tokens for token in SPECIAL_TOKEN.finditer(between))


def compare(parsers: Sequence[ToolCallParser], text: str, probe: Probe) -> Outcome:
    """Parse `text` with `parsers` (offering the probe's tools) and compare with the probe."""
    result = recover_text(text, parsers, tool_definitions(probe))
    got = [(call.name, call.arguments) for call in result.tool_calls]
    want = [(call.name, call.arguments) for call in probe.calls]
    if len(got) != len(want) or any(g[0] != w[0] for g, w in zip(got, want)):
        return Outcome(probe.label, "mismatch", f"calls {[g[0] for g in got]} from {_short(text)}")
    tool_schemas = schemas(probe)
    for (name, arguments), (_, expected) in zip(got, want):
        try:
            checked = validate_arguments(name, tool_schemas.get(name), arguments)
        except ToolCallError as exc:
            return Outcome(probe.label, "mismatch", str(exc))
        if checked != expected:
            return Outcome(probe.label, "mismatch", f"arguments {checked!r} != {expected!r}")
    if result.content.strip() != probe.content.strip():
        return Outcome(probe.label, "mismatch", f"content {result.content!r}")
    return Outcome(probe.label, "exact")


def _short(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def call_shapes(spec: LearnedFormat) -> list[Probe]:
    """At least 20 call shapes: names, nesting, parallel calls, content, unicode, and strings
    holding the format's own markers (its closers only where strings are JSON-quoted: a raw
    value holding the closer is ambiguous in the format itself, and a string in a custom quote
    is not followed by the scanner; for the same reason its opener only where it is not a
    bracket a raw value would leave unbalanced)."""
    weather = "get_weather"
    shapes = [
        Probe("simple string", (Call(weather, {"city": "Paris"}),)),
        Probe("string and integer", (Call(weather, {"city": "Oslo", "days": 5}),)),
        Probe("no arguments", (Call("get_time", {}),)),
        Probe("nested object", (Call("book_hotel", {"stay": {"city": "Rome", "nights": 2, "rooms": [{"beds": 2}]}}),)),
        Probe("list of numbers", (Call("plot", {"values": [1, 2.5, -3, 1e-3]}),)),
        Probe("booleans and null", (Call("set_flags", {"enabled": True, "verbose": False, "parent": None}),)),
        Probe("negative float", (Call("move", {"dx": -0.25, "dy": 12.75}),)),
        Probe("unicode", (Call(weather, {"city": "東京 Zürich Ελλάδα 🌧️"}),)),
        Probe("quotes and backslashes", (Call("echo", {"text": "she said \"hi\" \\ and 'bye'"}),)),
        Probe("newlines and tabs", (Call("write_file", {"path": "a.txt", "body": "line 1\nline 2\n\tindented"}),)),
        Probe("empty string", (Call("search", {"query": "", "limit": 3}),)),
        Probe("json-looking string", (Call("echo", {"text": '{"a": [1, 2]} and [3]'}),)),
        Probe("html-like string", (Call("render", {"html": "<b>bold</b> & <i>x</i> a < b > c"}),)),
        Probe("long string", (Call("summarize", {"text": "lorem ipsum dolor sit amet " * 20}),)),
        Probe("deep nesting", (Call("configure", {"a": {"b": {"c": {"d": {"e": [1, {"f": "g"}]}}}}}),)),
        Probe("name with digits", (Call("search_v2", {"query": "llamas"}),)),
        Probe("two parallel calls", (Call(weather, {"city": "Paris"}), Call("get_time", {"zone": "Europe/Paris"}))),
        Probe(
            "three parallel calls",
            (Call(weather, {"city": "Lima"}), Call(weather, {"city": "Quito"}), Call("get_time", {"zone": "UTC"})),
        ),
        Probe("content before a call", (Call(weather, {"city": "Paris"}),), content="Let me look that up."),
        Probe(
            "unicode content before parallel calls",
            (Call(weather, {"city": "Kyiv"}), Call("get_time", {"zone": "Europe/Kyiv"})),
            content="Перевіряю погоду і час…",
        ),
    ]
    opener = spec.opener
    if opener.strip() and not (spec.raw_strings and opener in "[{"):
        shapes.append(Probe("value holding the block opener", (Call("echo", {"text": f"write {opener} to start"}),)))
    closers = [text for text in (spec.closer, spec.call_close.strip(), spec.param_close.strip()) if text.strip()]
    if closers and not spec.raw_strings and not spec.string_quote:
        shapes.append(Probe("value holding the closers", (Call("echo", {"text": "end: " + " ".join(closers)}),)))
    return shapes


@dataclass
class TemplateReport:
    """The round trips of one template, read with the learned format and with the built-ins."""

    spec: LearnedFormat
    outcomes: list[Outcome]
    builtin: list[Outcome] = field(default_factory=list)

    @property
    def exact(self) -> int:
        return sum(outcome.status == "exact" for outcome in self.outcomes)

    @property
    def measured(self) -> int:
        return sum(outcome.status != "skipped" for outcome in self.outcomes)

    @property
    def builtin_exact(self) -> int:
        return sum(outcome.status == "exact" for outcome in self.builtin)


def measure(
    spec: LearnedFormat, source: TemplateSource, shape: Shape, others: Sequence[ToolCallParser] = ()
) -> TemplateReport:
    report = TemplateReport(spec, [])
    for probe in call_shapes(spec):
        learned, other = round_trip(spec, source, shape, probe, others)
        report.outcomes.append(learned)
        if other is not None:
            report.builtin.append(other)
    return report
