"""Jinja scopes: the names a block of template code sees, bound to Values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from jinja2 import nodes

from ..ops.values import Loop, Value


@dataclass
class Frame:
    """A Jinja scope: names bound to Go variables (or fixed values), and the enclosing loop."""

    names: dict[str, Value]
    parent: Frame | None = None
    loop: Loop | None = None
    #: how many runtime `if`s enclosed the scope's start; a `set` at the same depth always runs
    depth: int = 0

    def lookup(self, name: str) -> Value | None:
        frame: Frame | None = self
        while frame is not None:
            if name in frame.names:
                return frame.names[name]
            frame = frame.parent
        return None

    def owner(self, name: str) -> Frame | None:
        frame: Frame | None = self
        while frame is not None:
            if name in frame.names:
                return frame
            frame = frame.parent
        return None


NodeT = TypeVar("NodeT", bound=nodes.Node)
Result = TypeVar("Result")
#: the plain translation of a node (`expr_<Node>`, `stmt_<Node>`): what a print plan's hook for
#: that node (`plan_expr_<Node>`, `plan_stmt_<Node>`, see `Core.expr`) falls back on
Translate = Callable[[NodeT, Frame], Result]
