"""Render the battery with the Hugging Face reference and with Ollama's engine, and compare.

For every case the reference renders the source Jinja template (in the template's own input
shape) and Ollama's template package renders the Go template (with the conversation as Ollama
receives it), once per Ollama version. A case is `exact` when every version gives the same
bytes as the reference, `diff` when some version differs, `error` when Ollama fails on it, and
`cannot-render` when the Jinja template itself refuses or crashes on the conversation (a
`raise_exception` for a system role it lacks, roles that must alternate, ...): there is nothing
to be faithful to then.

One equivalence is allowed: when the reference starts with the tokenizer's `bos_token` and
Ollama's render does not, the BOS is not counted, because Ollama's runner adds BOS itself when
it tokenizes the prompt (a literal one in the template would give two).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from .. import oracle
from ..convert import Capabilities, convert
from ..convert.sources import TemplateSource, load_source
from ..hf.reference import ReferenceRenderError
from ..hf.shapes import Shape, probe
from .battery import CASES, Case, missing, render_case

Status = Literal["exact", "diff", "cannot-render", "error"]
DIFF_CONTEXT = 24


class VersionResult(BaseModel):
    """One Ollama version's render of one case, compared with the reference."""

    status: Literal["exact", "diff", "error"]
    detail: str = ""


class CaseResult(BaseModel):
    name: str
    needs: list[str]
    status: Status
    #: the compact diff, Ollama's error, or why the reference cannot render the case
    detail: str = ""
    versions: dict[str, VersionResult] = {}


class VerifyReport(BaseModel):
    origin: str
    versions: list[str]
    shape: dict[str, Any]
    warnings: list[str] = []
    notes: list[str] = []
    cases: list[CaseResult]

    @property
    def rendered(self) -> int:
        """Cases the reference renders (the denominator of `exact N/M`)."""
        return sum(case.status != "cannot-render" for case in self.cases)

    @property
    def exact(self) -> int:
        return sum(case.status == "exact" for case in self.cases)

    @property
    def all_exact(self) -> bool:
        """Every case the reference renders is exact on every version (and there is one)."""
        return self.rendered > 0 and self.exact == self.rendered


def compact_diff(expected: str, actual: str, context: int = DIFF_CONTEXT) -> str:
    """Where two renders first differ (char offset, line, column), a little of each side around it."""
    position = 0
    for position, (left, right) in enumerate(zip(expected, actual)):  # noqa: B007 (read after the loop)
        if left != right:
            break
    else:
        position = min(len(expected), len(actual))
    line = expected.count("\n", 0, position) + 1
    column = position - (expected.rfind("\n", 0, position) + 1) + 1
    start = max(0, position - context)
    end = position + context
    return (
        f"at char {position} (line {line} col {column}): "
        f"reference {expected[start:end]!r} vs ollama {actual[start:end]!r}"
    )


def _combine(results: Mapping[str, VersionResult]) -> tuple[Status, str]:
    """One status for a case; details name the versions they belong to when versions disagree."""
    if all(result.status == "exact" for result in results.values()):
        return "exact", ""
    status: Status = "diff" if any(result.status == "diff" for result in results.values()) else "error"
    failing = {version: result for version, result in results.items() if result.status != "exact"}
    details = {result.detail for result in failing.values()}
    if len(failing) == len(results) and len(details) == 1:
        return status, details.pop()
    parts = [f"{version}: {result.status} {result.detail}".rstrip() for version, result in failing.items()]
    exact_on = [version for version, result in results.items() if result.status == "exact"]
    if exact_on:
        parts.append(f"exact on {', '.join(exact_on)}")
    return status, "; ".join(parts)


def _compare_one(expected: str, rendered: oracle.Rendered, bos_token: str) -> VersionResult:
    if rendered.prompt is None:
        return VersionResult(status="error", detail=f"Ollama {rendered.stage} error: {rendered.error}")
    if bos_token and expected.startswith(bos_token) and not rendered.prompt.startswith(bos_token):
        expected = expected[len(bos_token) :]
    if rendered.prompt == expected:
        return VersionResult(status="exact")
    return VersionResult(status="diff", detail=compact_diff(expected, rendered.prompt))


#: bos/eos for a bare .jinja file with no tokenizer data, the same on both sides of a comparison
STAND_IN_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def with_stand_in_tokens(source: TemplateSource) -> TemplateSource:
    """The source as is when it has special tokens, else with STAND_IN_TOKENS."""
    if source.special_tokens:
        return source
    return dataclasses.replace(source, special_tokens=dict(STAND_IN_TOKENS))


def compare(
    source: TemplateSource,
    go_template: str,
    oracles: Mapping[str, oracle.Oracle],
    *,
    shape: Shape | None = None,
    cases: Sequence[Case] = CASES,
) -> tuple[Shape, list[CaseResult]]:
    """Every battery case: the reference render of `source` against Ollama's render of `go_template`.

    A source with a `tool_use` template is rendered with it for the cases that have tools, as
    transformers does; the shape returned is then that template's.
    """
    shape = shape or probe(source.template, source.special_tokens)
    tool_shape = shape if source.tool_use is None else probe(source.tool_use, source.special_tokens)
    results: list[CaseResult] = []
    for case in cases:
        needs = sorted(case.needs)
        case_shape = tool_shape if case.tools else shape
        try:
            expected = render_case(source.chosen(bool(case.tools)), case, case_shape, source.special_tokens)
        except ReferenceRenderError as exc:
            reason = str(exc)
            lacking = missing(case_shape, case)
            if lacking:
                reason += f" (the template does not render {', '.join(lacking)})"
            results.append(CaseResult(name=case.name, needs=needs, status="cannot-render", detail=reason))
            continue
        per_version = {
            version: _compare_one(
                expected,
                engine.render(go_template, list(case.messages), list(case.tools) or None),
                source.special_tokens.get("bos_token", ""),
            )
            for version, engine in oracles.items()
        }
        status, detail = _combine(per_version)
        results.append(CaseResult(name=case.name, needs=needs, status=status, detail=detail, versions=per_version))
    return tool_shape, results


@contextlib.contextmanager
def open_oracles(versions: Sequence[str]) -> Iterator[dict[str, oracle.Oracle]]:
    """One batch oracle process per Ollama version, closed afterwards."""
    with contextlib.ExitStack() as stack:
        yield {version: stack.enter_context(oracle.Oracle(version)) for version in versions}


def _capability_notes(shape: Shape, capabilities: Capabilities) -> list[str]:
    """Where the converter's claimed capabilities disagree with what the reference renders."""
    notes = []
    for name in ("system_role", "tools", "tool_calls", "parallel_calls", "tool_results"):
        claimed, probed = getattr(capabilities, name), getattr(shape, name)
        if claimed != probed:
            notes.append(
                f"capability {name}: converter says {claimed}, the reference "
                f"{'renders' if probed else 'does not render'} it"
            )
    return notes


def verify(
    source: str | Path | TemplateSource,
    versions: Sequence[str] = (oracle.PINNED, oracle.LATEST),
    *,
    oracles: Mapping[str, oracle.Oracle] | None = None,
) -> VerifyReport:
    """Convert `source`, then check the result case by case against the HF reference.

    Raises SourceError for a missing or unreadable source and ConversionError when the
    template cannot be converted at all.
    """
    loaded = source if isinstance(source, TemplateSource) else load_source(source)
    conversion = convert(loaded)
    with contextlib.ExitStack() as stack:
        engines = oracles if oracles is not None else stack.enter_context(open_oracles(versions))
        shape, results = compare(loaded, conversion.template, engines)
    return VerifyReport(
        origin=loaded.origin,
        versions=list(engines),
        shape=dataclasses.asdict(shape),
        warnings=[str(warning) for warning in conversion.warnings],
        notes=_capability_notes(shape, conversion.capabilities),
        cases=results,
    )
