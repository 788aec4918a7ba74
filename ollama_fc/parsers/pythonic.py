"""Pythonic call lists, `[get_weather(city="Paris"), now()]` (Llama 3.2, ToolACE, Typhoon2), and
the same calls without their list brackets (`get_weather(city="Paris")`, one per line).

Read with Python's parser and a walk over literal nodes; nothing is evaluated. The list has no
marker of its own, so it counts only as the last thing in the output; a bare call is found by
the offered tools' names.

Sources: Llama 3.2's and Llama 4's model cards (prompt format), vLLM's
`test_pythonic_tool_parser.py` and `test_llama4_pythonic_tool_parser.py`.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

from .base import Marker, ParsedCall, ToolCallParser
from .lenient import NotALiteral, literal_from_node, repair


class PythonicParser(ToolCallParser):
    name = "pythonic"
    models = "Llama 3.2 / 4 (pythonic), ToolACE, LFM2, OLMo 3, Gemma 3 (pythonic)"
    markers = (
        Marker("[", "bracket", must_end=True),
        Marker("{name}(", "bracket", must_end=True, per_tool=True),
        Marker("functions.{name}(", "bracket", must_end=True, per_tool=True),
    )

    def read_region(self, region: str) -> list[ParsedCall] | None:
        return read_call_list(region, function_wrappers=False)


def _parse(source: str, mode: str) -> ast.AST | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def read_call_list(region: str, *, function_wrappers: bool) -> list[ParsedCall] | None:
    """Read `[f(a=1), g()]` or a bare `f(a=1)`; with `function_wrappers`, also
    `[Function(arguments={...}, name=f)]`."""
    tree = _parse(region.strip(), "eval")  # most model text needs no repair
    if tree is None:
        try:
            tree = _parse(repair(region.strip()), "eval")
        except NotALiteral:
            return None
    if not isinstance(tree, ast.Expression):
        return None
    elements = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    return _calls(elements, function_wrappers)


# Where call lines can start: after any comment lines, a name, maybe dotted, then its parenthesis.
# Wrapper bodies full of other text are turned away by this before Python's parser starts.
_CALL_LINE_START = re.compile(r"(?:\s*#[^\n]*\n)*\s*[A-Za-z_][\w.]*\s*\(")


def read_call_lines(body: str) -> list[ParsedCall] | None:
    """Read calls written as Python statements, one per line (`get_weather(city="Paris")`), as in
    a ```` ```python ```` block; None if any statement is something else."""
    if _CALL_LINE_START.match(body) is None:
        return None
    tree = _parse(body.strip(), "exec")
    if not isinstance(tree, ast.Module) or not tree.body:
        return None
    if not all(isinstance(statement, ast.Expr) for statement in tree.body):
        return None
    return _calls([statement.value for statement in tree.body if isinstance(statement, ast.Expr)], True)


def _calls(elements: list[ast.expr], function_wrappers: bool) -> list[ParsedCall] | None:
    if not elements:
        return None
    calls: list[ParsedCall] = []
    for element in elements:
        if not isinstance(element, ast.Call):
            return None
        try:
            call = _wrapped_call(element) if function_wrappers else None
            if call is None:
                call = _direct_call(element)
        except NotALiteral:
            return None
        if call is None:
            return None
        calls.append(call)
    return calls


def _callee_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # functions.get_weather(...), brave_search.call(...)
        if node.attr == "call" and isinstance(node.value, ast.Name):
            return node.value.id
        return node.attr
    return None


def _direct_call(node: ast.Call) -> ParsedCall | None:
    """`get_weather(city="Paris")`: keyword arguments, or one positional dict of arguments."""
    name = _callee_name(node.func)
    if name is None:
        return None
    arguments: dict[str, Any] = {}
    if node.args:
        if len(node.args) != 1 or node.keywords:
            return None
        value = literal_from_node(node.args[0])
        if not isinstance(value, dict):
            return None
        arguments = value
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        arguments[keyword.arg] = literal_from_node(keyword.value)
    return ParsedCall(name, arguments)


def _wrapped_call(node: ast.Call) -> ParsedCall | None:
    """`Function(arguments1={...}, name1=get_weather)` as the Typhoon2 prompt asks, and variants
    with unnumbered keywords, a quoted name, or the name first."""
    if _callee_name(node.func) not in ("Function", "function", "FunctionCall", "Tool"):
        return None
    name: str | None = None
    arguments: dict[str, Any] | None = None
    for keyword in node.keywords:
        key = (keyword.arg or "").rstrip("0123456789")
        if key == "name":
            if isinstance(keyword.value, ast.Name):
                name = keyword.value.id
            else:
                value = literal_from_node(keyword.value)
                name = value if isinstance(value, str) else None
        elif key in ("arguments", "args", "parameters"):
            value = literal_from_node(keyword.value)
            if not isinstance(value, dict):
                return None
            arguments = value
        else:
            return None
    if not name or node.args:
        return None
    return ParsedCall(name, arguments or {})
