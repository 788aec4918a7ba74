"""Which template the server renders with, on every tier: the model's Go TEMPLATE, not the GGUF's Jinja.

From v0.30 on, Ollama may render a GGUF model with its own Jinja `tokenizer.chat_template`
(through llama-server) instead of the Modelfile TEMPLATE, when the Jinja template shows more
tool support than the Go template (docs/OLLAMA.md). A converted Hugging Face model carries its
Jinja template, so each family's scripted model here carries the family's own source template
too, with a marker line in front that only the Jinja render would show.

Two witnesses say which template ran: `_debug_render_only` (in native mode it returns
llama-server's Jinja render) must equal the tier's template oracle render of the Go TEMPLATE;
and the `prompt_eval_count` of a real chat must be exactly that render's token count plus the
one BOS, so the prompt llama-server evaluated is the Go render and nothing else. Both hold with
Ollama's own tool parsing (`ollama-fc build`) and with `PARSER passthrough`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ollama
import pytest

from ollama_fc import oracle
from ollama_fc.build import build
from ollama_fc.families import load_family
from ollama_fc.testbed.scripted import count_tokens, write_scripted_gguf
from ollama_fc.testbed.server import rendered_prompt
from tests.family_cases import CASES
from tests.tier_cases import QUESTION, TOOLS, create_passthrough

pytestmark = pytest.mark.ollama

GGUF_JINJA_MARK = "[rendered by the GGUF's own Jinja template]"  # Jinja may strip what follows
CHATML = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"


@pytest.mark.parametrize("parser", [None, "passthrough"], ids=["ollama-parsing", "passthrough"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_built_model_renders_with_its_go_template(
    family: str, parser: str | None, ollama_server: Any, tmp_path: Path
) -> None:
    case, source = CASES[family], load_family(family)
    control = source.recipe.special_tokens.control
    gguf = write_scripted_gguf(
        tmp_path / f"{family}.gguf",
        case.call + case.end,
        # a blob of its own per parser: two models on one blob share llama-server's prompt cache
        after=f"answer for {parser or 'ollama parsing'}",
        trigger=case.trigger,
        special_tokens=control,
        chat_template=GGUF_JINJA_MARK + source.template,
    )
    host = ollama_server.host
    built = build(family, from_=str(gguf), name=f"choice-{family}", host=host, ollama_parses=True)
    model = create_passthrough(host, f"{built.name}-passthrough", built.name) if parser else built.name

    go_render = oracle.render(built.built.template, QUESTION, TOOLS, version=ollama_server.version)
    served = rendered_prompt(host, model, QUESTION, TOOLS)
    assert GGUF_JINJA_MARK not in served
    assert served == go_render

    answer = ollama.Client(host=host).chat(model, QUESTION, tools=TOOLS, options={"temperature": 0})
    tokens = count_tokens(go_render, control, trigger=case.trigger)
    assert answer.prompt_eval_count == 1 + tokens  # the Go render and one BOS, nothing else
    if parser:  # the raw text; which special tokens survive in it: test_tier_special_tokens.py
        assert "get_weather" in answer.message.content and not answer.message.tool_calls
    else:
        calls = [(c.function.name, dict(c.function.arguments)) for c in answer.message.tool_calls or []]
        assert calls == [("get_weather", {"city": "Paris"})]


def test_a_template_without_tools_loses_to_a_tool_jinja_template_only_on_0_3x(
    ollama_server: Any, tmp_path: Path
) -> None:
    """The rule the converter's output is built to pass, shown failing for a plain template.

    A TEMPLATE without `.Tools` over a GGUF whose Jinja template has tools: v0.24.0 renders the
    TEMPLATE; 0.3x prefers the GGUF's Jinja template (llama-server renders it).
    """
    specials = load_family("qwen2.5").recipe.special_tokens.control
    gguf = write_scripted_gguf(
        tmp_path / "plain.gguf",
        "Hello there.",
        special_tokens=specials,
        chat_template=GGUF_JINJA_MARK + load_family("qwen2.5").template,
    )
    client = ollama.Client(host=ollama_server.host)
    client.create(model="plain-chatml", files={gguf.name: client.create_blob(gguf)}, template=CHATML)
    hello = [{"role": "user", "content": "Hello"}]
    served = rendered_prompt(ollama_server.host, "plain-chatml", hello)
    if ollama_server.tier.uses_llama_server:
        assert served.startswith(GGUF_JINJA_MARK)
        assert "<|im_start|>user\nHello<|im_end|>" in served
    else:
        assert served == oracle.render(CHATML, hello, version=ollama_server.version)
