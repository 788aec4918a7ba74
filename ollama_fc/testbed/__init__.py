"""The real-Ollama test bed: the server tiers (pinned and current) and scripted test models."""

from __future__ import annotations

from .provision import provision
from .scripted import ScriptError, write_scripted_gguf
from .server import OllamaServer, PinnedServer
from .tiers import TIERS, Tier, tier

__all__ = [
    "TIERS",
    "OllamaServer",
    "PinnedServer",
    "ScriptError",
    "Tier",
    "provision",
    "tier",
    "write_scripted_gguf",
]
