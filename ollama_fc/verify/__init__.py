"""Check a converted template against the Hugging Face reference, case by case."""

from __future__ import annotations

from ..hf.reference import ReferenceRenderError
from ..hf.reference import render as render_reference
from .runner import CaseResult, VerifyReport, compact_diff, compare, verify

__all__ = [
    "CaseResult",
    "ReferenceRenderError",
    "VerifyReport",
    "compact_diff",
    "compare",
    "render_reference",
    "verify",
]
