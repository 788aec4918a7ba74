"""Jinja chat template -> Ollama Go TEMPLATE converter.

`convert` loads the translator when first used: a program that only reads a source
(`TemplateSource`, `load_source`) or a result's types does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .result import Capabilities, Conversion, ConversionWarning
from .sources import TemplateSource, load_source

if TYPE_CHECKING:
    from .api import convert


def __getattr__(name: str) -> Any:
    if name == "convert":
        from .api import convert

        globals()["convert"] = convert  # looked up here once
        return convert
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Capabilities",
    "Conversion",
    "ConversionWarning",
    "TemplateSource",
    "convert",
    "load_source",
]
