"""The conversations every converted template is checked on.

Each case is written once, in the shape Ollama's /api/chat receives: `content` is always a
string, tool calls carry `arguments` as an object, tool results are `tool` messages with
`tool_name` (and `tool_call_id`). `render_case` rewrites a case into whatever shape a given
Hugging Face template expects before rendering it with the reference.

Ollama cannot pass everything through unchanged, so the cases are written in the form it
keeps, making an exact match possible at all:
- argument keys and property keys are in alphabetical order (Ollama hands templates maps);
- tool schemas use only keys Ollama keeps (type, description, enum, items, properties,
  required), each function has a description, and keys are in the order transformers'
  `get_json_schema` writes them: `type, properties, required` for parameters and
  `type, items | enum | properties + required, description` for a property;
- numbers are integers (Go prints 3.0 as 3);
- no two consecutive messages share a role, except tool results (Ollama merges the others).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..hf.reference import render
from ..hf.shapes import Message, Shape, to_hf

#: Features a case may need; a template without one of them "cannot render" that case.
SYSTEM = "system"
TOOLS = "tools"
TOOL_CALLS = "tool_calls"
TOOL_RESULTS = "tool_results"
PARALLEL_CALLS = "parallel_calls"
FEATURES = (SYSTEM, TOOLS, TOOL_CALLS, TOOL_RESULTS, PARALLEL_CALLS)


@dataclass(frozen=True)
class Case:
    """One conversation (Ollama shape), its tools, and the template features it needs."""

    name: str
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] = ()
    needs: frozenset[str] = field(default_factory=frozenset)

    @property
    def prefill(self) -> bool:
        """A trailing assistant message is continued, not answered (no generation prompt)."""
        return bool(self.messages) and self.messages[-1]["role"] == "assistant"


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


GET_WEATHER = _function(
    "get_weather",
    "Get the current weather in a city.",
    {
        "days": {"type": "integer", "description": "How many days of forecast, 1 to 7."},
        "location": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit."},
    },
    ["location"],
)

BOOK_TRIP = _function(
    "book_trip",
    "Book a trip for a group of travelers.",
    {
        "options": {
            "type": "object",
            "properties": {
                "meals": {"type": "boolean", "description": "Include meals."},
                "seat": {"type": "string", "enum": ["aisle", "window"], "description": "Seat preference."},
            },
            "required": ["seat"],
            "description": "Booking options.",
        },
        "travelers": {"type": "array", "items": {"type": "string"}, "description": "Names of the travelers."},
    },
    ["travelers"],
)

TOOLS_DEFINED = (GET_WEATHER, BOOK_TRIP)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": arguments}}


def _result(call_id: str, name: str, content: str) -> Message:
    return {"role": "tool", "content": content, "tool_name": name, "tool_call_id": call_id}


def _user(content: str) -> Message:
    return {"role": "user", "content": content}


def _assistant(content: str, *calls: dict[str, Any]) -> Message:
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def _system(content: str) -> Message:
    return {"role": "system", "content": content}


PARIS_CALL = _call("call0001a", "get_weather", {"location": "Paris", "unit": "celsius"})
PARIS_RESULT = _result("call0001a", "get_weather", '{"temperature": 18, "condition": "sunny"}')
ASK_WEATHER = _user("What's the weather like in Paris today?")

CASES: tuple[Case, ...] = (
    Case("single_turn", (_user("Hello! How are you?"),)),
    Case("system_prompt", (_system("You are a terse assistant."), _user("What is 2 + 2?")), needs=frozenset({SYSTEM})),
    Case(
        "multi_turn",
        (
            _user("Hi, my name is Ana."),
            _assistant("Nice to meet you, Ana!"),
            _user("What is my name?"),
            _assistant("Your name is Ana."),
            _user("Thanks."),
        ),
    ),
    Case("tools", (ASK_WEATHER,), TOOLS_DEFINED, frozenset({TOOLS})),
    Case(
        "tools_with_system",
        (_system("You are a travel agent."), _user("Book a window seat for Ann and Bo.")),
        TOOLS_DEFINED,
        frozenset({SYSTEM, TOOLS}),
    ),
    Case(
        "tool_call_result",
        (ASK_WEATHER, _assistant("", PARIS_CALL), PARIS_RESULT),
        TOOLS_DEFINED,
        frozenset({TOOLS, TOOL_CALLS, TOOL_RESULTS}),
    ),
    Case(
        "tool_round_trip_continued",
        (
            ASK_WEATHER,
            _assistant("", PARIS_CALL),
            PARIS_RESULT,
            _assistant("It is 18 degrees and sunny in Paris."),
            _user("And in London?"),
        ),
        TOOLS_DEFINED,
        frozenset({TOOLS, TOOL_CALLS, TOOL_RESULTS}),
    ),
    Case(
        "parallel_calls",
        (
            _user("Weather in Paris, and book a window seat for Ann and Bo."),
            _assistant(
                "",
                PARIS_CALL,
                _call(
                    "call0002b", "book_trip", {"options": {"meals": True, "seat": "window"}, "travelers": ["Ann", "Bo"]}
                ),
            ),
            PARIS_RESULT,
            _result("call0002b", "book_trip", '{"booking": "BK-42", "status": "confirmed"}'),
        ),
        TOOLS_DEFINED,
        frozenset({TOOLS, TOOL_CALLS, TOOL_RESULTS, PARALLEL_CALLS}),
    ),
    Case(
        "tool_call_with_text",
        (ASK_WEATHER, _assistant("Let me check the weather for you.", PARIS_CALL), PARIS_RESULT),
        TOOLS_DEFINED,
        frozenset({TOOLS, TOOL_CALLS, TOOL_RESULTS}),
    ),
    Case(
        "tool_call_special_chars",
        (
            _user('Search for: "fish & chips" <best>'),
            _assistant("", _call("call0003c", "get_weather", {"location": 'Caf\u00e9 "Le <Petit> & Co" \\ {{x}}'})),
            _result("call0003c", "get_weather", '{"note": "a < b && c > d", "path": "C:\\\\tmp"}'),
        ),
        TOOLS_DEFINED,
        frozenset({TOOLS, TOOL_CALLS, TOOL_RESULTS}),
    ),
    Case("prefill", (_user("Write a haiku about rain."), _assistant("Soft rain on the roof,"))),
    Case(
        "unicode",
        (
            _user("Gr\u00fc\u00dfe aus K\u00f6ln \u2014 \u4f60\u597d, \u043c\u0438\u0440! \U0001f327\ufe0f"),
            _assistant("\u00a1Hola! \u3053\u3093\u306b\u3061\u306f \U0001f600"),
            _user("\u0645\u0631\u062d\u0628\u0627 \u2192 \u2211 \u00e9\u00e8"),
        ),
    ),
    Case(
        "special_chars",
        (
            _user("He said \"hi\" and 'bye' \\ C:\\path <b>bold</b> & {{ name }} }} {% raw %} {#"),
            _assistant("Use `a < b && c > d` and {{ }}."),
            _user("</s><|im_end|> [INST] $x %s"),
        ),
    ),
    Case(
        "surrounding_whitespace",
        (_user("   padded question?  \n\n"), _assistant("\n answer with newlines \n"), _user("\tnext\t")),
    ),
    Case("empty_content", (_user("Hi"), _assistant(""), _user(""))),
)


def case_named(name: str) -> Case:
    for case in CASES:
        if case.name == name:
            return case
    raise KeyError(name)


def missing(shape: Shape, case: Case) -> list[str]:
    """The features `case` needs that a template of this shape does not render."""
    renders = {
        SYSTEM: shape.system_role,
        TOOLS: shape.tools,
        TOOL_CALLS: shape.tool_calls,
        TOOL_RESULTS: shape.tool_results,
        PARALLEL_CALLS: shape.parallel_calls,
    }
    return [feature for feature in FEATURES if feature in case.needs and not renders[feature]]


def render_case(template: str, case: Case, shape: Shape, special_tokens: Mapping[str, str] | None = None) -> str:
    """The reference prompt for a battery case: a trailing assistant message is a prefill.

    Ollama has no `add_generation_prompt`: a conversation ending with the assistant's message is
    one the model continues (Ollama's own templates leave that turn open). transformers calls it
    `continue_final_message`; any other conversation gets `add_generation_prompt=True`.
    """
    return render(
        template,
        to_hf(case.messages, shape),
        list(case.tools) or None,
        add_generation_prompt=not case.prefill,
        continue_final_message=case.prefill,
        special_tokens=special_tokens,
    )
