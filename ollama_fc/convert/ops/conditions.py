"""Fewer function calls in the conditions of `if` actions, with the same truth value.

Go's text/template pays a reflective call for every builtin (`not`, `eq`...), where an `if` on a
variable costs almost nothing; the translator composes conditions piece by piece and so writes
`not (not X)`, `and X true`, `or (or (eq r "a") (eq r "b")) ...`. In an `if` only the truth of
the condition matters, so these fold: `X`, `X`, one `eq r "a" "b"`; `not (eq a b)` is `ne a b`.
Each rewrite keeps the truth value and which operands are evaluated: the template renders the same
bytes and fails where it failed. A condition this module cannot read is left as it is.

Two rewrites need more than the condition's text: a loop index (a Go `int` the translator names)
compared with 0 is its own truth (`eq $i 0` is `not $i`, `ne $i 0` is `$i`; `loop.first`,
`loop.index0 == 0`), and an `if not X` on a bare operand without an `else` becomes
`if X }}{{ else` (`invert_negated_ifs`), so the test calls nothing.

A condition the translator composed of `GoCall`s (and `GoField`s) is folded from the calls it
carries; only an operand given as text (not one token) and a condition given whole as text are
parsed. Every condition is written anew, folded or not, and without the parentheses around it
(`(eq $a "x")` as `eq $a "x"`: the same pipeline, evaluated one level less deep), so the output
does not depend on how a condition was built.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeGuard, Union

from ..go import tree
from ..go.calls import GoCall, GoField

#: a Go string, raw string or character literal; `(`, `)`; or any other run of characters
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|\'(?:[^\'\\]|\\.)*\'|[()]|[^\s()]+')
#: operands that are constants: evaluating one calls nothing and cannot fail
LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|-?[0-9][0-9a-fA-Fx._]*|true|false')


@dataclass(frozen=True)
class Field:
    """A parenthesised command followed by a field chain: `(index $m 0).Role`."""

    inner: Command
    chain: str


Node = Union[str, "Command", Field]
#: a function call (head and arguments) or, with one element, an operand
Command = tuple[Node, ...]


#: `eq X 0` / `ne X 0` on a variable: folded when X is a known Go int
INT_ZERO = re.compile(r"\b(?:eq|ne) (\$\w+) 0\b")
#: `if not X` on a variable or a field chain (evaluated the same way as `not`'s argument)
NEGATED_IF = re.compile(r"\{\{ if (?:not (\$\w*(?:\.\w+)*)|\(not (\$\w*(?:\.\w+)*)\)) \}\}")


def simplify_condition(code: str, ints: AbstractSet[str] = frozenset()) -> str:
    """The condition `code` of an `if` with fewer function calls (or unchanged); `ints` are
    variables certain to hold a Go `int` (loop indexes)."""
    if isinstance(code, (GoCall, GoField)) or is_token(code):
        return simplify_composed(code, ints)
    known = frozenset(m.group(1) for m in INT_ZERO.finditer(code) if m.group(1) in ints) if ints else frozenset()
    return _simplify(code, known)


@functools.lru_cache(maxsize=4096)
def _simplify(code: str, ints: frozenset[str]) -> str:
    parsed = parse(code)
    if parsed is None:
        return code
    return render(fold(parsed, truth=True, ints=ints))


def simplify_composed(code: str, ints: AbstractSet[str]) -> str:
    """`simplify_condition` of a composed call or one operand: folded from its calls, not its text."""
    node = node_of(code)
    if node is None:
        return code
    return render(fold(node, truth=True, ints=ints_tested_for_zero(node, ints)))


def node_of(code: str) -> Node | None:
    """`code` as `parse` reads its text: a `GoCall` from its head and arguments (a `GoField`
    from its call), an operand of one token as it is, other text parsed (None where the parser
    cannot read it)."""
    if isinstance(code, GoField):
        call = node_of(code.call)
        return None if not isinstance(call, tuple) else Field(call, code.chain)
    if isinstance(code, GoCall):
        items: list[Node] = [code.head]
        for arg in code.args:
            if isinstance(arg, (GoCall, GoField)):
                inner = node_of(arg)
                if inner is None:
                    return None
                items.append(inner)
                continue
            parsed = operand_items(arg)
            if parsed is None:
                return None
            items.extend(parsed)
        return tuple(items)
    parsed = operand_items(code)
    return None if parsed is None else parsed[0] if len(parsed) == 1 else parsed


def operand_items(text: str) -> Command | None:
    """What an operand's text adds to its call's arguments (one token is itself, no parse)."""
    if is_token(text):
        return None if text in {"|", ":=", "="} else (text,)
    return parse(text)


def is_token(text: str) -> bool:
    """Is `text` one operand token (a variable, a field chain, a literal), read as it is?"""
    return text not in {"(", ")"} and TOKEN.fullmatch(text) is not None


def ints_tested_for_zero(node: Node, ints: AbstractSet[str]) -> frozenset[str]:
    """The known ints compared with 0 somewhere in `node` (what `INT_ZERO` finds in the text)."""
    if not ints:
        return frozenset()
    return frozenset(
        n[1]
        for n in commands(node)
        if len(n) >= 3 and n[0] in {"eq", "ne"} and isinstance(n[1], str) and n[1] in ints and n[2] == "0"
    )


def commands(node: Node) -> list[Command]:
    """Every call in `node`, outermost first, in the order the text writes them."""
    if isinstance(node, str):
        return []
    if isinstance(node, Field):
        return commands(node.inner)
    found = [node] if len(node) > 1 else []
    for item in node:
        found += commands(item)
    return found


def invert_negated_ifs(top: list[tree.Node]) -> None:
    """Every `{{ if not X }}A{{ end }}` (X a variable or field chain) in the tree as
    `{{ if X }}{{ else }}A`, and `{{ if not X }}A{{ else }}B` as `{{ if X }}B{{ else }}A`: the
    same branch runs (`not` and `if` judge truth alike) with no call. A chain with `else if` is
    left as it is."""
    for block in tree.blocks(top):
        if not block.raw.startswith(("{{ if not $", "{{ if (not $")):
            continue
        negated = NEGATED_IF.fullmatch(block.raw)
        if negated is None or len(block.branches) > 1 or any(b.raw != "{{ else }}" for b in block.branches):
            continue
        otherwise = block.branches[0].body if block.branches else []
        block.raw = "{{ if " + (negated.group(1) or negated.group(2)) + " }}"
        block.body, block.branches = otherwise, [tree.Branch("{{ else }}", block.body)]


def parse(code: str) -> Command | None:
    matches = list(TOKEN.finditer(code))
    tokens = [m.group() for m in matches]
    if any(t in {"|", ":=", "="} for t in tokens):
        return None  # a pipeline or an assignment: not a plain condition
    pos = 0

    def command() -> Command | None:
        nonlocal pos
        items: list[Node] = []
        while pos < len(tokens) and tokens[pos] != ")":
            token = tokens[pos]
            pos += 1
            if token != "(":
                items.append(token)
                continue
            inner = command()
            if inner is None or pos >= len(tokens):
                return None
            closing = matches[pos]
            pos += 1
            # `(index $m 0).Role`: a field chain written right after the parenthesis
            if pos < len(tokens) and tokens[pos].startswith(".") and matches[pos].start() == closing.end():
                items.append(Field(inner, tokens[pos]))
                pos += 1
            else:
                items.append(inner)
        return tuple(items) if items else None

    result = command()
    if result is None or pos != len(tokens):
        return None
    return result


def is_call(node: Node, name: str) -> TypeGuard[Command]:
    return isinstance(node, tuple) and len(node) > 1 and node[0] == name


def fold(node: Node, truth: bool, ints: frozenset[str] = frozenset()) -> Node:
    """`node` with the same value, or with the same truth value where only that is used (`truth`)."""
    if isinstance(node, (str, Field)):
        return node
    if len(node) == 1:
        return fold(node[0], truth, ints)
    head, args = node[0], node[1:]
    if truth and head in {"eq", "ne"} and len(args) == 2 and args[0] in ints and args[1] == "0":
        return ("not", args[0]) if head == "eq" else args[0]  # an int is true when it is not 0
    if head == "not" and len(args) == 1:
        operand = fold(args[0], truth=True, ints=ints)
        if operand in {"true", "false"}:
            return "false" if operand == "true" else "true"
        if truth and is_call(operand, "not"):
            return operand[1]
        if is_call(operand, "eq") and len(operand) == 3:
            return ("ne", *operand[1:])
        if is_call(operand, "ne"):
            return ("eq", *operand[1:])
        return ("not", operand)
    if head in {"and", "or"}:
        flat: list[Node] = []
        for arg in args:
            folded = fold(arg, truth, ints)
            flat.extend(folded[1:] if is_call(folded, str(head)) else [folded])
        if truth:
            neutral = "true" if head == "and" else "false"
            flat = [a for a in flat if a != neutral] or [neutral]
        if head == "or":
            flat = merge_equalities(flat)
        return flat[0] if len(flat) == 1 else (head, *flat)
    return (head, *(fold(arg, truth=False, ints=ints) for arg in args))


def merge_equalities(operands: list[Node]) -> list[Node]:
    """Neighbouring `eq X c...` with the same X and constant c's, as one `eq X c c'...` (Go's
    `eq` is true when its first argument equals any of the others, tried in order)."""
    merged: list[Node] = []
    for operand in operands:
        previous = merged[-1] if merged else None
        if previous is not None and constant_eq(previous) and constant_eq(operand) and previous[1] == operand[1]:
            merged[-1] = (*previous, *operand[2:])
        else:
            merged.append(operand)
    return merged


def constant_eq(node: Node) -> TypeGuard[Command]:
    return is_call(node, "eq") and len(node) >= 3 and all(isinstance(a, str) and LITERAL.fullmatch(a) for a in node[2:])


def render(node: Node, as_argument: bool = False) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, Field):
        return f"({render(node.inner)}){node.chain}"
    if len(node) == 1:
        return render(node[0], as_argument)
    text = " ".join(render(item, as_argument=True) for item in node)
    return f"({text})" if as_argument else text
