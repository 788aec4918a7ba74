"""The client's behaviour where no model answers: errors come before or instead of a request."""

from __future__ import annotations

import ollama
import pytest

from ollama_fc import AsyncClient, Client, ToolCallError
from ollama_fc.testbed.server import free_port

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
ASK = [{"role": "user", "content": "Weather in Paris?"}]


def closed_port_host() -> str:
    """A loopback address nothing listens on."""
    return f"http://127.0.0.1:{free_port()}"


def test_an_unknown_tool_format_fails_before_the_request() -> None:
    with pytest.raises(ToolCallError, match="unknown tool-call format 'xml'; use one of: hermes"):
        Client(host=closed_port_host()).chat("any", ASK, tools=TOOLS, tool_format="xml")


async def test_an_unknown_tool_format_fails_before_the_request_async() -> None:
    with pytest.raises(ToolCallError, match="unknown tool-call format 'xml'"):
        await AsyncClient(host=closed_port_host()).chat("any", ASK, tools=TOOLS, tool_format="xml")


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_ollama_not_running_raises_what_ollama_python_raises(tools: object) -> None:
    """Drop-in: code that catches ollama-python's ConnectionError keeps working unchanged."""
    host = closed_port_host()
    with pytest.raises(ConnectionError) as ours:
        Client(host=host).chat("any", ASK, tools=tools)  # type: ignore[arg-type]
    with pytest.raises(ConnectionError) as theirs:
        ollama.Client(host=host).chat("any", ASK, tools=tools)  # type: ignore[arg-type]
    assert str(ours.value) == str(theirs.value)
