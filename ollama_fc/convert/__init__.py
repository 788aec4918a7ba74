"""Jinja chat template -> Ollama Go TEMPLATE converter."""

from __future__ import annotations

from .api import convert
from .result import Capabilities, Conversion, ConversionWarning
from .sources import TemplateSource, load_source

__all__ = [
    "Capabilities",
    "Conversion",
    "ConversionWarning",
    "TemplateSource",
    "convert",
    "load_source",
]
