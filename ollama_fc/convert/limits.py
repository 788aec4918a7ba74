"""Bounds on what converting one template may cost, so that an untrusted template stays cheap.

The translator unrolls loops over constants and folds constant expressions: `range(100000)`
nested twice, or a string doubled in a loop, would otherwise write gigabytes for minutes. Past
either bound the conversion stops with one ConversionError naming the construct and its line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

#: characters of Go template (and of any constant the translator folds); the largest corpus
#: conversion is about 1 MB (971,112 characters, gemma-4-31b-it)
DEFAULT_MAX_OUTPUT = 4_000_000
#: seconds of translation and reference renders; the largest corpus conversions take about a second
DEFAULT_MAX_SECONDS = 20.0
#: transformers renders in jinja2's sandbox, which refuses a longer `range()`
SANDBOX_MAX_RANGE = 100_000


@dataclass(frozen=True)
class Limits:
    """How large the converted template may grow and how long translating it may take."""

    max_output: int = DEFAULT_MAX_OUTPUT
    max_seconds: float = DEFAULT_MAX_SECONDS


class Budget:
    """What is left of the limits while one template is translated."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.spent = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def spend(self, size: int) -> str | None:
        """Count `size` more characters of output; why the conversion must stop, or None."""
        self.spent += size
        if self.spent > self.limits.max_output:
            return self.too_large()
        return self.overdue()

    def too_large(self) -> str:
        return (
            f"makes the converted template larger than {self.limits.max_output:,} characters "
            "(raise the limit with max_output= or --max-output if the template is trusted)"
        )

    def overdue(self) -> str | None:
        if time.monotonic() > self.deadline:
            return (
                f"takes longer than {self.limits.max_seconds:g} s to convert "
                "(raise the limit with max_seconds= or --max-seconds if the template is trusted)"
            )
        return None
