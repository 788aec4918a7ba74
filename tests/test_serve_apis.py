"""`ollama-fc serve` on the agents' APIs, used by their own SDKs: Anthropic Messages (`/v1/messages`,
the anthropic SDK, as Claude Code speaks it) and OpenAI Responses (`/v1/responses`, the openai
SDK's `client.responses`, as Codex speaks it), on every seed family and on the calls Ollama
leaves in the text; the tool result reaches the template under its tool's name."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.family_cases import ANSWER, CASES
from tests.test_client_e2e import PLAIN_TOOLS, RECOVERED, SPECIALS, THINKING, THINKING_SCRIPTS, THOUGHT
from tests.test_serve import NAMED_RESULTS, QUESTION, TOOL_DICTS, WEATHER_CALL

pytestmark = pytest.mark.ollama

#: the tools of TOOL_DICTS in each API's shape
ANTHROPIC_TOOLS = [
    {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]}
    for f in (tool["function"] for tool in TOOL_DICTS)
]
RESPONSES_TOOLS = [{"type": "function", **tool["function"]} for tool in TOOL_DICTS]
Calls = list[tuple[str, dict[str, Any]]]


def anthropic_client(proxy: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=proxy, api_key="ollama", max_retries=0)


def responses_client(proxy: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)


def ask_anthropic(proxy: str, model: str, stream: bool, messages: Any = None, **kwargs: Any) -> Any:
    """One message through the proxy, whole or accumulated by the SDK's stream helper."""
    request = {
        "model": model,
        "max_tokens": 512,
        "messages": messages or [{"role": "user", "content": QUESTION}],
        "tools": ANTHROPIC_TOOLS,
        **kwargs,
    }
    client = anthropic_client(proxy)
    if not stream:
        return client.messages.create(**request)
    with client.messages.stream(**request) as events:
        return events.get_final_message()


def tool_uses(message: Any) -> Calls:
    return [(block.name, block.input) for block in message.content if block.type == "tool_use"]


def text_of(message: Any) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def ask_responses(proxy: str, model: str, stream: bool, input: Any = QUESTION, **kwargs: Any) -> Any:
    """One response through the proxy, whole or accumulated by the SDK's stream helper."""
    request = {"model": model, "input": input, "tools": RESPONSES_TOOLS, **kwargs}
    client = responses_client(proxy)
    if not stream:
        return client.responses.create(**request)
    with client.responses.stream(**request) as events:
        return events.get_final_response()


def function_calls(response: Any) -> Calls:
    return [(item.name, json.loads(item.arguments)) for item in response.output if item.type == "function_call"]


# -- every family, built as a user builds it ---------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_family_through_anthropic_sdk(family: str, stream: bool, family_models: dict[str, str], proxy: str) -> None:
    message = ask_anthropic(proxy, family_models[family], stream)
    assert tool_uses(message) == WEATHER_CALL
    assert message.stop_reason == "tool_use"
    assert text_of(message).strip() == ""
    assert all(block.id for block in message.content if block.type == "tool_use")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_family_through_openai_responses(family: str, stream: bool, family_models: dict[str, str], proxy: str) -> None:
    response = ask_responses(proxy, family_models[family], stream)
    assert function_calls(response) == WEATHER_CALL
    assert response.status == "completed"
    assert response.output_text.strip() == ""
    assert all(item.call_id for item in response.output if item.type == "function_call")


# -- calls Ollama leaves in the text -----------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("shape", sorted(RECOVERED))
def test_recovered_through_anthropic_sdk(scripted_model: Any, proxy: str, shape: str, stream: bool) -> None:
    script, template, expected_calls, expected_content = RECOVERED[shape]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    message = ask_anthropic(proxy, model, stream)
    assert tool_uses(message) == expected_calls
    assert text_of(message).strip() == expected_content
    assert message.stop_reason == "tool_use"
    ids = [block.id for block in message.content if block.type == "tool_use"]
    assert len(set(ids)) == len(expected_calls)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("shape", sorted(RECOVERED))
def test_recovered_through_openai_responses(scripted_model: Any, proxy: str, shape: str, stream: bool) -> None:
    script, template, expected_calls, expected_content = RECOVERED[shape]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    response = ask_responses(proxy, model, stream)
    assert function_calls(response) == expected_calls
    assert response.output_text.strip() == expected_content
    ids = [item.call_id for item in response.output if item.type == "function_call"]
    assert len(set(ids)) == len(expected_calls)


def sse_events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    events, name = [], ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[len("data: ") :])))
    return events


def test_anthropic_stream_gives_each_call_its_own_block(scripted_model: Any, proxy: str) -> None:
    """Two calls streamed: text, then one tool_use block each (start, input_json_delta, stop), in
    the order Anthropic's clients read, and the message's end saying tool_use."""
    script, template, _, _ = RECOVERED["pythonic"]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    body = {"model": model, "max_tokens": 256, "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.stream("POST", f"{proxy}/v1/messages", json={**body, "tools": ANTHROPIC_TOOLS}, timeout=120) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = sse_events(reply)
    assert all(name == data["type"] for name, data in events)
    kinds = [name for name, _ in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    starts = [data for name, data in events if name == "content_block_start"]
    assert [(start["index"], start["content_block"]["type"]) for start in starts] == [
        (0, "text"),
        (1, "tool_use"),
        (2, "tool_use"),
    ]
    for start in starts[1:]:
        index = start["index"]
        block_events = [(name, data) for name, data in events if data.get("index") == index]
        assert [name for name, _ in block_events] == [
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
        ]
        assert block_events[1][1]["delta"]["type"] == "input_json_delta"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_responses_stream_gives_each_call_its_own_item(scripted_model: Any, proxy: str) -> None:
    script, template, expected_calls, _ = RECOVERED["pythonic"]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    body = {"model": model, "stream": True, "input": QUESTION, "tools": RESPONSES_TOOLS}
    with httpx.stream("POST", f"{proxy}/v1/responses", json=body, timeout=120) as reply:
        events = sse_events(reply)
    kinds = [name for name, _ in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    added = [data for name, data in events if name == "response.output_item.added"]
    assert [(item["output_index"], item["item"]["type"]) for item in added] == [
        (0, "message"),
        (1, "function_call"),
        (2, "function_call"),
    ]
    done = {data["output_index"]: data["arguments"] for name, data in events if name.endswith("arguments.done")}
    assert [(item["item"]["name"], json.loads(done[item["output_index"]])) for item in added[1:]] == expected_calls


# -- thinking ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_thinking_of_a_passthrough_model(scripted_model: Any, proxy: str, stream: bool) -> None:
    """A passthrough model's `<think>` block comes back as each API's thinking (a thinking block,
    a reasoning item) before its call, as Ollama splits it for a model it parses; with thinking
    turned off it is not split."""
    model = scripted_model(THINKING_SCRIPTS["call"], template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    message = ask_anthropic(proxy, model, stream, thinking={"type": "enabled", "budget_tokens": 1024})
    assert [block.type for block in message.content] == ["thinking", "tool_use"]
    assert message.content[0].thinking == THOUGHT and tool_uses(message) == WEATHER_CALL
    response = ask_responses(proxy, model, stream, reasoning={"effort": "low"})
    assert [item.type for item in response.output] == ["reasoning", "function_call"]
    assert response.output[0].summary[0].text == THOUGHT and function_calls(response) == WEATHER_CALL
    unsplit = ask_anthropic(proxy, model, stream, thinking={"type": "disabled"})
    assert THOUGHT in text_of(unsplit) and all(block.type != "thinking" for block in unsplit.content)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_claude_codes_thinking_request(scripted_model: Any, proxy: str, stream: bool) -> None:
    """Claude Code asks every model to think (`thinking: adaptive`, `output_config.effort: high`):
    a model that cannot think answers with its call, as Ollama's own Anthropic layer serves it
    (Ollama's /api/chat alone says 400 "does not support thinking"); a model that can think
    still thinks."""
    claude_code = {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}
    script, template, expected_calls, _ = RECOVERED["minimax_ts"]
    plain = scripted_model(script, template=template, special_tokens=SPECIALS)
    assert tool_uses(ask_anthropic(proxy, plain, stream, **claude_code)) == expected_calls
    thinker = scripted_model(THINKING_SCRIPTS["call"], template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    message = ask_anthropic(proxy, thinker, stream, **claude_code)
    assert [block.type for block in message.content] == ["thinking", "tool_use"]


# -- tool loops: the result reaches the template under its tool's name -------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_anthropic_tool_loop(scripted_model: Any, proxy: str, stream: bool) -> None:
    model = scripted_model(
        'Checking.\n[get_weather(city="Paris")]',
        after=ANSWER,
        trigger='name="get_weather"',
        template=NAMED_RESULTS,
        special_tokens=SPECIALS,
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    first = ask_anthropic(proxy, model, stream, messages)
    assert tool_uses(first) == WEATHER_CALL and text_of(first).strip() == "Checking."
    messages.append({"role": "assistant", "content": [block.model_dump() for block in first.content]})
    results = [
        {"type": "tool_result", "tool_use_id": block.id, "content": json.dumps({"sky": "sunny"})}
        for block in first.content
        if block.type == "tool_use"
    ]
    messages.append({"role": "user", "content": results})
    second = ask_anthropic(proxy, model, stream, messages)
    assert (tool_uses(second), text_of(second), second.stop_reason) == ([], ANSWER, "end_turn")


#: a template that renders only the roles it knows (as MiniMax's does): a `developer` message is lost
KNOWN_ROLES_ONLY = """{{- range .Messages }}{{ if eq .Role "system" "user" "assistant" }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}{{ end }}<|im_start|>assistant
"""


def test_responses_developer_messages_reach_the_template(scripted_model: Any, proxy: str) -> None:
    """Codex sends its instructions as `developer` messages: the model sees them, as system
    messages (Ollama's own Responses layer passes the role on, and such a template drops it)."""
    model = scripted_model(
        "No instructions seen.",
        after="Instructions seen.",
        trigger="<|instructions|>",
        template=KNOWN_ROLES_ONLY,
        special_tokens=SPECIALS,
    )
    developer = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "<|instructions|>"}],
    }
    question = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]}
    response = responses_client(proxy).responses.create(model=model, input=[developer, question])
    assert response.output_text == "Instructions seen."


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_responses_tool_loop(scripted_model: Any, proxy: str, stream: bool) -> None:
    model = scripted_model(
        'Checking.\n[get_weather(city="Paris")]',
        after=ANSWER,
        trigger='name="get_weather"',
        template=NAMED_RESULTS,
        special_tokens=SPECIALS,
    )
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    first = ask_responses(proxy, model, stream, items)
    assert function_calls(first) == WEATHER_CALL and first.output_text.strip() == "Checking."
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items += [
        {"type": "function_call_output", "call_id": item.call_id, "output": json.dumps({"sky": "sunny"})}
        for item in first.output
        if item.type == "function_call"
    ]
    second = ask_responses(proxy, model, stream, items)
    assert (function_calls(second), second.output_text) == ([], ANSWER)


# -- errors --------------------------------------------------------------------------------------


def test_malformed_requests_are_400_in_each_apis_shape(proxy: str) -> None:
    for body in (b"{not json", b"[1, 2]", b'{"model": "m", "messages": [], "tools": "get_weather"}'):
        reply = httpx.post(f"{proxy}/v1/messages", content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400
        assert reply.json()["type"] == "error" and "malformed" in reply.json()["error"]["message"]
    for body in ({"model": "m", "input": [{"type": "function_call"}]}, {"model": "m", "reasoning": {"effort": "lots"}}):
        reply = httpx.post(f"{proxy}/v1/responses", json=body)
        assert reply.status_code == 400 and "malformed" in reply.json()["error"]["message"], body


def test_a_missing_model_is_the_apis_not_found(proxy: str) -> None:
    with pytest.raises(anthropic.NotFoundError, match="no-such-model"):
        anthropic_client(proxy).messages.create(
            model="no-such-model", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(openai.NotFoundError, match="no-such-model"):
        responses_client(proxy).responses.create(model="no-such-model", input="hi")


def test_plain_text_without_tools(scripted_model: Any, proxy: str) -> None:
    model = scripted_model("Hello there, friend.", template=PLAIN_TOOLS, special_tokens=SPECIALS)
    for stream in (False, True):
        message = ask_anthropic(proxy, model, stream, tools=[])
        assert (text_of(message), message.stop_reason) == ("Hello there, friend.", "end_turn")
        response = ask_responses(proxy, model, stream, tools=[])
        assert (response.output_text, function_calls(response)) == ("Hello there, friend.", [])
