"""Questions asked of IR nodes (`ir.py`) and rewrites of them: is a variable a temporary, is a
pipeline one variable; a node with some of its nodes replaced, or its variables renamed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import TypeVar

from .ir import Action, Chain, Command, Dot, Field, Node, Operand, Pipe, Variable

N = TypeVar("N", bound=Node)

#: a temporary variable of the translator: `$_` and its number
TEMPORARY_PREFIX = "$_"


def is_temporary(name: str) -> bool:
    """Is the variable `name` (`$_12`) one of the translator's temporaries?"""
    return name.startswith(TEMPORARY_PREFIX) and name[2:].isdigit()


def is_simple_variable(node: Node) -> bool:
    """Is `node` (an action or a pipeline) one variable or a field chain of one (`$x.Role`)?
    Reading it again gives the same value and calls nothing."""
    pipe = node.pipe if isinstance(node, Action) else node
    return (
        isinstance(pipe, Pipe)
        and not pipe.decl
        and len(pipe.cmds) == 1
        and len(pipe.cmds[0].args) == 1
        and isinstance(pipe.cmds[0].args[0], Variable)
    )


def field_of(node: Node | None, name: str) -> Operand | None:
    """What the operand `node` reads the field `name` of, where it is one read through fields
    ending in `name` (`$m` of `$m.Content`, `(index $m 0)` of `(index $m 0).Content`)."""
    if not isinstance(node, (Variable, Field, Chain)) or node.fields[-1:] != (name,):
        return None
    fields = node.fields[:-1]
    if isinstance(node, Variable):
        return Variable(node.name, fields)
    if isinstance(node, Chain):
        return Chain(node.node, fields) if fields else node.node
    return Field(fields) if fields else Dot()


def transform(node: N, change: Callable[[Node], Node | None]) -> N:
    """`node` with each node inside it that `change` gives a new node for replaced by it
    (outermost first: a replaced node's own nodes are not visited); the same node where
    nothing changed."""
    new = change(node)
    if new is not None:
        return new  # type: ignore[return-value]
    changes = {}
    for spec in fields(node):  # type: ignore[arg-type]
        old = getattr(node, spec.name)
        kept = _transformed(old, change)
        if kept is not old:
            changes[spec.name] = kept
    return replace(node, **changes) if changes else node  # type: ignore[type-var]


def _transformed(value: object, change: Callable[[Node], Node | None]) -> object:
    if isinstance(value, Node):
        return transform(value, change)
    if isinstance(value, tuple) and value and isinstance(value[0], (Node, tuple)):
        items = tuple(_transformed(item, change) for item in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def rename_variables(node: N, rename: Callable[[str], str]) -> N:
    """`node` with every variable it reads, declares or assigns renamed by `rename`, called in
    the order they are written."""
    return _renamed(node, rename)  # type: ignore[return-value]


def _renamed(node: Node, rename: Callable[[str], str]) -> Node:
    kind = type(node)
    if kind is Variable:
        return Variable(rename(node.name), node.fields)  # type: ignore[attr-defined]
    if kind is Pipe:
        decl = tuple(rename(name) for name in node.decl)  # type: ignore[attr-defined]
        cmds = tuple(_renamed(command, rename) for command in node.cmds)  # type: ignore[attr-defined]
        return Pipe(cmds, decl, node.is_assign)  # type: ignore[arg-type, attr-defined]
    if kind is Command:
        return Command(tuple(_renamed(arg, rename) for arg in node.args))  # type: ignore[misc, attr-defined]
    if kind is Chain:
        return Chain(_renamed(node.node, rename), node.fields)  # type: ignore[arg-type, attr-defined]
    pipe = getattr(node, "pipe", None)
    if pipe is None:
        return node
    return replace(node, pipe=_renamed(pipe, rename))  # type: ignore[type-var]
