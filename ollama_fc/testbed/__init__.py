"""The real-Ollama test bed: the pinned server and scripted test models."""

from __future__ import annotations

from .scripted import ScriptError, write_scripted_gguf
from .server import PinnedServer, provision

__all__ = ["PinnedServer", "ScriptError", "provision", "write_scripted_gguf"]
