"""Argument validation: jsonschema against fastjsonschema on tool schemas like ours.

Each library checks the same valid and invalid argument dicts against the same tool schemas
(a weather tool, a search tool with pattern and bounds, and one generated from a Python
function with a nested model). Validators are built once per schema, as `ollama_fc.arguments`
caches them; the build cost is reported separately. The faster one on the per-call path is the
one `ollama_fc.arguments` uses.
Run: python -m benchmarks.argument_validation
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, Literal

import fastjsonschema
import jsonschema
import pydantic

from benchmarks.table import Row, print_table
from ollama_fc.functions import function_to_tool


class Address(pydantic.BaseModel):
    street: str
    city: str
    zip_code: str | None = None


def book_room(hotel: str, nights: int, guests: list[str], address: Address, kind: Literal["single", "double"]) -> str:
    """Book a hotel room."""
    return hotel


SCHEMAS: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    (
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
            },
            "required": ["city"],
        },
        [{"city": "Paris", "unit": "celsius", "days": 3}, {"city": "", "days": 40}],
    ),
    (
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 200},
                "site": {"type": "string", "pattern": r"^[a-z0-9.-]+\.[a-z]{2,}$"},
                "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        [{"query": "ollama tools", "site": "github.com", "limit": 5}, {"query": "x", "site": "NOPE", "extra": 1}],
    ),
    (
        function_to_tool(book_room)["function"]["parameters"],
        [
            {
                "hotel": "Ritz",
                "nights": 2,
                "guests": ["Ann", "Bo"],
                "address": {"street": "1 Place Vendôme", "city": "Paris"},
                "kind": "double",
            },
            {"hotel": "Ritz", "nights": "two", "guests": [1], "address": {}, "kind": "suite"},
        ],
    ),
]


def _jsonschema(schema: dict[str, Any]) -> Callable[[Any], int]:
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    return lambda value: sum(1 for _ in validator.iter_errors(value))


def _fastjsonschema(schema: dict[str, Any]) -> Callable[[Any], int]:
    validate = fastjsonschema.compile(schema)

    def count(value: Any) -> int:
        try:
            validate(value)
        except fastjsonschema.JsonSchemaValueException:
            return 1
        return 0

    return count


def _seconds(build: Callable[[dict[str, Any]], Callable[[Any], int]], rounds: int) -> tuple[float, float]:
    """(build seconds per schema, check seconds per argument dict)."""
    start = time.perf_counter()
    checks = [(build(schema), values) for schema, values in SCHEMAS]
    built = (time.perf_counter() - start) / len(SCHEMAS)
    start = time.perf_counter()
    for _ in range(rounds):
        for check, values in checks:
            for value in values:
                check(value)
    per_check = (time.perf_counter() - start) / (rounds * sum(len(values) for _, values in SCHEMAS))
    return built, per_check


def measure(rounds: int = 2000, repeats: int = 3) -> list[Row]:
    slow = [_seconds(_jsonschema, rounds) for _ in range(repeats)]
    fast = [_seconds(_fastjsonschema, rounds) for _ in range(repeats)]
    slow_check = statistics.median(check for _, check in slow)
    fast_check = statistics.median(check for _, check in fast)
    slow_build = statistics.median(build for build, _ in slow)
    fast_build = statistics.median(build for build, _ in fast)
    return [
        Row(
            "argument check per call, jsonschema/fastjsonschema",
            f"{slow_check * 1e6:.1f} µs",
            f"{fast_check * 1e6:.1f} µs",
            slow_check / fast_check,
            f"validator build per schema: {slow_build * 1e3:.2f} ms / {fast_build * 1e3:.2f} ms",
        )
    ]


if __name__ == "__main__":
    print_table(measure())
