"""Learn a template's format and measure its round trips in one go (the benchmark and the
corpus test)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..convert.sources import TemplateSource
from ..hf.shapes import probe
from ..parsers.base import ToolCallParser
from ..parsers.learned_format import FormatNotLearned, LearnedFormat
from .derive import learn_from_source
from .probes import calling_shape
from .roundtrip import TemplateReport, measure


@dataclass
class Evaluation:
    """One template: does it render calls, what was learned (or why not), and its round trips."""

    name: str
    renders_calls: bool
    spec: LearnedFormat | None = None
    reason: str = ""
    report: TemplateReport | None = None


def evaluate(name: str, source: TemplateSource, others: Sequence[ToolCallParser] = ()) -> Evaluation:
    """Learn `source`'s format and measure its round trips on every call shape (and, on the
    same texts, those of the parsers `others`)."""
    shape = calling_shape(source, probe(source.template, source.special_tokens))
    if not shape.tool_calls:
        return Evaluation(name, False, reason="the template renders no tool calls")
    try:
        spec = learn_from_source(source, shape)
    except FormatNotLearned as exc:
        return Evaluation(name, True, reason=str(exc))
    return Evaluation(name, True, spec, report=measure(spec, source, shape, others))
