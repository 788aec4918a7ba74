"""Bracket scans that ran to the end of the output, kept so that later scans can stop early.

A run item whose brackets never close (`{"name": "f", "arguments": {"city": "Pa` and more text)
is scanned to the end of the output before it fails. Scanning then goes on just inside it, and
each later `{` starts a scan of its own. When each of those brackets lies inside a string the cut
call left open, none of them is known to be dead, and each scan runs to the end again: the cost
grows with the square of the text.

Two scans that are at the same stop of the text in the same string state go on identically from
there. So once a new scan meets a kept one in step, and the kept one never closed a bracket that
was open at that stop, the new one cannot close any of its own either: it ends unclosed, with a
depth that is known, and it stops there instead of reading the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

# A few scans are kept: each new one meets the latest in step within a few characters on the
# shapes that need this, and lookups cost one dict probe per kept scan at every stop.
KEPT_SCANS = 4


# A kept scan at one stop (a bracket or quote it handled): its depth and string state just after,
# and the lowest depth it reached at any later stop. (A plain tuple: one is made per stop.)
Step = tuple[int, str, int]


@dataclass(frozen=True)
class KeptScan:
    """A scan that ran to the end of the output (at stream offset `end`) without closing."""

    end: int
    steps: dict[int, Step]
    depth: int
    quote: str
    last: str


@dataclass(frozen=True)
class Shortcut:
    """Where a new scan ends after meeting a kept one: unclosed at the output's end, with
    `inherited` more brackets open than it had at the meeting stop."""

    inherited: int
    quote: str
    last: str


class ScanMemo:
    """The scans of one output that ran to its end; one per recoverer."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept: list[KeptScan] = []

    def keep(self, record: list[tuple[int, str, int]], end: int, quote: str, last: str) -> None:
        """Keep a finished scan, given its stops in order as (stream offset, quote, depth)."""
        if not record:
            return
        steps: dict[int, Step] = {}
        lowest = record[-1][2]
        for position, step_quote, depth in reversed(record):
            steps[position] = (depth, step_quote, lowest)
            if depth < lowest:
                lowest = depth
        self.kept = [*self.kept[-(KEPT_SCANS - 1) :], KeptScan(end, steps, record[-1][2], quote, last)]

    def meet(self, position: int, quote: str, end: int) -> Shortcut | None:
        """A scan at stop `position` in string state `quote`, whose text ends at `end`: how it
        ends, if a kept scan was there in the same state and never closed a bracket that was open
        at that stop."""
        for kept in self.kept:
            step = kept.steps.get(position)
            if step is not None and kept.end == end and step[1] == quote and step[2] >= step[0]:
                return Shortcut(kept.depth - step[0], kept.quote, kept.last)
        return None
