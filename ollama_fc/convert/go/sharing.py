"""What the written template shares, as passes over its tree (go/tree.py): long string
constants repeated by its actions read from one variable, and macro defines written alike
merged into one.
"""

from __future__ import annotations

import re

from . import tree

#: a Go interpreted string literal inside an action
GO_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
#: string constants at least this long (the lookup tables of strips, case changes and escapers)
#: are declared once when an action repeats them
SHARED_CONSTANT_CHARS = 64
#: a translator's temporary variable, and a call of a define written for a macro
TEMPORARY = re.compile(r"\$_\d+")
MACRO_CALL = re.compile(r'template "(ofc_macro_\w+)"')


def share_constants(body: list[tree.Node]) -> None:
    """Each long string constant the actions of `body` repeat read from one variable, declared
    before everything else in `body`.

    The main template's variables declared at its top are visible in every block below, so a
    table written at every strip or case change (256 bytes, about 1 KB as a literal) is lexed
    and unquoted once per parse instead of once per use. A variable holds the same string as
    the constant, so every function given it sees the same value. `define` bodies cannot see
    the template's variables: the main template and each define's body are passed separately.
    """
    long = [node for node in tree.heads(body) if len(node.raw) > SHARED_CONSTANT_CHARS]
    counts: dict[str, int] = {}
    for node in long:
        for literal in GO_STRING.findall(node.raw):
            if len(literal) >= SHARED_CONSTANT_CHARS:
                counts[literal] = counts.get(literal, 0) + 1
    names = {literal: f"$ofc_k{n}" for n, literal in enumerate(sorted(c for c in counts if counts[c] > 1), 1)}
    if not names:
        return
    for node in long:
        node.raw = GO_STRING.sub(lambda m: names.get(m.group(), m.group()), node.raw)
    body[:0] = [tree.Action(f"{{{{ {name} := {literal} }}}}") for literal, name in names.items()]
