"""The written Go template as a tree of its blocks, for the passes over it.

A pass that needs to know which `{{ end }}` closes which `{{ if }}`, or what a block holds,
works on this tree instead of walking the text itself; `render` gives the text back, byte for
byte what was read where no pass changed anything. It is read from the template written
before `compact_actions` (every action `{{ code }}`) or after, with `action_spans` as its one
lexer.
"""

from __future__ import annotations

import re
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


#: one action `{{ ... }}`, its Go string and raw string literals skipped whole (so a `}}` in
#: them ends nothing)
ACTION_SPAN = re.compile(r'\{\{(?:[^"`}]|"(?:[^"\\]|\\.)*"|`[^`]*`|\}(?!\}))*\}\}', re.S)


def action_spans(template: str) -> list[tuple[int, int]]:
    """Where each `{{ ... }}` action starts and ends, skipping `}}` inside string literals.

    Sound for the converter's output, whose literal text never holds `{{` (it is written as an
    action) and whose actions hold no character constants."""
    return [match.span() for match in ACTION_SPAN.finditer(template)]


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
        word = raw[2:-2].lstrip("- ").partition(" ")[0]  # (as code_of, cheaper: read for every action)
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
    out: list[str] = []
    _write(tree, out)
    return "".join(out)


def _write(tree: list[Node], out: list[str]) -> None:
    for node in tree:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, Action):
            out.append(node.raw)
        else:
            out.append(node.raw)
            _write(node.body, out)
            for branch in node.branches:
                out.append(branch.raw)
                _write(branch.body, out)
            out.append(node.end)


def blocks(tree: list[Node]) -> Iterator[Block]:
    """Every block in the tree, each after the blocks inside it (innermost first)."""
    for node in tree:
        if isinstance(node, Block):
            for body in (node.body, *(branch.body for branch in node.branches)):
                yield from blocks(body)
            yield node


def heads(tree: list[Node]) -> Iterator[Action | Block | Branch]:
    """Every action of the tree that says something (an action, a block's or a branch's
    opening), in the order they are written; a block's `end` says nothing more."""
    for node in tree:
        if isinstance(node, Action):
            yield node
        elif isinstance(node, Block):
            yield node
            yield from heads(node.body)
            for branch in node.branches:
                yield branch
                yield from heads(branch.body)
