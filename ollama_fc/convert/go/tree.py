"""The written Go template as a tree of its blocks, for the passes over it.

A pass that needs to know which `{{ end }}` closes which `{{ if }}`, or what a block holds,
works on this tree instead of walking the text itself; `render` prints it, byte for byte what
was written where no pass changed anything (or with every action compact). The translator
writes typed pieces (`Act`, one action; `Text`, literal text; `Mark`, a print plan's marker)
that `build` reads as they are, and builds its generated helpers as IR (`Generated`); only text
handed in whole (a template read back, a test's) is lexed, with `action_spans` as the one lexer.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Union

from . import ir
from .irread import Unread, read_action

#: the actions that open a block, closed by `{{ end }}`
OPENS = {"if", "range", "with", "define", "block"}


class _Head:
    """An action of the tree as written (`raw`) and as IR (`node`): the node it was written
    from where the translator wrote one (an `Act` of a node), else its text read back."""

    raw: str
    written: ir.ActionNode | None

    @property
    def node(self) -> ir.ActionNode:
        """The action as IR (what it reads, declares, calls...)."""
        written = self.written
        return written if written is not None else node_of(self.raw)


@dataclass
class Action(_Head):
    """An action that opens or closes no block: an assignment, a print, `break`..."""

    raw: str
    written: ir.ActionNode | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, node: ir.ActionNode) -> Action:
        """The action `node` as a node of the tree, written as IR renders it."""
        return cls(ir.render(node), node)

    @property
    def code(self) -> str:
        return code_of(self.raw)


@dataclass
class Branch(_Head):
    """A block's `else` (`{{ else }}`, `{{ else if c }}`...) and what it holds."""

    raw: str
    body: list[Node] = field(default_factory=list)
    written: ir.ActionNode | None = field(default=None, compare=False, repr=False)


@dataclass
class Block(_Head):
    """`{{ if c }}`, `{{ range ... }}`, `{{ with ... }}` or `{{ define ... }}` to its `{{ end }}`."""

    raw: str
    body: list[Node] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    end: str = "{{ end }}"
    written: ir.ActionNode | None = field(default=None, compare=False, repr=False)
    #: the node the `end` was written from (None: text, read when asked)
    end_written: ir.ActionNode | None = field(default=None, compare=False, repr=False)

    @property
    def code(self) -> str:
        return code_of(self.raw)

    @property
    def keyword(self) -> str:
        return self.node.keyword

    @property
    def closing(self) -> ir.ActionNode | None:
        """The block's `end` as IR, None where it is unclosed (text not written by the converter)."""
        if self.end_written is not None:
            return self.end_written
        return node_of(self.end) if self.end else None


#: template text (never an action), a print plan's mark (it prints nothing), an action, or a block
Node = Union[str, "Mark", Action, Block]


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


@functools.lru_cache(maxsize=1 << 16)
def node_of(raw: str) -> ir.ActionNode:
    """The IR of the action `raw` as written (`{{ ... }}`), read once per text."""
    return read_action(raw)


def expression(code: str) -> ir.ActionNode:
    """The Go expression `code` (a value's code, a condition) as IR: an `Action` printing it."""
    return node_of("{{ " + code + " }}")


@functools.lru_cache(maxsize=1 << 14)
def operand(code: str) -> ir.Operand | None:
    """The Go operand `code` (a value's code) as IR; None where it is not one operand (a
    command, a pipeline, no code) or not read."""
    try:
        action = expression(code)
    except Unread:
        return None
    if not isinstance(action, ir.Action) or action.pipe.decl or len(action.pipe.cmds) != 1:
        return None
    args = action.pipe.cmds[0].args
    return args[0] if len(args) == 1 else None


def rewrite(head: Action | Block | Branch, node: ir.ActionNode) -> None:
    """The action `head` says `node` now, written as its text was (spaced or compact)."""
    head.raw, head.written = ir.render(node, compact=head.raw != ir.render(head.node)), node


def action_nodes(written: Iterable[Piece]) -> Iterator[ir.ActionNode]:
    """The IR of each action in the translator's pieces, in order: an `Act` written from IR
    its node, one written as text read (a `Text` or a `Mark` holds none)."""
    for piece in written:
        if isinstance(piece, Act):
            node = piece.node
            yield node if node is not None else node_of(piece.text)


class Act:
    """An action as the translator writes it, `{{ code }}` (its `text`): read into the tree as
    one action, never lexed; `node` is the IR it was written from (`Act.of`), None where it was
    written as text (read back when a pass asks). Not a `str`: what it prints is `printed`'s.
    Two acts are equal when their text is."""

    __slots__ = ("text",)

    def __init__(self, code: str) -> None:
        self.text = "{{ " + code + " }}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Act) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Act({self.code!r})"

    @classmethod
    def of(cls, node: ir.ActionNode) -> Act:
        """The action `node`, spaced and untrimmed (as every `Act` is written); an action
        written before is given the node it was written from then, with what it uses found once."""
        assert node.trim == ir.NO_TRIM, "an Act has no trim markers"
        act = cls(node.code)
        before = _WRITTEN.pop(act.text, None)  # (written again: the most recent, the last to be forgotten)
        if before is None and len(_WRITTEN) >= _WRITTEN_AT_MOST:
            for stale in list(itertools.islice(_WRITTEN, _WRITTEN_AT_MOST // 2)):
                del _WRITTEN[stale]  # the least recently written half: not what a conversion is writing
        _WRITTEN[act.text] = node if before is None else before
        return act

    @property
    def node(self) -> ir.ActionNode | None:
        """The IR this action's text was written from (by `Act.of`, in this process), None for
        text only ever written as text (read back when a pass asks)."""
        return _WRITTEN.get(self.text)

    @property
    def code(self) -> str:
        return self.text[3:-3]


#: the node each action text was written from, shared by the conversions of a process (as
#: `node_of` shares what it reads), kept to a bound (the least recently written forgotten
#: first); held here rather than on each `Act`, so that an action written as text is given
#: the node an equal one was written from
_WRITTEN: dict[str, ir.ActionNode] = {}
_WRITTEN_AT_MOST = 1 << 16


#: what a `Mark` marks: where a plan's part was made, where it was used, where the body starts
MarkKind = Literal["made", "used", "body"]


@dataclass(frozen=True, eq=False, slots=True)
class Mark:
    """A print plan's marker (translate/printplan.py), written among the translator's pieces and
    kept as a node of its own in the tree: where the plan's part `part` was made (reading the Go
    variables `reads`) or used, or where the template's body starts. Not text: it prints nothing
    (`printed`), no lexer sees it, and two marks are equal only when they mark the same thing."""

    kind: MarkKind
    part: int = 0
    reads: frozenset[str] = frozenset()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mark) and (self.kind, self.part) == (other.kind, other.part)

    def __hash__(self) -> int:
        return hash((Mark, self.kind, self.part))

    def __repr__(self) -> str:
        return f"Mark({self.kind!r}, {self.part})"


@dataclass(frozen=True, slots=True)
class Text:
    """Literal output as the translator writes it (never an action): read into the tree as
    text, never lexed. Not a `str`, so that nothing takes it for an action's text."""

    text: str


#: what the translator writes, piece by piece: an `Act` (one action), a `Text` (literal text)
#: or a `Mark` (not text: it prints nothing)
Piece = Union[Act, Text, Mark]


def printed(piece: Piece) -> str:
    """What the piece prints: its text, nothing for a mark."""
    return "" if isinstance(piece, Mark) else piece.text


def printed_all(pieces: Iterable[Piece]) -> str:
    """What the pieces print, joined."""
    return "".join(printed(piece) for piece in pieces)


def parse(template: str) -> list[Node]:
    """The tree of text handed in whole (a template read back, a test's), lexed with
    `action_spans`; an `{{ end }}` with no open block stays an action."""
    builder = _Builder()
    last = 0
    for start, end in action_spans(template):
        if start > last:
            builder.text(template[last:start])
        last = end
        raw = template[start:end]
        builder.action(raw, raw[2:-2].lstrip("- ").partition(" ")[0])  # (as code_of, cheaper)
    if last < len(template):
        builder.text(template[last:])
    return builder.done()


class Generated:
    """A generated helper (a JSON writer, the repr): its defines made as IR, each action a node
    between pieces of literal text. The same for every conversion that needs it, so its tree is
    built once per process and copied (the passes change trees in place); nothing of it is lexed
    or read back."""

    __slots__ = ("_built", "items")

    def __init__(self, items: Iterable[str | ir.ActionNode]) -> None:
        #: literal text (never an action) and actions, in order
        self.items = tuple(items)
        self._built: list[Node] | None = None

    @property
    def text(self) -> str:
        return "".join(item if isinstance(item, str) else ir.render(item) for item in self.items)

    def tree(self) -> list[Node]:
        built = self._built
        if built is None:
            builder = _Builder()
            for item in self.items:
                if isinstance(item, str):
                    builder.text(item)
                else:
                    builder.action(ir.render(item), item.keyword, item)
            built = self._built = builder.done()
        return copy(built)

    def calls(self) -> Iterator[str]:
        """The defines its actions call."""
        for item in self.items:
            if not isinstance(item, str):
                yield from item.calls()


#: a `define` the template will hold: a generated helper (the same for every conversion that
#: needs it), or the pieces the translator wrote for a macro's define
Helper = Union[Generated, tuple[Piece, ...]]


def helper_tree(helper: Helper) -> list[Node]:
    """A helper's tree: a generated one's built once per process, written pieces built as
    they are (`build`)."""
    return helper.tree() if isinstance(helper, Generated) else build(list(helper))


def helper_texts(helper: Helper) -> tuple[str, ...]:
    """What a helper prints, piece by piece (a generated one's whole), for what measures or
    searches its text."""
    return (helper.text,) if isinstance(helper, Generated) else tuple(printed(piece) for piece in helper)


def helper_marked(helper: Helper) -> bool:
    """Does the helper hold a `Mark` (a generated one never does)?"""
    return not isinstance(helper, Generated) and any(isinstance(piece, Mark) for piece in helper)


def copy(tree: list[Node]) -> list[Node]:
    """A tree of new blocks and actions holding the same text."""
    out: list[Node] = []
    for node in tree:
        if isinstance(node, (str, Mark)):
            out.append(node)
        elif isinstance(node, Action):
            out.append(Action(node.raw, node.written))
        else:
            branches = [Branch(branch.raw, copy(branch.body), branch.written) for branch in node.branches]
            out.append(Block(node.raw, copy(node.body), branches, node.end, node.written, node.end_written))
    return out


def build(written: Iterable[Piece]) -> list[Node]:
    """The tree of the output the translator wrote, piece by piece, as the pieces are: an `Act`
    is one action, a `Text` text and a `Mark` a node of its own; nothing is lexed."""
    builder = _Builder()
    for piece in written:
        if isinstance(piece, Mark):
            builder.mark(piece)
        elif isinstance(piece, Act):
            node = piece.node
            builder.action(piece.text, node.keyword if node is not None else piece.code.partition(" ")[0], node)
        else:
            builder.text(piece.text)
    return builder.done()


class _Builder:
    """Pairs each `else` and `end` with the block open, as the pieces are read in order."""

    def __init__(self) -> None:
        self.top: list[Node] = []
        self.stack: list[tuple[Block, list[Node]]] = []  # open blocks, and where their current branch adds
        self.into = self.top

    def text(self, text: str) -> None:
        if not text:
            return
        into = self.into
        if into and type(into[-1]) is str:
            into[-1] = into[-1] + text  # one text node between two actions (or marks)
        else:
            into.append(text)

    def mark(self, mark: Mark) -> None:
        self.into.append(mark)

    def action(self, raw: str, word: str, node: ir.ActionNode | None = None) -> None:
        if word in OPENS:
            block = Block(raw, written=node)
            self.into.append(block)
            self.stack.append((block, self.into))
            self.into = block.body
        elif word == "else" and self.stack:
            branch = Branch(raw, written=node)
            self.stack[-1][0].branches.append(branch)
            self.into = branch.body
        elif word == "end" and self.stack:
            block, self.into = self.stack.pop()
            block.end, block.end_written = raw, node
        else:
            self.into.append(Action(raw, node))

    def done(self) -> list[Node]:
        for block, _ in self.stack:  # an unclosed block (not written by the converter): kept as read
            block.end = ""
        return self.top


def render(tree: list[Node], compact: bool = False) -> str:
    """The tree's text; `compact`: every action printed without the spaces inside its
    delimiters (see `compact_raw`)."""
    out: list[str] = []
    _write(tree, out, compact_raw if compact else _as_written)
    return "".join(out)


def compact_raw(raw: str) -> str:
    """The action `raw` without the spaces inside its delimiters: `{{if $x}}` for `{{ if $x }}`.

    Go parses both to the same tree, but the lexer makes a token of each space: about 7% of a
    conversion's bytes, which Ollama parses twice per request (docs/RENDER_COST.md, "Less code: size and parse").
    Trim markers (`{{- `, ` -}}`, whose space is part of them) and comments stay as they are;
    `{{-3}}` is the number -3 to Go, not a trim marker."""
    inner = raw[2:-2]
    left = "{{- " if inner.startswith("- ") else "{{"
    right = " -}}" if inner.endswith(" -") else "}}"
    code = inner[len(left) - 2 : len(inner) - (len(right) - 2)].strip(" ")
    if code.startswith("/*"):
        return raw  # a comment: kept whole
    return left + code + right


def _as_written(raw: str) -> str:
    return raw


def _write(tree: list[Node], out: list[str], spelled: Callable[[str], str]) -> None:
    for node in tree:
        if isinstance(node, Mark):
            continue  # (it prints nothing)
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, Action):
            out.append(spelled(node.raw))
        else:
            out.append(spelled(node.raw))
            _write(node.body, out, spelled)
            for branch in node.branches:
                out.append(spelled(branch.raw))
                _write(branch.body, out, spelled)
            out.append(spelled(node.end) if node.end else "")


def blocks(tree: list[Node]) -> Iterator[Block]:
    """Every block in the tree, each after the blocks inside it (innermost first)."""
    # (walked without recursion: a generator per level made it cost a call per level per block)
    found: list[Block] = []  # the reverse: each block before those inside it, the last first
    stack: list[Node] = list(tree)
    while stack:
        node = stack.pop()
        if isinstance(node, Block):
            found.append(node)
            stack += node.body
            for branch in node.branches:
                stack += branch.body
    found.reverse()
    return iter(found)


def heads(tree: list[Node]) -> Iterator[Action | Block | Branch]:
    """Every action of the tree that says something (an action, a block's or a branch's
    opening), in the order they are written; a block's `end` says nothing more."""
    found: list[Action | Block | Branch] = []
    stack: list[Node | Branch] = list(reversed(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (str, Mark)):
            continue  # (text and marks say nothing)
        found.append(node)
        if isinstance(node, Block):
            stack += reversed(node.branches)
            stack += reversed(node.body)
        elif isinstance(node, Branch):
            stack += reversed(node.body)
    return iter(found)
