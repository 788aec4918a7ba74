"""Where a call region ends: one small detector per region kind, fed only new text.

Each detector sees the region's text piece by piece and answers with the region's end once it
is known, FAIL when the text cannot be a call, or None while it needs more. None of them looks
back at text it was already fed, so a region costs time linear in its length.
"""

from __future__ import annotations

from .base import Marker
from .lenient import OPENERS, BracketTracker

FAIL = -1


class TagFinder:
    """The first closer after the marker, looking only at newly fed text."""

    def __init__(self, closers: tuple[tuple[str, bool], ...], skip: int) -> None:
        self.closers = closers
        self.next_from = skip
        self.length = 0
        self.tail = ""
        self.keep = max(len(closer) for closer, _ in closers) - 1

    def feed(self, piece: str) -> int | None:
        base = self.length - len(self.tail)
        window = self.tail + piece
        self.length += len(piece)
        start = max(self.next_from - base, 0)
        best: tuple[int, str, bool] | None = None
        for closer, consume in self.closers:
            pos = window.find(closer, start)
            if pos >= 0 and (best is None or pos < best[0]):
                best = (pos, closer, consume)
        if best is not None:
            pos, closer, consume = best
            return base + pos + (len(closer) if consume else 0)
        self.tail = window[-self.keep :] if self.keep else ""
        return None

    def finish(self) -> int:
        return self.length


class FenceFinder:
    """The `needed`-th run of three backticks after the marker, outside quoted strings (a value
    may itself contain a fence)."""

    def __init__(self, skip: int, needed: int) -> None:
        self.tracker = BracketTracker()
        self.skip = skip
        self.needed = needed
        self.seen = 0
        self.ticks = 0
        self.length = 0

    def feed(self, piece: str) -> int | None:
        tracker = self.tracker
        for offset in range(max(self.skip - self.length, 0), len(piece)):
            char = piece[offset]
            if char == "`" and not tracker.quote:
                self.ticks += 1
                if self.ticks == 3:
                    self.ticks = 0
                    self.seen += 1
                    if self.seen >= self.needed:
                        return self.length + offset + 1
                continue
            self.ticks = 0
            tracker.feed(char)
        self.length += len(piece)
        return None

    def finish(self) -> int:
        return self.length


class BracketFinder:
    """Where the bracket that ends the marker closes (for `functools[`), or the first bracket
    after the marker when the marker does not end with one (`get_weather[ARGS]`)."""

    def __init__(self, skip: int, opened: bool) -> None:
        self.tracker = BracketTracker()
        self.skip = skip
        self.started = opened
        self.length = 0
        self.open_positions: list[int] = []

    def feed(self, piece: str) -> int | None:
        tracker = self.tracker
        for offset in range(max(self.skip - self.length, 0), len(piece)):
            char = piece[offset]
            if not self.started:
                if char.isspace():
                    continue
                if char not in OPENERS:
                    return FAIL
                self.started = True
            depth = len(tracker.stack)
            if not tracker.feed(char):
                return FAIL
            if len(tracker.stack) > depth:
                self.open_positions.append(self.length + offset)
            elif len(tracker.stack) < depth:
                self.open_positions.pop()
            if not tracker.stack and not tracker.quote:
                return self.length + offset + 1
        self.length += len(piece)
        return None

    def finish(self) -> int:
        return self.length


Finder = TagFinder | FenceFinder | BracketFinder


def finder_for(marker: Marker) -> Finder | None:
    """The end detector of a marked region; None for a region that runs to the end."""
    own = ((marker.text, False),)
    if marker.kind == "tag":
        closers = marker.closers if (marker.text, False) in marker.closers else marker.closers + own
        return TagFinder(closers, len(marker.text))
    if marker.kind == "fence":
        return FenceFinder(len(marker.text), 1 if "```" in marker.text else 2)
    if marker.kind == "bracket":
        opened = marker.text[-1:] in OPENERS
        return BracketFinder(len(marker.text) - 1 if opened else len(marker.text), opened)
    return TagFinder(own, len(marker.text))  # "rest": to the end, or to the marker's next use
