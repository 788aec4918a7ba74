"""The least any exact conversion of a chat template can cost Ollama per render.

Ollama's template package calls every builtin (`eq`, `index`, `len`, `printf`, ...) through
reflection, about a microsecond each, while ranging, testing a variable's truth and printing a
field cost tens of nanoseconds (docs/RENDER_COST.md, "What Ollama's template package
charges"). Go templates have no call-free way to compare two strings, trim a text or escape it. So where a model's Jinja, for
every message it loops over, compares something of the message with a value (its role, most
often), trims its text, escapes it or changes its case, any template that renders what the
Jinja renders makes at least one builtin call per message (the first excepted: a loop over
`messages[1:]` skips it).

`floor_template` is that least template: a range over `.Messages` with one `eq` per message and
nothing printed. Timed beside a pair's hand-written template it bounds from below what an exact
conversion of the pair can reach; `per_message_call` decides, from the Jinja's syntax tree and
conservatively, whether the pair's Jinja surely makes such a call (where it is unsure, the
floor is the bare range).
"""

from __future__ import annotations

from jinja2 import nodes

from ollama_fc import jinja

#: ranging over the messages, nothing else: the floor of any template that visits each message
BARE_RANGE = "{{ range .Messages }}{{ end }}"
#: one string comparison per message but the first, nothing printed
ONE_CALL_PER_MESSAGE = '{{ range $i, $m := .Messages }}{{ if $i }}{{ if eq $m.Role "user" }}{{ end }}{{ end }}{{ end }}'

#: filters that read every byte of a text (or change it) and so need a builtin in Go
_TEXT_FILTERS = {"trim", "tojson", "title", "upper", "lower", "capitalize", "replace", "indent"}
#: string methods that do the same
_TEXT_METHODS = {"strip", "lstrip", "rstrip", "title", "upper", "lower", "startswith", "endswith", "split", "replace"}
#: constants a value can be compared with by its truth, without a call (`x == ''` is `not x`)
_FALSY_CONSTANTS = ("", None, False, 0)


def floor_template(source: str) -> tuple[str, str | None]:
    """The floor template for this Jinja and why (None: the bare range)."""
    reason = per_message_call(source)
    return (ONE_CALL_PER_MESSAGE if reason else BARE_RANGE), reason


def per_message_call(source: str) -> str | None:
    """What the Jinja surely computes with a builtin for every message of a loop over the
    messages (`for m in messages` or a slice of it, or `loop_messages`), or None."""
    for loop in jinja.parse(source).find_all(nodes.For):
        if not isinstance(loop.target, nodes.Name) or not _over_messages(loop.iter):
            continue
        reason = _in_every_step(loop.body, loop.target.name)
        if reason:
            return reason
    return None


def _over_messages(iterable: nodes.Node) -> bool:
    if isinstance(iterable, nodes.Getitem) and isinstance(iterable.arg, nodes.Slice):
        iterable = iterable.node  # messages[1:]: every message but the first few
    return isinstance(iterable, nodes.Name) and iterable.name in {"messages", "loop_messages"}


def _in_every_step(body: list[nodes.Node], message: str) -> str | None:
    """A call made on every pass through `body`, named, or None. Only what runs whatever the
    data counts: an `if`'s test, or a call made in every one of its branches; never the body
    of a nested loop (it may run zero times)."""
    for statement in body:
        reason: str | None = None
        if isinstance(statement, nodes.Output):
            reason = next(filter(None, (_evaluated(e, message) for e in statement.nodes)), None)
        elif isinstance(statement, nodes.Assign):
            reason = _evaluated(statement.node, message)
        elif isinstance(statement, nodes.If):
            reason = _evaluated(statement.test, message)
            if reason is None:
                branches = [statement.body, *(branch.body for branch in statement.elif_), statement.else_]
                found = [_in_every_step(branch, message) for branch in branches]
                reason = found[0] if all(found) else None
        if reason:
            return reason
    return None


def _evaluated(expr: nodes.Node, message: str) -> str | None:
    """A call that evaluating `expr` surely makes on the message, or None. The right operand
    of `and` / `or` and the branches of an inline `if` may not be evaluated."""
    if isinstance(expr, nodes.Compare) and expr.ops:
        left, right = expr.expr, expr.ops[0].expr
        if expr.ops[0].op in {"eq", "ne", "lt", "gt", "lteq", "gteq"}:
            for side, other in ((left, right), (right, left)):
                if _reads(side, message) and not _is_falsy_constant(other):
                    return f"compares {_spelled(side)} with a value"
        return _evaluated(left, message) or _evaluated(right, message)
    if isinstance(expr, (nodes.And, nodes.Or)):
        return _evaluated(expr.left, message)
    if isinstance(expr, nodes.CondExpr):
        return _evaluated(expr.test, message)
    if isinstance(expr, nodes.Filter) and expr.node is not None:
        if expr.name in _TEXT_FILTERS and _reads(expr.node, message):
            return f"applies |{expr.name} to {_spelled(expr.node)}"
        return _evaluated(expr.node, message)
    if isinstance(expr, nodes.Call) and isinstance(expr.node, nodes.Getattr):
        if expr.node.attr in _TEXT_METHODS and _reads(expr.node.node, message):
            return f"calls .{expr.node.attr}() on {_spelled(expr.node.node)}"
    if isinstance(expr, (nodes.Concat, nodes.Add, nodes.Getitem, nodes.Getattr, nodes.Not)):
        return next(filter(None, (_evaluated(child, message) for child in expr.iter_child_nodes())), None)
    return None


def _reads(expr: nodes.Node, message: str) -> bool:
    """`expr` is the message or a field of it (`m`, `m['role']`, `m.content`)."""
    while isinstance(expr, (nodes.Getitem, nodes.Getattr)):
        expr = expr.node
    return isinstance(expr, nodes.Name) and expr.name == message


def _is_falsy_constant(expr: nodes.Node) -> bool:
    return isinstance(expr, nodes.Const) and any(
        expr.value is value or (type(expr.value) is type(value) and expr.value == value) for value in _FALSY_CONSTANTS
    )


def _spelled(expr: nodes.Node) -> str:
    """`message['role']`-like text for a message field (for the report)."""
    if isinstance(expr, nodes.Getitem) and isinstance(expr.arg, nodes.Const):
        return f"{_spelled(expr.node)}[{expr.arg.value!r}]"
    if isinstance(expr, nodes.Getattr):
        return f"{_spelled(expr.node)}.{expr.attr}"
    return expr.name if isinstance(expr, nodes.Name) else type(expr).__name__
