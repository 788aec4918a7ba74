"""Jinja chat template -> Ollama Go TEMPLATE converter."""

from __future__ import annotations

from .sources import TemplateSource, load_source

__all__ = ["TemplateSource", "load_source"]
