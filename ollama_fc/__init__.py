"""ollama-fc: any model's native function-calling format, working in Ollama."""

from __future__ import annotations

__version__ = "0.1.0"

from .client import AsyncClient, Client, chat
from .convert import Conversion, convert
from .errors import (
    BuildError,
    ConversionError,
    OllamaFcError,
    OllamaUnavailableError,
    SourceError,
    ToolCallError,
)
from .functions import function_to_tool
from .loop import run_tools
from .parsers import ParsedCall, ParseResult, parse_tool_calls
from .recovery import DroppedOutputWarning
from .schema import InvalidToolCall, validate_arguments
from .verify import VerifyReport, verify

__all__ = [
    "AsyncClient",
    "BuildError",
    "Client",
    "Conversion",
    "ConversionError",
    "DroppedOutputWarning",
    "InvalidToolCall",
    "OllamaFcError",
    "OllamaUnavailableError",
    "ParseResult",
    "ParsedCall",
    "SourceError",
    "ToolCallError",
    "VerifyReport",
    "__version__",
    "chat",
    "convert",
    "function_to_tool",
    "parse_tool_calls",
    "run_tools",
    "validate_arguments",
    "verify",
]
