"""The written Go template as a tree of its blocks, read once, for the passes over it.

A pass that needs to know which `{{ end }}` closes which `{{ if }}`, or what a block holds,
works on this tree instead of walking the text itself; `render` gives the text back, byte for
byte what was read where no pass changed anything. It is read from the template written
before `compact_actions` (every action `{{ code }}`) or after, with `action_spans` as its one
lexer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

#: the actions that open a block, closed by `{{ end }}`
OPENS = {"if", "range", "with", "define", "block"}


@dataclass
class Action:
    """An action that opens or closes no block: an assignment, a print, `break`..."""

    raw: str

    @property
    def code(self) -> str:
        return code_of(self.raw)


@dataclass
class Branch:
    """A block's `else` (`{{ else }}`, `{{ else if c }}`...) and what it holds."""

    raw: str
    body: list[Node] = field(default_factory=list)


@dataclass
class Block:
    """`{{ if c }}`, `{{ range ... }}`, `{{ with ... }}` or `{{ define ... }}` to its `{{ end }}`."""

    raw: str
    body: list[Node] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    end: str = "{{ end }}"

    @property
    def code(self) -> str:
        return code_of(self.raw)

    @property
    def keyword(self) -> str:
        return self.code.split(" ", 1)[0]


#: template text (never an action), an action, or a block
Node = Union[str, Action, Block]


def action_spans(template: str) -> list[tuple[int, int]]:
    """Where each `{{ ... }}` action starts and ends, skipping `}}` inside string literals.

    Sound for the converter's output, whose literal text never holds `{{` (it is written as an
    action) and whose actions hold no character constants."""
    spans: list[tuple[int, int]] = []
    index = template.find("{{")
    while index != -1:
        at, quote = index + 2, ""
        while not (not quote and template.startswith("}}", at)):
            char = template[at]
            if quote == '"' and char == "\\":
                at += 1
            elif quote and char == quote:
                quote = ""
            elif not quote and char in '"`':
                quote = char
            at += 1
        spans.append((index, at + 2))
        index = template.find("{{", at + 2)
    return spans


def code_of(raw: str) -> str:
    """What an action says, without its delimiters and trim markers: `if $x` of `{{ if $x }}`,
    `{{if $x}}` or `{{- if $x -}}` (`{{-3}}` is the number -3, not a trim marker)."""
    inner = raw[2:-2]
    inner = inner[2:] if inner.startswith("- ") else inner
    inner = inner[:-2] if inner.endswith(" -") else inner
    return inner.strip(" ")


def parse(template: str) -> list[Node]:
    """The template's top level; an `{{ end }}` with no open block stays an action."""
    top: list[Node] = []
    stack: list[tuple[Block, list[Node]]] = []  # open blocks, and where their current branch adds
    into, last = top, 0
    for start, end in action_spans(template):
        if start > last:
            into.append(template[last:start])
        last = end
        raw = template[start:end]
        word = code_of(raw).split(" ", 1)[0]
        if word in OPENS:
            block = Block(raw)
            into.append(block)
            stack.append((block, into))
            into = block.body
        elif word == "else" and stack:
            branch = Branch(raw)
            stack[-1][0].branches.append(branch)
            into = branch.body
        elif word == "end" and stack:
            block, into = stack.pop()
            block.end = raw
        else:
            into.append(Action(raw))
    if last < len(template):
        into.append(template[last:])
    for block, _ in stack:  # an unclosed block (not written by the converter): kept as read
        block.end = ""
    return top


def render(tree: list[Node]) -> str:
    return "".join(_pieces(tree))


def _pieces(tree: list[Node]) -> Iterator[str]:
    for node in tree:
        if isinstance(node, str):
            yield node
        elif isinstance(node, Action):
            yield node.raw
        else:
            yield node.raw
            yield from _pieces(node.body)
            for branch in node.branches:
                yield branch.raw
                yield from _pieces(branch.body)
            yield node.end


def blocks(tree: list[Node]) -> Iterator[Block]:
    """Every block in the tree, each after the blocks inside it (innermost first)."""
    for node in tree:
        if isinstance(node, Block):
            for body in (node.body, *(branch.body for branch in node.branches)):
                yield from blocks(body)
            yield node
