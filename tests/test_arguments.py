"""Arguments are checked against the offered tool's JSON Schema before a tool runs."""

from __future__ import annotations

import pytest

from ollama_fc import InvalidToolCall, ToolCallError, validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "threshold": {"type": "number"},
        "metric": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "where": {"$ref": "#/$defs/Place"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "required": ["city", "days"],
    "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]}},
}


def test_valid_arguments_pass_unchanged() -> None:
    arguments = {"city": "Oslo", "days": 3, "unit": "c", "tags": [1], "where": {"lat": 59.9}}
    assert validate_arguments("get_weather", SCHEMA, arguments) == arguments


def test_unambiguous_coercions() -> None:
    got = validate_arguments(
        "get_weather",
        SCHEMA,
        {
            "city": "Oslo",
            "days": "7",
            "threshold": 7,
            "metric": "true",
            "tags": "[1, 2]",
            "where": {"lat": "59.9"},
            "limit": "3",
        },
    )
    assert got == {
        "city": "Oslo",
        "days": 7,
        "threshold": 7.0,
        "metric": True,
        "tags": [1, 2],
        "where": {"lat": 59.9},
        "limit": 3,
    }
    assert isinstance(got["threshold"], float)


def test_null_for_an_optional_parameter_is_left_out_not_an_invalid_call() -> None:
    """A model that writes `null` for a parameter it chose not to fill means "not given"; the
    call must not be lost over it. A parameter that allows null keeps it; a required one fails."""
    got = validate_arguments(
        "get_weather", SCHEMA, {"city": "Oslo", "days": 2, "unit": None, "threshold": None, "limit": None}
    )
    assert got == {"city": "Oslo", "days": 2, "limit": None}
    with pytest.raises(InvalidToolCall, match="argument 'days': expected integer, got null"):
        validate_arguments("get_weather", SCHEMA, {"city": "Oslo", "days": None})
    nested = validate_arguments("get_weather", SCHEMA, {"city": "Oslo", "days": 1, "where": {"lat": 1.5, "x": None}})
    assert nested["where"] == {"lat": 1.5, "x": None}  # not a declared property: kept as written


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"city": "Oslo"}, "argument 'days' is required but missing"),
        ({"city": "Oslo", "days": "a week"}, "argument 'days': expected integer, got string \"a week\""),
        ({"city": "Oslo", "days": 2.5}, "argument 'days': expected integer"),
        ({"city": "Oslo", "days": 1, "metric": "yes"}, "argument 'metric': expected boolean"),
        ({"city": "Oslo", "days": 1, "metric": 1}, "argument 'metric': expected boolean"),
        ({"city": "Oslo", "days": 1, "unit": "kelvin"}, 'argument \'unit\': "kelvin" is not one of "c", "f"'),
        ({"city": "Oslo", "days": 1, "tags": [1, "x"]}, "argument 'tags[1]': expected integer"),
        ({"city": "Oslo", "days": 1, "where": {}}, "argument 'where.lat' is required but missing"),
        ({"city": "Oslo", "days": 1, "limit": "many"}, "argument 'limit': \"many\" matches none of the allowed shapes"),
    ],
)
def test_invalid_arguments_name_tool_argument_and_problem(arguments: dict, fragment: str) -> None:
    with pytest.raises(InvalidToolCall) as caught:
        validate_arguments("get_weather", SCHEMA, arguments)
    assert isinstance(caught.value, ToolCallError)
    assert caught.value.tool == "get_weather"
    assert fragment in str(caught.value)
    assert str(caught.value).startswith("tool call 'get_weather' is invalid")


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(InvalidToolCall) as caught:
        validate_arguments("get_weather", SCHEMA, {"days": "x"})
    assert len(caught.value.problems) == 2


def test_error_worded_for_the_model() -> None:
    with pytest.raises(InvalidToolCall) as caught:
        validate_arguments("get_weather", SCHEMA, {"city": "Oslo"})
    message = caught.value.for_model()
    assert "get_weather" in message and "'days' is required" in message and "call it again" in message


def test_unknown_parameter_rejected_only_when_schema_forbids_extras() -> None:
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert validate_arguments("t", {**closed, "additionalProperties": True}, {"a": "x", "b": 1}) == {"a": "x", "b": 1}
    with pytest.raises(InvalidToolCall, match="argument 'b' is not a parameter"):
        validate_arguments("t", closed, {"a": "x", "b": 1})


def test_tool_without_schema_accepts_any_arguments() -> None:
    assert validate_arguments("t", None, {"x": 1}) == {"x": 1}


CONSTRAINED = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2, "maxLength": 40, "pattern": "^[A-Z]"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "maxItems": 2},
        "note": {"type": "string", "nullable": True},
    },
}


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"city": "oslo"}, "argument 'city': must match pattern ^[A-Z]"),
        ({"city": "O"}, "argument 'city': must be longer than or equal to 2 characters"),
        ({"days": 15}, "argument 'days': must be smaller than or equal to 14"),
        ({"days": "0"}, "argument 'days': must be bigger than or equal to 1"),
        ({"when": "2024-13-45"}, "argument 'when': must be date"),
        ({"tags": [1, 2, 3]}, "argument 'tags': must contain less than or equal to 2 items"),
    ],
)
def test_constraints_the_tool_schema_sets_are_checked(arguments: dict, fragment: str) -> None:
    with pytest.raises(InvalidToolCall) as caught:
        validate_arguments("plan", CONSTRAINED, arguments)
    assert fragment in str(caught.value)


def test_values_within_the_constraints_pass() -> None:
    arguments = {"city": "Oslo", "days": "14", "when": "2024-02-29", "tags": ["a"], "note": None}
    assert validate_arguments("plan", CONSTRAINED, arguments) == {**arguments, "days": 14}


def test_an_integer_longer_than_python_converts_is_an_invalid_call_not_a_crash() -> None:
    digits = "9" * 5000
    with pytest.raises(InvalidToolCall, match="argument 'days': expected integer"):
        validate_arguments("plan", CONSTRAINED, {"days": digits})
    with pytest.raises(InvalidToolCall, match="argument 'city'"):
        validate_arguments("plan", CONSTRAINED, {"city": int(digits[:4000]) ** 2})


def test_a_remote_ref_is_never_fetched() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "http://example.invalid/schema.json"}}}
    assert validate_arguments("t", schema, {"a": 1}) == {"a": 1}  # checked by the coercion pass only


def test_a_schema_changed_in_place_is_checked_as_it_is_now() -> None:
    schema = {"type": "object", "properties": {"days": {"type": "integer", "maximum": 14}}}
    assert validate_arguments("plan", schema, {"days": 10}) == {"days": 10}
    schema["properties"]["days"]["maximum"] = 5
    with pytest.raises(InvalidToolCall, match="smaller than or equal to 5"):
        validate_arguments("plan", schema, {"days": 10})
