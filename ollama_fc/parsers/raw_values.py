"""Argument values written as bare text between tags, typed by the offered tool's schema.

XML-style formats (GLM-4.5's `<arg_value>5</arg_value>`, MiniMax M2's and DeepSeek V3.2's
`<parameter name="days">5</parameter>`) write every value as text; which type `5` has is the
schema's to say, as the models' own parsers read it. Their readers return such values as
`RawText`, and the scanner settles them once a call is read: a parameter the schema types as a
string keeps the text; one typed otherwise is the JSON value the text holds (the text when it
holds none: the client's schema check reports it); a parameter the schema does not type is a
JSON literal, number, object or array when the text reads as one, the text otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .base import ParsedCall, ToolsArg, tool_name
from .lenient import NotALiteral, read_value

Types = Mapping[str, Mapping[str, frozenset[str]]]
"""Per offered tool, per parameter, the JSON types its schema allows (empty: not typed)."""

_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class RawText(str):
    """A value a format writes as bare text: its type is the schema's (see the module)."""

    __slots__ = ()


def _schema_types(schema: Any) -> frozenset[str]:
    if not isinstance(schema, Mapping):
        return frozenset()
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, (list, tuple)):
        return frozenset(item for item in declared if isinstance(item, str))
    options = [option for key in ("anyOf", "oneOf") for option in schema.get(key) or ()]
    found = [_schema_types(option) for option in options]
    if not found or not all(found):
        return frozenset()  # an option without a type allows any: not typed
    return frozenset().union(*found)


def parameter_types(tools: ToolsArg) -> dict[str, dict[str, frozenset[str]]]:
    """The types each offered tool's schema gives its parameters."""
    types: dict[str, dict[str, frozenset[str]]] = {}
    for tool in tools or ():
        name = tool_name(tool)
        function = tool.get("function") if isinstance(tool, Mapping) else getattr(tool, "function", None)
        parameters = (
            function.get("parameters") if isinstance(function, Mapping) else getattr(function, "parameters", None)
        )
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        if name and isinstance(properties, Mapping):
            types[name] = {key: _schema_types(value) for key, value in properties.items() if isinstance(key, str)}
    return types


def holds_raw_text(calls: list[ParsedCall]) -> bool:
    """Whether a value of the calls is written as bare text (then `settle` types it)."""
    return any(isinstance(value, RawText) for call in calls for value in call.arguments.values())


def settle(calls: list[ParsedCall], types: Types) -> list[ParsedCall]:
    """The calls with their RawText values typed (the same list when none holds one)."""
    if not holds_raw_text(calls):
        return calls
    settled = []
    for call in calls:
        known = types.get(call.name, {})
        arguments = {
            key: _typed(value, known.get(key, frozenset())) if isinstance(value, RawText) else value
            for key, value in call.arguments.items()
        }
        settled.append(ParsedCall(call.name, arguments))
    return settled


def _typed(text: RawText, allowed: frozenset[str]) -> Any:
    plain = str(text)
    if "string" in allowed:
        return plain
    value = _json(plain.strip())
    if allowed:
        return plain if value is _NOT_JSON else value
    return plain if value is _NOT_JSON or isinstance(value, str) else value


_NOT_JSON = object()


def _json(text: str) -> Any:
    if text in _LITERALS:
        return _LITERALS[text]
    if not text or text[0] not in '{["-0123456789':
        return _NOT_JSON
    try:
        return json.loads(text)
    except ValueError:
        if text[0] in "{[":
            try:
                return read_value(text)
            except NotALiteral:
                pass
    return _NOT_JSON
