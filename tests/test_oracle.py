"""The render oracle is faithful: it renders what the running pinned server renders.

The server's own view of a prompt comes from `/api/chat` with `"_debug_render_only": true`
(the rendered prompt is returned instead of a generation). Conversations cover a system
prompt, tools, tool calls with several arguments, tool results, merged same-role turns,
thinking, and the legacy (non-.Messages) template mode.
"""

from __future__ import annotations

import json
import urllib.error
from typing import Any

import ollama
import pytest

from ollama_fc.oracle import LATEST, PINNED, Oracle, TemplateRejected, Timer, render
from ollama_fc.testbed.server import rendered_prompt

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {
                    "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"},
                    "city": {"type": "string", "description": "City <name> & country"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "now", "description": "", "parameters": {"type": "object", "properties": {}}},
    },
]

SYSTEM = {"role": "system", "content": "You are terse."}
USER = {"role": "user", "content": "Weather in Paris, in °C?"}
CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"unit": "c", "city": "Paris"}}},
        {"function": {"name": "now", "arguments": {}}},
    ],
}
RESULTS = [
    {"role": "tool", "content": '{"temp": 22}', "tool_name": "get_weather"},
    {"role": "tool", "content": "09:00", "tool_name": "now"},
]
ANSWER = {"role": "assistant", "content": "22 °C at 09:00."}

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "user-only": [USER],
    "system-and-history": [SYSTEM, USER, ANSWER, {"role": "user", "content": "And tomorrow?"}],
    "tool-round-trip": [SYSTEM, USER, CALL, *RESULTS, ANSWER, {"role": "user", "content": "Thanks"}],
    "merged-user-turns": [USER, {"role": "user", "content": "Quickly."}, {"role": "system", "content": "Late."}],
}

TEMPLATES = {
    "chatml-tools": """{{- if or .System .Tools }}<|im_start|>system
{{ .System }}
{{- range .Tools }}
{{ json . }}
{{- end }}<|im_end|>
{{ end }}
{{- range $i, $m := .Messages }}
{{- if eq .Role "tool" }}<|im_start|>user
<tool_response>{{ .Content }}</tool_response><|im_end|>
{{ else if .ToolCalls }}<|im_start|>assistant
<tool_call>
{{- range .ToolCalls }}
{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
{{- end }}</tool_call><|im_end|>
{{ else if ne .Role "system" }}<|im_start|>{{ .Role }}
{{ .Content }}{{ if eq (len (slice $.Messages $i)) 1 }}[last]{{ end }}<|im_end|>
{{ end }}
{{- end }}<|im_start|>assistant
""",
    "llama3-json": """{{- if .Messages }}{{ range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>

{{ if .ToolCalls }}{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "parameters": {{ json .Function.Arguments }}}{{ end }}
{{- else }}{{ .Content }}{{ end }}<|eot_id|>{{ end }}
{{- if .Tools }}<|start_header_id|>tools<|end_header_id|>

{{ .Tools }}<|eot_id|>{{ end }}{{ end }}<|start_header_id|>assistant<|end_header_id|>

""",
    "thinking": """{{- range .Messages }}<|{{ .Role }}|>{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}
{{ end }}<|assistant|>{{ if .Think }}<think>{{ else }}<think></think>{{ end }}""",
    "legacy": """{{ if .System }}[SYS]{{ .System }}[/SYS]{{ end }}{{ if .Prompt }}[INST]{{ .Prompt }}[/INST]{{ end }}{{ .Response }}</s>""",
}


# The server refuses tools for a template without .Tools ("does not support tools").
CASES = [
    pytest.param(name, conversation, tools, id=f"{name}-{conversation}-{'tools' if tools else 'no-tools'}")
    for name, template in TEMPLATES.items()
    for conversation in CONVERSATIONS
    for tools in ([TOOLS, None] if ".Tools" in template else [None])
]


@pytest.mark.parametrize(("template_name", "conversation", "tools"), CASES)
def test_oracle_renders_what_the_server_renders(
    scripted_model, ollama_host: str, template_name: str, conversation: str, tools: list | None
) -> None:
    template = TEMPLATES[template_name]
    model = scripted_model("unused answer", template=template)
    messages = CONVERSATIONS[conversation]
    expected = rendered_prompt(ollama_host, model, messages, tools)
    assert render(template, messages, tools=tools) == expected
    with Oracle() as oracle:
        assert oracle.render(template, messages, tools=tools).prompt == expected


def test_thinking_template_gets_think_by_default_like_the_server(scripted_model, ollama_host: str) -> None:
    """A template with thinking tags makes the server assume think=true; the oracle must too."""
    template = TEMPLATES["thinking"]
    model = scripted_model("unused answer", template=template)
    prompt = render(template, [USER])
    assert prompt.endswith("<|assistant|><think>")
    assert prompt == rendered_prompt(ollama_host, model, [USER], None)


@pytest.mark.parametrize("version", [PINNED, LATEST])
def test_both_oracle_versions_render(version: str) -> None:
    prompt = render(TEMPLATES["chatml-tools"], CONVERSATIONS["tool-round-trip"], tools=TOOLS, version=version)
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris","unit":"c"}}' in prompt
    assert "<tool_response>09:00</tool_response>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_rejected_template_carries_ollamas_own_message(scripted_model) -> None:
    bad = "{{ range .Messages }}{{ .Content }}"
    with pytest.raises(TemplateRejected) as rejected:
        render(bad, [USER])
    with pytest.raises(ollama.ResponseError) as refused:
        scripted_model("unused answer", template=bad)
    assert "unexpected EOF" in rejected.value.reason
    assert rejected.value.reason in refused.value.error


def test_execute_error_is_reported_like_the_server(scripted_model, ollama_host: str) -> None:
    template = "{{ range .Messages }}{{ .Content }}{{ end }}{{ (index .Messages 3).Content }}"
    model = scripted_model("unused answer", template=template)
    with pytest.raises(TemplateRejected) as rejected:
        render(template, [USER])
    with pytest.raises(urllib.error.HTTPError) as refused:
        rendered_prompt(ollama_host, model, [USER], None)
    server_error = json.load(refused.value)["error"]
    assert "index out of range" in rejected.value.reason
    assert rejected.value.reason in server_error


def test_batch_oracle_sends_a_repeated_template_once_and_renders_as_single_calls() -> None:
    """The batch process keeps the last parsed template; results must equal one-shot renders,
    including after a template Ollama rejects and after one that fails while executing."""
    m1 = [{"role": "user", "content": "hi"}]
    m2 = [{"role": "user", "content": "yo"}, {"role": "assistant", "content": "ok"}]
    sequence = [
        ("A{{ range .Messages }}{{ .Content }}{{ end }}", m1),
        ("A{{ range .Messages }}{{ .Content }}{{ end }}", m2),
        ("{{ if }}", m1),
        ("{{ if }}", m2),
        ("B{{ range .Messages }}[{{ .Role }}]{{ end }}", m2),
        ("{{ (index .Messages 5).Content }}", m1),
        ("{{ (index .Messages 5).Content }}", m1),
        ("B{{ range .Messages }}[{{ .Role }}]{{ end }}", m1),
    ]
    with Oracle() as batch:
        for template, messages in sequence:
            got = batch.render(template, messages)
            try:
                expected: tuple[str | None, bool] = (render(template, messages), False)
            except TemplateRejected:
                expected = (None, True)
            assert (got.prompt, got.error is not None) == expected, template


@pytest.mark.parametrize("version", [PINNED, LATEST])
def test_timing_mode_times_the_render_the_oracle_gives(version: str) -> None:
    """The timing mode executes the same render (same prompt length), and its truncation loop
    ends on the server's final prompt: the system messages kept, the first `drop` others gone."""
    template = TEMPLATES["chatml-tools"]
    messages = CONVERSATIONS["tool-round-trip"] + [{"role": "user", "content": "And in Rome?"}]
    with Timer(version) as timer:
        timing = timer.measure(template, messages, TOOLS, runs=5, budget_ms=10_000, parses=2, drop=3)
        quick = timer.measure(template, messages, TOOLS, runs=5, budget_ms=0)
    assert timing.prompt_bytes == len(render(template, messages, tools=TOOLS, version=version).encode())
    kept = [SYSTEM, *messages[3:]]
    assert timing.truncated_bytes == len(render(template, kept, tools=TOOLS, version=version).encode())
    assert (len(timing.parse_ns), len(timing.execute_ns), len(timing.truncate_ns)) == (2, 5, 5)
    assert (len(quick.parse_ns), len(quick.execute_ns), quick.truncate_ns) == (0, 3, ())
    assert all(ns > 0 for ns in timing.execute_ns + timing.truncate_ns + timing.parse_ns)


def test_timing_mode_reports_a_rejected_template() -> None:
    with Timer() as timer, pytest.raises(TemplateRejected) as rejected:
        timer.measure("{{ range .Messages }}", [USER])
    assert rejected.value.stage == "parse"
