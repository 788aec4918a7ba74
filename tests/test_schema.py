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
