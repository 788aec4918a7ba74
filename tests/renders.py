"""Renders through Ollama's own template package, shared by the differential tests."""

from __future__ import annotations


def ollama_renders(template: str, messages: list, tools: list | None, engines: dict) -> set[str]:
    """The prompt each Ollama version renders (one element when they agree)."""
    prompts = set()
    for version, engine in engines.items():
        rendered = engine.render(template, messages, tools)
        assert rendered.error is None, f"{version}: {rendered.error}"
        prompts.add(rendered.prompt)
    return prompts
