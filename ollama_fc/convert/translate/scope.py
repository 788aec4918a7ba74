"""Jinja scopes: the names a block of template code sees, bound to Values."""

from __future__ import annotations

from dataclasses import dataclass

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
