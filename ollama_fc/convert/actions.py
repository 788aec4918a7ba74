"""The actions of written Go template text, found without parsing it: where each `{{ ... }}`
starts and ends, and the text in its shortest form for Ollama to parse."""

from __future__ import annotations


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


#: the prefill guard around output (`Emit.show`) and the action that closes it
GUARD, GUARD_END = "{{ if $ofc_go }}", "{{ end }}"
#: the only action that makes the guard fail (the prefilled final text has been printed)
CUT = "{{ $ofc_go = false }}"


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
    #: each open block: where it starts in `pieces`, whether it is a guard, whether a cut is
    #: inside it, and the (start, end) of the guards inside it
    stack: list[tuple[int, bool, bool, list[tuple[int, int]]]] = [(-1, False, False, [])]
    #: the blocks that qualify, by start: (end, the guards inside)
    blocks: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for i, piece in enumerate(pieces):
        if not piece.startswith("{{ "):
            continue
        word = piece[3:].split(" ", 1)[0]
        if word in {"if", "range", "with"}:
            stack.append((i, piece == GUARD, False, []))
        elif word == "end" and len(stack) > 1:
            start, guard, cut, guards = stack.pop()
            outer_start, outer_guard, outer_cut, outer_guards = stack.pop()
            if guard:
                guards = [*guards, (start, i)]
            elif not cut and len(guards) > 1:
                blocks[start] = (i, guards)
            stack.append((outer_start, outer_guard, outer_cut or cut, outer_guards + guards))
        elif piece == CUT:
            start, guard, _, guards = stack.pop()
            stack.append((start, guard, True, guards))
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
            out.append(GUARD_END)
    return "".join(out)
