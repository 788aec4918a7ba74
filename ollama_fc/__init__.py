"""ollama-fc: any model's native function-calling format, working in Ollama."""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (
    BuildError,
    ConversionError,
    OllamaFcError,
    OllamaUnavailableError,
    SourceError,
    ToolCallError,
)

__all__ = [
    "__version__",
    "BuildError",
    "ConversionError",
    "OllamaFcError",
    "OllamaUnavailableError",
    "SourceError",
    "ToolCallError",
]
