"""`tool_choice` and single calls, enforced on every API against the real Ollama tiers: through
`ollama_fc.Client` / `AsyncClient`, and through the proxy with the openai SDK (chat completions and
Responses) and the anthropic SDK (Messages), whole and streamed.

The scripted models make each rule observable: a model that talks prose unless it sees tools in
its prompt (`none` must withhold them), a prose model forced to call a tool without parameters
(the grammar writes every byte of the call, so only an enforced `format` gives a call), and a
model that calls two tools at once (`parallel_tool_calls: false` keeps one).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from ollama_fc import AsyncClient, Client
from ollama_fc.toolchoice import ToolChoiceError
from tests.test_client_e2e import ASKED_FOR_THE_ANSWER, PLAIN_TOOLS, RECOVERED, SPECIALS, THINKING
from tests.test_serve import TOOL_DICTS

pytestmark = pytest.mark.ollama

QUESTION = "Is the line up?"
PING = {
    "type": "function",
    "function": {"name": "ping", "description": "Check the line.", "parameters": {"type": "object", "properties": {}}},
}
PROSE = "Nothing to call here, friend."
APIS = ["client", "async-client", "chat-completions", "responses", "messages"]
Calls = list[tuple[str, dict[str, Any]]]


def spelled(api: str, choice: Any) -> Any:
    """`choice` ("auto", "none", "required" or ("name", tool)) as `api` spells it."""
    if isinstance(choice, tuple):
        name = choice[1]
        if api == "messages":
            return {"type": "tool", "name": name}
        return (
            {"type": "function", "name": name}
            if api == "responses"
            else {"type": "function", "function": {"name": name}}
        )
    if api == "messages":
        return {"type": {"required": "any"}.get(choice, choice)}
    return choice


#: tokens a reply may take: under a forced choice the grammar writes it, and a scripted model's
#: flat choices among the whitespace JSON allows can run past 64 tokens before the call ends
MAX_TOKENS = 256


def ask(
    api: str,
    host: str,
    proxy: str,
    model: str,
    tools: list[dict[str, Any]],
    stream: bool,
    choice: Any,
    parallel: bool = True,
) -> tuple[Calls, str]:
    """One turn through `api` (the client talks to Ollama itself, the SDKs to the proxy): its calls
    (each with an id of its own) and its text."""
    question = [{"role": "user", "content": QUESTION}]
    if api in ("client", "async-client"):
        options = {
            "tool_choice": spelled(api, choice),
            "parallel_tool_calls": parallel,
            "options": {"num_predict": MAX_TOKENS},
        }
        if api == "client":
            result = Client(host=host).chat(model, question, tools=tools, stream=stream, **options)
            chunks = list(result) if stream else [result]
        else:
            chunks = asyncio.run(_async_chat(host, model, question, tools, stream, options))
        calls = [(c.function.name, dict(c.function.arguments)) for r in chunks for c in r.message.tool_calls or ()]
        return calls, "".join(r.message.content or "" for r in chunks)
    if api == "chat-completions":
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)
        request = {
            "model": model,
            "messages": question,
            "tools": tools,
            "tool_choice": spelled(api, choice),
            "max_tokens": MAX_TOKENS,
        }
        if not parallel:
            request["parallel_tool_calls"] = False
        if not stream:
            message = client.chat.completions.create(**request).choices[0].message
            return [
                (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()
            ], message.content or ""
        entries: dict[int, dict[str, str]] = {}
        text = ""
        for chunk in client.chat.completions.create(**request, stream=True):
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for call in delta.tool_calls or ():
                entry = entries.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += call.id or ""
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
        assert len({entry["id"] for entry in entries.values()}) == len(entries)
        return [(e["name"], json.loads(e["arguments"])) for _, e in sorted(entries.items())], text
    if api == "responses":
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)
        functions = [{"type": "function", **tool["function"]} for tool in tools]
        request = {"model": model, "input": QUESTION, "tools": functions, "tool_choice": spelled(api, choice)}
        request.update(max_output_tokens=MAX_TOKENS, parallel_tool_calls=parallel)
        if stream:
            with client.responses.stream(**request) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**request)
        items = [item for item in response.output if item.type == "function_call"]
        assert len({item.call_id for item in items}) == len(items)
        return [(item.name, json.loads(item.arguments)) for item in items], response.output_text
    assert api == "messages"
    messages_client = anthropic.Anthropic(base_url=proxy, api_key="ollama", max_retries=0)
    anthropic_choice = spelled(api, choice)
    if not parallel:
        anthropic_choice["disable_parallel_tool_use"] = True
    anthropic_tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in tools
    ]
    request = {
        "model": model,
        "max_tokens": MAX_TOKENS,
        "messages": question,
        "tools": anthropic_tools,
        "tool_choice": anthropic_choice,
    }
    if stream:
        with messages_client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = messages_client.messages.create(**request)
    uses = [block for block in message.content if block.type == "tool_use"]
    assert len({block.id for block in uses}) == len(uses)
    assert message.stop_reason == ("tool_use" if uses else "end_turn")
    return [(block.name, block.input) for block in uses], "".join(b.text for b in message.content if b.type == "text")


async def _async_chat(host: str, model: str, question: Any, tools: Any, stream: bool, options: Any) -> list[Any]:
    result = await AsyncClient(host=host).chat(model, question, tools=tools, stream=stream, **options)
    return [chunk async for chunk in result] if stream else [result]


@pytest.fixture(scope="module")
def prose_model(scripted_model: Any) -> str:
    return str(scripted_model(PROSE, template=PLAIN_TOOLS, special_tokens=SPECIALS))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_required_and_named_make_a_prose_model_call(
    prose_model: str, ollama_host: str, proxy: str, api: str, stream: bool
) -> None:
    """Left to itself the model talks; forced, its reply is the call (every byte of which the
    grammar writes), returned as a call and never as text."""
    assert ask(api, ollama_host, proxy, prose_model, [PING], stream, "auto") == ([], PROSE)
    assert ask(api, ollama_host, proxy, prose_model, [PING], stream, "required") == ([("ping", {})], "")
    both = [PING, *TOOL_DICTS]
    assert ask(api, ollama_host, proxy, prose_model, both, stream, ("name", "ping")) == ([("ping", {})], "")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_none_withholds_the_tools(scripted_model: Any, ollama_host: str, proxy: str, api: str, stream: bool) -> None:
    """The model calls only when its prompt lists tools: with `none` it never sees them."""
    model = scripted_model(
        "No tools in sight.",
        after='[get_weather(city="Paris")]',
        trigger="Tools:",
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    assert ask(api, ollama_host, proxy, model, TOOL_DICTS, stream, "auto") == ([("get_weather", {"city": "Paris"})], "")
    assert ask(api, ollama_host, proxy, model, TOOL_DICTS, stream, "none") == ([], "No tools in sight.")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_parallel_off_keeps_one_call(scripted_model: Any, ollama_host: str, proxy: str, api: str, stream: bool) -> None:
    script, template, expected_calls, expected_content = RECOVERED["pythonic"]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    calls, content = ask(api, ollama_host, proxy, model, TOOL_DICTS, stream, "auto")
    assert (calls, content.strip()) == (expected_calls, expected_content)  # two calls, each its own id
    calls, content = ask(api, ollama_host, proxy, model, TOOL_DICTS, stream, "auto", parallel=False)
    assert (calls, content.strip()) == (expected_calls[:1], expected_content)


@pytest.mark.parametrize("api", APIS)
def test_a_choice_naming_a_tool_not_offered_is_refused(
    prose_model: str, ollama_host: str, proxy: str, api: str
) -> None:
    with pytest.raises((ToolChoiceError, openai.BadRequestError, anthropic.BadRequestError)) as raised:
        ask(api, ollama_host, proxy, prose_model, [PING], False, ("name", "get_news"))
    assert "'get_news', which is not among the offered tools (ping)" in str(raised.value)


@pytest.mark.parametrize("api", APIS)
def test_forcing_a_passthrough_thinking_model(
    scripted_model: Any, ollama_server: Any, ollama_host: str, proxy: str, api: str
) -> None:
    """v0.24.0 would not apply the format to this model (it waits for the end of a thinking block
    it never sees): the forced choice is refused with a 400 naming why, never served as `auto`.
    From v0.30 the grammar applies from the first token, and the call comes back."""
    model = scripted_model(PROSE, template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    if ollama_server.tier.uses_llama_server:
        assert ask(api, ollama_host, proxy, model, [PING], False, "required") == ([("ping", {})], "")
        return
    with pytest.raises((ToolChoiceError, openai.BadRequestError, anthropic.BadRequestError)) as raised:
        ask(api, ollama_host, proxy, model, [PING], False, "required")
    assert f"cannot be enforced for {model} on Ollama 0.24.0" in str(raised.value)


RESULT = "sunny, 21 C"
ANSWER = "It is sunny in Paris."
ARGUMENTS = json.dumps({"city": "Paris"})


def after_the_result(api: str, host: str, proxy: str, model: str, choice: str) -> tuple[Calls, str]:
    """The turn after a get_weather call and its result, through `api`: its calls and its text."""
    question = {"role": "user", "content": "Weather in Paris?"}
    options: dict[str, Any] = {"tool_choice": choice}
    if api in ("client", "api-chat"):
        call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        messages = [question, {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": RESULT}]
        messages[-1]["tool_name"] = "get_weather"
        if api == "client":
            message = Client(host=host).chat(model, messages, tools=TOOL_DICTS, **options).message
            return [
                (c.function.name, dict(c.function.arguments)) for c in message.tool_calls or ()
            ], message.content or ""
        raw = {"model": model, "messages": messages, "tools": TOOL_DICTS, "stream": False, **options}
        answer = httpx.post(f"{proxy}/api/chat", json=raw, timeout=120).raise_for_status().json()["message"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in answer.get("tool_calls") or ()]
        return calls, answer.get("content") or ""
    if api == "chat-completions":
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)
        call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}
        chat = [question, {"role": "assistant", "tool_calls": [call]}]
        chat.append({"role": "tool", "tool_call_id": "call_1", "content": RESULT})
        message = client.chat.completions.create(model=model, messages=chat, tools=TOOL_DICTS, **options)
        reply = message.choices[0].message
        return [
            (c.function.name, json.loads(c.function.arguments)) for c in reply.tool_calls or ()
        ], reply.content or ""
    if api == "responses":
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)
        items = [
            question,
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ARGUMENTS},
            {"type": "function_call_output", "call_id": "call_1", "output": RESULT},
        ]
        functions = [{"type": "function", **tool["function"]} for tool in TOOL_DICTS]
        response = client.responses.create(model=model, input=items, tools=functions, **options)
        found = [item for item in response.output if item.type == "function_call"]
        return [(item.name, json.loads(item.arguments)) for item in found], response.output_text
    assert api == "messages"
    client_ = anthropic.Anthropic(base_url=proxy, api_key="ollama", max_retries=0)
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    conversation = [
        question,
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULT}]},
    ]
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in TOOL_DICTS
    ]
    message = client_.messages.create(
        model=model, max_tokens=MAX_TOKENS, messages=conversation, tools=tools, tool_choice={"type": choice}
    )
    uses = [block for block in message.content if block.type == "tool_use"]
    return [(block.name, block.input) for block in uses], "".join(b.text for b in message.content if b.type == "text")


@pytest.mark.parametrize("api", [*APIS[:1], "api-chat", *APIS[2:]])
def test_none_after_a_result_asks_for_the_answer(scripted_model: Any, ollama_host: str, proxy: str, api: str) -> None:
    """A model that writes its call again once the result is in its prompt (as small models do,
    tools offered or not) answers when the request ends with NONE_NOTE: `none` sends it on
    every API, and `auto` does not."""
    model = scripted_model(
        '[get_weather(city="Paris")]',
        after=ANSWER,
        trigger=ASKED_FOR_THE_ANSWER,
        template=PLAIN_TOOLS,
        special_tokens=SPECIALS,
    )
    assert after_the_result(api, ollama_host, proxy, model, "auto") == ([("get_weather", {"city": "Paris"})], "")
    assert after_the_result(api, ollama_host, proxy, model, "none") == ([], ANSWER)
