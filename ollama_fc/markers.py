"""What a TEMPLATE says about the model behind it: its family marker and Ollama's tool-call tag.

The client reads these off `ollama show` to pick a tool-call format, so this module stays free
of the converter: importing the client must not load the translator or the verifier.
"""

from __future__ import annotations

import re

#: Ollama's built-in parser that returns the model's text untouched (no tool-call or thinking
#: parsing); the template still renders `.Tools`, and ollama-fc's client parses the text. Models
#: `ollama-fc build` creates, and the Modelfiles it writes, name it in their PARSER line.
PASSTHROUGH_PARSER = "passthrough"

#: The family marker: a Go comment at the start of a TEMPLATE.
MARKER_PATTERN = re.compile(r"\{\{-?\s*/\*\s*ollama-fc\s+family=(\S+)\s+format=(\S+?)\s*\*/\s*-?\}\}")


def family_marker(family: str, tool_format: str) -> str:
    """The Go comment recording a model's family and tool-call format; `show` returns it."""
    return f"{{{{/* ollama-fc family={family} format={tool_format} */}}}}"


def read_marker(template: str) -> tuple[str, str] | None:
    """(family, format) from a TEMPLATE that carries a family marker, else None."""
    match = MARKER_PATTERN.search(template)
    return (match.group(1), match.group(2)) if match else None


#: Markers models print before their tool calls, shortest first within a family.
KNOWN_MARKERS = (
    "<tool_call>",
    "<function_call>",
    "functools[",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|tool_call|>",
    "<|tool_calls|>",
    "<tool_calls>",
    "<function=",
)


def parse_tag(template: str) -> str:
    """The tool-call tag Ollama derives: first text inside the first `if` on `.ToolCalls`."""
    match = re.search(r"\{\{-?\s*(?:else\s+)?if\b[^}]*?(?<![\w$)])\.ToolCalls\b[^}]*-?\}\}", template)
    if not match:
        return "{"
    depth = 0
    for token in re.split(r"(\{\{.*?\}\})", template[match.end() :], flags=re.S):
        if token.startswith("{{"):
            word = token.strip("{}- \t\n").split(" ")[0]
            if word in {"if", "range", "with", "define", "block"}:
                depth += 1
            elif word == "end":
                depth -= 1
                if depth < 0:
                    break  # left the `if` body without finding text
        elif token.strip():
            return tag_of_text(token)
    return "{"


def tag_of_text(text: str) -> str:
    """The tool-call tag Ollama takes from the text inside that `if`: up to its first `{`,
    stripped; `{` where nothing is left."""
    return text.replace("\r\n", "\n").split("{")[0].strip() or "{"
