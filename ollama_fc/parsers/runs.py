"""Runs of markerless calls: bare JSON, bare pythonic calls, fenced blocks, one after another.

A shape with no marker of its own (`{"name": ...}`, `[f(x=1)]`, `get_weather(city="Paris")`, a
```` ```json ```` block) counts as a call only as the last thing a model prints: a run of such
items, separated by whitespace, `,` or `;` (and closed by tokens like `<|eom_id|>`), with only
whitespace after it. So nothing is read while the run goes on: when prose follows, the whole
run is content at once; at the end of the output its items are read from the last one back, and
the calls are the items after the last one that is not a call. Citations `[1], [2]` or a long
line of `[x]` therefore cost one pass over their brackets and no reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .base import ParsedCall, ToolCallParser
from .lenient import OPENERS
from .regions import FAIL, BracketFinder, FenceFinder, Span
from .scan_memo import ScanMemo

SEPARATORS = frozenset(" \t\r\n,;")


@dataclass(frozen=True)
class Head:
    """What starts an item: `{`, `[`, `get_weather(`, ```` ```json ````, and who reads it."""

    text: str
    parsers: tuple[ToolCallParser, ...]
    fence: bool


@dataclass
class Outcome:
    """How a run ended: calls and content to emit, where to scan again (a run position, or None
    when it took everything), and opening brackets that cannot start a call."""

    pieces: list[str | list[ParsedCall]]
    rescan_from: int | None
    dead: list[int] = field(default_factory=list)
    unclosed_fence_at: int | None = None  # a fence that found no closer before the end


ReadItem = Callable[[Head, str, "int | None"], "list[ParsedCall] | None"]
"""Reads one item: its head, its text, and where that text starts in the output when it runs to
the output's end (an unclosed item), else None."""


class Run:
    """The run that starts at a head; fed new text only, it reports an Outcome once resolved."""

    def __init__(
        self,
        heads: dict[str, Head],
        head_prefixes: frozenset[str],
        end_tokens: tuple[str, ...],
        is_dead: Callable[[str, int], bool],
        start: int,
        memo: ScanMemo | None = None,
    ) -> None:
        self.heads = heads
        self.memo = memo
        self.head_prefixes = head_prefixes
        self.end_tokens = end_tokens
        self.is_dead = is_dead
        self.start = start
        self.span = Span()
        self.length = 0
        self.items: list[tuple[Head, int, int]] = []  # (head, start, end) of each closed item
        self.pending = ""  # text that may still become a head or an end token
        self.pending_at = 0
        self.item: Head | None = None
        self.item_at = 0
        self.finder: BracketFinder | FenceFinder | None = None

    def feed(self, data: str, index: int) -> Outcome | None:
        """Take `data[index:]`; an Outcome once the run is resolved, else None."""
        base = self.length - index  # run position of data[0]
        self.span.attach(data, index)
        self.length += len(data) - index
        position = index
        while position < len(data):
            if self.finder is not None:
                end = self.finder.feed(data, position)
                if end is None:
                    return None
                if end == FAIL:
                    return self._item_failed()
                assert self.item is not None
                self.items.append((self.item, self.item_at, self.item_at + end))
                self.finder = None
                position = self.item_at + end - base
                continue
            char = data[position]
            candidate = self.pending + char
            if not self.pending:
                self.pending_at = base + position
            if candidate in self.heads:
                if self.is_dead(candidate, self.start + self.pending_at):
                    return self._trailing_failed()
                self.pending = ""
                self._open_item(self.heads[candidate], candidate)
            elif candidate in self.end_tokens:
                self.pending = ""
            elif candidate in self.head_prefixes:
                self.pending = candidate
            elif not self.pending and char in SEPARATORS:
                pass
            else:
                return self._trailing_failed()
            position += 1
        return None

    def finish(self, read_item: ReadItem) -> Outcome:
        """The end of the output: the items after the last one that is not a call are calls."""
        text = self.span.slice(0)
        unclosed: list[ParsedCall] | None = []
        if self.finder is not None:
            assert self.item is not None
            readable = not isinstance(self.finder, BracketFinder) or self.finder.readable_unclosed()
            unclosed = read_item(self.item, text[self.item_at :], self.start + self.item_at) if readable else None
            if unclosed and not all(call.arguments for call in unclosed):
                unclosed = None  # cut off after a name, before its arguments: a cut, not a call
            if not unclosed:
                if isinstance(self.finder, BracketFinder):
                    self.finder.keep_scan()
                return self._item_failed()
        elif self.pending:
            return self._trailing_failed()
        backwards: list[list[ParsedCall]] = [unclosed] if unclosed else []
        first = len(self.items)
        while first > 0:
            head, start, end = self.items[first - 1]
            found = read_item(head, text[start:end], None)
            if not found:
                break
            backwards.append(found)
            first -= 1
        calls = [call for found in reversed(backwards) for call in found]
        if first == len(self.items) and not unclosed:
            return Outcome([text], None)  # no call at the end: all of it is content
        before = text[: self.items[first][1]] if first < len(self.items) else text[: self.item_at]
        trailer = "" if unclosed else text[self.items[-1][2] :]
        for token in self.end_tokens:
            trailer = trailer.replace(token, "")
        return Outcome([before, calls, trailer], None)

    def _open_item(self, head: Head, text: str) -> None:
        self.item = head
        self.item_at = self.pending_at
        if head.fence:
            self.finder = FenceFinder(len(text))
            self.finder.passed(text)
        else:
            opened = text[-1] in OPENERS  # `get_weather(` opens; `get_weather[ARGS]` opens after
            skip = len(text) - 1 if opened else len(text)
            self.finder = BracketFinder(skip, opened, self.memo, self.start + self.item_at)
            self.finder.feed(text, 0)

    def _item_failed(self) -> Outcome:
        """The open item cannot be a call: the run before it is content (it is not at the end),
        and scanning resumes inside the item; its brackets still open cannot start a call."""
        dead: list[int] = []
        fence_at = None
        if isinstance(self.finder, BracketFinder):
            dead = [self.start + self.item_at + position for position in self.finder.open_positions]
        elif self.finder is not None:
            fence_at = self.start + self.item_at
        self.finder = None
        return Outcome([self.span.slice(0, self.item_at + 1)], self.item_at + 1, dead, fence_at)

    def _trailing_failed(self) -> Outcome:
        """Something other than a call follows the run: all of it is content."""
        end = self.items[-1][2] if self.items else 1
        return Outcome([self.span.slice(0, end)], end)
