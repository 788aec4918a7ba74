"""`tool_choice` and single calls: every API's spelling, the forced call's schema, the enforcement
on whole and streamed replies, and where a tier cannot enforce a forced call."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from ollama import Message

from ollama_fc.recovery import ModelProfile
from ollama_fc.toolchoice import (
    AUTO,
    NONE,
    NONE_NOTE,
    REQUIRED,
    ChoiceEnforcer,
    ToolChoice,
    ToolChoiceError,
    call_schema,
    call_shaped,
    check_enforceable,
    forced_request,
    holds_tool_result,
    none_request,
)

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
TIME = {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (None, None, ToolChoice(AUTO, None, True)),
        ("auto", False, ToolChoice(AUTO, None, False)),
        ("none", None, ToolChoice(NONE)),
        ("required", None, ToolChoice(REQUIRED)),
        ({"type": "function", "function": {"name": "get_time"}}, None, ToolChoice(REQUIRED, "get_time")),  # chat
        ({"type": "function", "name": "get_time"}, True, ToolChoice(REQUIRED, "get_time")),  # Responses
        ({"type": "any"}, None, ToolChoice(REQUIRED)),  # Anthropic
        (
            {"type": "tool", "name": "get_time", "disable_parallel_tool_use": True},
            None,
            ToolChoice(REQUIRED, "get_time", False),
        ),
        ({"type": "auto", "disable_parallel_tool_use": True}, None, ToolChoice(AUTO, None, False)),
        ({"type": "none"}, None, ToolChoice(NONE)),
    ],
)
def test_every_apis_spelling_is_read(choice: Any, parallel: Any, expected: ToolChoice) -> None:
    assert ToolChoice.read(choice, parallel) == expected


@pytest.mark.parametrize(
    ("choice", "parallel", "words"),
    [
        ("sometimes", None, "unknown tool_choice 'sometimes'"),
        ({"type": "function"}, None, "must name the tool"),
        ({"type": "allowed_tools"}, None, "unknown tool_choice type"),
        (3, None, "string or an object"),
        ("auto", "no", "parallel_tool_calls must be true or false"),
    ],
)
def test_a_malformed_choice_is_one_line_naming_it(choice: Any, parallel: Any, words: str) -> None:
    with pytest.raises(ToolChoiceError, match=words) as raised:
        ToolChoice.read(choice, parallel)
    assert "\n" not in str(raised.value)


def test_a_forced_choice_needs_its_tool_offered() -> None:
    with pytest.raises(ToolChoiceError, match="'get_news', which is not among the offered tools"):
        ToolChoice(REQUIRED, "get_news").check(list(SCHEMAS))
    with pytest.raises(ToolChoiceError, match="offers no tools"):
        ToolChoice(REQUIRED).check([])
    ToolChoice(NONE).check([])  # nothing to force


def test_the_forced_schema_admits_exactly_calls_of_the_allowed_tools() -> None:
    any_tool = call_schema(SCHEMAS)
    jsonschema.validate({"name": "get_time", "arguments": {"zone": "UTC"}}, any_tool)
    jsonschema.validate({"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}, any_tool)
    for wrong in (
        {"name": "get_weather", "arguments": {"zone": "UTC"}},  # another tool's arguments
        {"name": "get_news", "arguments": {}},
        {"name": "get_time"},
        {"name": "get_time", "arguments": {"zone": "UTC"}, "extra": 1},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, any_tool)
    named = call_schema(SCHEMAS, "get_time")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "get_weather", "arguments": {"city": "Paris"}}, named)
    assert list(named["properties"]) == ["name", "arguments"]  # the name streams first


def test_a_forced_request_gets_the_format_and_refuses_a_format_of_its_own() -> None:
    request: dict[str, Any] = {}
    forced_request(ToolChoice(REQUIRED, "get_time"), SCHEMAS, request)
    assert request["format"] == call_schema(SCHEMAS, "get_time")
    with pytest.raises(ToolChoiceError, match="leave format unset"):
        forced_request(ToolChoice(REQUIRED), SCHEMAS, {"format": "json"})
    untouched: dict[str, Any] = {}
    forced_request(ToolChoice(NONE), SCHEMAS, untouched)
    assert untouched == {}


def reply(text: str = "", calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> Message:
    return Message(
        role="assistant",
        content=text,
        tool_calls=[Message.ToolCall(function=Message.ToolCall.Function(name=n, arguments=a)) for n, a in calls]
        or None,
    )


def names(message: Message) -> list[tuple[str, dict[str, Any]]]:
    return [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or ()]


def test_a_forced_reply_becomes_its_call_whole_and_streamed() -> None:
    text = json.dumps({"name": "get_time", "arguments": {"zone": "UTC"}})
    whole = ChoiceEnforcer(ToolChoice(REQUIRED)).apply(reply(text), done=True)
    assert names(whole) == [("get_time", {"zone": "UTC"})] and whole.content == ""
    enforcer = ChoiceEnforcer(ToolChoice(REQUIRED))
    pieces = [text[:7], text[7:20], text[20:]]
    chunks = [enforcer.apply(reply(piece), done=index == 2) for index, piece in enumerate(pieces)]
    assert [chunk.content for chunk in chunks] == ["", "", ""]  # the JSON is never shown as text
    assert [names(chunk) for chunk in chunks] == [[], [], [("get_time", {"zone": "UTC"})]]


def test_whitespace_after_a_forced_call_is_not_text() -> None:
    """The grammar lets whitespace follow the call's JSON; when the engine recovered the call
    before the reply ended, that whitespace is not shown as the reply's text."""
    enforcer = ChoiceEnforcer(ToolChoice(REQUIRED))
    first = enforcer.apply(reply("", [("get_time", {"zone": "UTC"})]), done=False)
    last = enforcer.apply(reply("\n\t"), done=True)
    assert names(first) == [("get_time", {"zone": "UTC"})] and (last.content, last.tool_calls) == ("", None)


def test_a_forced_reply_cut_short_stays_the_models_text() -> None:
    """Precision first: a reply the token limit cut is no call, and its text is not lost."""
    cut = '{"name": "get_time", "argum'
    assert ChoiceEnforcer(ToolChoice(REQUIRED)).apply(reply(cut), done=True).content == cut
    enforcer = ChoiceEnforcer(ToolChoice(REQUIRED))
    enforcer.apply(reply(cut[:10]), done=False)
    last = enforcer.apply(reply(cut[10:]), done=True)
    assert last.content == cut and not last.tool_calls
    other = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
    assert not ChoiceEnforcer(ToolChoice(REQUIRED, "get_time")).apply(reply(other), done=True).tool_calls


def test_calls_ollama_parsed_itself_stand_for_a_forced_reply() -> None:
    message = ChoiceEnforcer(ToolChoice(REQUIRED)).apply(reply("", [("get_time", {"zone": "UTC"})]), done=True)
    assert names(message) == [("get_time", {"zone": "UTC"})]


def test_parallel_off_keeps_the_first_call_across_a_stream(caplog: pytest.LogCaptureFixture) -> None:
    two = [("get_time", {"zone": "UTC"}), ("get_weather", {"city": "Paris"})]
    assert names(ChoiceEnforcer(ToolChoice(AUTO, None, False)).apply(reply("", two), done=True)) == two[:1]
    enforcer = ChoiceEnforcer(ToolChoice(AUTO, None, False), "m")
    first = enforcer.apply(reply("", two[:1]), done=False)
    second = enforcer.apply(reply("and", two[1:]), done=True)
    assert names(first) == two[:1] and names(second) == [] and second.content == "and"
    assert "dropped a further call of get_weather" in caplog.text
    assert names(ChoiceEnforcer(ToolChoice(AUTO)).apply(reply("", two), done=True)) == two


THINKING_PASSTHROUGH = ModelProfile(tool_format="hermes", passthrough=True, thinks=True)


@pytest.mark.parametrize(
    ("profile", "version", "enforceable"),
    [
        (THINKING_PASSTHROUGH, "0.24.0", False),
        (THINKING_PASSTHROUGH, None, False),
        (THINKING_PASSTHROUGH, "0.34.4", True),
        (THINKING_PASSTHROUGH, "0.30.0", True),
        (ModelProfile(passthrough=True), "0.24.0", True),  # no thinking block to wait for
        (ModelProfile(thinks=True), "0.24.0", True),  # Ollama sees the thinking end itself
    ],
)
def test_a_tier_that_would_not_enforce_format_refuses_a_forced_choice(
    profile: ModelProfile, version: str | None, enforceable: bool
) -> None:
    if enforceable:
        check_enforceable(ToolChoice(REQUIRED), profile, version, "m")
    else:
        with pytest.raises(ToolChoiceError, match="cannot be enforced for m on Ollama"):
            check_enforceable(ToolChoice(REQUIRED), profile, version, "m")
    check_enforceable(ToolChoice(AUTO, None, False), profile, version, "m")  # nothing forced


ASKED = [{"role": "user", "content": "Weather in Paris?"}]
CALLED = [
    *ASKED,
    {"role": "assistant", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_name": "get_weather", "content": "sunny, 21 C"},
]
TOOLS = [{"type": "function", "function": {"name": name, "parameters": schema}} for name, schema in SCHEMAS.items()]


def test_none_sends_no_tools_and_after_a_result_asks_for_the_answer_last() -> None:
    messages, tools = none_request(ToolChoice(NONE), CALLED, TOOLS)
    assert tools is None
    assert messages == [*CALLED, {"role": "system", "content": NONE_NOTE}]
    assert holds_tool_result([Message(role="tool", content="21 C")])


def test_none_before_any_result_only_withholds_the_tools() -> None:
    assert none_request(ToolChoice(NONE), ASKED, TOOLS) == (ASKED, None)


@pytest.mark.parametrize("choice", [ToolChoice(AUTO), ToolChoice(REQUIRED), ToolChoice(AUTO, None, False)])
def test_other_choices_send_the_conversation_and_tools_as_they_are(choice: ToolChoice) -> None:
    assert none_request(choice, CALLED, TOOLS) == (CALLED, TOOLS)


@pytest.mark.parametrize(
    ("text", "shaped"),
    [
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', True),
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', True),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"city": "Paris", "temperature_c": 21}', True),
        ('Calling: {"name": "get_time", "arguments": {"zone": "UTC"}} now.', True),
        ("It is sunny in Paris, 21 C.", False),
        ('The tool said {"city": "Paris", "temperature_c": 21}: sunny.', False),
        ('{"name": "get_time", "zone": "UTC"}', True),  # the arguments flattened beside the name
        ('The tool "get_weather" said {"city": "Paris"}.', False),
        ('{"name": "Paris", "temperature_c": 21}', False),  # a result's object, not a tool's name
        ('{"name": {"first": "Ada"}, "arguments": {}}', False),  # a name that is not a string
        ('{"name": "get_news", "arguments": {}}', False),  # not an offered tool
        ("", False),
    ],
)
def test_a_reply_that_is_a_call_written_as_text_is_told_apart(text: str, shaped: bool) -> None:
    assert call_shaped(text, TOOLS) is shaped
