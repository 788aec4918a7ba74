"""Learn a model's tool-call format from its own chat template (see derive.py for how).

The format's data model is `parsers/learned_format.py`, below this package: the parsers (and a
program that only uses the client) read a learned format without loading the learning, the
converter or the Hugging Face renderer. This package's top imports only that model.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..parsers.learned_format import LEARNED_PREFIX, UNPRINTED_TAG, FormatNotLearned, LearnedFormat

if TYPE_CHECKING:
    from ..convert import Conversion
    from ..convert.sources import TemplateSource


def learn_format(source: str | Path | TemplateSource) -> LearnedFormat:
    """The tool-call format a chat template writes (source as for `convert`: .jinja,
    tokenizer_config.json, HF folder, .gguf). Raises FormatNotLearned with a one-line reason
    when the template renders no calls or its probes do not agree; the built-in formats remain.
    A tokenizer_config.json (or folder) with a `response_template` the model's authors wrote
    gives that format instead (see response_template.py)."""
    from ..convert.sources import TemplateSource, load_source
    from .derive import learn_from_source

    if not isinstance(source, TemplateSource):
        from .response_template import learned_from_response_template, response_template_of

        declared = response_template_of(source)
        if declared is not None:  # the model author's own description outranks learning
            try:
                return learned_from_response_template(declared)
            except FormatNotLearned as exc:
                warnings.warn(f"{source}: response_template not read ({exc}); learning the chat template", stacklevel=2)
    loaded = source if isinstance(source, TemplateSource) else load_source(source)
    try:
        return learn_from_source(loaded)
    except FormatNotLearned as exc:
        raise FormatNotLearned(f"{loaded.origin}: tool-call format not learned: {exc}") from None


def convert_with_format(
    source: str | Path | TemplateSource, **limits: Any
) -> tuple[Conversion, LearnedFormat | None, str]:
    """`convert` with the template's learned tool-call format recorded in the TEMPLATE's first
    comment (what `ollama-fc convert` writes); the format, or None and the reason it was not
    learned. Where Ollama cannot read the calls itself, its tool tag is text no model prints, so
    Ollama leaves them for the client instead of dropping the response. `limits` are
    `convert`'s `max_output` and `max_seconds`."""
    from ..convert import convert
    from ..convert.sources import TemplateSource, load_source

    loaded = source if isinstance(source, TemplateSource) else load_source(source)
    try:
        learned = learn_format(loaded)
    except FormatNotLearned as exc:
        return convert(loaded, **limits), None, str(exc)
    tag = None if learned.ollama_reads_it else UNPRINTED_TAG
    conversion = convert(loaded, family="auto", tool_format=learned.format_name(), tool_tag=tag, **limits)
    if tag is None and not learned.opener.startswith(conversion.tool_call_tag or "\0"):
        # Ollama's tag is not where the calls start (Nemotron Nano 2's `{` after `<TOOLCALL>[`):
        # it would read the calls and leave the start of their text; the client reads them instead
        conversion = convert(loaded, family="auto", tool_format=learned.format_name(), tool_tag=UNPRINTED_TAG, **limits)
    stops = conversion.parameters.setdefault("stop", [])
    if learned.end.strip() and learned.end.strip() not in stops:
        stops.append(learned.end.strip())  # the template ends a turn of calls with it
    return conversion, learned, ""


__all__ = ["LEARNED_PREFIX", "FormatNotLearned", "LearnedFormat", "convert_with_format", "learn_format"]
