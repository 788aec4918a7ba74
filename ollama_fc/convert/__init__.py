"""Jinja chat template -> Ollama Go TEMPLATE converter."""

from __future__ import annotations

from .api import Capabilities, Conversion, ConversionWarning, convert, parse_tag
from .sources import TemplateSource, load_source

__all__ = ["Capabilities", "Conversion", "ConversionWarning", "TemplateSource", "convert", "load_source", "parse_tag"]
