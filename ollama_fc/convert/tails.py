"""A loop's closing `{% if loop.last and R %}X{% endif %}` moved after the loop.

Chat templates end their message loop with the generation prompt: `{% if loop.last and
add_generation_prompt %}<|assistant|>{% endif %}`. Go has no call-free `loop.last`: every step
compares its index with the last one (a reflective call, about a microsecond, per message).
After the loop the same `if` runs once: `{% if xs and R %}X{% endif %}`.

It renders the same when the `if` is the loop body's last statement and nothing can skip it or
tell the difference:
- the loop has no filter, no `else` and iterates a plain variable that no `set` gives a filter's
  or call's value (so `xs` is a list, a string or a mapping, not a generator, and its truth
  says whether the loop ran at least once; re-reading it costs nothing);
- no `break` or `continue` in the body (the last step reaches its end);
- the `if` has no `elif` or `else`, and names neither `loop`, the loop variable nor any name the
  body sets (loop-scoped in Jinja; a name the `if` itself sets is one, and would leak out).

Then R, evaluated only on the last step right after everything else in it, sees what it sees
after the loop; X prints at the same place in the output.
"""

from __future__ import annotations

from jinja2 import nodes

from ..jinja_index import statements
from .analysis import assigned_names, is_loop_attr, scope_nodes

#: values a `set` may give the iterated variable: a list, a string, a slice of one; never a
#: filter's or call's result, which may be a generator (always true, even when empty)
PLAIN_VALUES = (nodes.Name, nodes.Getitem, nodes.List, nodes.Tuple, nodes.Const)


def hoist_last_steps(tree: nodes.Template) -> nodes.Template:
    """The tree with every loop's closing `if loop.last ...` moved after the loop."""
    lazy = {
        assign.target.name
        for assign in statements(tree)
        if isinstance(assign, nodes.Assign)
        and isinstance(assign.target, nodes.Name)
        and not isinstance(assign.node, PLAIN_VALUES)
    }
    for node in [tree, *statements(tree)]:  # (expressions hold no body)
        for field in ("body", "else_"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(isinstance(n, nodes.For) for n in body):
                setattr(node, field, _hoisted(body, lazy))
    return tree


def _hoisted(body: list[nodes.Node], lazy: set[str]) -> list[nodes.Node]:
    statements: list[nodes.Node] = []
    for node in body:
        statements.append(node)
        tail = _movable_tail(node, lazy) if isinstance(node, nodes.For) else None
        if tail is not None:
            loop, seq, last_if, rest = tail
            loop.body = loop.body[:-1]
            ran = nodes.Name(seq.name, "load", lineno=last_if.lineno)
            test = ran if rest is None else nodes.And(ran, rest, lineno=last_if.lineno)
            statements.append(nodes.If(test, last_if.body, [], [], lineno=last_if.lineno))
    return statements


def _movable_tail(loop: nodes.For, lazy: set[str]) -> tuple[nodes.For, nodes.Name, nodes.If, nodes.Expr | None] | None:
    """The loop, the variable it iterates, its closing `if` and that `if`'s test without
    `loop.last` (None: nothing else), where moving the `if` after the loop renders the same."""
    seq = loop.iter
    if loop.recursive or loop.test is not None or loop.else_ or not loop.body:
        return None
    if not isinstance(seq, nodes.Name) or seq.name in lazy or not isinstance(loop.target, nodes.Name):
        return None
    last_if = loop.body[-1]
    if not isinstance(last_if, nodes.If) or last_if.elif_ or last_if.else_:
        return None
    test = last_if.test
    if is_loop_attr(test, "last"):
        rest = None
    elif isinstance(test, nodes.And) and is_loop_attr(test.left, "last"):
        rest = test.right
    else:
        return None
    if any(isinstance(node, (nodes.Break, nodes.Continue)) for node in scope_nodes(loop.body)):
        return None
    moved = [*last_if.body, *([rest] if rest is not None else [])]
    scoped = {"loop", loop.target.name, *assigned_names(loop.body)}
    if seq.name in scoped or any(
        name.name in scoped
        for node in moved
        for name in [node, *node.find_all(nodes.Name)]
        if isinstance(name, nodes.Name)
    ):
        return None
    return loop, seq, last_if, rest
