"""A Python function as a tool: its JSON Schema from type hints and a Google-style docstring.

Unlike ollama-python's converter, a parameter with a default is not required, `Literal` and
`Enum` keep their values as `enum`, `list[int]` keeps its item type, unions become `anyOf`,
and nested pydantic models, dataclasses and TypedDicts become nested object schemas.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable
from collections.abc import Mapping as AbcMapping
from collections.abc import Sequence as AbcSequence
from typing import Any, Literal, Union

import pydantic

from .errors import ToolCallError

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_MAX_DEPTH = 8


def function_to_tool(func: Callable[..., Any]) -> dict[str, Any]:
    """The tool definition (`{"type": "function", "function": {...}}`) that describes `func`."""
    if not callable(func) or not hasattr(func, "__name__"):
        raise ToolCallError(f"{func!r} is not a named function, so it cannot be offered as a tool")
    summary, arg_docs = parse_docstring(inspect.getdoc(func))
    try:
        hints = typing.get_type_hints(func, include_extras=False)
    except Exception as exc:  # unresolvable forward references
        raise ToolCallError(f"cannot read the type hints of {func.__name__}: {exc}") from None
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(func).parameters.items():
        if name in ("self", "cls") or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        schema = type_schema(annotation)
        if name in arg_docs:
            schema = {**schema, "description": arg_docs[name]}
        properties[name] = schema
        if parameter.default is inspect.Parameter.empty and not _allows_none(annotation):
            required.append(name)
    return {
        "type": "function",
        "function": {
            "name": func.__name__,
            "description": summary,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def type_schema(annotation: Any, depth: int = 0) -> dict[str, Any]:
    """JSON Schema for one type hint."""
    if depth > _MAX_DEPTH:
        return {"type": "object"}
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        schema: dict[str, Any] = {"enum": list(args)}
        kinds = {_SIMPLE.get(type(value)) for value in args}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if origin is Union or (hasattr(types, "UnionType") and isinstance(annotation, types.UnionType)):
        options = [option for option in args if option is not type(None)]
        if len(options) == 1:
            return type_schema(options[0], depth + 1)
        return {"anyOf": [type_schema(option, depth + 1) for option in options]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}
    if origin in (list, set, frozenset, tuple) or origin is AbcSequence:
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        if origin is tuple and len(args) > 1:
            return {"type": "array", "prefixItems": [type_schema(arg, depth + 1) for arg in args]}
        return {"type": "array", "items": type_schema(args[0], depth + 1)} if args else {"type": "array"}
    if annotation in (list, tuple, set):
        return {"type": "array"}
    if origin in (dict, AbcMapping) or annotation is dict:
        if len(args) == 2 and args[1] is not Any:
            return {"type": "object", "additionalProperties": type_schema(args[1], depth + 1)}
        return {"type": "object"}
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return _object_schema(
            annotation,
            {name: field.annotation for name, field in annotation.model_fields.items()},
            {name for name, field in annotation.model_fields.items() if field.is_required()},
            {name: field.description for name, field in annotation.model_fields.items() if field.description},
            depth,
        )
    if typing.is_typeddict(annotation):
        hints = typing.get_type_hints(annotation)
        return _object_schema(annotation, hints, set(annotation.__required_keys__), {}, depth)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        hints = typing.get_type_hints(annotation)
        fields = dataclasses.fields(annotation)
        required = {
            field.name
            for field in fields
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        }
        return _object_schema(annotation, {field.name: hints[field.name] for field in fields}, required, {}, depth)
    return {}


def _object_schema(
    cls: type, hints: dict[str, Any], required: set[str], descriptions: dict[str, str], depth: int
) -> dict[str, Any]:
    _, field_docs = parse_docstring(inspect.getdoc(cls))
    properties: dict[str, Any] = {}
    for name, hint in hints.items():
        schema = type_schema(hint, depth + 1)
        description = descriptions.get(name) or field_docs.get(name)
        properties[name] = {**schema, "description": description} if description else schema
    object_schema: dict[str, Any] = {"type": "object", "properties": properties}
    needed = [name for name in hints if name in required]
    if needed:
        object_schema["required"] = needed
    return object_schema


def _allows_none(annotation: Any) -> bool:
    return annotation is None or type(None) in typing.get_args(annotation)


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Attributes|Returns|Return|Yields|Raises|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument descriptions."""
    if not doc:
        return "", {}
    summary: list[str] = []
    arguments: dict[str, str] = {}
    section = ""
    current = ""
    arg_indent = -1
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and len(line) - len(line.lstrip()) == 0:
            section = header.group(1)
            current = ""
            arg_indent = -1
            continue
        if not section:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters", "Attributes") or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(stripped)
        if match and (arg_indent < 0 or indent <= arg_indent):
            arg_indent = indent
            current = match.group(1)
            arguments[current] = match.group(2).strip()
        elif current:
            arguments[current] = f"{arguments[current]} {stripped}".strip()
    return "\n".join(summary).strip(), arguments
