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
