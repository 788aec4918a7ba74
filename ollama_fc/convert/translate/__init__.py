"""Translate a Jinja chat template's syntax tree into an Ollama Go template.

One visitor walks jinja2's own AST. Expressions become Go pipeline operands tagged with what
they hold in Ollama's data model (a message, the tool list, a string...), so that attribute
access, tests and filters resolve statically to Ollama's fields. Anything Go cannot do in an
expression (trimming, substring search) is computed by statements emitted just before the
action that needs it. What cannot be expressed exactly raises ConversionError or records a
ConversionWarning naming the construct and line.

The visitor is split by syntax: `core` holds the state and the dispatch (`visit`, `expr`),
`statements`, `loops` and `expressions` handle their nodes and reach one another only through
that dispatch, `macros` expands macro calls, `concat` tells which `+` joins strings (and which
of them are Markup). What the syntax lowers to lives in `../ops`.
"""

from __future__ import annotations

from .expressions import Expressions
from .loops import Loops
from .statements import Statements


class Translator(Statements, Loops, Expressions):
    """Jinja AST -> Go template text, with the warnings the translation forced."""


__all__ = ["Translator"]
