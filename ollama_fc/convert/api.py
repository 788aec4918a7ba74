"""`convert()`: a Jinja chat template in, an Ollama TEMPLATE with its parameters out."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from jinja2 import nodes
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConversionError
from ..verify.reference import ReferenceRenderError, render
from ..verify.shapes import Shape, probe
from .sources import TemplateSource, load_source
from .translator import Translator

#: Markers models print before their tool calls, shortest first within a family.
MARKER_PATTERN = re.compile(r"\{\{-?\s*/\*\s*ollama-fc\s+family=(\S+)\s+format=(\S+?)\s*\*/\s*-?\}\}")


def family_marker(family: str, tool_format: str) -> str:
    """The Go comment recording a model's family and tool-call format; `show` returns it."""
    return f"{{{{/* ollama-fc family={family} format={tool_format} */}}}}"


def read_marker(template: str) -> tuple[str, str] | None:
    """(family, format) from a TEMPLATE that carries a family marker, else None."""
    match = MARKER_PATTERN.search(template)
    return (match.group(1), match.group(2)) if match else None


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
PROBE_NAME = "ofc_probe_function"


with warnings.catch_warnings():  # `construct` is the agreed field name; it shadows BaseModel.construct
    warnings.simplefilter("ignore")

    class ConversionWarning(BaseModel):
        """Something the converted template renders differently, and where it comes from."""

        model_config = ConfigDict(protected_namespaces=())

        construct: str
        line: int | None = None
        effect: str


class Capabilities(BaseModel):
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

    def modelfile(self, from_: str) -> str:
        """Modelfile text: FROM, the TEMPLATE as Ollama's Modelfile parser reads it back, PARAMETERs."""
        lines = [f"FROM {from_}", f'TEMPLATE """{modelfile_quotable(self.template)}"""']
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


def _probe(template: str, tokens: dict[str, str], messages: list[dict[str, Any]], tools: Any = None) -> str | None:
    """The Hugging Face render of a closed conversation, or None when the template refuses it."""
    try:
        return render(template, messages, tools, add_generation_prompt=False, special_tokens=tokens)
    except ReferenceRenderError:
        return None


def _capabilities(tree: nodes.Template, template: str, shape: Shape) -> Capabilities:
    """What the template renders, read off probe renders (thinking, which no probe covers, off its text)."""
    names = {n.name for n in tree.find_all(nodes.Name)}
    attrs = {n.attr for n in tree.find_all(nodes.Getattr)} | {
        n.arg.value for n in tree.find_all(nodes.Getitem) if isinstance(n.arg, nodes.Const)
    }
    return Capabilities(
        system_role=shape.system,
        tools=shape.tools,
        tool_calls=shape.tool_calls,
        parallel_calls=shape.parallel_calls,
        tool_results=shape.tool_results,
        thinking=bool({"reasoning_content", "thinking", "enable_thinking"} & (attrs | names)) or "<think>" in template,
    )


def _tool_marker(source: TemplateSource) -> str | None:
    """The literal text a model prints before a call, read off the template's own rendering."""
    base = [{"role": "user", "content": "Q"}]
    call = {"type": "function", "function": {"name": PROBE_NAME, "arguments": {"x": 1}}}
    with_call = _probe(
        source.template, source.special_tokens, base + [{"role": "assistant", "content": "", "tool_calls": [call]}]
    )
    without = _probe(source.template, source.special_tokens, base + [{"role": "assistant", "content": ""}])
    if with_call and without is not None and PROBE_NAME in with_call:
        start = 0
        while start < min(len(with_call), len(without)) and with_call[start] == without[start]:
            start += 1
        while start > 0 and not with_call[start - 1].isspace():
            start -= 1  # back to the start of the token the two renders share a prefix of
        rendered = with_call[start : with_call.index(PROBE_NAME)]
        for marker in KNOWN_MARKERS:
            if marker in rendered:
                return marker
        head = rendered.split("{")[0].strip()
        if head and len(head) <= 24 and not head.startswith('"'):
            return head
    for marker in KNOWN_MARKERS:
        if marker in source.template:
            return marker
    return None


def _stop_tokens(source: TemplateSource) -> list[str]:
    """eos and the end-of-turn token the template writes right after an assistant's text."""
    stops: list[str] = []
    needle = "OFCANSWER"
    rendered = _probe(
        source.template,
        source.special_tokens,
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": needle}],
    )
    if not rendered or needle not in rendered:  # templates that read content as a list of parts
        parts = [{"type": "text", "text": text} for text in ("Q", needle)]
        rendered = _probe(
            source.template,
            source.special_tokens,
            [{"role": "user", "content": [parts[0]]}, {"role": "assistant", "content": [parts[1]]}],
        )
    if rendered and needle in rendered:
        after = rendered[rendered.index(needle) + len(needle) :].lstrip(" ")
        match = re.match(r"(<\|[^|>]{1,40}\|>|<[a-z_/]{1,30}>|</s>|\[/?[A-Z_]{2,20}\]|<[^<>\s]{1,40}>)", after)
        if match:
            stops.append(match.group(1))
    eos = source.special_tokens.get("eos_token")
    if eos and eos not in stops:
        stops.append(eos)
    return stops


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
            tag = token.replace("\r\n", "\n").split("{")[0].strip()
            return tag or "{"
    return "{"


def convert(
    source: str | Path | TemplateSource,
    *,
    special_tokens: dict[str, str] | None = None,
    family: str | None = None,
    tool_format: str | None = None,
    tool_tag: str | None = None,
) -> Conversion:
    """Translate a Jinja chat template into an Ollama Go TEMPLATE (see translator.py).

    `family`/`tool_format` put the family marker at the start; `tool_tag` makes Ollama's
    tool-call tag that text instead of the marker read off the template's own renders.
    """
    loaded = source if isinstance(source, TemplateSource) else load_source(source)
    tokens = {**loaded.special_tokens, **(special_tokens or {})}
    loaded = TemplateSource(loaded.template, tokens, loaded.origin)
    translator = Translator(loaded.template, tokens)
    try:
        body = translator.translate()
    except RecursionError as exc:
        raise ConversionError("the chat template nests too deeply to translate") from exc
    capabilities = _capabilities(
        translator.tree, loaded.template, probe(loaded.template, tokens, translator.role_names)
    )
    # a template naming `tools` gets Ollama's tool round trip even where no probe renders it, so
    # that Ollama >= 0.30 keeps this Go template rather than preferring a GGUF's Jinja one
    names_tools = any(n.name == "tools" for n in translator.tree.find_all(nodes.Name))
    tool_aware = capabilities.tools or names_tools or capabilities.tool_calls
    header = family_marker(family, tool_format or "auto") if family else ""
    # Ollama renders per turn (dropping tool messages) unless the template names `.Messages`
    header += "{{- if and false .Messages }}{{- end }}"
    marker = None
    if tool_aware:
        marker = tool_tag if tool_tag is not None else _tool_marker(loaded)
        # Ollama reads its tool-call tag from the first `if` on a `.ToolCalls` field and wants a
        # tool-result branch; this block never renders but makes both explicit.
        tag_text = marker if marker else ""
        header += f'{{{{- if and false .ToolCalls (eq .Role "tool") }}}}{tag_text}{{{{- end }}}}'
        if not (capabilities.tools or names_tools):
            # it writes calls but not the tool list (DeepSeek V3/R1: tools go in a system
            # message): naming `.Tools` lets Ollama accept a request with tools at all
            header += "{{- if and false .Tools }}{{- end }}"
    template = header + body
    # in source order: a macro expanded at several call sites warns in the order it was expanded
    ordered = sorted(translator.warnings, key=lambda w: w.line or 0)
    warnings = [ConversionWarning(construct=w.construct, line=w.line, effect=w.effect) for w in ordered]
    stops = _stop_tokens(loaded)
    return Conversion(
        template=template,
        parameters={"stop": stops} if stops else {},
        warnings=warnings,
        capabilities=capabilities,
        tool_call_tag=parse_tag(template) if tool_aware else None,
        special_tokens=tokens,
    )
