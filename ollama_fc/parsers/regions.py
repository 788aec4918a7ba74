"""Where a call region ends: one small detector per region kind, fed only new text.

Each detector is given the text as `(data, index)`: the new text is `data[index:]`, never a
copy. It answers with the region's end (a position counted from the region's start) once it is
known, FAIL when the text cannot be a call, or None while it needs more. None of them looks
back at text it was already fed, so a region costs time linear in its length.
"""

from __future__ import annotations

import functools
import re

from .base import Marker
from .lenient import OPENERS, SCAN_FAILED, BracketTracker
from .scan_memo import ScanMemo

FAIL = SCAN_FAILED
# An unclosed bracket region is read (the model forgot a closing bracket) only when this few are
# missing; more is a text cut off, or prose with an opening bracket.
MAX_UNCLOSED = 4
FENCE = "```"


@functools.lru_cache(maxsize=256)
def _closer_pattern(closers: tuple[tuple[str, bool], ...]) -> re.Pattern[str]:
    """One pattern for all closers: a single pass finds the first of them (searching for each in
    turn would scan to the end of the text for every closer that never comes)."""
    texts = sorted({closer for closer, _ in closers}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, texts)))


class TagFinder:
    """The first closer after the marker."""

    def __init__(self, closers: tuple[tuple[str, bool], ...], skip: int) -> None:
        self.pattern = _closer_pattern(closers)
        self.consumed = {closer for closer, consume in closers if consume}
        self.skip = skip
        self.length = 0
        self.tail = ""
        self.keep = max(len(closer) for closer, _ in closers) - 1

    def feed(self, data: str, index: int) -> int | None:
        offset = self.length
        if self.tail:  # a closer that began in the previous piece
            window = self.tail + data[index : index + self.keep]
            origin = offset - len(self.tail)
            found = self.pattern.search(window, max(self.skip - origin, 0))
            if found is not None and found.start() < len(self.tail):
                return self._end(origin + found.start(), found.group())
        found = self.pattern.search(data, index + max(self.skip - offset, 0))
        if found is not None:
            return self._end(offset + found.start() - index, found.group())
        self.length += len(data) - index
        if self.keep:
            self.tail = (self.tail + data[max(index, len(data) - self.keep) :])[-self.keep :]
        return None

    def _end(self, position: int, closer: str) -> int:
        return position + (len(closer) if closer in self.consumed else 0)

    def finish(self) -> int:
        return self.length


class QuotedTagFinder:
    """The first closer after the marker that is not inside a quoted string, for formats whose
    values may hold the format's own tags (a learned JSON format's `"</tool_call>"` string)."""

    def __init__(self, closers: tuple[tuple[str, bool], ...], skip: int) -> None:
        self.closers = closers
        self.tracker = BracketTracker()
        self.skip = skip
        self.length = 0
        self.tail = ""  # unquoted text at the end of what was seen: a closer never spans a string
        self.keep = max(len(closer) for closer, _ in closers)

    def feed(self, data: str, index: int) -> int | None:
        tracker = self.tracker
        offset = self.length - index
        for position in range(index + max(self.skip - self.length, 0), len(data)):
            char = data[position]
            if not tracker.quote:
                self.tail = (self.tail + char)[-self.keep :]
                for closer, consume in self.closers:
                    if self.tail.endswith(closer):
                        end = offset + position + 1
                        return end if consume else end - len(closer)
            tracker.feed(char)
            if tracker.quote:
                self.tail = ""
        self.length += len(data) - index
        return None

    def finish(self) -> int:
        return self.length


class RestFinder:
    """A region that runs to the end of the output."""

    def __init__(self) -> None:
        self.length = 0

    def feed(self, data: str, index: int) -> int | None:
        self.length += len(data) - index
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
    """The closing fence of a fenced block (see `_closes_fence`), looking only at new text."""

    def __init__(self, skip: int) -> None:
        self.skip = skip
        self.length = 0
        self.pending = ""  # the end of the text seen so far that may still start a closer
        self.before = ""  # the character just before the text being searched

    def passed(self, marker: str) -> None:
        """The marker was seen elsewhere: count it without searching it."""
        self.length += len(marker)
        self.before = marker[-1:]

    def feed(self, data: str, index: int) -> int | None:
        offset = self.length
        self.length += len(data) - index
        if self.pending:  # (a short tail of the previous piece: only then is a string built)
            window, first = self.pending + data[index:], 0
            origin = offset - len(self.pending)
        else:
            window, first = data, index
            origin = offset - index  # region position of window[0]
        position = window.find(FENCE, max(first, self.skip - origin))
        while position >= 0:
            before = window[position - 1] if position > first else self.before
            closes = _closes_fence(window, position, before)
            if closes:
                return origin + position + 3
            if closes is None:
                self.before = before
                self.pending = window[position:]
                return None
            position = window.find(FENCE, position + 1)
        keep = min(2, len(window) - first)
        if len(window) - keep - 1 >= first:
            self.before = window[len(window) - keep - 1]
        self.pending = window[len(window) - keep :]
        return None

    def finish(self) -> int:
        return self.length


class BracketFinder:
    """Where the bracket that ends the marker closes (for `functools[`), or the first bracket
    after the marker when the marker does not end with one (`get_weather[ARGS]`)."""

    def __init__(self, skip: int, opened: bool, memo: ScanMemo | None = None, origin: int = 0) -> None:
        self.tracker = BracketTracker(memo, origin)
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

    def readable_unclosed(self) -> bool:
        """Whether the output, ending inside this scan, may be read as a call missing its closers."""
        return self.tracker.depth <= MAX_UNCLOSED

    def keep_scan(self) -> None:
        """The output ended with this scan unclosed: keep it in the memo for later scans."""
        tracker = self.tracker
        if tracker.memo is not None and tracker.record is not None:
            tracker.memo.keep(tracker.record, tracker.origin + self.length, tracker.quote, tracker.last)

    def finish(self) -> int:
        return self.length


Finder = TagFinder | QuotedTagFinder | RestFinder | FenceFinder | BracketFinder


def finder_for(marker: Marker, memo: ScanMemo | None = None, origin: int = 0) -> Finder:
    """The end detector of a marked region (at stream offset `origin`). Every region also ends
    where its own marker appears again, so a marker repeated many times never makes regions that
    span each other."""
    own = (marker.text, False)
    if marker.kind == "tag":
        closers = marker.closers if own in marker.closers or not marker.ends_at_own_marker else (*marker.closers, own)
        if marker.quoted:
            return QuotedTagFinder(closers, len(marker.text))
        return TagFinder(closers, len(marker.text))
    if marker.kind == "fence":
        return FenceFinder(len(marker.text))
    if marker.kind == "bracket":
        opened = marker.text[-1:] in OPENERS
        return BracketFinder(len(marker.text) - 1 if opened else len(marker.text), opened, memo, origin)
    if not marker.ends_at_own_marker:
        return RestFinder()  # "rest": to the end of the output
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
