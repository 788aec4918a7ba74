"""Python functions as tools, and where ollama-python's own converter falls short.

No `from __future__ import annotations` here: ollama-python's converter cannot read string
annotations, and these tests run both converters on the same functions.
"""

from dataclasses import dataclass
from typing import Literal, TypedDict

import pydantic
from ollama._utils import convert_function_to_tool

from ollama_fc import function_to_tool, validate_arguments


class Address(pydantic.BaseModel):
    street: str = pydantic.Field(description="Street and number")
    zip_code: str | None = None


class Window(TypedDict):
    start: int
    end: int


@dataclass
class Point:
    x: float
    y: float = 0.0


def get_weather(
    city: str,
    unit: Literal["c", "f"] = "c",
    days: int = 1,
    tags: list[int] | None = None,
    when: int | str = 0,
    extra: dict | None = None,
) -> str:
    """Get the weather forecast.

    Longer explanation that stays in the description.

    Args:
        city: The city name,
            possibly with a country.
        unit (str): Temperature unit.
        days: How many days.
        tags: Integer tags.
        when: A timestamp or a date.
        extra: Anything else.

    Returns:
        The forecast.
    """
    return city


def ship(to: Address, window: Window, at: Point) -> None:
    """Ship a parcel."""


def parameters(func: object) -> dict:
    return function_to_tool(func)["function"]["parameters"]  # type: ignore[arg-type]


def test_name_description_and_argument_docs() -> None:
    function = function_to_tool(get_weather)["function"]
    assert function["name"] == "get_weather"
    assert function["description"] == "Get the weather forecast.\n\nLonger explanation that stays in the description."
    assert function["parameters"]["properties"]["city"]["description"] == "The city name, possibly with a country."
    assert function["parameters"]["properties"]["unit"]["description"] == "Temperature unit."


def test_defaulted_and_optional_parameters_are_not_required() -> None:
    assert parameters(get_weather)["required"] == ["city"]
    ollama_required = convert_function_to_tool(get_weather).function.parameters.required
    assert "unit" in ollama_required and "days" in ollama_required  # ollama-python marks defaults required


def test_literal_becomes_enum_where_ollama_loses_it() -> None:
    assert parameters(get_weather)["properties"]["unit"] == {
        "enum": ["c", "f"],
        "type": "string",
        "description": "Temperature unit.",
    }
    assert convert_function_to_tool(get_weather).function.parameters.properties["unit"].enum is None


def test_list_items_kept_where_ollama_loses_them() -> None:
    assert parameters(get_weather)["properties"]["tags"]["items"] == {"type": "integer"}
    assert convert_function_to_tool(get_weather).function.parameters.properties["tags"].items is None


def test_union_is_anyof_where_ollama_writes_an_invalid_type() -> None:
    assert parameters(get_weather)["properties"]["when"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    ollama_type = convert_function_to_tool(get_weather).function.parameters.properties["when"].type
    assert ollama_type not in ("integer", "string", "number", "boolean", "array", "object", "null")


def test_nested_pydantic_typeddict_and_dataclass() -> None:
    props = parameters(ship)["properties"]
    assert props["to"]["properties"]["street"] == {"type": "string", "description": "Street and number"}
    assert props["to"]["required"] == ["street"]
    assert props["window"] == {
        "type": "object",
        "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
        "required": ["start", "end"],
    }
    assert props["at"]["required"] == ["x"] and props["at"]["properties"]["y"] == {"type": "number"}


def test_generated_schema_drives_validation() -> None:
    schema = parameters(get_weather)
    assert validate_arguments("get_weather", schema, {"city": "Oslo", "days": "2", "unit": "f"}) == {
        "city": "Oslo",
        "days": 2,
        "unit": "f",
    }
