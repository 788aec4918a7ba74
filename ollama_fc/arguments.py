"""Check a call's arguments against the offered tool's JSON Schema before any tool runs.

Two steps. A small coercion pass walks the schema's types (type or a list of types, enum,
const, required, properties, additionalProperties: false, items, anyOf/oneOf, $ref into $defs)
and fixes values only where the intent is unambiguous: "7" or 7.0 to 7 for an integer, 7 or
"7.5" to a float for a number, "true"/"false" for a boolean, a number for a string, and a JSON
string holding an array or object where one is expected; a `null` written for a parameter that
is not required and does not allow null is left out, as if the model had not written it (the
tool then uses its default: the model chose not to fill it, and a call is never lost over
that); what it cannot fit it reports, every problem at once. Then the whole schema is checked by fastjsonschema (pattern, minimum/maximum,
lengths, format and the rest), which is about twenty times faster per call than jsonschema
(benchmarks/argument_validation.py); its validators are compiled once per schema. A call that
fails either step raises InvalidToolCall, which names the tool, the argument and the problem.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import fastjsonschema

from .errors import ToolCallError

Schema = Mapping[str, Any]

_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# Python refuses to convert longer digit strings to int (ValueError); such text stays a string.
_MAX_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300


class InvalidToolCall(ToolCallError):
    """A call's arguments do not fit the tool's schema (or the tool was not offered)."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        self.tool = tool
        self.problems = problems
        #: set by the client: the whole reply as the model wrote it (`message.content` holds its
        #: whole text, the call text included; `message.tool_calls` the calls unchecked), so
        #: nothing the model wrote is lost with the exception
        self.response: Any = None
        super().__init__(f"tool call {tool!r} is invalid: " + "; ".join(problems))

    def for_model(self) -> str:
        """The error worded for the model, to be sent back as the tool's result."""
        return f"Error: the call to {self.tool} was not run: {'; '.join(self.problems)}. Fix the arguments and call it again."


def validate_arguments(tool: str, schema: Schema | None, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments, coerced to the schema; raise InvalidToolCall listing every problem."""
    if not schema:
        return dict(arguments)
    problems: list[str] = []
    try:
        value = _check(dict(arguments), schema, schema, "", problems)
    except RecursionError:
        raise InvalidToolCall(tool, ["the arguments are nested too deeply to check"]) from None
    if not problems:
        problem = _library_problem(schema, value)
        if problem:
            problems.append(problem)
    if problems:
        raise InvalidToolCall(tool, problems)
    return value  # type: ignore[no-any-return]


Validator = Callable[[Any], Any]
_VALIDATORS: OrderedDict[str, Validator | None] = OrderedDict()
_VALIDATORS_LOCK = threading.Lock()
_CACHED_SCHEMAS = 256


def _refuse_remote(uri: str) -> Any:
    raise fastjsonschema.JsonSchemaDefinitionException(f"remote $ref {uri!r} is not followed")


# A tool schema is data from a caller or a model: its `$ref`s are never fetched.
_NO_REMOTE = {scheme: _refuse_remote for scheme in ("http", "https", "file", "ftp")}


# The same schema object comes back call after call: found by identity, confirmed by comparing
# with a copy taken when it was cached (so a schema changed in place is compiled again).
_BY_IDENTITY: dict[int, tuple[Any, Validator | None]] = {}


def _validator(schema: Schema) -> Validator | None:
    """The compiled validator of a schema (cached), or None for a schema the library refuses."""
    known = _BY_IDENTITY.get(id(schema))
    if known is not None and known[0] == schema:
        return known[1]
    try:
        key = json.dumps(schema, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    validator = _compiled(schema, key)
    if len(_BY_IDENTITY) >= _CACHED_SCHEMAS:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(schema)] = (json.loads(key), validator)
    return validator


def _compiled(schema: Schema, key: str) -> Validator | None:
    with _VALIDATORS_LOCK:
        if key in _VALIDATORS:
            _VALIDATORS.move_to_end(key)
            return _VALIDATORS[key]
    try:
        validator: Validator | None = fastjsonschema.compile(_with_nullable(schema), handlers=_NO_REMOTE)
    except Exception:  # a schema the library cannot compile: the coercion pass alone checks it
        validator = None
    with _VALIDATORS_LOCK:
        _VALIDATORS[key] = validator
        while len(_VALIDATORS) > _CACHED_SCHEMAS:
            _VALIDATORS.popitem(last=False)
    return validator


def _with_nullable(schema: Any) -> Any:
    """OpenAPI's `nullable: true` (which the coercion pass honours) as JSON Schema's null type."""
    if isinstance(schema, Mapping):
        out = {key: _with_nullable(value) for key, value in schema.items()}
        if out.get("nullable") is True and isinstance(out.get("type"), (str, list)):
            types = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
            out["type"] = [*types, "null"] if "null" not in types else types
        return out
    if isinstance(schema, list):
        return [_with_nullable(item) for item in schema]
    return schema


def _library_problem(schema: Schema, value: Any) -> str | None:
    """The first problem the full JSON Schema check finds, worded like the coercion pass's."""
    validator = _validator(schema)
    if validator is None:
        return None
    try:
        validator(value)
    except fastjsonschema.JsonSchemaValueException as error:
        parts = [str(part) for part in (error.path or ["data"])[1:]]
        path = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts).lstrip(".")
        reason = error.message.removeprefix(str(error.name)).strip()
        return f"{_describe(path)}: {reason}"
    except Exception as error:  # the generated code met a value it does not expect
        return f"the arguments could not be checked: {type(error).__name__}"
    return None


def _describe(path: str) -> str:
    return f"argument {path!r}" if path else "the arguments"


def _check(value: Any, schema: Schema, root: Schema, path: str, problems: list[str]) -> Any:
    """Return the (coerced) value; append a sentence to `problems` for each mismatch."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            for option in schema[key]:
                trial: list[str] = []
                fitted = _check(value, option, root, path, trial)
                if not trial:
                    value = fitted
                    break
            else:
                problems.append(f"{_describe(path)}: {_short(value)} matches none of the allowed shapes")
                return value
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if schema.get("nullable") is True:
            allowed.append("null")
        fitted = _fit_type(value, allowed)
        if fitted is _NO_FIT:
            problems.append(f"{_describe(path)}: expected {' or '.join(allowed)}, got {_kind(value)} {_short(value)}")
            return value
        value = fitted
    if "enum" in schema and value not in list(schema["enum"]):
        options = ", ".join(json.dumps(option) for option in schema["enum"])
        problems.append(f"{_describe(path)}: {_short(value)} is not one of {options}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{_describe(path)}: must be {json.dumps(schema['const'])}")
    if isinstance(value, dict):
        value = _check_object(value, schema, root, path, problems)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        value = [_check(item, schema["items"], root, f"{path}[{index}]", problems) for index, item in enumerate(value)]
    return value


def _check_object(
    value: dict[str, Any], schema: Schema, root: Schema, path: str, problems: list[str]
) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or ())
    for name in required:
        if name not in value:
            problems.append(f"{_describe(_join(path, name))} is required but missing")
    result: dict[str, Any] = {}
    for name, item in value.items():
        if item is None and name in properties and name not in required and not _fits(None, properties[name], root):
            continue  # a null the model wrote for an optional parameter it chose not to fill
        if name in properties and isinstance(properties[name], Mapping):
            result[name] = _check(item, properties[name], root, _join(path, name), problems)
        elif schema.get("additionalProperties") is False and properties:
            known = ", ".join(properties)
            problems.append(f"{_describe(_join(path, name))} is not a parameter (known: {known})")
        else:
            result[name] = item
    return result


def _fits(value: Any, schema: Any, root: Schema) -> bool:
    """Whether `value` passes the coercion pass for `schema` as it is."""
    if not isinstance(schema, Mapping):
        return True
    trial: list[str] = []
    _check(value, schema, root, "", trial)
    return not trial


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _resolve(schema: Schema, root: Schema) -> Schema:
    """Follow a local `$ref` such as `#/$defs/Address` (pydantic and our function schemas)."""
    seen = 0
    while isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema


class _NoFit:
    pass


_NO_FIT: Any = _NoFit()


def _fit_type(value: Any, allowed: list[str]) -> Any:
    """The value itself if it has an allowed type, else its one safe coercion, else _NO_FIT."""
    for name in allowed:
        if _is_type(value, name):
            return value
    for name in allowed:
        coerced = _coerce(value, name)
        if coerced is not _NO_FIT:
            return coerced
    return _NO_FIT


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, float) and math.isfinite(value)
    return {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
        "null": value is None,
    }.get(name, True)


def _coerce(value: Any, name: str) -> Any:
    if isinstance(value, bool):
        return _NO_FIT
    if name == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        text = value.strip() if isinstance(value, str) else ""
        if len(text) <= _MAX_DIGITS and _INTEGER_TEXT.fullmatch(text):
            return int(text)
    elif name == "number":
        if isinstance(value, int):
            return float(value)
        if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
            number = float(value.strip())
            return number if math.isfinite(number) else _NO_FIT
    elif name == "boolean" and isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower(), _NO_FIT)
    elif name == "string" and isinstance(value, (int, float)):
        if isinstance(value, int) and value.bit_length() > 3 * _MAX_DIGITS:
            return _NO_FIT  # Python cannot write it as text; the model meant something else
        return str(value)
    elif name in ("array", "object") and isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return _NO_FIT
        if isinstance(parsed, list if name == "array" else dict):
            return parsed
    return _NO_FIT


def _kind(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # an integer too long for int-to-text, or deep nesting
        text = f"an integer of about {int(value.bit_length() * 0.30103)} digits" if isinstance(value, int) else "?"
    return text if len(text) <= 60 else text[:57] + "..."
