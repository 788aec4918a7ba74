"""The scanner that finds call regions, for a stream and for a whole text alike.

Content passes through until a marker of an active format begins. From there the text is held
until the region is complete (it becomes a chunk of tool calls) or turns out not to be a call
(it is released as content and scanned again one character further on). A marker split across
chunks is held back as a possible prefix. Text inside `<think>...</think>` is never a call.

Work per chunk depends on the chunk (and the open region's end detector), never on what was
already streamed: the scan position is kept, the open region is fed only the new text, and
its pieces are joined once, when it is resolved. A whole text is simply one chunk followed by
`finish()`, so streaming and whole-text parsing cannot disagree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from .base import Marker, ParsedCall, ParseResult, ToolCallParser, ToolsArg, offered_names
from .lenient import BracketTracker

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

Piece = Union[str, list[ParsedCall]]
"""What the scanner emits: content text, or the calls of one region."""

_FAIL = -1


@dataclass(frozen=True)
class _Trigger:
    marker: Marker
    parsers: tuple[ToolCallParser, ...]


class _TagFinder:
    """Finds the first closer after the marker, looking only at newly fed text."""

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


class _QuotedTagFinder:
    """Finds the first closer after the marker that is not inside a quoted string."""

    def __init__(self, closers: tuple[tuple[str, bool], ...], skip: int) -> None:
        self.closers = closers
        self.tracker = BracketTracker()
        self.skip = skip
        self.length = 0
        self.tail = ""
        self.keep = max(len(closer) for closer, _ in closers)

    def feed(self, piece: str) -> int | None:
        tracker = self.tracker
        for offset in range(max(self.skip - self.length, 0), len(piece)):
            char = piece[offset]
            if not tracker.quote:
                self.tail = (self.tail + char)[-self.keep :]
                for closer, consume in self.closers:
                    if self.tail.endswith(closer):
                        end = self.length + offset + 1
                        return end if consume else end - len(closer)
            tracker.feed(char)
            if tracker.quote:
                self.tail = ""  # a closer never spans a string
        self.length += len(piece)
        return None

    def finish(self) -> int:
        return self.length


class _FenceFinder:
    """Finds the `needed`-th run of three backticks after the marker, outside quoted strings
    (a value may itself contain a fence)."""

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


class _BracketFinder:
    """Finds where the bracket at the end of the marker closes; with `must_end`, also follows a
    run of further values and fails on any other text after them."""

    def __init__(self, skip: int, must_end: bool) -> None:
        self.tracker = BracketTracker()
        self.skip = skip
        self.must_end = must_end
        self.length = 0
        self.closed_at = 0
        self.first_closed_at = 0
        self.trailing = False
        self.open_positions: list[int] = []

    def feed(self, piece: str) -> int | None:
        tracker = self.tracker
        for offset in range(max(self.skip - self.length, 0), len(piece)):
            char = piece[offset]
            if self.trailing:
                if char.isspace() or char in ";,":
                    continue
                if char not in "{[":
                    return _FAIL
                self.trailing = False
            depth = len(tracker.stack)
            if not tracker.feed(char):
                return _FAIL
            if len(tracker.stack) > depth:
                self.open_positions.append(self.length + offset)
            elif len(tracker.stack) < depth:
                self.open_positions.pop()
            if not tracker.stack and not tracker.quote:
                end = self.length + offset + 1
                if not self.must_end:
                    return end
                self.closed_at = end
                self.first_closed_at = self.first_closed_at or end
                self.trailing = True
        self.length += len(piece)
        return None

    def finish(self) -> int:
        return self.closed_at if self.trailing else self.length


class _Region:
    """A held stretch of text that may be a call, from its marker on."""

    def __init__(self, trigger: _Trigger, start: int) -> None:
        self.trigger = trigger
        self.start = start
        marker = trigger.marker
        self.pieces: list[str] = []
        self.finder: _TagFinder | _QuotedTagFinder | _FenceFinder | _BracketFinder | None
        if marker.kind == "tag" and marker.quoted:
            self.finder = _QuotedTagFinder(marker.closers, len(marker.text))
        elif marker.kind == "tag":
            self.finder = _TagFinder(marker.closers, len(marker.text))
        elif marker.kind == "fence":
            self.finder = _FenceFinder(len(marker.text), 1 if "```" in marker.text else 2)
        elif marker.kind == "bracket":
            self.finder = _BracketFinder(len(marker.text) - 1, marker.must_end)
        else:
            self.finder = None
        self.end: int | None = None

    def feed(self, piece: str) -> int | None:
        """The region's end once known, _FAIL if it cannot be a call, else None (need more)."""
        self.pieces.append(piece)
        if self.end is None:
            if self.finder is None:
                return None
            end = self.finder.feed(piece)
            if end is None or end == _FAIL:
                return end
            self.end = end
            if not self.trigger.marker.must_end or self.trigger.marker.kind == "bracket":
                return end
            after = self.text()[end:]
        else:
            after = piece
        # A marked region that must end the output: only whitespace may follow it.
        return _FAIL if after.strip() else None

    def finish(self) -> int:
        if self.end is not None:
            return self.end
        return self.finder.finish() if self.finder is not None else len(self.text())

    def text(self) -> str:
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""


@functools.lru_cache(maxsize=64)
def _scanner_tables(
    parsers: tuple[ToolCallParser, ...],
) -> tuple[dict[str, _Trigger], re.Pattern[str], frozenset[str], int]:
    """The markers of `parsers`: their triggers, one pattern finding any of them (or `<think>`),
    every proper prefix of one, and the longest one's length. Built once per set of parsers."""
    triggers: dict[str, _Trigger] = {}
    for parser in parsers:
        for marker in parser.markers:
            known = triggers.get(marker.text)
            owners = (known.parsers if known else ()) + (parser,)
            triggers[marker.text] = _Trigger(known.marker if known else marker, owners)
    texts = sorted([*triggers, THINK_OPEN], key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, texts)))
    prefixes = frozenset(text[:k] for text in texts for k in range(1, len(text)))
    return triggers, pattern, prefixes, max(map(len, texts))


class StreamingRecoverer:
    """Feed model text chunk by chunk; get back content text and recovered calls in order."""

    def __init__(self, parsers: Sequence[ToolCallParser], tools: ToolsArg = None) -> None:
        self._names = offered_names(tools)
        self._triggers, self._pattern, self._prefixes, self._longest = _scanner_tables(tuple(parsers))
        self._held = ""
        self._base = 0  # stream offset of the text being scanned
        self._dead_before = 0
        self._dead: set[int] = set()
        self._in_think = False
        self._region: _Region | None = None
        self._out: list[Piece] = []

    def feed(self, chunk: str) -> list[Piece]:
        """Consume one chunk; return what can be released now."""
        self._process(chunk, final=False)
        return self._drain()

    def finish(self) -> list[Piece]:
        """End of output: resolve whatever is still held."""
        self._process("", final=True)
        return self._drain()

    def _drain(self) -> list[Piece]:
        out, self._out = self._out, []
        return out

    def _emit(self, piece: Piece) -> None:
        if isinstance(piece, str):
            if not piece:
                return
            if self._out and isinstance(self._out[-1], str):
                self._out[-1] += piece
                return
        self._out.append(piece)

    def _process(self, data: str, final: bool) -> None:
        if self._region is None:
            self._base -= len(self._held)
            data, self._held = self._held + data, ""
        index = 0
        while True:
            region = self._region
            if region is not None:
                end = region.feed(data[index:]) if index < len(data) else None
                if end is None:
                    if not final:
                        return
                    end = region.finish()
                data, index = self._resolve(region, end), 0
                continue
            if self._in_think:
                close = data.find(THINK_CLOSE, index)
                if close < 0:
                    keep = 0 if final else self._partial_tail(data, index, (THINK_CLOSE,))
                    self._hold(data, index, keep)
                    return
                self._emit(data[index : close + len(THINK_CLOSE)])
                index = close + len(THINK_CLOSE)
                self._in_think = False
                continue
            match = self._pattern.search(data, index)
            if match is None:
                keep = 0 if final else self._partial_tail(data, index, None)
                self._hold(data, index, keep)
                return
            start = match.start()
            if not final and len(data) - start < self._longest and data[start:] in self._prefixes:
                self._hold(data, index, len(data) - start)
                return
            if match.group() in ("{", "[") and self._is_dead(self._base + start):
                self._emit(data[index : start + 1])
                index = start + 1
                continue
            self._emit(data[index:start])
            if match.group() == THINK_OPEN:
                self._emit(THINK_OPEN)
                self._in_think = True
                index = match.end()
                continue
            self._region = _Region(self._triggers[match.group()], self._base + start)
            index = start

    def _resolve(self, region: _Region, end: int) -> str:
        """Emit the region's calls, or its first character as content; return the text to scan next."""
        self._region = None
        text = region.text()
        if end != _FAIL:
            calls = self._read(region.trigger, text[:end])
            if calls is not None:
                self._emit(calls)
                self._base = region.start + end
                return text[end:]
        finder = region.finder
        if isinstance(finder, _BracketFinder) and finder.must_end:
            # A bracket inside a value that closed is followed by that value's closer, and a
            # bracket this region left open stays open: neither can start a call, so the
            # rescan skips them instead of trying each again (quadratic on deep nesting).
            self._dead_before = max(self._dead_before, region.start + finder.first_closed_at)
            if not finder.first_closed_at:
                self._dead.update(region.start + position for position in finder.open_positions)
        self._emit(text[:1])
        self._base = region.start + 1
        return text[1:]

    def _is_dead(self, position: int) -> bool:
        return position < self._dead_before or position in self._dead

    def _hold(self, data: str, index: int, keep: int) -> None:
        """Release data[index:] except its last `keep` characters, which are held for later."""
        self._emit(data[index : len(data) - keep])
        self._held = data[len(data) - keep :]
        self._base += len(data)

    def _read(self, trigger: _Trigger, region: str) -> list[ParsedCall] | None:
        for parser in trigger.parsers:
            calls = parser.read_region(region)
            if calls and (self._names is None or all(call.name in self._names for call in calls)):
                return calls
        return None

    def _partial_tail(self, data: str, index: int, markers: tuple[str, ...] | None) -> int:
        """Length of the longest end of `data` that could be the start of a marker."""
        for start in range(max(index, len(data) - self._longest + 1), len(data)):
            tail = data[start:]
            if markers is None and tail in self._prefixes:
                return len(data) - start
            if markers is not None and any(marker.startswith(tail) for marker in markers):
                return len(data) - start
        return 0


def recover_text(text: str, parsers: Sequence[ToolCallParser], tools: ToolsArg = None) -> ParseResult:
    """Whole-text recovery: one chunk, then the end of output."""
    recoverer = StreamingRecoverer(parsers, tools)
    pieces = recoverer.feed(text) + recoverer.finish()
    return result_from_pieces(text, pieces)


def result_from_pieces(text: str, pieces: Sequence[Piece]) -> ParseResult:
    """Join scanner output into a ParseResult; the content is tidied only when calls were cut out."""
    calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
    if not calls:
        return ParseResult([], text)
    content = "".join(piece for piece in pieces if isinstance(piece, str))
    return ParseResult(calls, content.strip())
