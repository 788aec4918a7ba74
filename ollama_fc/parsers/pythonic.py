"""Pythonic call lists, `[get_weather(city="Paris"), now()]` (Llama 3.2, ToolACE, Typhoon2).

Read with Python's parser and a walk over literal nodes; nothing is evaluated. The list has no
marker of its own, so it counts only as the last thing in the output.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from .base import Marker, ParsedCall, ToolCallParser
from .lenient import NotALiteral, literal_from_node, repair


class PythonicParser(ToolCallParser):
    name = "pythonic"
    markers = (Marker("[", "bracket", must_end=True),)

    def read_region(self, region: str) -> list[ParsedCall] | None:
        return read_call_list(region, function_wrappers=False)


def read_call_list(region: str, *, function_wrappers: bool) -> list[ParsedCall] | None:
    """Read `[f(a=1), g()]`; with `function_wrappers`, also `[Function(arguments={...}, name=f)]`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(repair(region.strip()), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree.body, ast.List) or not tree.body.elts:
        return None
    calls: list[ParsedCall] = []
    for element in tree.body.elts:
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
    if isinstance(node, ast.Attribute):  # functions.get_weather(...)
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
