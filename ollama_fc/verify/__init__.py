"""Check a converted template against the Hugging Face reference, case by case."""

from __future__ import annotations

from .reference import ReferenceRenderError, render as render_reference

__all__ = ["ReferenceRenderError", "render_reference"]
