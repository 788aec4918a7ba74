"""What `convert()` returns: the Go TEMPLATE, its PARAMETERs, capabilities and warnings."""

from __future__ import annotations

import re
import warnings

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..errors import ConversionError
from ..markers import PASSTHROUGH_PARSER

with warnings.catch_warnings():  # `construct` is the agreed field name; it shadows BaseModel.construct
    warnings.simplefilter("ignore")

    class ConversionWarning(BaseModel):
        """Something the converted template renders differently, and where it comes from."""

        model_config = ConfigDict(protected_namespaces=())

        construct: str  # type: ignore[assignment]  # shadows BaseModel.construct (see above)
        line: int | None = None
        effect: str

        def __str__(self) -> str:
            """The one line every report prints: `line N: construct: effect`."""
            where = f"line {self.line}: " if self.line is not None else ""
            return f"{where}{self.construct}: {self.effect}"


class Capabilities(BaseModel):
    """What the template renders, read off probe renders of the Hugging Face reference."""

    system_role: bool = False
    tools: bool = False
    tool_calls: bool = False
    parallel_calls: bool = False
    tool_results: bool = False
    thinking: bool = False


class Conversion(BaseModel):
    """A converted template: Go TEMPLATE text, PARAMETERs, and what was approximated."""

    template: str
    parameters: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[ConversionWarning] = Field(default_factory=list)
    capabilities: Capabilities = Field(default_factory=Capabilities)
    tool_call_tag: str | None = None
    special_tokens: dict[str, str] = Field(default_factory=dict)
    #: the template's `define` blocks by name, and the template without them, as the converter
    #: printed them (for joining two conversions, `named.choose_on_tools`, without reading back)
    _defines: dict[str, str] = PrivateAttr(default_factory=dict)
    _without_defines: str = PrivateAttr(default="")

    def modelfile(self, from_: str, *, parser: str | None = PASSTHROUGH_PARSER) -> str:
        """Modelfile text: FROM, the TEMPLATE as Ollama's Modelfile parser reads it back, PARSER,
        PARAMETERs. `parser=None` leaves the model's text to Ollama's template-derived parsing."""
        lines = [f"FROM {from_}", f'TEMPLATE """{modelfile_quotable(self.template)}"""']
        if parser:
            lines.append(f"PARSER {parser}")
        for name, values in self.parameters.items():
            for value in values:
                quoted = f'"{value}"' if '"' not in value else f'"""{value}"""'
                lines.append(f"PARAMETER {name} {quoted}")
        return "\n".join(lines) + "\n"


def modelfile_quotable(template: str) -> str:
    """The template in a form Ollama's Modelfile parser reads back unchanged; it renders the same.

    The parser silently drops runes that are not printable (other than tab, CR, LF): inside a Go
    string literal they become `\\uXXXX` escapes, in literal text a `{{ "\\uXXXX" }}` action. It
    also ends a triple-quoted value at the first line ending in `\"\"\"`, with no escape:
    `\"\"{{/**/}}\"` renders the same text but no longer ends the value.
    """
    out: list[str] = []
    in_action = in_string = False
    index = 0
    while index < len(template):
        char = template[index]
        if not in_action and template.startswith("{{", index):
            in_action = True
            out.append("{{")
            index += 2
            continue
        if in_action and not in_string and template.startswith("}}", index):
            in_action = False
            out.append("}}")
            index += 2
            continue
        if in_action and char == '"':
            in_string = not in_string
        elif in_string and char == "\\":
            out.append(template[index : index + 2])
            index += 2
            continue
        if char.isprintable() or char in "\t\r\n":
            out.append(char)
        elif in_string:
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        elif in_action:
            raise ConversionError(
                f"the template has the unprintable character U+{ord(char):04X} outside a string in an action; "
                "a Modelfile cannot hold it: create the model through the API instead "
                "(ollama.create(..., template=conversion.template))"
            )
        else:
            out.append(f'{{{{ "\\u{ord(char):04x}" }}}}')
        index += 1
    return re.sub(r'""(")([ \t]*)$', r'""{{/**/}}\1\2', "".join(out), flags=re.MULTILINE)
