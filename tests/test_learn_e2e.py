"""Learned formats end to end: the real server, a TEMPLATE converted from the real corpus
template, a scripted model printing a call exactly as that template writes one, and
`ollama_fc.Client` reading the call back with the format it finds in `show`.

The script is the template's own rendering of the call (what the model was trained to print),
so each test runs the path a user of `ollama-fc convert` runs: convert, `ollama create`, chat
with tools, get `tool_calls`, streamed and not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import ollama
import openai
import pytest

from ollama_fc import Client
from ollama_fc.convert import load_source
from ollama_fc.functions import function_to_tool
from ollama_fc.hf.shapes import probe
from ollama_fc.learn import convert_with_format
from ollama_fc.learn.probes import Call, Probe, call_text, calling_shape
from ollama_fc.serve import ProxyThread
from ollama_fc.verify.runner import with_stand_in_tokens
from tests.shared_data import shared_path

pytestmark = pytest.mark.ollama

# corpus template -> the family it stands for
FAMILIES = {
    "deepseek-r1.jinja": "DeepSeek V3 / R1 (function<｜tool▁sep｜>name + fenced JSON)",
    "deepseek-v3.1.jinja": "DeepSeek V3.1",
    "deepseek-v3.2.jinja": "DeepSeek V3.2 DSML parameters",
    "qwen3-coder.jinja": "Qwen3-Coder XML parameters",
    "glm-4.6.jinja": "GLM-4.6 arg_key/arg_value",
    "kimi-k2-instruct.jinja": "Kimi K2 functions.name:index",
    "llamacpp-fixed-granite-3.3-2b-instruct.jinja": "Granite 3.3 <|tool_call|>[...]",
    "gguf-llama4-latest.jinja": "Llama 4 (its template writes JSON calls)",
    "lfm2.5-8b-a1b.jinja": "LFM2 pythonic list",
    "minimax-m2.jinja": "MiniMax-M2 invoke/parameter",
    "gemma-4-31b-it.jinja": 'Gemma 4 call:name{key:<|"|>value<|"|>}',
    "gpt-oss-120b.jinja": "gpt-oss harmony, the recipient in the header (its prompt writes <|start|>assistant)",
    "solar-open-100b.jinja": "Solar Open <|tool_call:begin|>id<|tool_call:name|>name<|tool_call:args|>",
    "functionary-medium-v2.2.jinja": "Functionary v2.2, the reply starting with the name (its prompt writes the recipient)",
    "glimmer.jinja": "Glimmer, the name in the header and in the invoke",
    "mistral-nemo-instruct-2407.jinja": "Mistral Nemo [TOOL_CALLS][...] (nine-character call ids)",
    "vllm-llama3.2-pythonic.jinja": "pythonic, strings unquoted",
    "nemotron-nano-9b-v2.jinja": "Nemotron Nano 2 <TOOLCALL>[...]</TOOLCALL>, its turn's end a stop",
}

CALLS = (Call("get_weather", {"city": "Paris", "days": 2}), Call("get_time", {"zone": "Europe/Paris"}))


def get_weather(city: str, days: int = 1) -> str:
    """Weather forecast.

    Args:
        city: City name.
        days: Number of days.
    """
    return f"sunny in {city}"


def get_time(zone: str) -> str:
    """Time in a zone.

    Args:
        zone: IANA zone.
    """
    return "12:00"


@pytest.fixture(scope="module")
def proxy(ollama_host: str) -> Iterator[str]:
    with ProxyThread(ollama_host) as running:
        yield running.url


def calls_of(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or []]


@pytest.mark.parametrize("template_name", sorted(FAMILIES))
def test_learned_format_end_to_end(template_name: str, scripted_model: Any, ollama_host: str, proxy: str) -> None:
    path = shared_path("corpus", "templates", template_name)
    source = with_stand_in_tokens(load_source(path))
    conversion, learned, _ = convert_with_format(source)  # what `ollama-fc convert` writes
    assert learned is not None
    shape = calling_shape(source, probe(source.template, source.special_tokens))
    calls = CALLS if shape.parallel_calls else CALLS[:1]
    content = "Checking now."
    script = call_text(source, shape, Probe("e2e", calls, content=content))
    before_stop = script.split(learned.end)[0] if script and learned.end else script
    if script is None or not script.strip().startswith(content) or "get_weather" not in (before_stop or ""):
        # the template writes content elsewhere, or in a turn of its own that its stop ends
        content, script = "", call_text(source, shape, Probe("e2e", calls))
    assert script is not None and "get_weather" in script
    model = scripted_model(script.strip(), template=conversion.template, parameters=conversion.parameters)

    client = Client(host=ollama_host)
    assert client.tool_format(model) == learned.format_name()  # read from `show`
    ask = [{"role": "user", "content": "Weather and time in Paris?"}]
    expected = [(call.name, call.arguments) for call in calls]

    response = client.chat(model, ask, tools=[get_weather, get_time], options={"temperature": 0})
    assert calls_of(response.message) == expected, (FAMILIES[template_name], script, response.message.content)
    assert response.message.content.strip() == content

    chunks = list(client.chat(model, ask, tools=[get_weather, get_time], stream=True))
    streamed = [call for chunk in chunks for call in calls_of(chunk.message)]
    assert streamed == expected
    text = "".join(chunk.message.content or "" for chunk in chunks)
    assert "get_weather" not in text  # no call text leaks into the streamed content

    # the same model through `ollama-fc serve`, for apps on Ollama's API and on OpenAI's
    tools = [function_to_tool(get_weather), function_to_tool(get_time)]
    through = ollama.Client(host=proxy).chat(model, ask, tools=tools, options={"temperature": 0})
    assert calls_of(through.message) == expected
    completion = openai.OpenAI(base_url=f"{proxy}/v1", api_key="ollama", max_retries=0).chat.completions.create(
        model=model, messages=ask, tools=tools
    )
    choice = completion.choices[0]
    got = [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or []]
    assert got == expected and choice.finish_reason == "tool_calls"


def test_plain_ollama_client_gets_the_call_text_not_an_empty_answer(scripted_model: Any, ollama_host: str) -> None:
    """Ollama cannot read GLM's calls itself; with the tag `convert_with_format` gives it, it
    leaves them in the content (for ollama_fc.Client) instead of dropping the whole response."""
    path = shared_path("corpus", "templates", "glm-4.6.jinja")
    source = with_stand_in_tokens(load_source(path))
    conversion, _, _ = convert_with_format(source)
    shape = probe(source.template, source.special_tokens)
    script = call_text(source, shape, Probe("e2e", CALLS[:1]))
    assert script is not None
    model = scripted_model(script.strip(), template=conversion.template, parameters=conversion.parameters)
    plain = ollama.Client(host=ollama_host).chat(
        model, [{"role": "user", "content": "Weather?"}], tools=[get_weather], options={"temperature": 0}
    )
    assert not plain.message.tool_calls
    assert plain.message.content.strip() == script.strip()
