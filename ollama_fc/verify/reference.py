"""Render a chat template exactly as Hugging Face transformers' `apply_chat_template` does.

This is the ground truth a converted Ollama template is compared against, so the Jinja
environment is configured the way transformers configures it: sandboxed and immutable,
`trim_blocks` and `lstrip_blocks`, `loopcontrols`, the `{% generation %}` block (rendered as
its body), a `tojson` that does not HTML-escape and keeps non-ASCII text, and the
`raise_exception` / `strftime_now` globals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import OllamaFcError


class ReferenceRenderError(OllamaFcError):
    """The template cannot be compiled or refuses the conversation under the HF reference."""

    def __init__(self, message: str, *, raised: bool = False) -> None:
        super().__init__(message)
        #: True when the template itself called `raise_exception` (it refuses this conversation).
        self.raised = raised


class GenerationBlock(Extension):
    """`{% generation %}...{% endgeneration %}`: transformers marks assistant text with it.

    Only the rendered text matters here (not the assistant token mask), so the block renders
    its body unchanged, as transformers' tracker does.
    """

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


def tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """Python's `json.dumps` with transformers' defaults: no HTML escaping, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


def environment() -> ImmutableSandboxedEnvironment:
    """A fresh Jinja environment configured like transformers' chat-template environment."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


@lru_cache(maxsize=256)
def compile_template(template: str) -> jinja2.Template:
    """Compile once per template text; a syntax error becomes a ReferenceRenderError naming the line."""
    try:
        return environment().from_string(template)
    except jinja2.TemplateSyntaxError as exc:
        raise ReferenceRenderError(f"the chat template is not valid Jinja (line {exc.lineno}: {exc.message})") from exc


def render(
    template: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    add_generation_prompt: bool = True,
    continue_final_message: bool = False,
    special_tokens: Mapping[str, str] | None = None,
    **extra: Any,
) -> str:
    """The prompt transformers renders for these (HF-shaped) messages and tools.

    `special_tokens` are the tokenizer's `bos_token`, `eos_token`, ... strings, passed as template
    variables like transformers does. With `continue_final_message` the prompt ends right after the
    final message's text, so the model continues it (see `continue_final`). Raises
    ReferenceRenderError when the template fails; `.raised` tells a deliberate `raise_exception`
    apart from a crash.
    """
    compiled = compile_template(template)
    context: dict[str, Any] = dict(special_tokens or {})
    context.update(extra)
    context.update(
        messages=list(messages),
        tools=list(tools) if tools else None,
        documents=None,
        add_generation_prompt=add_generation_prompt,
    )
    try:
        prompt = compiled.render(**context)
    except jinja2.TemplateError as exc:
        raised = type(exc) is jinja2.exceptions.TemplateError
        raise ReferenceRenderError(f"{type(exc).__name__}: {exc}", raised=raised) from exc
    except Exception as exc:  # templates index, add and call freely; any crash means "cannot render"
        raise ReferenceRenderError(f"{type(exc).__name__}: {exc}") from exc
    return continue_final(prompt, messages[-1]["content"]) if continue_final_message and messages else prompt


def continue_final(prompt: str, final: Any) -> str:
    """Cut a closed render after the final message's text, as transformers' `continue_final_message`.

    transformers finds the last occurrence of the stripped text; it keeps the message's trailing
    whitespace only when the template printed the message unchanged and it had no leading
    whitespace. Empty text is found at the very end, so nothing is cut.
    """
    if isinstance(final, (list, tuple)):
        texts = [block["text"] for block in final if isinstance(block, Mapping) and "text" in block]
        if not texts:
            raise ReferenceRenderError("continue_final_message: the final message has no text to continue")
        final = texts[-1]
    if final.strip() not in prompt:
        raise ReferenceRenderError("continue_final_message: the template does not print the final message's text")
    location = prompt.rindex(final.strip())
    if prompt[location : location + len(final.lstrip())] == final:
        return prompt[: location + len(final.lstrip())]
    return prompt[: location + len(final.strip())]
