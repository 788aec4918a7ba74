"""The actions of written Go template text, found without parsing it: where each `{{ ... }}`
starts and ends, and the text in its shortest form for Ollama to parse."""

from __future__ import annotations

from dataclasses import dataclass, field


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


def compact_actions(template: str) -> str:
    """The template with no spaces inside its actions' delimiters: `{{if $x}}` for `{{ if $x }}`.

    Go parses both to the same tree, but the lexer makes a token of each space: about 7% of a
    conversion's bytes, which Ollama parses twice per request (docs/RENDER_COST.md, item 9).
    Trim markers (`{{- `, ` -}}`, whose space is part of them) and comments stay as they are;
    `{{-3}}` is the number -3 to Go, not a trim marker."""
    out: list[str] = []
    last = 0
    for start, end in action_spans(template):
        inner = template[start + 2 : end - 2]
        left = "{{- " if inner.startswith("- ") else "{{"
        right = " -}}" if inner.endswith(" -") else "}}"
        code = inner[len(left) - 2 : len(inner) - (len(right) - 2)].strip(" ")
        if code.startswith("/*"):
            continue  # a comment: kept whole
        out += [template[last:start], left, code, right]
        last = end
    out.append(template[last:])
    return "".join(out)


#: the prefill guard around output (`Emit.show`), written before `compact_actions`: true until
#: the prefilled final text is cut, which only `CUT` does
GUARD = "{{ if $ofc_go }}"
CUT_CODE = "$ofc_go = false"
CUT = "{{ " + CUT_CODE + " }}"


@dataclass
class _Block:
    """An open `if`, `range` or `with` while `coalesce_guards` reads the template."""

    start: int
    guard: bool
    cut: bool = False
    #: the (start, end) of the guards inside it
    guards: list[tuple[int, int]] = field(default_factory=list)


def coalesce_guards(template: str) -> str:
    """The template with one prefill guard around each outermost block that prints guarded
    output at least twice and cannot cut the prefill, in place of the guards inside it.

    `$ofc_go` only ever turns false (at a cut), and from then on all output is guarded, so once
    it is false nothing a block does can be seen: a block with no cut inside may be skipped
    whole, and inside it the guards all see `$ofc_go` as it was at the block's start. A block
    (`if`, `range`, `with` to its `end`) scopes its own variables, so guarding it changes what
    no later action sees. Fewer guards: less to parse, to walk (`Vars()`) and to test."""
    pieces: list[str] = []
    last = 0
    for start, end in action_spans(template):
        pieces += [template[last:start], template[start:end]]
        last = end
    pieces.append(template[last:])
    stack = [_Block(-1, guard=False)]
    #: the blocks that qualify, by start: (end, the guards inside)
    blocks: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for i, piece in enumerate(pieces):
        if not piece.startswith("{{ "):
            continue
        word = piece[3:].split(" ", 1)[0]
        if word in {"if", "range", "with"}:
            stack.append(_Block(i, guard=piece == GUARD))
        elif word == "end" and len(stack) > 1:
            block = stack.pop()
            if block.guard:
                block.guards.append((block.start, i))
            elif not block.cut and len(block.guards) > 1:
                blocks[block.start] = (i, block.guards)
            stack[-1].cut |= block.cut
            stack[-1].guards += block.guards
        elif piece == CUT:
            stack[-1].cut = True
    dropped: set[int] = set()
    wrapped: dict[int, int] = {}
    for start in sorted(blocks):
        end, guards = blocks[start]
        if any(outer < start < outer_end for outer, outer_end in wrapped.items()):
            continue  # inside a block already guarded whole
        wrapped[start] = end
        dropped |= {i for guard in guards for i in guard}
    ends = set(wrapped.values())
    out = []
    for i, piece in enumerate(pieces):
        if i in dropped:
            continue
        out.append(GUARD + piece if i in wrapped else piece)
        if i in ends:
            out.append("{{ end }}")
    return "".join(out)
