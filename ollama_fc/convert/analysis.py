"""Reading a Jinja template's syntax tree before it is translated.

jinja2 parses it the way transformers configures its chat-template environment; the helpers
below answer whole-tree questions the single pass of the translator needs up front.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import cast

import jinja2
from jinja2 import nodes

from .. import jinja
from ..errors import ConversionError
from ..jinja_index import TreeIndex


def parse_jinja(template: str) -> nodes.Template:
    """The syntax tree transformers' environment parses (see jinja.py)."""
    try:
        return jinja.parse(template)
    except jinja2.TemplateSyntaxError as exc:
        raise ConversionError(jinja.syntax_error(exc)) from exc


def names_holding_text(index: TreeIndex) -> set[str]:
    """Names (and `ns.attr`s) set from an expression reading some `content` or `text` (or such a
    name), transitively."""
    sets = [cast("nodes.Assign | nodes.AssignBlock", a) for a in index.all((nodes.Assign, nodes.AssignBlock))]
    assigns: list[tuple[str, nodes.Node]] = [
        (
            a.target.name if isinstance(a.target, nodes.Name) else f"{a.target.name}.{a.target.attr}",
            a.node if isinstance(a, nodes.Assign) else a,
        )
        for a in sets
        if isinstance(a.target, (nodes.Name, nodes.NSRef))
    ]
    # a loop over a text (its split parts, its characters) binds pieces of that text
    assigns += [(f.target.name, f.iter) for f in index.all(nodes.For) if isinstance(f.target, nodes.Name)]
    # a macro's parameter holds what its calls pass it
    macros = {m.name: m for m in index.all(nodes.Macro)}
    for call in index.all(nodes.Call):
        macro = macros.get(call.node.name) if isinstance(call.node, nodes.Name) else None
        if macro is not None:
            params = [p.name for p in macro.args]
            assigns += list(zip(params, call.args))
            assigns += [(kw.key, kw.value) for kw in call.kwargs if kw.key in params]
    found: set[str] = set()

    def reads_text(expr: nodes.Node) -> bool:
        for sub in (expr, *index.find_all(expr, (nodes.Getattr, nodes.Getitem, nodes.Name, nodes.Call))):
            if isinstance(sub, nodes.Call) and isinstance(sub.node, nodes.Getattr) and sub.node.attr == "get":
                if sub.args and isinstance(sub.args[0], nodes.Const) and sub.args[0].value in {"content", "text"}:
                    return True
            if isinstance(sub, nodes.Getattr) and sub.attr in {"content", "text"}:
                return True
            if (
                isinstance(sub, nodes.Getattr)
                and isinstance(sub.node, nodes.Name)
                and f"{sub.node.name}.{sub.attr}" in found
            ):
                return True
            if (
                isinstance(sub, nodes.Getitem)
                and isinstance(sub.arg, nodes.Const)
                and sub.arg.value in {"content", "text"}
            ):
                return True
            if isinstance(sub, nodes.Name) and sub.name in found:
                return True
        return False

    changed = True
    while changed:
        changed = False
        for name, expr in assigns:
            if name not in found and reads_text(expr):
                found.add(name)
                changed = True
    return found


def growing_lists(index: TreeIndex) -> set[str]:
    """Names `set` from a `+` with a list literal, or `.append`ed to: lists built at run time,
    so their literal starting value must be a Go value too, not a static one."""
    found: set[str] = set()
    for assign in index.all(nodes.Assign):
        if isinstance(assign.target, nodes.Name) and isinstance(assign.node, nodes.Add):
            if any(isinstance(side, nodes.List) for side in (assign.node.left, assign.node.right)):
                found.add(assign.target.name)
    for call in index.all(nodes.Call):
        callee = call.node
        if (
            isinstance(callee, nodes.Getattr)
            and callee.attr in {"append", "pop"}
            and isinstance(callee.node, nodes.Name)
        ):
            found.add(callee.node.name)
    return found


def filtered_names(index: TreeIndex) -> set[str]:
    """Names `set` from a `selectattr`/`rejectattr` chain: filtered views of a list, which a
    `set` on some paths only turns on with a Go flag."""
    found: set[str] = set()
    for assign in index.all(nodes.Assign):
        chain = [assign.node, *index.find_all(assign.node, nodes.Filter)]
        if isinstance(assign.target, nodes.Name) and any(
            isinstance(f, nodes.Filter) and f.name in {"selectattr", "rejectattr"} for f in chain
        ):
            found.add(assign.target.name)
    return found


def literal_dict_names(index: TreeIndex) -> set[str]:
    """Names `set` to a dict literal: a `set` on some paths turns the literal on with a Go flag."""
    return {
        assign.target.name
        for assign in index.all(nodes.Assign)
        if isinstance(assign.target, nodes.Name) and isinstance(assign.node, nodes.Dict)
    }


def scope_nodes(
    body: Iterable[nodes.Node], skip: Callable[[nodes.Node], bool] = lambda node: False
) -> Iterator[nodes.Node]:
    """Every node of this scope, in order: nested for loops and macros are yielded but not
    entered (they scope their own names and their own `loop`), nor is a node `skip` is true of."""
    for node in body:
        yield node
        if not isinstance(node, (nodes.For, nodes.Macro)) and not skip(node):
            yield from scope_nodes(node.iter_child_nodes(), skip)


def assigned_names(body: Iterable[nodes.Node]) -> list[str]:
    """Names `set` in this scope (not inside nested for loops or macros, which scope their own)."""
    found: list[str] = []
    for node in scope_nodes(body, skip=lambda node: isinstance(node, nodes.Expr)):  # (which set nothing)
        if isinstance(node, (nodes.Assign, nodes.AssignBlock)):
            targets = node.target.items if isinstance(node.target, nodes.Tuple) else [node.target]
            for target in targets:
                if isinstance(target, nodes.Name) and target.name not in found:
                    found.append(target.name)
    return found


#: list and dict methods that change the object they are called on
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem"}


def only_raises(statement: nodes.Node, index: TreeIndex) -> bool:
    """Is this `for`/`if` a check that does nothing but maybe call `raise_exception`?

    It prints no text, sets no name and calls nothing that changes state, so once the
    `raise_exception` calls are dropped (Ollama renders instead of refusing) the whole
    statement renders nothing.
    """
    raises = False

    def pure(expr: nodes.Node) -> bool:
        for call in [expr, *index.find_all(expr, nodes.Call)]:
            if not isinstance(call, nodes.Call):
                continue
            if isinstance(call.node, nodes.Getattr) and call.node.attr not in MUTATING_METHODS:
                continue
            if isinstance(call.node, nodes.Name) and call.node.name == "range":
                continue
            return False
        return True

    def check(node: nodes.Node) -> bool:
        nonlocal raises
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData) and not child.data:
                    continue
                is_raise = (
                    isinstance(child, nodes.Call)
                    and isinstance(child.node, nodes.Name)
                    and child.node.name == "raise_exception"
                )
                if not is_raise or not all(pure(a) for a in cast(nodes.Call, child).args):
                    return False
                raises = True
            return True
        if isinstance(node, nodes.If):
            return pure(node.test) and all(check(n) for n in [*node.body, *node.elif_, *node.else_])
        if isinstance(node, nodes.For):
            return (
                (node.test is None or pure(node.test))
                and pure(node.iter)
                and all(check(n) for n in [*node.body, *node.else_])
            )
        return isinstance(node, (nodes.Continue, nodes.Break))

    return isinstance(statement, (nodes.For, nodes.If)) and check(statement) and raises


#: methods of a mapping that read it (any other method call on it may change it)
READING_METHODS = {"get", "items", "keys", "values"}


def constant_field_reads(body: Iterable[nodes.Node], name: str, index: TreeIndex) -> Counter[tuple[str, ...]] | None:
    """How often `body` reads each path of constant keys of `name` (`name.a`, `name['a'].b`:
    every prefix of a path counts), for a name the body never binds again nor calls a
    changing method of, at any depth; None where it does."""
    reads: Counter[tuple[str, ...]] = Counter()
    for statement in body:
        called = {id(call.node) for call in index.find_all(statement, nodes.Call)}
        for node in [statement, *index.find_all(statement, (nodes.Name, nodes.Getattr, nodes.Getitem))]:
            if isinstance(node, nodes.Name) and node.name == name and node.ctx != "load":
                return None  # bound again (set, for, a macro's parameter)
            path = _key_path(node, name)
            if path is None or getattr(node, "ctx", "load") != "load":
                continue
            if id(node) in called:
                if path[-1] not in READING_METHODS:
                    return None
            else:
                reads[path] += 1
    return reads


def _key_path(node: nodes.Node, name: str) -> tuple[str, ...] | None:
    """The constant keys `node` reads of the variable `name` (`name.a['b']`: a, b), if it is such a read."""
    path: list[str] = []
    while isinstance(node, (nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr):
            path.append(node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            path.append(node.arg.value)
        else:
            return None
        node = node.node
    if not (path and isinstance(node, nodes.Name) and node.name == name):
        return None
    return tuple(reversed(path))


def revindex0_spelled_out(node: nodes.Sub) -> nodes.Name | None:
    """The list `xs` of `(xs | length - 1) - loop.index0` (which is `loop.revindex0` in a loop
    over `xs`), if `node` is that."""
    index0, minus_one = node.right, node.left
    if not (
        isinstance(index0, nodes.Getattr)
        and index0.attr == "index0"
        and isinstance(index0.node, nodes.Name)
        and index0.node.name == "loop"
        and isinstance(minus_one, nodes.Sub)
        and isinstance(minus_one.right, nodes.Const)
        and minus_one.right.value == 1
        and isinstance(minus_one.left, nodes.Filter)
        and minus_one.left.name == "length"
        and isinstance(minus_one.left.node, nodes.Name)
        and not (minus_one.left.args or minus_one.left.kwargs)
    ):
        return None
    return minus_one.left.node


def neighbour_offset(index: nodes.Expr) -> int | None:
    """-1 for `loop.index0 - 1` (or `loop.index - 2`), 1 for `loop.index0 + 1` (or
    `loop.index`): the position beside the step's own, as `xs[...]` in a loop over `xs` reads
    the element before or after it; None for any other index."""
    offset = 0
    if isinstance(index, (nodes.Add, nodes.Sub)) and isinstance(index.right, nodes.Const):
        step = index.right.value
        if not isinstance(step, int) or isinstance(step, bool):
            return None
        offset, index = (step if isinstance(index, nodes.Add) else -step), index.left
    if not (isinstance(index, nodes.Getattr) and isinstance(index.node, nodes.Name) and index.node.name == "loop"):
        return None
    offset += {"index0": 0, "index": 1}.get(index.attr, 99)
    return offset if offset in (-1, 1) else None


def stopping_bodies(index: TreeIndex) -> dict[int, int]:
    """The bodies after which their loop may stop, by `id()`, with the loop's.

    The loop's statements but the last only set names of the step and call nothing, and the
    last is an `if` (no `else`) that either
    - is tested on a namespace flag first (`ns.f and ...`, `not ns.f and ...`), and the one
      `set` of that flag in it makes the test fail from then on: the loop may stop at the end
      of the body holding that `set` (reached from the `if` through last statements only);
    - or only sets namespace attributes to constants: a later step could only set them again.
    A loop with an empty body stops at its first step (its `else` still sees that one ran)."""
    found: dict[int, int] = {}
    for loop in index.all(nodes.For):
        if loop.recursive:
            continue
        if not loop.body:
            found[id(loop.body)] = id(loop)
            continue
        if loop.test is not None:
            continue
        *before, last = loop.body
        if not isinstance(last, nodes.If) or last.elif_ or last.else_:
            continue
        if not all(isinstance(s, nodes.Assign) and isinstance(s.target, nodes.Name) for s in before):
            continue
        if any(index.find_all(s, nodes.Call) for s in before):
            continue
        if all(
            isinstance(s, nodes.Assign) and isinstance(s.target, nodes.NSRef) and isinstance(s.node, nodes.Const)
            for s in last.body
        ):
            found[id(last.body)] = id(loop)
            continue
        flag = _leading_flag(cast(nodes.Expr, last.test))
        if flag is None:
            continue
        (ns, attr), passing = flag
        targets = [
            loop.target,
            *index.find_all(loop.target, nodes.Name),
            *(cast(nodes.Assign, s).target for s in before),
        ]
        if ns in {target.name for target in targets if isinstance(target, nodes.Name)}:
            continue  # (a namespace of the step's own)
        sets = [
            s
            for s in index.find_all(last, nodes.Assign)
            if isinstance(s.target, nodes.NSRef) and (s.target.name, s.target.attr) == (ns, attr)
        ]
        if len(sets) != 1 or not isinstance(sets[0].node, nodes.Const) or bool(sets[0].node.value) == passing:
            continue
        body = _body_ending_with(last.body, sets[0])
        if body is not None:
            found[id(body)] = id(loop)
    return found


def _body_ending_with(body: list[nodes.Node], statement: nodes.Node) -> list[nodes.Node] | None:
    """The list holding `statement`: `body`, or a body of an `if` that ends `body`, and so on."""
    if any(s is statement for s in body):
        return body
    if not body or not isinstance(body[-1], nodes.If):
        return None
    last = body[-1]
    for branch in [last.body, *(e.body for e in last.elif_), last.else_]:
        found = _body_ending_with(branch, statement)
        if found is not None:
            return found
    return None


def _leading_flag(test: nodes.Expr) -> tuple[tuple[str, str], bool] | None:
    """The namespace attribute an `and` chain tests first, and the truth it needs: `ns.f`
    (True) or `not ns.f` (False)."""
    while isinstance(test, nodes.And):
        test = test.left
    passing = True
    if isinstance(test, nodes.Not):
        test, passing = test.node, False
    if isinstance(test, nodes.Getattr) and isinstance(test.node, nodes.Name):
        return (test.node.name, test.attr), passing
    return None


def first_read_in_expressions(body: list[nodes.Node]) -> bool:
    """Does this loop body read `loop.first` other than as the whole test of an `if` or under
    `not`? There it is the index's falsity, a call-free `if $i` / `else` or the index's truth;
    elsewhere it costs a call (`not $i`) unless the loop keeps a flag for it. Nested loops
    (their own `loop`) and macros are not looked into."""

    def negated_first(node: nodes.Node) -> bool:
        return isinstance(node, nodes.Not) and is_loop_attr(node.node, "first")

    visited = list(scope_nodes(body, skip=negated_first))
    whole_tests = {id(node.test) for node in visited if isinstance(node, nodes.If)}
    return any(is_loop_attr(node, "first") and id(node) not in whole_tests for node in visited)


def is_loop_attr(node: nodes.Node, attr: str) -> bool:
    """`node` is `loop.<attr>`."""
    return (
        isinstance(node, nodes.Getattr)
        and node.attr == attr
        and isinstance(node.node, nodes.Name)
        and node.node.name == "loop"
    )
