"""What the scanner knows of a set of parsers and offered tool names, built once per set: each
marker's trigger (the marker and the parsers that read its region), the heads of markerless
runs, one pattern finding any marker, every proper prefix of one (a marker split across
chunks), and where a thinking block ends."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .base import CALL_END_TOKENS, Marker, ToolCallParser
from .runs import Head

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
# Thinking blocks, by their opener: `<think>`, Seed-OSS's and Hunyuan HY 3's own.
THINK_BLOCKS = {THINK_OPEN: THINK_CLOSE, "<seed:think>": "</seed:think>", "<think:opensource>": "</think:opensource>"}


@dataclass(frozen=True)
class Trigger:
    marker: Marker
    parsers: tuple[ToolCallParser, ...]


@dataclass(frozen=True)
class ScanTables:
    """Everything the scanner needs to know about a set of parsers and offered tool names."""

    triggers: dict[str, Trigger]
    heads: dict[str, Head]
    head_prefixes: frozenset[str]
    word_starts: frozenset[str]
    pattern: re.Pattern[str]
    prefixes: frozenset[str]
    longest: int
    names_pattern: re.Pattern[str] | None
    #: a thinking block by its opener: (the pattern of its end, the texts that end it). A
    #: marker `in_thinking` ends it too, before the marker (see `_ThoughtCalls`)
    think: dict[str, tuple[re.Pattern[str], tuple[str, ...]]]
    in_thinking: tuple[str, ...]


@functools.lru_cache(maxsize=64)
def scanner_tables(parsers: tuple[ToolCallParser, ...], names: tuple[str, ...] | None) -> ScanTables:
    """The markers of `parsers` (per-tool ones filled in for each offered name): their triggers,
    the heads of markerless runs, one pattern finding any marker (or `<think>`), every proper
    prefix of one, and the longest one's length. Built once per set of parsers and names."""
    triggers: dict[str, Trigger] = {}
    word_starts: set[str] = set()
    for parser in parsers:
        for declared in parser.markers:
            markers = [declared.for_tool(name) for name in names or ()] if declared.per_tool else [declared]
            for marker in markers:
                known = triggers.get(marker.text)
                owners = (known.parsers if known else ()) + (parser,)
                triggers[marker.text] = Trigger(known.marker if known else marker, owners)
                if declared.per_tool or marker.text[:1].isalpha():
                    word_starts.add(marker.text)
    heads = {
        text: Head(text, trigger.parsers, trigger.marker.kind == "fence")
        for text, trigger in triggers.items()
        if trigger.marker.must_end and trigger.marker.kind in ("bracket", "fence")
    }
    texts = sorted([*triggers, *THINK_BLOCKS], key=len, reverse=True)
    pattern = re.compile(_trie_pattern(texts))
    prefixes = frozenset(text[:k] for text in [*texts, *THINK_BLOCKS.values()] for k in range(1, len(text)))
    head_prefixes = frozenset(text[:k] for text in [*heads, *CALL_END_TOKENS] for k in range(1, len(text)))
    longest = max(len(text) for text in [*texts, *THINK_BLOCKS.values()])
    names_pattern = re.compile("|".join(map(re.escape, names))) if names else None
    in_thinking = tuple(sorted(text for text, trigger in triggers.items() if trigger.marker.in_thinking))
    before_call = "|(?=" + "|".join(map(re.escape, in_thinking)) + ")" if in_thinking else ""
    think = {
        opener: (re.compile(re.escape(closer) + before_call), (closer, *in_thinking))
        for opener, closer in THINK_BLOCKS.items()
    }
    return ScanTables(
        triggers,
        heads,
        head_prefixes,
        frozenset(word_starts),
        pattern,
        prefixes,
        longest,
        names_pattern,
        think,
        in_thinking,
    )


def _trie_pattern(texts: list[str]) -> str:
    """One regular expression matching any of `texts`, the longest where several start at the
    same place, written as a trie (`<(?:tool_call>|think>)`): at each place the engine tries
    only the markers that begin with the character there, not every marker in turn, so the
    skip over prose costs the same however many formats are active."""
    trie: dict[str, Any] = {}
    for text in texts:
        node = trie
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        options = [re.escape(char) + branch(child) for char, child in node.items() if char]
        if "" in node:
            options.append("")  # the marker that ends here, tried after every longer one
        if len(options) == 1:
            return options[0]
        return "(?:" + "|".join(options) + ")"

    return branch(trie)
