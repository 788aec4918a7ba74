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
from ollama_fc import AsyncClient, Client, InvalidToolCall, StopReason, run_tools
from ollama_fc.recovery import ModelProfile
from ollama_fc.thinking import THINK_CLOSE
from ollama_fc.toolchoice import NONE_NOTE

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
    assert set(client._profiles) == {model, hermes}


async def test_invalid_recovered_call_raises_with_tool_and_argument(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Paris", days="many")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    for stream in (False, True):
        with pytest.raises(InvalidToolCall, match="'get_weather'.*argument 'days': expected integer"):
            await ask(ollama_host, model, "sync", stream)
    calls, _, _ = await ask(ollama_host, model, "async", False, validate=False)
    assert calls == [("get_weather", {"city": "Paris", "days": "many"})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_invalid_call_loses_nothing_the_model_wrote(
    scripted_model, ollama_host: str, mode: str, stream: bool
) -> None:
    """The exception carries the whole reply: its text (call text and the prose after it
    included, for a stream too) and the call as written."""
    script = 'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "many"}}</tool_call>\nOne moment.'
    model = scripted_model(script, template=PLAIN_TOOLS, special_tokens=SPECIALS)
    with pytest.raises(InvalidToolCall, match="argument 'days'") as caught:
        await ask(ollama_host, model, mode, stream)
    reply = caught.value.response
    assert reply.message.content == script
    assert calls_of(reply.message) == [("get_weather", {"city": "Paris", "days": "many"})]


async def test_null_for_an_optional_argument_keeps_the_call(scripted_model, ollama_host: str) -> None:
    model = scripted_model(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": null}}</tool_call>',
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    for stream in (False, True):
        calls, content, _ = await ask(ollama_host, model, "sync", stream)
        assert calls == [("get_weather", {"city": "Paris"})] and content == ""


async def test_a_call_missing_a_required_argument_stays_text(scripted_model, ollama_host: str) -> None:
    """Precision first: `get_weather` without its required `city` is not a call, whatever
    `validate` says; the caller gets the text as the model wrote it."""
    script = "[get_weather(days=1)]"
    model = scripted_model(script, template=PLAIN_TOOLS, special_tokens=SPECIALS)
    for stream in (False, True):
        for validate in (True, False):
            calls, content, _ = await ask(ollama_host, model, "sync", stream, validate=validate)
            assert (calls, content) == ([], script)


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
        '[get_weather(city="Paris", days="2"), get_time(zone="UTC"), get_weather(city="Oslo", days="a week")]',
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
    assert "argument 'days': expected integer" in results[2]["content"]
    assert transcript[-1]["content"] == "It is sunny in Paris." and "tool_calls" not in transcript[-1]
    assert (transcript.stop, transcript.rounds, transcript.answer) == (StopReason.ANSWERED, 2, "It is sunny in Paris.")


def test_run_tools_stops_at_the_round_limit(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Paris")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    transcript = run_tools(Client(host=ollama_host), model, ASK, TOOLS, max_rounds=1)
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool"]
    assert (transcript.stop, transcript.rounds, transcript.answer) == (StopReason.MAX_ROUNDS, 1, None)


#: a phrase of NONE_NOTE: a model with it as its trigger answers only when asked with tool_choice none
ASKED_FOR_THE_ANSWER = "Do not call a tool"


def test_a_repeated_call_is_not_run_again_and_the_answer_is_asked_for(scripted_model, ollama_host: str) -> None:
    """The model writes its call again once the result is in the prompt, as small models do:
    the loop does not run it again, asks with tool_choice none, and returns the answer."""
    assert ASKED_FOR_THE_ANSWER in NONE_NOTE
    model = scripted_model(
        '[get_weather(city="Paris")]',
        after="It is sunny in Paris.",
        trigger=ASKED_FOR_THE_ANSWER,
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Get the weather.

        Args:
            city: City name.
        """
        ran.append(city)
        return f"sunny in {city}"

    transcript = run_tools(Client(host=ollama_host), model, ASK, [get_weather])
    assert ran == ["Paris"]
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "assistant"]
    assert transcript.stop is StopReason.ANSWERED_WHEN_ASKED and transcript.finished
    assert transcript.answer == transcript[-1]["content"] == "It is sunny in Paris."
    assert transcript.rounds == 3 and transcript.repeated == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    "written",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"city": "Paris", "sky": "sunny"}',
        '{"name": "get_weather", "city": "Paris"}',  # the arguments flattened beside the name
    ],
)
def test_a_call_written_as_text_after_its_result_is_not_the_answer(
    scripted_model, ollama_host: str, written: str
) -> None:
    """Given the result, Qwen2.5-Coder-0.5B writes its call as JSON and copies the result after
    it, or writes a call with its arguments beside the name: text the recovery rightly leaves
    as text, yet no answer. The loop asks with none."""
    model = scripted_model(
        written,
        after="It is sunny in Paris.",
        trigger=ASKED_FOR_THE_ANSWER,
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    called = [*ASK, {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "sunny in Paris"}]
    transcript = run_tools(Client(host=ollama_host), model, called, TOOLS)
    assert (transcript.stop, transcript.rounds, transcript.answer) == (
        StopReason.ANSWERED_WHEN_ASKED,
        2,
        "It is sunny in Paris.",
    )
    assert len(transcript) == len(called) + 1 and transcript.repeated == []
    # before any result, the same text is the model's reply as it stands
    assert run_tools(Client(host=ollama_host), model, ASK, TOOLS).stop is StopReason.ANSWERED


def test_a_model_that_writes_its_call_again_when_asked_ends_the_run_without_an_answer(
    scripted_model, ollama_host: str
) -> None:
    model = scripted_model('[get_weather(city="Paris")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    transcript = run_tools(Client(host=ollama_host), model, ASK, TOOLS)
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "assistant"]
    assert transcript[-1]["content"] == '[get_weather(city="Paris")]'  # the call as text: tools were withheld
    assert (transcript.stop, transcript.answer, transcript.finished) == (StopReason.REPEATED_CALL, None, False)


def test_run_tools_can_raise_on_invalid_calls(scripted_model, ollama_host: str) -> None:
    model = scripted_model('[get_weather(city="Oslo", days="a week")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    with pytest.raises(InvalidToolCall, match="argument 'days'"):
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


# --- Models created with PARSER passthrough: Ollama returns the raw text, the client parses it all.

# HERMES with a thinking block in its assistant turns: Ollama infers the tags `<think>` and
# `</think>` from it and lists the `thinking` capability.
THINKING = HERMES.replace(
    "{{- else }}\n{{ .Content }}",
    "{{- else }}\n{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}",
)
# long enough that the 16-byte pieces of the scripted model cut `</think>` in two
THOUGHT = "The user wants Paris. I might call get_weather now."
THINKING_SCRIPTS = {
    "answer": f"<think>\n{THOUGHT}\n</think>\n\nIt is sunny in Paris.",
    "call": f"<think>{THOUGHT}</think>"
    + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "call inside": '<think>Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call></think>'
    "Sunny in Paris.",
    "no thinking": "  It is sunny in Paris.",
    "unclosed": f"<think>{THOUGHT}",
    "cut in the closing tag": f"<think>{THOUGHT}</thi",
    "cut in the opening tag": "\n<thi",
}
#: what Ollama holds back as a possible tag and never releases, where our client keeps it
OLLAMA_LOSES = {"cut in the closing tag": ("</thi", ""), "cut in the opening tag": ("", "\n<thi")}


def joined(responses: list[Any]) -> tuple[str, str, list[Any]]:
    """Thinking, content and calls of a response or stream."""
    thinking = "".join(r.message.thinking or "" for r in responses)
    content = "".join(r.message.content or "" for r in responses)
    return thinking, content, [call for r in responses for call in calls_of(r.message)]


async def responses_of(client: Any, model: str, stream: bool, **kwargs: Any) -> list[Any]:
    result = client.chat(model, ASK, stream=stream, **kwargs)
    if isinstance(client, AsyncClient):
        result = await result
        return [chunk async for chunk in result] if stream else [result]
    return list(result) if stream else [result]


def test_passthrough_model_is_recognised_from_show(scripted_model, ollama_host: str) -> None:
    passthrough = scripted_model(
        "Hello there.", template=family("hermes"), special_tokens=SPECIALS, parser="passthrough"
    )
    parsed = scripted_model("Hello there.", template=family("hermes"), special_tokens=SPECIALS)
    thinking = scripted_model("Hello there.", template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    client = Client(host=ollama_host)
    assert client.model_profile(passthrough) == ModelProfile("hermes", passthrough=True, thinks=False)
    assert client.model_profile(parsed) == ModelProfile("hermes", passthrough=False, thinks=False)
    assert client.model_profile(thinking) == ModelProfile("hermes", passthrough=True, thinks=True)
    # Passthrough keeps the tools capability: the template still renders the offered tools.
    assert "tools" in (client.show(passthrough).capabilities or [])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_passthrough_model_calls_are_parsed_by_the_client(
    scripted_model, ollama_host: str, mode: str, stream: bool
) -> None:
    """A call Ollama would have parsed (and schema-checking it), and one it would have swallowed."""
    good = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "2"}}\n</tool_call>'
    swallowed = "<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'Paris'}}\n</tool_call>\nDone."
    for script, expected, rest in ((good, {"city": "Paris", "days": 2}, ""), (swallowed, {"city": "Paris"}, "Done.")):
        model = scripted_model(script, template=HERMES, special_tokens=SPECIALS, parser="passthrough")
        plain = ollama.Client(host=ollama_host).chat(model, ASK, tools=TOOLS)
        assert plain.message.content == script and not plain.message.tool_calls
        with warnings.catch_warnings():
            warnings.simplefilter("error", ollama_fc.DroppedOutputWarning)
            calls, content, _ = await ask(ollama_host, model, mode, stream)
        assert calls == [("get_weather", expected)] and content.strip() == rest


def pieces_of(responses: list[Any]) -> list[tuple[str, str]]:
    """The (thinking, content) of each chunk that carries either."""
    pieces = [(r.message.thinking or "", r.message.content or "") for r in responses]
    return [piece for piece in pieces if piece != ("", "")]


@pytest.mark.parametrize("script", sorted(THINKING_SCRIPTS))
@pytest.mark.parametrize("think", [True, None, False], ids=["think", "unset", "no-think"])
async def test_passthrough_thinking_is_split_as_ollama_splits_it(
    scripted_model, ollama_host: str, script: str, think: Any
) -> None:
    """The same script on a model Ollama parses and on a passthrough one: our client on the
    passthrough model returns what Ollama returns for the other, chunk by chunk when streamed
    (the model is thinking-capable, so thinking is on when `think` is not given)."""
    text = THINKING_SCRIPTS[script]
    ollamas = scripted_model(text, template=THINKING, special_tokens=SPECIALS)
    ours = scripted_model(text, template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    kwargs = {} if think is None else {"think": think}
    for stream in (False, True):
        expected = await responses_of(ollama.Client(host=ollama_host), ollamas, stream, **kwargs)
        got = await responses_of(Client(host=ollama_host), ours, stream, **kwargs)
        if script in OLLAMA_LOSES and think is not False:
            lost_thinking, lost_content = OLLAMA_LOSES[script]
            thinking, content, calls = joined(expected)
            assert joined(got) == (thinking + lost_thinking, content + lost_content, calls)
            continue
        assert joined(got) == joined(expected)
        assert pieces_of(got) == pieces_of(expected)
    if think is not False and script == "answer":
        assert joined(expected)[:2] == (THOUGHT + "\n", "It is sunny in Paris.")  # the case is what it says


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_passthrough_thinking_async_and_with_a_level(scripted_model, ollama_host: str, stream: bool) -> None:
    model = scripted_model(THINKING_SCRIPTS["answer"], template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    for think in ("low", True):
        got = joined(await responses_of(AsyncClient(host=ollama_host), model, stream, think=think))
        assert got == (THOUGHT + "\n", "It is sunny in Paris.", [])


def test_a_closing_think_tag_split_across_chunks_is_found(scripted_model, ollama_host: str) -> None:
    text = THINKING_SCRIPTS["answer"]
    model = scripted_model(text, template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    raw = [c.message.content for c in ollama.Client(host=ollama_host).chat(model, ASK, stream=True, think=True)]
    # the tag really is cut between two chunks
    assert any(piece.endswith(THINK_CLOSE[:size]) for piece in raw for size in range(2, len(THINK_CLOSE)))
    thinking, content, _ = joined(list(Client(host=ollama_host).chat(model, ASK, stream=True, think=True)))
    assert (thinking, content) == (THOUGHT + "\n", "It is sunny in Paris.")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_passthrough_thinking_with_tools(scripted_model, ollama_host: str, stream: bool) -> None:
    """A call after the thinking is a call; one inside it is thinking, never a call."""
    client = Client(host=ollama_host)
    after = scripted_model(THINKING_SCRIPTS["call"], template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    thinking, content, calls = joined(await responses_of(client, after, stream, tools=TOOLS, think=True))
    assert (thinking, content, calls) == (THOUGHT, "", [("get_weather", {"city": "Paris"})])
    inside = scripted_model(
        THINKING_SCRIPTS["call inside"], template=THINKING, special_tokens=SPECIALS, parser="passthrough"
    )
    thinking, content, calls = joined(await responses_of(client, inside, stream, tools=TOOLS, think=True))
    assert calls == [] and content == "Sunny in Paris." and "Rome" in thinking
    # Without thinking, the block stays in the content (as Ollama leaves it), still not a call.
    thinking, content, calls = joined(await responses_of(client, inside, stream, tools=TOOLS, think=False))
    assert (thinking, content, calls) == ("", THINKING_SCRIPTS["call inside"], [])


def test_chat_without_tools_and_without_thinking_asks_no_show(scripted_model, ollama_host: str) -> None:
    model = scripted_model("Hello there.", template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    client = Client(host=ollama_host)
    assert client.chat(model, ASK, think=False).message.content == "Hello there."
    assert client._profiles == {}


def test_format_on_a_passthrough_thinking_model(scripted_model, ollama_server: Any, ollama_host: str) -> None:
    """The caveat in docs/USAGE.md: v0.24.0 applies `format=` once it has seen the thinking end, which it
    never sees for a passthrough model with a thinking template; 0.3x (llama-server) applies it
    from the first token either way; without a thinking template, format applies on both."""
    script = "<think>Hmm, Paris.</think>It is sunny in Paris."
    plain = ollama.Client(host=ollama_host)
    ask_json = {"format": "json", "options": {"num_predict": 40}}
    thinking = scripted_model(script, template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    content = plain.chat(thinking, ASK, **ask_json).message.content
    if ollama_server.tier.uses_llama_server:
        assert content.startswith("{")  # the grammar applies from the start
    else:
        assert content == script  # not constrained
    no_thinking = scripted_model(script, template=HERMES, special_tokens=SPECIALS, parser="passthrough")
    assert plain.chat(no_thinking, ASK, **ask_json).message.content.startswith("{")  # the grammar applies
