"""`ollama-fc serve` against the real pinned Ollama, used by real clients: ollama-python and openai.

Two kinds of models: each seed family built with `ollama-fc build` (as a user runs them), and
scripted models whose call Ollama leaves in the text (the shapes of test_client_e2e), where the
proxy must give every app what `ollama_fc.Client` gives Python code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import ollama
import openai
import pytest

from ollama_fc import Client, run_tools
from ollama_fc.functions import function_to_tool
from ollama_fc.serve import ProxyThread
from ollama_fc.serve.upstream import AiohttpTransport
from ollama_fc.testbed.scripted import write_scripted_gguf
from tests.family_cases import ANSWER, CASES
from tests.test_client_e2e import (
    ASK,
    HERMES,
    PLAIN_TOOLS,
    RECOVERED,
    SPECIALS,
    THINKING,
    THINKING_SCRIPTS,
    THOUGHT,
    TOOLS,
    calls_of,
    joined,
)

pytestmark = pytest.mark.ollama

QUESTION = "What is the weather in Paris?"
TOOL_DICTS = [function_to_tool(function) for function in TOOLS]
WEATHER_CALL = [("get_weather", {"city": "Paris"})]


def get_weather(city: str, days: int = 1) -> str:
    """Get the weather.

    Args:
        city: City name.
        days: Number of days.
    """
    return json.dumps({"city": city, "days": days, "sky": "sunny"})


def openai_client(proxy: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0)


def openai_calls(tool_calls: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(call.function.name, json.loads(call.function.arguments)) for call in tool_calls or []]


def ask_openai(proxy: str, model: str, stream: bool, messages: Any = None) -> tuple[list[Any], str, str | None]:
    """One chat completion through the proxy: its tool calls (streamed deltas accumulated by index,
    as OpenAI clients do), its content and its finish reason."""
    client = openai_client(proxy)
    messages = messages or [{"role": "user", "content": QUESTION}]
    if not stream:
        completion = client.chat.completions.create(model=model, messages=messages, tools=TOOL_DICTS)
        choice = completion.choices[0]
        return list(choice.message.tool_calls or []), choice.message.content or "", choice.finish_reason
    calls: dict[int, dict[str, Any]] = {}
    content, finish = "", None
    for chunk in client.chat.completions.create(model=model, messages=messages, tools=TOOL_DICTS, stream=True):
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += call.id or ""
            entry["name"] += call.function.name or ""
            entry["arguments"] += call.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    accumulated = [
        openai.types.chat.ChatCompletionMessageToolCall(
            id=entry["id"], type="function", function={"name": entry["name"], "arguments": entry["arguments"]}
        )
        for _, entry in sorted(calls.items())
    ]
    return accumulated, content, finish


def ollama_result(responses: list[Any]) -> tuple[list[Any], str]:
    calls = [call for response in responses for call in calls_of(response.message)]
    return calls, "".join(response.message.content or "" for response in responses)


def chat_ollama(host: str, model: str, stream: bool, client: Any = None) -> tuple[list[Any], str]:
    client = client or ollama.Client(host=host)
    result = client.chat(model, ASK, tools=TOOL_DICTS, stream=stream)
    return ollama_result(list(result) if stream else [result])


# -- every family, built as a user builds it ---------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_family_through_ollama_python(family: str, stream: bool, family_models: dict[str, str], proxy: str) -> None:
    client = ollama.Client(host=proxy)
    result = client.chat(
        family_models[family], [{"role": "user", "content": QUESTION}], tools=TOOL_DICTS, stream=stream
    )
    responses = list(result) if stream else [result]
    calls, content = ollama_result(responses)
    assert calls == WEATHER_CALL
    assert content.strip() == ""
    assert responses[-1].done


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_family_through_openai_sdk(family: str, stream: bool, family_models: dict[str, str], proxy: str) -> None:
    calls, content, finish = ask_openai(proxy, family_models[family], stream)
    assert openai_calls(calls) == WEATHER_CALL
    assert all(call.id.startswith("call_") and call.type == "function" for call in calls)
    assert content.strip() == ""
    assert finish == "tool_calls"


# -- calls Ollama leaves in the text: the proxy recovers them ------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("shape", sorted(RECOVERED))
def test_recovered_through_ollama_python_as_the_client_does(
    scripted_model: Any, ollama_host: str, proxy: str, shape: str, stream: bool
) -> None:
    script, template, expected_calls, expected_content = RECOVERED[shape]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    assert chat_ollama(ollama_host, model, stream) == ([], script)  # Ollama alone leaves the text
    calls, content = chat_ollama(proxy, model, stream)
    assert calls == expected_calls
    assert content.strip() == expected_content
    # exactly what ollama_fc.Client returns, talking to Ollama itself
    assert (calls, content) == chat_ollama(ollama_host, model, stream, client=Client(host=ollama_host))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("shape", sorted(RECOVERED))
def test_recovered_through_openai_sdk(
    scripted_model: Any, ollama_host: str, proxy: str, shape: str, stream: bool
) -> None:
    script, template, expected_calls, expected_content = RECOVERED[shape]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    direct_calls, direct_content, direct_finish = ask_openai(ollama_host, model, stream)
    assert (direct_calls, direct_content, direct_finish) == ([], script, "stop")  # Ollama's /v1 alone
    calls, content, finish = ask_openai(proxy, model, stream)
    assert openai_calls(calls) == expected_calls
    assert len({call.id for call in calls}) == len(calls)
    assert content.strip() == expected_content
    assert finish == "tool_calls"


def test_raw_ollama_response_keeps_ollamas_shape(scripted_model: Any, ollama_host: str, proxy: str) -> None:
    """A repaired response is Ollama's own JSON with the calls in Ollama's shape; an unchanged one is
    byte for byte Ollama's (here: a request without tools)."""
    script, template, *_ = RECOVERED["pythonic"]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    body = {"model": model, "messages": ASK, "tools": TOOL_DICTS, "stream": False}
    direct = httpx.post(f"{ollama_host}/api/chat", json=body, timeout=60).json()
    repaired = httpx.post(f"{proxy}/api/chat", json=body, timeout=60).json()
    assert set(repaired) == set(direct)
    assert set(repaired["message"]) == set(direct["message"]) | {"tool_calls"}
    first, second = repaired["message"]["tool_calls"]
    assert first["function"] == {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}
    assert second["function"] == {"index": 1, "name": "get_time", "arguments": {"zone": "UTC"}}
    assert first["id"].startswith("call_") and first["id"] != second["id"]


def test_invalid_call_is_passed_on_as_written_and_logged(
    scripted_model: Any, proxy: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A recovered call that fails its schema still reaches the app as a call (as Ollama's own
    parsed calls do, unchecked), and the proxy says so in its log; a valid one is coerced."""
    model = scripted_model('[get_weather(city="Paris", days="many")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    with caplog.at_level("WARNING", logger="ollama_fc.serve"):
        response = ollama.Client(host=proxy).chat(model, ASK, tools=TOOL_DICTS)
    assert calls_of(response.message) == [("get_weather", {"city": "Paris", "days": "many"})]
    assert any("'get_weather' is invalid" in record.getMessage() for record in caplog.records)

    coerced = scripted_model('[get_weather(city="Paris", days="3")]', template=PLAIN_TOOLS, special_tokens=SPECIALS)
    response = ollama.Client(host=proxy).chat(coerced, ASK, tools=TOOL_DICTS)
    assert calls_of(response.message) == [("get_weather", {"city": "Paris", "days": 3})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_calls_ollama_parsed_pass_through_untouched(
    scripted_model: Any, ollama_host: str, proxy: str, stream: bool
) -> None:
    """Not even the schema check (days "x" is not an integer) alters the calls Ollama parsed itself."""
    script = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "x"}}\n</tool_call>'
    model = scripted_model(script, template=HERMES, special_tokens=SPECIALS)
    body = {"model": model, "messages": ASK, "tools": TOOL_DICTS, "stream": stream}
    direct = httpx.post(f"{ollama_host}/api/chat", json=body, timeout=60).content.splitlines()
    proxied = httpx.post(f"{proxy}/api/chat", json=body, timeout=60).content.splitlines()
    assert len(proxied) == len(direct)
    calls = [json.loads(line)["message"].get("tool_calls") for line in proxied]
    assert [call["function"]["arguments"] for chunk in calls if chunk for call in chunk] == [
        {"city": "Paris", "days": "x"}
    ]
    assert [_without_ids(line) for line in proxied] == [_without_ids(line) for line in direct]


def _without_ids(line: bytes) -> dict[str, Any]:
    """A chunk's message without its calls' ids (Ollama draws new ones on every answer)."""
    message = dict(json.loads(line)["message"])
    for call in message.get("tool_calls") or ():
        call.pop("id")
    return message


def test_only_offered_tools_are_calls(scripted_model: Any, proxy: str) -> None:
    script, template, *_ = RECOVERED["pythonic"]
    model = scripted_model(script, template=template, special_tokens=SPECIALS)
    only_weather = [tool for tool in TOOL_DICTS if tool["function"]["name"] == "get_weather"]
    response = ollama.Client(host=proxy).chat(model, ASK, tools=only_weather)
    assert not response.message.tool_calls
    assert response.message.content == script


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_call_missing_a_required_argument_reaches_the_app_as_text(
    scripted_model: Any, proxy: str, stream: bool
) -> None:
    """Precision first: `get_weather` without its required `city` is not a call; the app gets
    the model's text as written, not a call and not an error."""
    script = 'Let me see. <tool_call>{"name": "get_weather", "arguments": {"days": 2}}</tool_call>'
    model = scripted_model(script, template=PLAIN_TOOLS, special_tokens=SPECIALS)
    result = ollama.Client(host=proxy).chat(model, ASK, tools=TOOL_DICTS, stream=stream)
    chunks = list(result) if stream else [result]
    assert not any(chunk.message.tool_calls for chunk in chunks)
    assert "".join(chunk.message.content or "" for chunk in chunks) == script


# -- tool loops through the proxy ----------------------------------------------------------------


def test_run_tools_through_the_proxy(family_models: dict[str, str], proxy: str) -> None:
    transcript = run_tools(
        Client(host=proxy), family_models["minimax"], [{"role": "user", "content": QUESTION}], [get_weather]
    )
    assert [message["role"] for message in transcript] == ["user", "assistant", "tool", "assistant"]
    assert [(c["function"]["name"], dict(c["function"]["arguments"])) for c in transcript[1]["tool_calls"]] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert transcript[3]["content"] == ANSWER


# The tool result is shown to the model under the tool's name: the scripted model answers only
# once `name="get_weather"` is in its prompt, so the answer proves tool_call_id became tool_name.
NAMED_RESULTS = PLAIN_TOOLS.replace(
    "<tool_response>{{ .Content }}", '<tool_response name="{{ .ToolName }}">{{ .Content }}'
)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_openai_tool_loop(scripted_model: Any, proxy: str, stream: bool) -> None:
    model = scripted_model(
        'Checking.\n[get_weather(city="Paris")]',
        after=ANSWER,
        trigger='name="get_weather"',
        template=NAMED_RESULTS,
        special_tokens=SPECIALS,
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    calls, content, finish = ask_openai(proxy, model, stream, messages)
    assert finish == "tool_calls" and content.strip() == "Checking."
    messages.append(
        {"role": "assistant", "content": content, "tool_calls": [call.model_dump(exclude_none=True) for call in calls]}
    )
    for call in calls:
        result = get_weather(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    calls, content, finish = ask_openai(proxy, model, stream, messages)
    assert (calls, content, finish) == ([], ANSWER, "stop")


# -- many at once --------------------------------------------------------------------------------


def test_fifty_concurrent_streaming_chats(scripted_model: Any, proxy: str) -> None:
    """50 streamed chats at once over two models with different calls; each gets its own call."""
    shapes = ["minimax_ts", "pythonic"]
    models = {}
    for shape in shapes:
        script, template, *_ = RECOVERED[shape]
        models[shape] = scripted_model(script, template=template, special_tokens=SPECIALS)

    async def one(shape: str) -> tuple[list[Any], str]:
        client = ollama.AsyncClient(host=proxy)
        stream = await client.chat(models[shape], ASK, tools=TOOL_DICTS, stream=True)
        return ollama_result([chunk async for chunk in stream])

    async def all_at_once() -> list[tuple[list[Any], str]]:
        return await asyncio.gather(*(one(shapes[index % 2]) for index in range(50)))

    results = asyncio.run(all_at_once())
    for index, (calls, content) in enumerate(results):
        _, _, expected_calls, expected_content = RECOVERED[shapes[index % 2]]
        assert calls == expected_calls, index
        assert content.strip() == expected_content, index


# -- everything else is Ollama's, unchanged ------------------------------------------------------


def _same(method: str, path: str, ollama_host: str, proxy: str, **kwargs: Any) -> tuple[httpx.Response, httpx.Response]:
    direct = httpx.request(method, f"{ollama_host}{path}", timeout=60, **kwargs)
    proxied = httpx.request(method, f"{proxy}{path}", timeout=60, **kwargs)
    assert proxied.status_code == direct.status_code, path
    assert proxied.headers.get("content-type") == direct.headers.get("content-type"), path
    return direct, proxied


def test_forwarded_endpoints_are_byte_identical(family_models: dict[str, str], ollama_host: str, proxy: str) -> None:
    model = family_models["qwen2.5"]
    for method, path, body in [
        ("GET", "/", None),
        ("HEAD", "/", None),
        ("GET", "/api/version", None),
        ("POST", "/api/show", {"model": model}),
        ("POST", "/api/show", {"model": "no-such-model"}),
        ("GET", f"/v1/models/{model}", None),
        ("GET", "/api/no-such-endpoint", None),
    ]:
        direct, proxied = _same(method, path, ollama_host, proxy, json=body)
        assert proxied.content == direct.content, path


def test_model_lists_are_forwarded_unchanged(family_models: dict[str, str], ollama_host: str, proxy: str) -> None:
    """Ollama orders models created in the same second differently from one call to the next, so
    the lists are compared as sets of identical entries."""
    for path, key in (("/api/tags", "models"), ("/v1/models", "data")):
        direct, proxied = _same("GET", path, ollama_host, proxy)
        entries = [json.dumps(entry, sort_keys=True) for entry in direct.json()[key]]
        assert sorted(json.dumps(entry, sort_keys=True) for entry in proxied.json()[key]) == sorted(entries)
        assert len(entries) >= len(family_models)


def _timeless(line: bytes) -> dict[str, Any]:
    """A generate/chat chunk without the fields that differ from one run to the next."""
    payload = json.loads(line)
    # the timings, and how much of the prompt the runner found cached from the previous request
    for key in (
        "created_at",
        "total_duration",
        "load_duration",
        "prompt_eval_duration",
        "eval_duration",
        "prompt_eval_cached_count",
    ):
        payload.pop(key, None)
    return dict(payload)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("path", ["/api/generate", "/api/chat"])
def test_generation_without_tools_is_forwarded_with_its_stream(
    family_models: dict[str, str], ollama_host: str, proxy: str, path: str, stream: bool
) -> None:
    """Same chunks as Ollama's, but for the timings (a chat without tools is not rewritten)."""
    body: dict[str, Any] = {"model": family_models["phi4-mini"], "stream": stream}
    body.update({"prompt": QUESTION} if path == "/api/generate" else {"messages": ASK})
    direct, proxied = _same("POST", path, ollama_host, proxy, json=body)
    direct_lines, proxied_lines = direct.content.splitlines(), proxied.content.splitlines()
    assert len(proxied_lines) == len(direct_lines) > (2 if stream else 0)
    assert [_timeless(line) for line in proxied_lines] == [_timeless(line) for line in direct_lines]


def test_create_blobs_and_delete_through_the_proxy(proxy: str, ollama_host: str, tmp_path: Path) -> None:
    """Model management through the proxy: a blob upload, a streamed create, copy and delete."""
    gguf = write_scripted_gguf(tmp_path / "managed.gguf", "Managed.", special_tokens=SPECIALS)
    client = ollama.Client(host=proxy)
    digest = client.create_blob(gguf)
    assert httpx.head(f"{ollama_host}/api/blobs/{digest}").status_code == 200
    statuses = [
        progress.status
        for progress in client.create(model="managed", files={gguf.name: digest}, template=PLAIN_TOOLS, stream=True)
    ]
    assert len(statuses) > 2 and statuses[-1] == "success"
    client.copy("managed", "managed-copy")
    assert {"managed:latest", "managed-copy:latest"} <= {m.model for m in ollama.Client(host=ollama_host).list().models}
    client.delete("managed-copy")
    assert "managed-copy:latest" not in {m.model for m in ollama.Client(host=ollama_host).list().models}
    pulled = httpx.post(f"{proxy}/api/pull", json={"model": "127.0.0.1:1/none/none", "insecure": True}, timeout=60)
    direct = httpx.post(
        f"{ollama_host}/api/pull", json={"model": "127.0.0.1:1/none/none", "insecure": True}, timeout=60
    )
    assert (pulled.status_code, pulled.content) == (direct.status_code, direct.content)


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_large_uploads_stream_through(proxy: str, ollama_host: str, framing: str) -> None:
    """A blob past the size the proxy reads whole (model weights) is streamed on to Ollama,
    whether the app gives its length or sends it in chunks."""
    data = os.urandom(3 * 1024 * 1024)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    content: Any = data if framing == "length" else iter([data[: 1 << 20], data[1 << 20 :]])
    response = httpx.post(f"{proxy}/api/blobs/{digest}", content=content, timeout=60)
    assert response.status_code == 201, response.text
    assert httpx.head(f"{ollama_host}/api/blobs/{digest}").status_code == 200


# -- a client that goes away ---------------------------------------------------------------------


class WatchedTransport(httpx.AsyncBaseTransport):
    """The proxy's own transport to the real Ollama, noting how each upstream request ended: read to
    its end, closed early, or cancelled before Ollama answered. Generation is paced as a real
    model's would be (a scripted model on an idle llama-server writes 500 tokens in a few tenths
    of a second, faster than an app can hang up): the answer's head waits `head_delay`, each
    line `chunk_delay`. Per line, not per read: on a loaded machine Ollama may have written the
    whole answer before the proxy's first read, which then takes it in a few large chunks."""

    def __init__(self, head_delay: float = 2.0, chunk_delay: float = 0.01) -> None:
        self.inner = AiohttpTransport()
        self.ends: list[tuple[str, str]] = []
        self.head_delay = head_delay
        self.chunk_delay = chunk_delay

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        paced = path != "/api/show"
        try:
            response = await self.inner.handle_async_request(request)
            if paced and not _streams(request):
                await asyncio.sleep(self.head_delay)
        except asyncio.CancelledError:
            self.ends.append((path, "cancelled"))
            raise
        ends, inner, chunk_delay = self.ends, response.stream, self.chunk_delay if paced else 0.0

        class Watched(httpx.AsyncByteStream):
            finished = False

            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in inner:  # type: ignore[union-attr]
                    if not chunk_delay:
                        yield chunk
                        continue
                    for line in re.findall(rb"[^\n]*\n|[^\n]+", chunk):  # the same bytes, a line at a time
                        await asyncio.sleep(chunk_delay)
                        yield line
                self.finished = True

            async def aclose(self) -> None:
                ends.append((path, "read to the end" if self.finished else "closed early"))
                await inner.aclose()  # type: ignore[union-attr]

        response.stream = Watched()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _streams(request: httpx.Request) -> bool:
    try:
        return bool(json.loads(request.content).get("stream", True))
    except (ValueError, AttributeError):
        return False


@pytest.mark.parametrize(
    ("path", "stream", "ended"),
    [
        ("/api/chat", True, "closed early"),
        ("/v1/chat/completions", True, "closed early"),
        ("/api/generate", True, "closed early"),
        ("/api/chat", False, "cancelled"),
        ("/v1/chat/completions", False, "cancelled"),
        ("/v1/messages", True, "closed early"),
        ("/v1/responses", True, "closed early"),
        ("/v1/messages", False, "cancelled"),
        ("/v1/responses", False, "cancelled"),
    ],
)
def test_disconnect_cancels_the_upstream_request(
    scripted_model: Any, ollama_server: Any, ollama_host: str, path: str, stream: bool, ended: str
) -> None:
    """The app goes away mid-answer: the proxy stops reading from Ollama and closes the connection
    (Ollama then stops generating), rather than reading a long answer nobody will get.

    Each case runs on a runner of its own, which it unloads at the end: a hang-up mid-stream can
    leave the runner's only slot taken for good (docs/OLLAMA.md, "A hang-up mid-stream can
    wedge the runner"), and Ollama keeps one runner per GGUF whatever the model is called, so the
    GGUF itself differs per case (its script names the case)."""
    case = f"{path.strip('/').replace('/', '-')}-{'stream' if stream else 'whole'}"
    long_script = f"{case}: " + " ".join(f"w{index}" for index in range(1500))  # about 500 tokens
    model = scripted_model(long_script, template=PLAIN_TOOLS, special_tokens=SPECIALS, name=f"ofc-long-talker-{case}")
    body: dict[str, Any] = {"model": model, "stream": stream, **_long_request(path)}
    upstream_path = "/api/chat" if path in ("/v1/messages", "/v1/responses") else path  # the translated routes
    watched = WatchedTransport()
    try:
        with ProxyThread(ollama_host, transport=watched) as running:
            if stream:
                try:
                    with httpx.stream("POST", f"{running.url}{path}", json=body, timeout=120) as response:
                        assert response.status_code == 200
                        next(response.iter_lines())  # generation has started; then the app hangs up
                except httpx.ReadTimeout:  # say what Ollama was doing
                    log = _log_tail(ollama_server)
                    pytest.fail(f"no first line in 120 s; ends {watched.ends}; Ollama's log:\n{log}")
                loaded = httpx.get(f"{ollama_host}/api/ps", timeout=60).json()["models"]
                runners = {entry["model"] for entry in loaded}
                assert f"{model}:latest" in runners, f"the case shares a runner loaded for another: {runners}"
            else:
                with pytest.raises(httpx.ReadTimeout):  # the app gives up waiting
                    httpx.post(f"{running.url}{path}", json=body, timeout=httpx.Timeout(120, read=1.0))
            for _ in range(200):
                if any(end_path == upstream_path for end_path, _ in watched.ends):
                    break
                time.sleep(0.05)
        assert (upstream_path, ended) in watched.ends, watched.ends
    finally:  # a runner whose slot the hang-up left taken would otherwise stay loaded
        httpx.post(f"{ollama_host}/api/generate", json={"model": model, "keep_alive": 0}, timeout=60)


def _long_request(path: str) -> dict[str, Any]:
    """The disconnect test's question in the API of `path`."""
    if path == "/api/generate":
        return {"prompt": QUESTION}
    functions = [tool["function"] for tool in TOOL_DICTS]
    if path == "/v1/messages":
        tools = [
            {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]} for f in functions
        ]
        return {"messages": ASK, "tools": tools, "max_tokens": 1024}
    if path == "/v1/responses":
        return {"input": ASK, "tools": [{"type": "function", **f} for f in functions]}
    return {"messages": ASK, "tools": TOOL_DICTS}


def _log_tail(server: Any, lines: int = 40) -> str:
    try:
        return "\n".join(Path(server.log_path).read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"(unreadable: {error})"


# -- errors --------------------------------------------------------------------------------------


def test_unreachable_upstream_is_a_502_naming_it() -> None:
    from ollama_fc.testbed.server import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    with ProxyThread(dead) as running:
        with pytest.raises(ollama.ResponseError) as raised:
            ollama.Client(host=running.url).chat("any", ASK, tools=TOOL_DICTS)
        assert raised.value.status_code == 502
        assert dead in raised.value.error and "ollama serve" in raised.value.error
        with pytest.raises(openai.APIStatusError) as failed:
            openai_client(running.url).chat.completions.create(model="any", messages=ASK)
        assert failed.value.status_code == 502 and dead in failed.value.message
        tags = httpx.get(f"{running.url}/api/tags")
        assert tags.status_code == 502 and "\n" not in tags.json()["error"]


def test_malformed_requests_are_400(proxy: str) -> None:
    for path in ("/api/chat", "/v1/chat/completions"):
        for body in (b"{not json", b"[1, 2]", b'{"model": "m", "messages": [], "tools": "get_weather"}'):
            response = httpx.post(f"{proxy}{path}", content=body, headers={"content-type": "application/json"})
            assert response.status_code == 400, (path, body)
            error = response.json()["error"]
            message = error["message"] if path.startswith("/v1") else error
            assert "malformed" in message


# -- thinking of passthrough models ------------------------------------------------------------


@pytest.mark.parametrize("think", [True, None, False], ids=["think", "unset", "no-think"])
@pytest.mark.parametrize("tools", [False, True], ids=["no-tools", "tools"])
def test_passthrough_thinking_is_split_as_ollama_splits_it(
    scripted_model: Any, ollama_host: str, proxy: str, think: Any, tools: bool
) -> None:
    """Through the proxy, a passthrough thinking model answers as Ollama answers for the same
    model it parses itself: thinking, content and calls, whole and streamed."""
    for script in ("answer", "call"):
        text = THINKING_SCRIPTS[script]
        ollamas = scripted_model(text, template=THINKING, special_tokens=SPECIALS)
        ours = scripted_model(text, template=THINKING, special_tokens=SPECIALS, parser="passthrough")
        kwargs: dict[str, Any] = {} if think is None else {"think": think}
        if tools:
            kwargs["tools"] = TOOL_DICTS
        for stream in (False, True):
            expected = ollama.Client(host=ollama_host).chat(ollamas, ASK, stream=stream, **kwargs)
            got = ollama.Client(host=proxy).chat(ours, ASK, stream=stream, **kwargs)
            expected_responses = list(expected) if stream else [expected]
            got_responses = list(got) if stream else [got]
            assert joined(got_responses) == joined(expected_responses), (script, stream)
    if think is not False:
        assert joined(expected_responses)[0] == THOUGHT  # the case is what it says


def test_openai_reasoning_of_a_passthrough_model(scripted_model: Any, proxy: str) -> None:
    """OpenAI clients get the thinking as `reasoning`, as Ollama's own /v1 gives it."""
    model = scripted_model(THINKING_SCRIPTS["answer"], template=THINKING, special_tokens=SPECIALS, parser="passthrough")
    completion = openai_client(proxy).chat.completions.create(model=model, messages=ASK)
    message = completion.choices[0].message
    assert message.content == "It is sunny in Paris."
    assert getattr(message, "reasoning", None) == THOUGHT + "\n"
    completion = openai_client(proxy).chat.completions.create(model=model, messages=ASK, reasoning_effort="none")
    assert completion.choices[0].message.content == THINKING_SCRIPTS["answer"]
