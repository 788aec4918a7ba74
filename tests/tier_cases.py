"""What the tier tests (tests/test_tier_*.py) share: the tool, the question, a passthrough model."""

from __future__ import annotations

import ollama

from ollama_fc.build import create_model
from ollama_fc.functions import function_to_tool

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
PARIS = [("get_weather", {"city": "Paris"})]


def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


TOOLS = [function_to_tool(get_weather)]


def create_passthrough(host: str, name: str, base: str) -> str:
    """`name` = `base` with `PARSER passthrough` (the create request's `parser` field)."""
    for _ in create_model(ollama.Client(host=host), name, parser="passthrough", from_=base):
        pass
    return name
