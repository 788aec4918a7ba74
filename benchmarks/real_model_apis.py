"""One prompt asked through each API the real-model benchmark measures, under a tool_choice mode.

`ask_native` asks Ollama's native API (ollama.Client, or ollama_fc.Client, which enforces the
mode itself); `ask_openai`, `ask_responses` and `ask_messages` ask `ollama-fc serve` with the
openai SDK's chat.completions and responses and the anthropic SDK's messages. Each returns the
calls and text as the SDK gave them (a failed request as its error), so
benchmarks/real_model_scoring.py scores every API alike. `mode=None` sends no tool_choice at
all (the arms); a mode (real_model_scoring.MODES) is spelled as each API spells it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import ollama
import openai

from benchmarks.real_model_scoring import Call, Prompt, PromptSet, Reply, named_tool, schema_problems
from ollama_fc import Client

SEED = 42
MAX_TOKENS = 256
OPTIONS: dict[str, Any] = {"temperature": 0, "seed": SEED, "num_predict": MAX_TOKENS}
TIMEOUT = 900.0


def openai_choice(mode: str, prompt: Prompt) -> tuple[Any, bool]:
    """The mode as OpenAI's chat completions (and ollama_fc.Client) spell it: tool_choice and
    parallel_tool_calls."""
    if mode == "named":
        return {"type": "function", "function": {"name": named_tool(prompt)}}, True
    if mode == "parallel_off":
        return "auto", False
    return mode, True


def native_stats(response: ollama.ChatResponse) -> dict[str, Any]:
    fields = ("eval_count", "eval_duration", "prompt_eval_count", "prompt_eval_duration", "load_duration")
    return {"done_reason": response.done_reason, **{name: getattr(response, name) for name in fields}}


def _failed(error: Exception, started: float) -> Reply:
    """A refused request ("does not support tools", a 400), or a timeout: scored, the run goes on."""
    return Reply(error=f"{type(error).__name__}: {error}", seconds=time.perf_counter() - started)


def _answered(prompt_set: PromptSet, calls: list[Call], content: str, seconds: float, stats: dict[str, Any]) -> Reply:
    """An answered request, with what `validate=True` would have raised for each call in its stats."""
    return Reply(calls, content, "", seconds, {**stats, "schema_problems": schema_problems(prompt_set.tools, calls)})


def _arguments(text: str) -> Any:
    """A call's arguments as the SDK gave them (a JSON string): the object, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def ask_native(
    client: ollama.Client, model: str, prompt: Prompt, prompt_set: PromptSet, mode: str | None = None
) -> Reply:
    """One whole chat through ollama-python's API (plain or ollama_fc.Client)."""
    tools = prompt_set.tool_dicts(prompt)
    started = time.perf_counter()
    try:
        if isinstance(client, Client):
            choice: dict[str, Any] = {}
            if mode is not None:
                tool_choice, parallel = openai_choice(mode, prompt)
                choice = {"tool_choice": tool_choice, "parallel_tool_calls": parallel}
            response = client.chat(model, prompt.messages, tools=tools, options=OPTIONS, validate=False, **choice)
        else:
            response = client.chat(model, prompt.messages, tools=tools, options=OPTIONS)
    except Exception as error:
        return _failed(error, started)
    seconds = time.perf_counter() - started
    message = response.message
    calls = [Call(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or ()]
    return _answered(prompt_set, calls, message.content or "", seconds, native_stats(response))


def ask_openai(
    client: openai.OpenAI, model: str, prompt: Prompt, prompt_set: PromptSet, mode: str | None = None
) -> Reply:
    """One whole chat completion through the proxy, as an OpenAI app sends it."""
    choice: dict[str, Any] = {}
    if mode is not None:
        tool_choice, parallel = openai_choice(mode, prompt)
        choice = {"tool_choice": tool_choice, "parallel_tool_calls": parallel}
    started = time.perf_counter()
    try:
        completion = client.chat.completions.create(
            model=model,
            messages=prompt.messages,  # type: ignore[arg-type]
            tools=prompt_set.tool_dicts(prompt),  # type: ignore[arg-type]
            temperature=0,
            seed=SEED,
            max_tokens=MAX_TOKENS,
            **choice,
        )
    except Exception as error:
        return _failed(error, started)
    seconds = time.perf_counter() - started
    choice_made = completion.choices[0]
    calls = []
    for call in choice_made.message.tool_calls or ():
        function = getattr(call, "function", None)  # a custom tool's call has none
        if function is not None:
            calls.append(Call(function.name, _arguments(function.arguments)))
    usage = completion.usage
    stats: dict[str, Any] = {
        "finish_reason": choice_made.finish_reason,
        "completion_tokens": usage.completion_tokens if usage else None,
        "prompt_tokens": usage.prompt_tokens if usage else None,
    }
    return _answered(prompt_set, calls, choice_made.message.content or "", seconds, stats)


def ask_responses(client: openai.OpenAI, model: str, prompt: Prompt, prompt_set: PromptSet, mode: str) -> Reply:
    """One whole response through the proxy's Responses API (the prompt's messages as `input`
    items; the API has no seed, temperature 0 decides)."""
    tool_choice, parallel = openai_choice(mode, prompt)
    if mode == "named":
        tool_choice = {"type": "function", "name": named_tool(prompt)}
    functions = [{"type": "function", **tool["function"]} for tool in prompt_set.tool_dicts(prompt)]
    started = time.perf_counter()
    try:
        response = client.responses.create(
            model=model,
            input=prompt.messages,  # type: ignore[arg-type]
            tools=functions,  # type: ignore[arg-type]
            tool_choice=tool_choice,
            parallel_tool_calls=parallel,
            temperature=0,
            max_output_tokens=MAX_TOKENS,
        )
    except Exception as error:
        return _failed(error, started)
    seconds = time.perf_counter() - started
    calls = [Call(item.name, _arguments(item.arguments)) for item in response.output if item.type == "function_call"]
    usage = response.usage
    stats: dict[str, Any] = {
        "status": response.status,
        "output_tokens": usage.output_tokens if usage else None,
        "input_tokens": usage.input_tokens if usage else None,
    }
    return _answered(prompt_set, calls, response.output_text, seconds, stats)


def anthropic_choice(mode: str, prompt: Prompt) -> dict[str, Any]:
    """The mode as Anthropic's Messages API spells it."""
    if mode == "named":
        return {"type": "tool", "name": named_tool(prompt)}
    if mode == "parallel_off":
        return {"type": "auto", "disable_parallel_tool_use": True}
    return {"type": {"required": "any"}.get(mode, mode)}


def ask_messages(client: anthropic.Anthropic, model: str, prompt: Prompt, prompt_set: PromptSet, mode: str) -> Reply:
    """One whole message through the proxy's Messages API (system messages as `system`; the API
    has no seed, temperature 0 decides, sent as an extra field: the SDK no longer takes one)."""
    system = "\n\n".join(m["content"] for m in prompt.messages if m["role"] == "system")
    tools = [
        {"name": name, "description": tool["function"]["description"], "input_schema": tool["function"]["parameters"]}
        for name, tool in ((name, prompt_set.tools[name]) for name in prompt.tools)
    ]
    request: dict[str, Any] = {
        "model": model,
        "messages": [m for m in prompt.messages if m["role"] != "system"],
        "tools": tools,
        "tool_choice": anthropic_choice(mode, prompt),
        "max_tokens": MAX_TOKENS,
        "extra_body": {"temperature": 0},
    }
    if system:
        request["system"] = system
    started = time.perf_counter()
    try:
        message = client.messages.create(**request)
    except Exception as error:
        return _failed(error, started)
    seconds = time.perf_counter() - started
    calls = [Call(block.name, block.input) for block in message.content if block.type == "tool_use"]
    text = "".join(block.text for block in message.content if block.type == "text")
    stats: dict[str, Any] = {
        "stop_reason": message.stop_reason,
        "output_tokens": message.usage.output_tokens,
        "input_tokens": message.usage.input_tokens,
    }
    return _answered(prompt_set, calls, text, seconds, stats)
