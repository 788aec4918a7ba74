"""Views of a list: the attribute of each selected element (`map`), one selected element."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import nodes

from .access import Access
from .emit import Emit
from .logic import Logic
from .values import (
    ELEMENT,
    MAPPED,
    SELECT,
    UNDEF,
    Facts,
    Value,
    view_of,
)


@dataclass(eq=False)
class Views:
    """Views of a list: mapped attributes, one selected element."""

    emit: Emit
    access: Access
    logic: Logic

    def mapped_attribute(self, value: Value, attribute: Any, node: nodes.Node) -> Value:
        """`seq | map(attribute='a.b')`: a view of the (selected) elements' attribute, written
        out by `json_view`; the elements are Ollama's structs, so the attribute resolves statically."""
        if not isinstance(attribute, str):
            raise self.emit.fail(node, "|map(attribute=...) with a non-string attribute")
        base, filters = view_of(value) if value.kind in {SELECT, MAPPED} else (value, ())
        path = (*(value.facts.path or ()), *attribute.split("."))
        sample = Value("$", ELEMENT[base.kind])
        for name in path:
            sample = self.access.attr(sample, name, node)
        if sample.kind == UNDEF or sample.facts.maybe_undefined:
            raise self.emit.fail(node, f"|map(attribute={attribute!r}) of an attribute the elements may lack")
        return Value(base.code, MAPPED, facts=Facts(base=base, filters=filters, path=path, lazy=True))

    def selected_element(self, value: Value, which: int) -> Value:
        """`(list | selectattr(...))[0]` / `[-1]`: the first / last element passing the test
        (Python raises on an empty selection, and so does the reference)."""
        base, filters = view_of(value)
        found, idx, item = self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(found, "0")
        self.emit.range_(base.expr, idx, item)
        test = self.logic.selection_test(filters, Value(item, ELEMENT[base.kind]))
        self.emit.if_(test)
        self.emit.assign(found, item)
        if which == 0:
            self.emit.break_()
        self.emit.end()
        self.emit.end()
        return Value(found, ELEMENT[base.kind])
