"""ollama-fc: any model's native function-calling format, working in Ollama."""

from __future__ import annotations

__version__ = "0.1.0"

import sys
import types
from typing import TYPE_CHECKING, Any

from . import _ollama_env  # noqa: F401  (first: imports ollama whatever OLLAMA_HOST holds)
from .arguments import InvalidToolCall, validate_arguments
from .client import AsyncClient, Client, chat
from .errors import (
    BuildError,
    ConversionError,
    OllamaFcError,
    OllamaUnavailableError,
    SourceError,
    ToolCallError,
)
from .functions import function_to_tool
from .learn import FormatNotLearned, LearnedFormat, learn_format
from .loop import StopReason, ToolRun, run_tools
from .parsers import ParsedCall, ParseResult, parse_tool_calls
from .recovery import DroppedOutputWarning
from .toolchoice import ToolChoiceError

if TYPE_CHECKING:
    from .convert import Conversion, convert
    from .verify import VerifyReport, verify


class _Package(types.ModuleType):
    """`convert`, `Conversion`, `verify` and `VerifyReport` load the converter and verifier when
    first used, so that `import ollama_fc.client` stays light. `ollama_fc.convert` and
    `ollama_fc.verify` name the functions, as they always have, even once their subpackages
    (which the import system records under the same names) are loaded."""

    @property
    def convert(self) -> Any:
        from .convert.api import convert

        return convert

    @convert.setter
    def convert(self, subpackage: Any) -> None:
        pass

    @property
    def verify(self) -> Any:
        from .verify.runner import verify

        return verify

    @verify.setter
    def verify(self, subpackage: Any) -> None:
        pass

    @property
    def Conversion(self) -> Any:
        from .convert.result import Conversion

        return Conversion

    @property
    def VerifyReport(self) -> Any:
        from .verify.runner import VerifyReport

        return VerifyReport


sys.modules[__name__].__class__ = _Package

__all__ = [
    "AsyncClient",
    "BuildError",
    "Client",
    "Conversion",
    "ConversionError",
    "DroppedOutputWarning",
    "FormatNotLearned",
    "InvalidToolCall",
    "LearnedFormat",
    "OllamaFcError",
    "OllamaUnavailableError",
    "ParseResult",
    "ParsedCall",
    "SourceError",
    "StopReason",
    "ToolCallError",
    "ToolChoiceError",
    "ToolRun",
    "VerifyReport",
    "__version__",
    "chat",
    "convert",
    "function_to_tool",
    "learn_format",
    "parse_tool_calls",
    "run_tools",
    "validate_arguments",
    "verify",
]
