"""Where a call region ends: one small detector per region kind, fed only new text.

Each detector is given the text as `(data, index)`: the new text is `data[index:]`, never a
copy. It answers with the region's end (a position counted from the region's start) once it is
known, FAIL when the text cannot be a call, or None while it needs more. None of them looks
back at text it was already fed, so a region costs time linear in its length.
"""

from __future__ import annotations

from .base import Marker
from .lenient import OPENERS, SCAN_FAILED, BracketTracker

FAIL = SCAN_FAILED
FENCE = "```"


class TagFinder:
    """The first closer after the marker (a fence's closing backticks are one, too)."""

    def __init__(self, closers: tuple[tuple[str, bool], ...], skip: int) -> None:
        self.closers = closers
        self.skip = skip
        self.length = 0
        self.tail = ""
        self.keep = max(len(closer) for closer, _ in closers) - 1

    def feed(self, data: str, index: int) -> int | None:
        offset = self.length
        best: tuple[int, int] | None = None  # (region position of the closer, its end)
        if self.tail:  # a closer that began in the previous piece
            window = self.tail + data[index : index + self.keep]
            origin = offset - len(self.tail)
            for closer, consume in self.closers:
                pos = window.find(closer, max(self.skip - origin, 0))
                if 0 <= pos < len(self.tail) and (best is None or origin + pos < best[0]):
                    best = (origin + pos, origin + pos + (len(closer) if consume else 0))
        if best is None:
            start = index + max(self.skip - offset, 0)
            for closer, consume in self.closers:
                pos = data.find(closer, start)
                if pos >= 0 and (best is None or offset + pos - index < best[0]):
                    best = (offset + pos - index, offset + pos - index + (len(closer) if consume else 0))
        if best is not None:
            return best[1]
        self.length += len(data) - index
        if self.keep:
            self.tail = (self.tail + data[max(index, len(data) - self.keep) :])[-self.keep :]
        return None

    def finish(self) -> int:
        return self.length


def _closes_fence(text: str, position: int, before: str) -> bool | None:
    """Whether the backticks at `position` close a fence: they start a line, or only spaces
    follow them on theirs (so a fence quoted inside a value does not). None: the text ends first."""
    if before == "\n":
        return True
    after = position + 3
    while after < len(text) and text[after] in " \t":
        after += 1
    if after >= len(text):
        return None
    return text[after] in "\r\n"


def closing_fence(text: str, start: int) -> int:
    """The end of the fence that closes a block whose body starts at `start`, else len(text)."""
    position = text.find(FENCE, start)
    while position >= 0:
        if _closes_fence(text, position, text[position - 1] if position > 0 else "") is not False:
            return position + 3
        position = text.find(FENCE, position + 1)
    return len(text)


class FenceFinder:
    """The closing fence of a fenced block (see `_closes_fence`), looking only at new text. The
    block also ends (before it) where its own opening marker appears again."""

    def __init__(self, skip: int, own: str = "") -> None:
        self.skip = skip
        self.own = own
        self.length = 0
        self.pending = ""  # the end of the text seen so far that may still hold a closer
        self.before = ""  # the character just before `pending`

    def feed(self, data: str, index: int) -> int | None:
        window = self.pending + data[index:]
        origin = self.length - len(self.pending)
        self.length += len(data) - index
        position = window.find(FENCE, max(self.skip - origin, 0))
        while position >= 0:
            closes = _closes_fence(window, position, window[position - 1] if position > 0 else self.before)
            if closes:
                return origin + position + 3
            if self.own and window.startswith(self.own, position):
                return origin + position
            if closes is None:
                self.before = window[position - 1] if position > 0 else self.before
                self.pending = window[position:]
                return None
            position = window.find(FENCE, position + 1)
        keep = min(2, len(window))
        if len(window) > keep:
            self.before = window[len(window) - keep - 1]
        self.pending = window[len(window) - keep :]
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

    def feed(self, data: str, index: int) -> int | None:
        offset = self.length
        position = index + max(self.skip - offset, 0)
        if not self.started:
            while position < len(data) and data[position].isspace():
                position += 1
            if position < len(data):
                if data[position] not in OPENERS:
                    return FAIL
                self.started = True
        self.length += len(data) - index
        if position >= len(data):
            return None
        return self.tracker.scan(data, position, offset + position - index)

    @property
    def open_positions(self) -> list[int]:
        return self.tracker.opens

    def finish(self) -> int:
        return self.length


Finder = TagFinder | FenceFinder | BracketFinder


def finder_for(marker: Marker) -> Finder:
    """The end detector of a marked region. Every region also ends where its own marker appears
    again, so a marker repeated many times never makes regions that span each other."""
    own = (marker.text, False)
    if marker.kind == "tag":
        closers = marker.closers if own in marker.closers else (*marker.closers, own)
        return TagFinder(closers, len(marker.text))
    if marker.kind == "fence":
        return FenceFinder(len(marker.text), marker.text)
    if marker.kind == "bracket":
        opened = marker.text[-1:] in OPENERS
        return BracketFinder(len(marker.text) - 1 if opened else len(marker.text), opened)
    return TagFinder((own,), len(marker.text))  # "rest": to the end, or to the marker's next use


class Span:
    """The text of a region or run from its start: parts of earlier chunks, then the current
    data from an index on. Nothing is copied until a slice of it is asked for."""

    __slots__ = ("begin", "data", "parts", "prior")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.prior = ""
        self.data = ""
        self.begin = 0

    def attach(self, data: str, index: int) -> None:
        """The text goes on in `data` from `index` (ignored when `data` is already attached)."""
        if not self.data:
            self.data, self.begin = data, index

    def spill(self) -> None:
        """The current data is about to be replaced by the next chunk: keep our part of it."""
        if self.data:
            self.parts.append(self.data[self.begin :])
            self.data, self.begin = "", 0

    def __len__(self) -> int:
        return len(self.prior) + sum(map(len, self.parts)) + len(self.data) - self.begin

    def slice(self, start: int, end: int | None = None) -> str:
        if self.parts:
            self.prior += "".join(self.parts)
            self.parts = []
        known = len(self.prior)
        stop = len(self) if end is None else end
        if start >= known:
            return self.data[self.begin + start - known : self.begin + stop - known]
        if stop <= known:
            return self.prior[start:stop]
        return self.prior[start:] + self.data[self.begin : self.begin + stop - known]
