"""String `+` concatenations, and Markup ones: a `|safe` string escapes as HTML what it is added to."""

from __future__ import annotations

from dataclasses import replace

from jinja2 import nodes

from ..ops.filters import FILTERS
from ..ops.values import Value
from .plantext import PlannedText
from .scope import Frame

#: what becomes of a Markup string whose Markup-ness is not tracked
MARKUP_STORED = "HTML-escaped again where it is added to a |safe string (Python keeps it as Markup)"


class Concatenations(PlannedText):
    """Which `+` joins strings, which of them are Markup, and a variable that holds Markup."""

    def adds_markup(self, expr: nodes.Add, frame: Frame | None = None) -> bool:
        """Does a `|safe` string take part in this `+` (then the other operands are HTML-escaped)?
        With `frame`, a variable holding one counts too (one set so on some paths only warns)."""
        leaves: list[nodes.Expr] = [expr]
        while leaves:
            leaf = leaves.pop()
            if isinstance(leaf, nodes.Add):
                leaves += [leaf.left, leaf.right]
            elif isinstance(leaf, nodes.Filter) and leaf.name == "safe":
                return True
            elif frame is not None and isinstance(leaf, (nodes.Name, nodes.Getattr)):
                held = self.held(leaf, frame)
                slot = frame.lookup(leaf.name) if isinstance(leaf, nodes.Name) else None
                markup = held.markup if held is not None else slot.facts.markup if slot else False
                if markup == "mixed":
                    self.emit.warn(expr, "'+' of a string that is |safe on some paths only", MARKUP_STORED)
                elif markup:
                    return True
        return False

    def stringish(self, expr: nodes.Add) -> bool:
        """Is this `+` a string concatenation (some operand is text)?"""
        for leaf in (expr.left, expr.right):
            if isinstance(leaf, nodes.Add) and self.stringish(leaf):
                return True
            if isinstance(leaf, nodes.Const) and isinstance(leaf.value, str):
                return True
            if isinstance(leaf, nodes.Filter) and leaf.name in FILTERS and FILTERS[leaf.name].gives_text:
                return True
            if isinstance(leaf, (nodes.Concat, nodes.TemplateData)):
                return True
        return False

    def string_operands(self, expr: nodes.Expr) -> list[nodes.Expr]:
        """The operands of a string `+` (a Markup one too), left to right (a `+` of numbers
        inside is one)."""
        if isinstance(expr, nodes.Add) and (self.stringish(expr) or self.adds_markup(expr)):
            return [*self.string_operands(expr.left), *self.string_operands(expr.right)]
        return [expr]

    def keep_markup(self, slot: Value, value: Value, strong: bool, node: nodes.Node, name: str) -> None:
        """A variable holding a Markup string (a `|safe` concatenation) stays one: added to
        another, Python does not escape it again. Known only where every path agrees."""
        if strong or bool(value.facts.markup) == bool(slot.facts.markup):
            markup = True if value.facts.markup else None
        elif value.facts.markup or slot.facts.markup:
            self.emit.warn(node, f"set {name} to a |safe concatenation on some paths", MARKUP_STORED)
            markup = None
        else:
            return
        if slot.facts.markup is not markup:
            slot.take(replace(slot, facts=replace(slot.facts, markup=markup)))
