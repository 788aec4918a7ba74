"""The client against the real pinned Ollama, with scripted models printing each seed format.

A Hermes model whose template gives Ollama the `<tool_call>` tag is parsed by Ollama itself, and
our client must pass that response through untouched. The other shapes come back from Ollama as
plain text, and our client must return them as tool calls, sync and async, streamed and not.
"""

from __future__ import annotations

import warnings
from typing import Any

import ollama
import pytest

import ollama_fc
from ollama_fc import AsyncClient, Client, InvalidToolCall, run_tools

pytestmark = pytest.mark.ollama

SPECIALS = ("<|im_start|>", "<|im_end|>")

# Renders tools, calls and results. Its `.ToolCalls` block starts with `<|calls|>`, a tag these
# scripts never print, so Ollama leaves their calls in the text (with no `.ToolCalls` block the tag
# would be `{`, and v0.24.0 then repeats the text from the first `{` at the end of the content).
PLAIN_TOOLS = """{{- if .Tools }}<|im_start|>system
Tools:{{ range .Tools }} {{ .Function.Name }}{{ end }}<|im_end|>
{{ end }}
{{- range .Messages }}<|im_start|>{{ .Role }}
{{ if .ToolCalls }}<|calls|>{{ range .ToolCalls }}{{ .Function.Name }}{{ .Function.Arguments }}{{ end }}
{{- else if eq .Role "tool" }}<tool_response>{{ .Content }}</tool_response>{{ else }}{{ .Content }}{{ end }}<|im_end|>
{{ end }}<|im_start|>assistant
"""

HERMES = """{{- if .Tools }}<|im_start|>system
<tools>{{ range .Tools }}
{{ .Function }}{{ end }}
</tools><|im_end|>
{{ end }}
{{- range .Messages }}<|im_start|>{{ .Role }}
{{- if .ToolCalls }}<tool_call>
{{- range .ToolCalls }}
{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
{{- end }}
</tool_call>
{{- else if eq .Role "tool" }}
<tool_response>{{ .Content }}</tool_response>
{{- else }}
{{ .Content }}
{{- end }}<|im_end|>
{{ end }}<|im_start|>assistant
"""


def family(format_name: str) -> str:
    """A template as `ollama-fc build` marks it: the family comment names the format."""
    return f"{{{{/* ollama-fc family=test format={format_name} */}}}}" + PLAIN_TOOLS


def get_weather(city: str, days: int = 1) -> str:
    """Get the weather.

    Args:
        city: City name.
        days: Number of days.
    """
    return f"sunny in {city} for {days} day(s)"


def get_time(zone: str) -> str:
    """Get the time in a zone.

    Args:
        zone: IANA zone name.
    """
    raise RuntimeError(f"clock for {zone} is broken")


TOOLS = [get_weather, get_time]
ASK = [{"role": "user", "content": "Weather in Paris?"}]

# (script, template, expected calls, expected remaining content)
RECOVERED = {
    "minimax_ts": (
        'Let me check.\n```typescript\nfunctions.get_weather({"city": "Paris", "days": "2"})\n```',
        family("minimax_ts"),
        [("get_weather", {"city": "Paris", "days": 2})],
        "Let me check.",
    ),
    "functools": (
        'functools[{"name": "get_weather", "arguments": {\'city\': \'Paris\'}}, {"name": "get_time", "arguments": {"zone": "UTC"}}]',
        PLAIN_TOOLS,
        [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "UTC"})],
        "",
    ),
    "function_list": (
        '[Function(arguments1={"city": "Paris"}, name1=get_weather)]',
        family("function_list"),
        [("get_weather", {"city": "Paris"})],
        "",
    ),
    "pythonic": (
        'Calling tools.\n[get_weather(city="Paris"), get_time(zone="UTC")]',
        PLAIN_TOOLS,
        [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "UTC"})],
        "Calling tools.",
    ),
    "malformed_json": (
        "Sure.\n```json\n{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': 3,},}\n```",
        PLAIN_TOOLS,
        [("get_weather", {"city": "Paris", "days": 3})],
        "Sure.",
    ),
}


def calls_of(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or []]


async def ask(host: str, model: str, mode: str, stream: bool, **kwargs: Any) -> tuple[list[Any], str, list[Any]]:
    """Chat once in the given mode; return the calls, the joined content and the raw responses."""
    if mode == "sync":
        result = Client(host=host).chat(model, ASK, tools=TOOLS, stream=stream, **kwargs)
        responses = list(result) if stream else [result]
    else:
        result = await AsyncClient(host=host).chat(model, ASK, tools=TOOLS, stream=stream, **kwargs)
        responses = [chunk async for chunk in result] if stream else [result]
    calls = [call for response in responses for call in calls_of(response.message)]
    content = "".join(response.message.content or "" for response in responses)
    return calls, content, responses


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("shape", sorted(RECOVERED))
async def test_calls_left_as_text_are_recovered(
    scripted_model, ollama_host: str, shape: str, mode: str, stream: bool
) -> None:
    script, template, expected_calls, expected_content = RECOVERED[shape]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    plain = ollama.Client(host=ollama_host).chat(model, ASK, tools=TOOLS)
    assert not plain.message.tool_calls and plain.message.content == script  # Ollama left it as text
    calls, content, responses = await ask(ollama_host, model, mode, stream)
    assert calls == expected_calls
    assert content.strip() == expected_content
    assert all(isinstance(response, ollama.ChatResponse) for response in responses)
    assert responses[-1].done


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_calls_ollama_parsed_pass_through_untouched(
    scripted_model, ollama_host: str, mode: str, stream: bool
) -> None:
    script = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "x"}}\n</tool_call>'
    model = scripted_model(script, template=HERMES, special_tokens=SPECIALS)
    plain = ollama.Client(host=ollama_host).chat(model, ASK, tools=TOOLS, stream=stream)
    plain_responses = list(plain) if stream else [plain]
    calls, _content, responses = await ask(ollama_host, model, mode, stream)
    # Untouched: not even the schema check (days "x" is not an integer) alters Ollama's own calls.
    assert calls == [call for response in plain_responses for call in calls_of(response.message)]
    assert calls == [("get_weather", {"city": "Paris", "days": "x"})]
    assert [r.message.content for r in responses] == [r.message.content for r in plain_responses]


async def test_prose_naming_a_tool_stays_content(scripted_model, ollama_host: str) -> None:
    script = 'You could call get_weather(city="Paris") yourself; [see docs] for {details}.'
    model = scripted_model(script, template=PLAIN_TOOLS, special_tokens=SPECIALS)
    for stream in (False, True):
        calls, content, _ = await ask(ollama_host, model, "sync", stream)
        assert calls == [] and content == script


async def test_a_shape_other_than_the_models_format_is_recovered(scripted_model, ollama_host: str) -> None:
    """The format orders the shapes, it does not choose one: a Hermes model printing a pythonic
    list gets its call back, with the format detected or given."""
    script = '[get_weather(city="Paris")]'
    model = scripted_model(script, template=family("hermes"), special_tokens=SPECIALS)
    assert (await ask(ollama_host, model, "sync", False))[0] == [("get_weather", {"city": "Paris"})]
    calls, _, _ = await ask(ollama_host, model, "sync", False, tool_format="pythonic")
    assert calls == [("get_weather", {"city": "Paris"})]


def test_format_is_read_from_the_model_once(scripted_model, ollama_host: str) -> None:
    model = scripted_model(
        '[Function(arguments1={"city": "Oslo"}, name1=get_weather)]',
        template=family("function_list"),
        special_tokens=SPECIALS,
    )
    client = Client(host=ollama_host)
    assert client.tool_format(model) == "function_list"
    hermes = scripted_model("hi", template=HERMES, special_tokens=SPECIALS)
    assert client.tool_format(hermes) == "hermes"  # from the tag in its .ToolCalls block
    client.chat(model, ASK, tools=TOOLS)
    assert set(client._formats) == {model, hermes}


async def test_invalid_recovered_call_raises_with_tool_and_argument(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Paris", days="many")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    for stream in (False, True):
        with pytest.raises(InvalidToolCall, match="'get_weather'.*argument 'days': expected integer"):
            await ask(ollama_host, model, "sync", stream)
    calls, _, _ = await ask(ollama_host, model, "async", False, validate=False)
    assert calls == [("get_weather", {"city": "Paris", "days": "many"})]


def test_module_level_chat_matches_ollama_chat(
    scripted_model, ollama_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = scripted_model('[get_weather(city="Paris")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    monkeypatch.setattr(ollama_fc.client, "_default_client", None)
    response = ollama_fc.chat(model, ASK, tools=TOOLS)
    assert calls_of(response.message) == [("get_weather", {"city": "Paris"})]


def test_chat_without_tools_is_plain_ollama(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Paris")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    response = Client(host=ollama_host).chat(model, ASK)
    assert response.message.content == '[get_weather(city="Paris")]' and not response.message.tool_calls


def test_run_tools_runs_parallel_calls_and_hands_back_results_and_errors(scripted_model, ollama_host: str) -> None:
    model = scripted_model(
        '[get_weather(city="Paris", days="2"), get_time(zone="UTC"), get_weather(days=1)]',
        after="It is sunny in Paris.",
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    transcript = run_tools(Client(host=ollama_host), model, ASK, TOOLS)
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    results = transcript[2:5]
    assert [m["tool_name"] for m in results] == ["get_weather", "get_time", "get_weather"]
    assert results[0]["content"] == "sunny in Paris for 2 day(s)"  # "2" coerced to 2
    assert results[1]["content"] == "Error: get_time raised RuntimeError: clock for UTC is broken"
    assert "argument 'city' is required but missing" in results[2]["content"]
    assert transcript[-1]["content"] == "It is sunny in Paris." and "tool_calls" not in transcript[-1]


def test_run_tools_stops_at_the_round_limit(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Paris")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    transcript = run_tools(Client(host=ollama_host), model, ASK, TOOLS, max_rounds=2)
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "assistant", "tool"]


def test_run_tools_can_raise_on_invalid_calls(scripted_model, ollama_host: str) -> None:
    model = scripted_model("[get_weather(days=1)]", template=PLAIN_TOOLS, special_tokens=SPECIALS)
    with pytest.raises(InvalidToolCall, match="'city' is required"):
        run_tools(Client(host=ollama_host), model, ASK, TOOLS, on_invalid="raise")


async def test_a_family_format_this_version_does_not_know_warns_and_tries_every_format(
    scripted_model, ollama_host: str
) -> None:
    """A model built by a newer ollama-fc still gets its calls recovered, with a warning, not a crash."""
    model = scripted_model(
        '[get_weather(city="Paris")]', template=family("some_future_format"), special_tokens=SPECIALS
    )
    for mode in ("sync", "async"):
        with pytest.warns(UserWarning, match="'some_future_format', unknown to this ollama-fc"):
            calls, content, _ = await ask(ollama_host, model, mode, False)
        assert calls == [("get_weather", {"city": "Paris"})] and content == ""


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_response_ollama_swallowed_is_reported_not_silent(
    scripted_model, ollama_host: str, mode: str, stream: bool
) -> None:
    """The model prints Ollama's tag, then Python-dict JSON Ollama cannot parse: Ollama drops it all."""
    script = "<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'Paris'}}\n</tool_call>"
    model = scripted_model(script, template=HERMES, special_tokens=SPECIALS)
    with pytest.warns(ollama_fc.DroppedOutputWarning, match="no content and no tool calls"):
        calls, content, _ = await ask(ollama_host, model, mode, stream)
    assert (calls, content) == ([], "")


def test_an_answer_without_calls_gives_no_dropped_output_warning(scripted_model, ollama_host: str) -> None:
    model = scripted_model("It is sunny in Paris.", template=HERMES, special_tokens=SPECIALS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ollama_fc.DroppedOutputWarning)
        response = Client(host=ollama_host).chat(model, ASK, tools=TOOLS)
    assert response.message.content == "It is sunny in Paris."
