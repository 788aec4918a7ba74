"""Tool schema objects seen as the Python dicts a Hugging Face template iterates.

Ollama hands a template its tool schemas as Go structs, which keep neither the key order nor
the keys it does not know. A Jinja loop over such a dict is unrolled over the keys the struct
can hold, in the order transformers' `get_json_schema` writes them, each step guarded by
whether Ollama's field is set (an unset field is a key the dict does not have).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from jinja2.tests import TESTS as JINJA_TESTS

from ..go.calls import go_field
from ..go.gohelpers import SCHEMA_FIELDS
from .values import PARAMS, PROP, TFUNC, TOOL

#: the tool schema structs among the kinds, by their name in gohelpers.SCHEMA_FIELDS
SCHEMA_STRUCTS: dict[str, str] = {TOOL: "tool", TFUNC: "function", PARAMS: "parameters", PROP: "property"}

#: keys of each schema object, in the order `get_json_schema` writes them
KEY_ORDER: dict[str, tuple[str, ...]] = {
    kind: tuple(field.key for field in SCHEMA_FIELDS[struct]) for kind, struct in SCHEMA_STRUCTS.items()
}

#: Go field of each key, where the key is present only when the field is set
_OPTIONAL_FIELDS: dict[str, dict[str, str]] = {
    kind: {field.key: field.go for field in SCHEMA_FIELDS[struct] if field.optional}
    for kind, struct in SCHEMA_STRUCTS.items()
}

ORDER_EFFECT = (
    "keys come out in the order transformers' get_json_schema writes them "
    "(Ollama does not keep the order a client sent, nor keys outside its schema structs)"
)


def optional(kind: str, key: str) -> bool:
    """Does the Hugging Face dict have `key` only when Ollama's field is set?"""
    return key in _OPTIONAL_FIELDS.get(kind, {}) and (key != "type" or kind == PROP)  # (a property may have only anyOf)


def present(code: str, kind: str, key: str) -> str:
    """Go condition: the Hugging Face dict behind Ollama's struct `code` has `key`."""
    go = _OPTIONAL_FIELDS[kind].get(key)
    return "true" if go is None else go_field(code, f".{go}")


def passes(key: str, tests: Iterable[tuple[str, str, Sequence[Any]]]) -> bool:
    """Does `key` survive the `|select(test, ...)` / `|reject(test, ...)` filters applied to the keys?"""
    for filter_name, test, args in tests:
        passed = cast("Callable[..., Any]", JINJA_TESTS[test])(key, *args)
        if bool(passed) != (filter_name == "select"):
            return False
    return True
