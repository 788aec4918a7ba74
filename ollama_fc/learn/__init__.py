"""Learn a model's tool-call format from its own chat template (see derive.py for how)."""

from __future__ import annotations

from pathlib import Path

from ..convert.sources import TemplateSource, load_source
from .derive import FormatNotLearned, learn_from_source
from .format import LEARNED_PREFIX, LearnedFormat


def learn_format(source: str | Path | TemplateSource) -> LearnedFormat:
    """The tool-call format a chat template writes (source as for `convert`: .jinja,
    tokenizer_config.json, HF folder, .gguf). Raises FormatNotLearned with a one-line reason
    when the template renders no calls or its probes do not agree; the built-in formats remain."""
    loaded = source if isinstance(source, TemplateSource) else load_source(source)
    try:
        return learn_from_source(loaded)
    except FormatNotLearned as exc:
        raise FormatNotLearned(f"{loaded.origin}: tool-call format not learned: {exc}") from None


__all__ = ["LEARNED_PREFIX", "FormatNotLearned", "LearnedFormat", "learn_format"]
