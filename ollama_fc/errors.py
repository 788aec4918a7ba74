"""Errors a user can act on.

Every failure that reaches the user is one of these: the message names the thing that failed
and what to do about it. The CLI prints it as one line and exits non-zero, never a traceback.
"""

from __future__ import annotations


class OllamaFcError(Exception):
    """Base class: a failure with a message fit to show a user as it is."""


class SourceError(OllamaFcError):
    """A template source (file, folder, GGUF) is missing, unreadable or of the wrong kind."""


class ConversionError(OllamaFcError):
    """A Jinja template uses something that cannot be translated into a Go template."""


class OllamaUnavailableError(OllamaFcError):
    """The Ollama server cannot be reached, or the pinned binary cannot be provisioned."""


class BuildError(OllamaFcError):
    """`ollama create` (or the pull of a base model) failed."""


class ToolCallError(OllamaFcError):
    """Model output that looked like a tool call could not be turned into a valid one."""
