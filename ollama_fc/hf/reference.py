"""Render a chat template exactly as Hugging Face transformers' `apply_chat_template` does.

This is the ground truth a converted Ollama template is compared against, rendered in the
environment transformers configures (see jinja.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import jinja2

from ..errors import ConversionError, OllamaFcError
from ..jinja import environment, syntax_error


class ReferenceRenderError(OllamaFcError):
    """The template cannot be compiled or refuses the conversation under the HF reference."""

    def __init__(self, message: str, *, raised: bool = False) -> None:
        super().__init__(message)
        #: True when the template itself called `raise_exception` (it refuses this conversation).
        self.raised = raised


@lru_cache(maxsize=256)
def compile_template(template: str) -> jinja2.Template:
    """Compile once per template text; a syntax error becomes a ReferenceRenderError naming the line."""
    try:
        return environment().from_string(template)
    except jinja2.TemplateSyntaxError as exc:
        raise ReferenceRenderError(syntax_error(exc)) from exc


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
    except ConversionError:  # a limit of `bounded.bounded_renders`: not the template's refusal
        raise
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
