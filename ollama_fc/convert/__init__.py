"""Jinja chat template -> Ollama Go TEMPLATE converter."""

from __future__ import annotations

from .api import Capabilities, Conversion, ConversionWarning, convert, family_marker, parse_tag, read_marker
from .sources import TemplateSource, load_source

__all__ = [
    "Capabilities",
    "Conversion",
    "ConversionWarning",
    "TemplateSource",
    "convert",
    "family_marker",
    "load_source",
    "parse_tag",
    "read_marker",
]
