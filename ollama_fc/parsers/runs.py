"""Runs of markerless calls: bare JSON, bare pythonic calls, fenced blocks, one after another.

A shape with no marker of its own (`{"name": ...}`, `[f(x=1)]`, `get_weather(city="Paris")`, a
```` ```json ```` block) counts as a call only as the last thing a model prints: a run of such
items, separated by whitespace, `,` or `;` (and closed by tokens like `<|eom_id|>`), with only
whitespace after it. Each item is read once, as soon as it closes: an item that is not a call
ends the run there (everything up to it is content), so citations `[1], [2]` or a long list of
`[x]` cost one read each, and the run never holds more than the calls it may still return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .base import ParsedCall, ToolCallParser
from .lenient import OPENERS
from .regions import FAIL, BracketFinder, FenceFinder

# An unclosed last item is read (the model forgot a closing bracket) only when this few are
# missing; more is a text cut off, or prose with an opening bracket.
MAX_UNCLOSED = 4
SEPARATORS = frozenset(" \t\r\n,;")


@dataclass(frozen=True)
class Head:
    """What starts an item: `{`, `[`, `get_weather(`, ```` ```json ````, and who reads it."""

    text: str
    parsers: tuple[ToolCallParser, ...]
    fence: bool


@dataclass
class Outcome:
    """How a run ended: calls and content to emit, where to scan again (an offset into the run's
    text, or None when it consumed everything), and opening brackets that cannot start a call."""

    pieces: list[str | list[ParsedCall]]
    rescan_from: int | None
    dead: list[int] = field(default_factory=list)


ReadItem = Callable[[Head, str], "list[ParsedCall] | None"]


class Run:
    """The run that starts at a head; fed new text only, it reports an Outcome once resolved."""

    def __init__(
        self,
        heads: dict[str, Head],
        head_prefixes: frozenset[str],
        end_tokens: tuple[str, ...],
        read_item: ReadItem,
        is_dead: Callable[[int], bool],
        start: int,
    ) -> None:
        self.heads = heads
        self.head_prefixes = head_prefixes
        self.end_tokens = end_tokens
        self.read_item = read_item
        self.is_dead = is_dead
        self.start = start
        self.pieces: list[str] = []
        self.length = 0
        self.calls: list[ParsedCall] = []
        self.calls_end = 0  # run offset after the last item that was a call
        self.pending = ""  # text that may still become a head or an end token
        self.pending_at = 0
        self.item: Head | None = None
        self.item_at = 0
        self.item_pieces: list[str] = []
        self.item_length = 0
        self.finder: BracketFinder | FenceFinder | None = None

    def text(self) -> str:
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""

    def feed(self, piece: str) -> Outcome | None:
        offset = 0
        base = self.length
        self.pieces.append(piece)
        self.length += len(piece)
        while offset < len(piece):
            if self.finder is not None:
                rest = piece[offset:]
                self.item_pieces.append(rest)
                fed_before = self.item_length
                self.item_length += len(rest)
                end = self.finder.feed(rest)
                if end is None:
                    return None
                if end == FAIL:
                    return self._item_failed()
                consumed = end - fed_before
                self.item_pieces[-1] = rest[:consumed]
                offset += consumed
                outcome = self._item_closed(base + offset)
                if outcome is not None:
                    return outcome
                continue
            char = piece[offset]
            candidate = self.pending + char
            if not self.pending:
                self.pending_at = base + offset
            if candidate in self.heads:
                head = self.heads[candidate]
                opener_at = self.pending_at + len(candidate) - 1
                if candidate in ("{", "[") and self.is_dead(self.start + opener_at):
                    return self._trailing_failed()
                self.pending = ""
                self._open_item(head, candidate)
            elif candidate in self.end_tokens:
                self.pending = ""
            elif candidate in self.head_prefixes:
                self.pending = candidate
            elif not self.pending and char in SEPARATORS:
                pass
            else:
                return self._trailing_failed()
            offset += 1
        return None

    def finish(self) -> Outcome:
        if self.finder is not None:
            item = "".join(self.item_pieces)
            depth = len(self.finder.tracker.stack) if isinstance(self.finder, BracketFinder) else 0
            calls = self.read_item(self.item, item) if depth <= MAX_UNCLOSED else None  # type: ignore[arg-type]
            if calls:
                return Outcome([[*self.calls, *calls]], None)
            return self._item_failed()
        if self.pending:
            return self._trailing_failed()
        trailer = self.text()[self.calls_end :]
        for token in self.end_tokens:
            trailer = trailer.replace(token, "")
        return Outcome([self.calls, trailer], None)

    def _open_item(self, head: Head, text: str) -> None:
        self.item = head
        self.item_at = self.pending_at
        self.item_pieces = [text]
        self.item_length = len(text)
        if head.fence:
            self.finder = FenceFinder(len(text), 1)
        else:
            opened = text[-1] in OPENERS  # `get_weather(` opens; `get_weather[ARGS]` opens after
            self.finder = BracketFinder(len(text) - 1 if opened else len(text), opened)
        self.finder.feed(text)

    def _item_closed(self, end: int) -> Outcome | None:
        """An item closed at run offset `end`: a call extends the run, anything else ends it."""
        assert self.item is not None
        calls = self.read_item(self.item, "".join(self.item_pieces))
        self.finder = None
        self.item_pieces = []
        self.item_length = 0
        if calls:
            self.calls.extend(calls)
            self.calls_end = end
            return None
        return Outcome([self.text()[:end]], end)

    def _item_failed(self) -> Outcome:
        """The item cannot be a call: the run before it is content, scanning resumes inside it."""
        dead: list[int] = []
        if isinstance(self.finder, BracketFinder):
            dead = [self.start + self.item_at + position for position in self.finder.open_positions]
        self.finder = None
        return Outcome([self.text()[: self.item_at + 1]], self.item_at + 1, dead)

    def _trailing_failed(self) -> Outcome:
        """Something other than a call follows the run: all of it is content."""
        if not self.calls:  # (only if the scanner started a run on something not a head)
            return Outcome([self.text()[:1]], 1)
        return Outcome([self.text()[: self.calls_end]], self.calls_end)
