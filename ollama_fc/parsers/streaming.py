"""The scanner that finds call regions, for a stream and for a whole text alike.

Content passes through until a marker of an active format begins. From there the text is held
until the region is complete (it becomes a chunk of tool calls) or turns out not to be a call
(it is released as content and scanned again one character further on). A marker split across
chunks is held back as a possible prefix. Text inside `<think>...</think>` (or Seed-OSS's and
Hunyuan's thinking blocks) is never a call, but for a marker `in_thinking` whose calls end the
output (Kimi K2 Thinking's), nor is an inline code span that starts with a marker
(`` `<tool_call>...` ``: the syntax shown). What the scanner knows of its parsers is in
`scan_tables`.

Work per chunk depends on the chunk (and the open region's end detector), never on what was
already streamed: the scan position is kept, the open region is fed only the new text, and
its pieces are joined once, when it is resolved. A whole text is simply one chunk followed by
`finish()`, so streaming and whole-text parsing cannot disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Union

from .base import (
    CALL_END_TOKENS,
    ParsedCall,
    ParseResult,
    ToolCallParser,
    ToolsArg,
    commits,
    offered_names,
    reading_for,
    required_arguments,
    shows_placeholder,
)
from .lenient import OPENERS
from .raw_values import Types, holds_raw_text, parameter_types, settle
from .regions import FAIL, BracketFinder, FenceFinder, Finder, Span, finder_for
from .runs import Head, Outcome, Run
from .scan_memo import ScanMemo
from .scan_tables import THINK_BLOCKS, Trigger, scanner_tables

#: how many times the reads of an output's unclosed ends may cover its length (plus a floor for
#: short outputs); see `StreamingRecoverer._within_end_budget`
UNCLOSED_READS_PER_CHAR = 4
UNCLOSED_READS_FLOOR = 32_768
# An inline code span ends before its closing backtick (left to be scanned: it may open a fence,
# "```typescript") or at a blank line.
INLINE_CODE = (re.compile(r"(?=`)|\n\n"), ("`", "\n\n"))

Piece = Union[str, list[ParsedCall]]
"""What the scanner emits: content text, or the calls of one region."""


class _Region:
    """A held stretch of text that may be a call, from its marker on."""

    def __init__(self, trigger: Trigger, start: int, scans: ScanMemo) -> None:
        self.trigger = trigger
        self.start = start
        self.span = Span()
        self.finder: Finder = finder_for(trigger.marker, scans, start)
        self.unclosed = False  # the output ended before the region did

    def feed(self, data: str, index: int) -> int | None:
        """Take `data[index:]`: the region's end once known, FAIL if it cannot be a call, else
        None (need more)."""
        self.span.attach(data, index)
        return self.finder.feed(data, index)

    def finish(self) -> int:
        return self.finder.finish()


@dataclass
class _ThoughtCalls:
    """Calls read inside a thinking block (a marker `in_thinking` ended it), held with the text
    they were read from until the output shows whether they were its last words."""

    resume: tuple[re.Pattern[str], tuple[str, ...]]  # the thinking block's end, to go on with
    held: list[tuple[Piece, str]] = field(default_factory=list)


class StreamingRecoverer:
    """Feed model text chunk by chunk; get back content text and recovered calls in order.

    Text is passed around as (data, index) with offsets, never as copies of what is left, so a
    region that fails and is scanned again costs its own length, not the rest of the text's.
    """

    def __init__(self, parsers: Sequence[ToolCallParser], tools: ToolsArg = None, *, only_calls: bool = False) -> None:
        self._only_calls = only_calls  # stop at the first text that is not a call (`calls_only`)
        self._names = offered_names(tools)
        self._required = required_arguments(tools)
        self._tools = tools
        self._types: Types | None = None  # the schemas' parameter types, read when first needed
        self._parsers = tuple(parsers)
        self._tables = scanner_tables(self._parsers, None if self._names is None else tuple(sorted(self._names)))
        self._held = ""
        self._base = 0  # stream offset of data[0] for the data being scanned
        self._before = ""  # the character just before the text being scanned
        self._dead: set[int] = set()
        self._scans = ScanMemo()  # run items' scans that reached the end of the output
        self._fences_open_from: int | None = None
        self._quiet: tuple[re.Pattern[str], tuple[str, ...]] | None = None  # where never-a-call text ends
        self._after_call = False
        self._end_token_at: int | None = None  # where an end token that is also a marker was left to the scan
        self._region: _Region | None = None
        self._run: Run | None = None
        self._last_names: tuple[int, int] | None = None  # (from, the last start of a name): _names_to_end
        self._end_read = 0  # characters of unclosed ends read so far: _within_end_budget
        self._thought: _ThoughtCalls | None = None  # calls read inside a thinking block, on hold
        self._out: list[Piece] = []
        self._text: list[str] = []

    def feed(self, chunk: str) -> list[Piece]:
        """Consume one chunk; return what can be released now."""
        self._process(chunk, final=False)
        return self._drain()

    def finish(self) -> list[Piece]:
        """End of output: resolve whatever is still held."""
        self._process("", final=True)
        if self._thought is not None:  # calls read inside thinking, with nothing after them
            held, self._thought = self._thought.held, None
            for piece, _ in held:
                self._emit(piece)
        return self._drain()

    def _drain(self) -> list[Piece]:
        self._flush()
        out, self._out = self._out, []
        return out

    def _flush(self) -> None:
        if self._text:
            text = "".join(self._text)
            self._text = []
            if self._out and isinstance(self._out[-1], str):
                self._out[-1] += text
            else:
                self._out.append(text)

    def _emit(self, piece: Piece, raw: str = "") -> None:
        """Release `piece`; while calls read inside thinking are on hold, hold it with `raw`,
        the text it was read from (a string is its own)."""
        if self._thought is not None:
            if piece:
                self._thought.held.append((piece, piece if isinstance(piece, str) else raw))
            return
        if isinstance(piece, str):
            if self._only_calls and piece and not _blank(piece):
                raise _NotOnlyCalls
            if piece:
                self._text.append(piece)
        elif piece:
            self._flush()
            self._out.append(piece)

    def _process(self, data: str, final: bool) -> None:
        if self._region is None and self._run is None:
            self._base -= len(self._held)
            data, self._held = self._held + data, ""
        index = 0
        tables = self._tables
        while True:
            if self._run is not None:
                run = self._run
                outcome = run.feed(data, index) if index < len(data) else None
                if outcome is None:
                    if not final:
                        run.span.spill()
                        self._base += len(data)
                        return
                    outcome = run.finish(self._read_item)
                data, index = self._settle(run, outcome, data)
                continue
            region = self._region
            if region is not None:
                end = region.feed(data, index) if index < len(data) else None
                if end is None:
                    if not final:
                        region.span.spill()
                        self._base += len(data)
                        return
                    end = region.finish()
                    region.unclosed = True
                data, index = self._resolve(region, end, data)
                continue
            if self._quiet is not None:  # inside `<think>` or inline code: never a call
                pattern, closers = self._quiet
                close = pattern.search(data, index)
                if close is None:
                    keep = 0 if final else self._partial_tail(data, index, closers)
                    self._hold(data, index, keep)
                    return
                self._emit(data[index : close.end()])
                index = close.end()
                if not close.group() and self._quiet is not INLINE_CODE:  # an in_thinking marker
                    self._thought = _ThoughtCalls(self._quiet)
                self._quiet = None
                continue
            if self._after_call:
                index = self._skip_end_tokens(data, index, final)
                if index < 0:
                    return
            if self._thought is not None and self._thought.held:
                index = self._after_thought_calls(data, index, final)
                if index < 0:
                    return
                if self._thought is None:  # thinking text again
                    continue
            match = tables.pattern.search(data, index)
            if match is None:
                keep = 0 if final else self._partial_tail(data, index, None)
                self._hold(data, index, keep)
                return
            start = match.start()
            text = match.group()
            if not final and len(data) - start < tables.longest:
                # a longer marker may begin here or earlier and end in the next chunk
                keep = self._partial_tail(data, index, None)
                if keep and len(data) - keep <= start:
                    self._hold(data, index, keep)
                    return
            if self._in_inline_code(data, start, text):
                self._emit(data[index:start])  # the code span runs to its closing backtick
                index = start
                self._quiet = INLINE_CODE
                continue
            if not self._may_start(data, start, text):
                self._emit(data[index : start + 1])
                index = start + 1
                continue
            self._emit(data[index:start])
            if text in THINK_BLOCKS:
                self._emit(text)
                self._quiet = tables.think[text]
                index = match.end()
                continue
            if start > 0:
                self._before = data[start - 1]
            if text in tables.heads:
                self._run = Run(
                    tables.heads, tables.head_prefixes, CALL_END_TOKENS, self._is_dead, self._base + start, self._scans
                )
            else:
                self._region = _Region(tables.triggers[text], self._base + start, self._scans)
            index = start

    def _in_inline_code(self, data: str, start: int, text: str) -> bool:
        """Whether a marker comes right after a backtick: it is quoted in an inline code span,
        the syntax shown, not a call; so is the rest of the span (a format's inner markers
        quoted with it), up to its closing backtick or a blank line."""
        before = data[start - 1] if start > 0 else self._before
        return before == "`" and not text.startswith("`")

    def _may_start(self, data: str, start: int, text: str) -> bool:
        """A marker counts unless it is a bracket known not to start a call or a word marker
        glued to the end of another word (`forget_weather(`)."""
        if self._is_dead(text, self._base + start):
            return False
        before = data[start - 1] if start > 0 else self._before
        return not (text in self._tables.word_starts and (before.isalnum() or before == "_"))

    def _is_dead(self, marker: str, position: int) -> bool:
        """Whether `marker` at stream offset `position` is known not to start a call: its bracket
        was left open by a region that failed, or it opens a fence after one that never closed
        (no fence after it can close either)."""
        if marker[-1] in OPENERS and position + len(marker) - 1 in self._dead:
            return True
        return marker.startswith("```") and self._fences_open_from is not None and position > self._fences_open_from

    def _skip_end_tokens(self, data: str, index: int, final: bool) -> int:
        """After a call: drop the tokens that close it (`<|eom_id|>`, `</s>`); -1 to wait for more."""
        while True:
            probe = index
            while probe < len(data) and data[probe].isspace():
                probe += 1
            token = next((token for token in CALL_END_TOKENS if data.startswith(token, probe)), None)
            if token is not None and token in self._tables.triggers:
                # an active format's marker too (a learned DeepSeek format's calls after
                # `<｜end▁of▁sentence｜>`): the scan reads it, and drops it if no call follows
                self._emit(data[index:probe])
                self._end_token_at = self._base + probe
                self._after_call = False
                return probe
            if token is not None:
                self._emit(data[index:probe])
                index = probe + len(token)
                self._before = data[index - 1]
                continue
            rest = data[probe:]
            if not final and (not rest or any(token.startswith(rest) for token in CALL_END_TOKENS)):
                self._hold(data, index, len(data) - index)
                return -1
            self._after_call = False
            return index

    def _continue_at(self, start: int, span: Span, position: int, data: str) -> tuple[str, int]:
        """Where scanning goes on: stream offset `start + position`, in the held `span` that
        began at `start`. Within `data` this is an index; only a region that began in an earlier
        chunk makes a new string (the rest of its own text, which ends where `data` ends)."""
        absolute = start + position
        if position > 0:
            self._before = span.slice(position - 1, position)
        if absolute >= self._base:
            return data, absolute - self._base
        self._base = absolute
        return span.slice(position), 0

    def _settle(self, run: Run, outcome: Outcome, data: str) -> tuple[str, int]:
        """Emit what a run resolved to; return where scanning goes on."""
        self._run = None
        self._dead.update(outcome.dead)
        if outcome.unclosed_fence_at is not None:
            self._fences_open_from = outcome.unclosed_fence_at
        for piece in outcome.pieces:
            self._emit(piece)
        position = len(run.span) if outcome.rescan_from is None else outcome.rescan_from
        return self._continue_at(run.start, run.span, position, data)

    def _resolve(self, region: _Region, end: int, data: str) -> tuple[str, int]:
        """Emit the region's calls, or its first character as content; return where scanning
        goes on."""
        self._region = None
        span = region.span
        finder = region.finder
        if region.unclosed and isinstance(finder, BracketFinder):
            finder.keep_scan()
            if not finder.readable_unclosed():
                end = FAIL  # a text cut off (or prose with brackets), not a call missing its closers
        if end != FAIL:
            found = self._read(region.trigger.parsers, span.slice(0, end))
            if found is not None and region.unclosed and _cut_open(span.slice(0, end), found[0]):
                found = None
            if found is not None:
                calls, consumed = found
                self._emit(calls, span.slice(0, consumed) if self._thought is not None else "")
                self._after_call = True
                return self._continue_at(region.start, span, consumed, data)
        if self._thought is not None:  # not a call after all: the thinking goes on
            self._thought_is_text()
        if isinstance(finder, FenceFinder) and region.unclosed:
            self._fences_open_from = region.start
        if isinstance(finder, BracketFinder):  # its brackets still open cannot start a call either
            self._dead.update(region.start + position for position in finder.open_positions)
        if region.start == self._end_token_at:  # the end token after the calls, not content
            self._after_call = True
            return self._continue_at(region.start, span, len(region.trigger.marker.text), data)
        self._emit(span.slice(0, 1))
        return self._continue_at(region.start, span, 1, data)

    def _after_thought_calls(self, data: str, index: int, final: bool) -> int:
        """After calls read inside thinking: whitespace is held with them, another of the
        format's markers is scanned, anything else makes them thinking text again. Where to
        scan on, or -1 to wait for more text."""
        assert self._thought is not None
        probe = index
        while probe < len(data) and data[probe].isspace():
            probe += 1
        self._emit(data[index:probe])
        rest = data[probe:]
        if not rest:
            if not final:
                self._hold(data, probe, 0)
                return -1
            return probe  # the end: `finish` lets the calls stand
        if any(rest.startswith(marker) for marker in self._tables.in_thinking):
            return probe  # more calls: scanned, and held with these
        if not final and any(marker.startswith(rest) for marker in self._tables.in_thinking):
            self._hold(data, probe, len(rest))
            return -1
        self._thought_is_text()
        return probe

    def _thought_is_text(self) -> None:
        """Calls read inside thinking were not its last words: what was held is thinking text,
        and the thinking block goes on."""
        assert self._thought is not None
        thought, self._thought = self._thought, None
        self._emit("".join(raw for _, raw in thought.held))
        self._quiet = thought.resume

    def _hold(self, data: str, index: int, keep: int) -> None:
        """Release data[index:] except its last `keep` characters, which are held for later."""
        self._emit(data[index : len(data) - keep])
        if len(data) - keep > 0:
            self._before = data[len(data) - keep - 1]
        self._held = data[len(data) - keep :]
        self._base += len(data)

    def _read(self, parsers: Sequence[ToolCallParser], region: str) -> tuple[list[ParsedCall], int] | None:
        if not self._may_hold_call(region):
            return None
        with reading_for(self._names, self._parsers):
            for parser in parsers:
                found = parser.read_prefix(region)
                if found and found[0] and self._offered(found[0]):
                    return self._settle_values(found[0]), found[1]
        return None

    def _read_item(self, head: Head, item: str, to_end_from: int | None) -> list[ParsedCall] | None:
        """The calls of one whole run item, or None. `to_end_from`: where the item starts in the
        output when it runs to the output's end (see `_names_to_end`)."""
        if to_end_from is None:
            if not self._may_hold_call(item):
                return None
        elif not self._names_to_end(item, to_end_from) or not self._within_end_budget(item, to_end_from):
            return None
        with reading_for(self._names, self._parsers):
            for parser in head.parsers:
                found = parser.read_prefix(item)
                if found and found[0] and not item[found[1] :].strip() and self._offered(found[0]):
                    return self._settle_values(found[0])
        return None

    def _settle_values(self, calls: list[ParsedCall]) -> list[ParsedCall]:
        """Values written as bare text, typed by the schema; a wrapper's body (read with
        `only_calls`, without the schemas) leaves them to the scan that reads the wrapper."""
        if self._only_calls or not holds_raw_text(calls):
            return calls
        if self._types is None:
            self._types = parameter_types(self._tools)
        return settle(calls, self._types)

    def _may_hold_call(self, text: str) -> bool:
        """A cheap test before the readers run: a call names an offered tool."""
        names = self._tables.names_pattern
        return names is None or names.search(text) is not None

    def _names_to_end(self, item: str, start: int) -> bool:
        """`_may_hold_call` for a text that runs from `start` to the output's end. Each unclosed
        item that fails is read again from its next bracket, so the texts tested are ever
        shorter ends of one output: the last start of each offered name in it, found once,
        answers them all, where a search of each would make the retries quadratic."""
        if self._tables.names_pattern is None:
            return True
        if self._last_names is None or start < self._last_names[0]:
            last = max((item.rfind(name) for name in self._names or ()), default=-1)
            self._last_names = (start, start + last if last >= 0 else -1)
        return self._last_names[1] >= start

    def _within_end_budget(self, item: str, start: int) -> bool:
        """Whether one more unclosed end may be read. The lenient reader repairs the whole of
        such an end, and a failed one is read again from its next bracket, so nested openings
        that never close (`{"city": "Pa` a thousand times, then a tool's name) would cost the
        square of the output. The reads of one output's ends may cover its length
        `UNCLOSED_READS_PER_CHAR` times; past that the rest stays text (a cut call missed, never
        one invented), and the budget depends on the text alone, so streamed == whole."""
        self._end_read += len(item)
        return self._end_read <= UNCLOSED_READS_PER_CHAR * (start + len(item)) + UNCLOSED_READS_FLOOR

    def _offered(self, calls: list[ParsedCall]) -> bool:
        """Every call names an offered tool, writes the arguments it requires, and none of them
        is a placeholder (precision first: a call that does not commit stays text)."""
        if any(shows_placeholder(call) for call in calls):
            return False
        if self._names is None:
            return True
        return all(call.name in self._names and commits(call, self._required) for call in calls)

    def _partial_tail(self, data: str, index: int, markers: tuple[str, ...] | None) -> int:
        """Length of the longest end of `data` that could be the start of a marker."""
        for start in range(max(index, len(data) - self._tables.longest + 1), len(data)):
            tail = data[start:]
            if markers is None and tail in self._tables.prefixes:
                return len(data) - start
            if markers is not None and any(marker.startswith(tail) for marker in markers):
                return len(data) - start
        return 0


def _cut_open(region: str, calls: list[ParsedCall]) -> bool:
    """Whether the output ended right after a call's arguments were opened (`"arguments": {`):
    the call the model was writing is unknown, and the reader's closing of the brackets must
    not make it one with no arguments."""
    return region.rstrip()[-1:] in ("{", "[", "(", ",", ":") and not all(call.arguments for call in calls)


class _NotOnlyCalls(Exception):
    """A text read with `only_calls` holds something that is not a call."""


def _blank(text: str) -> bool:
    for token in CALL_END_TOKENS:
        text = text.replace(token, "")
    return not text.strip()


def calls_only(text: str, parsers: Sequence[ToolCallParser], tools: ToolsArg = None) -> list[ParsedCall] | None:
    """The calls of a text that holds nothing but calls (and whitespace, end tokens), else None.

    The scan stops at the first text that is not a call, so a wrapper's body full of prose or of
    other formats' markers costs what it takes to find that out, not a full recovery."""
    recoverer = StreamingRecoverer(parsers, tools, only_calls=True)
    try:
        pieces = recoverer.feed(text) + recoverer.finish()
    except _NotOnlyCalls:
        return None
    calls = [call for piece in pieces if not isinstance(piece, str) for call in piece]
    return calls or None


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
