"""A tools section for a chat template that has none, in one tool-call format's conventions.

Many fine-tunes publish a chat template that renders no tools at all (SmolLM2's ChatML): the
model can still be tried with tools if the prompt lists them and shows it how to call. This
module extends such a Jinja template before it is converted, so the converter stays as it is and
the Go template renders exactly what the extended Jinja renders (checked like any conversion).

The extension keeps the template's own turns and rewrites only what one message says:

* the tools, in the format's words, after the system message's text, or, with no system
  message (or one the template drops), before the text of the first message after it;
* an assistant's earlier calls after its text, in the format's call syntax;
* a tool result in the format's wrapping (`<tool_response>` for Hermes...), in a `user` turn
  (the template knows no tool role).

Every read of a message's `content` becomes `ofc_before(m, first) ~ m.content ~ ofc_after(m,
first)` (`first`: whether it is the first message of the loop), two macros that print nothing
for a message the section leaves alone; the content stays a read of the message, so the
converter still sees the final message's text where a prefilled reply continues it. Every read
of a message's `role` maps `tool` to `user`. A conversation without tools renders byte for byte
as the template did (`extend` checks it on probe conversations).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import SourceError

if TYPE_CHECKING:
    from .convert.result import Capabilities, Conversion
    from .convert.sources import TemplateSource


@dataclass(frozen=True)
class ToolsStyle:
    """How one format lists tools, writes calls and sends results (Jinja text of the macro)."""

    #: the registry's format name (`parsers/registry.py`): what the client parses
    name: str
    #: the tools section, a Jinja body reading `tools`
    listing: str
    #: the Jinja body writing the calls of `m.tool_calls`, after the assistant's text
    calls: str
    #: the tool result's text around `m.content`
    result_open: str
    result_close: str
    #: whether Ollama's own parser reads the calls after the tool tag (else the tag is one no
    #: model prints, so that `--ollama-parses` leaves them in the text for the client)
    ollama_reads_it: bool = True


def _text(value: str) -> str:
    """A Jinja print of a literal string."""
    return "{{- " + _quote(value) + " }}"


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


#: `f` is the call's function (`name`, `arguments`), whether the call is wrapped or flat
_FUNCTION = "{%- set f = c.function if c.function is defined else c %}"
_JSON_CALL = "{{- '{\"name\": \"' + f.name + '\", \"ARGKEY\": ' }}{{- f.arguments | tojson }}{{- '}' }}"

_HERMES_LISTING = (
    _text(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    )
    + "{%- for t in tools %}{{- '\\n' }}{{- t | tojson }}{%- endfor %}"
    + _text(
        "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
        'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
        '"arguments": <args-json-object>}\n</tool_call>'
    )
)

_LLAMA3_LISTING = (
    _text(
        "Given the following functions, please respond with a JSON for a function call with its proper "
        "arguments that best answers the given prompt.\n\nRespond in the format "
        '{"name": function name, "parameters": dictionary of argument name and its value}. '
        "Do not use variables."
    )
    + "{%- for t in tools %}{{- '\\n\\n' }}{{- t | tojson }}{%- endfor %}"
)

_PYTHONIC_LISTING = (
    _text(
        "You can call functions. If you decide to invoke any of the function(s), you MUST put it in "
        "the format of [func_name1(params_name1=params_value1, params_name2=params_value2...), "
        "func_name2(params)]\nYou SHOULD NOT include any other text in the response when you call "
        "functions.\n\nHere is a list of functions in JSON format that you can invoke.\n["
    )
    + "{%- for t in tools %}{%- if not loop.first %}{{- ', ' }}{%- endif %}{{- t | tojson }}{%- endfor %}"
    + _text("]")
)

_MISTRAL_LISTING = (
    _text("[AVAILABLE_TOOLS][")
    + "{%- for t in tools %}{%- if not loop.first %}{{- ', ' }}{%- endif %}{{- t | tojson }}{%- endfor %}"
    + _text("][/AVAILABLE_TOOLS]")
)


def _calls(opening: str, each: str, separator: str, closing: str) -> str:
    return (
        _text(opening)
        + "{%- for c in m.tool_calls %}"
        + "{%- if not loop.first %}"
        + _text(separator)
        + "{%- endif %}"
        + _FUNCTION
        + each
        + "{%- endfor %}"
        + _text(closing)
    )


_PYTHONIC_CALL = (
    "{{- f.name + '(' }}"
    "{%- for k, v in f.arguments.items() %}{%- if not loop.first %}{{- ', ' }}{%- endif %}"
    "{{- k + '=' }}{{- v | tojson }}{%- endfor %}"
    "{{- ')' }}"
)

STYLES: dict[str, ToolsStyle] = {
    style.name: style
    for style in (
        ToolsStyle(
            name="hermes",
            listing=_HERMES_LISTING,
            calls=_calls(
                "",
                _text("<tool_call>\n") + _JSON_CALL.replace("ARGKEY", "arguments") + _text("\n</tool_call>"),
                "\n",
                "",
            ),
            result_open="<tool_response>\n",
            result_close="\n</tool_response>",
        ),
        ToolsStyle(
            name="llama3_json",
            listing=_LLAMA3_LISTING,
            calls=_calls("", _JSON_CALL.replace("ARGKEY", "parameters"), "\n", ""),
            result_open="",
            result_close="",
        ),
        ToolsStyle(
            name="pythonic",
            listing=_PYTHONIC_LISTING,
            calls=_calls("[", _PYTHONIC_CALL, ", ", "]"),
            result_open="",
            result_close="",
            ollama_reads_it=False,
        ),
        ToolsStyle(
            name="mistral",
            listing=_MISTRAL_LISTING,
            calls=_calls("[TOOL_CALLS][", _JSON_CALL.replace("ARGKEY", "arguments"), ", ", "]"),
            result_open="[TOOL_RESULTS]",
            result_close="[/TOOL_RESULTS]",
        ),
    )
}
"""The formats a tools section can be written in, by the registry's names."""

TOOLS_FORMATS: tuple[str, ...] = tuple(STYLES)


def macro(style: ToolsStyle) -> str:
    """The macros around every read of a message's content: `ofc_before(message, first)`, the
    content itself, `ofc_after(message, first)`. The content stays a read of the message, so the
    converter still sees the final message's text where a prefilled reply continues it."""
    return (
        "{%- macro ofc_before(m, first) %}"
        "{%- if m.role == 'tool' %}"
        + _text(style.result_open)
        + "{%- elif tools and first and m.role != 'system' %}"
        + style.listing
        + "{{- '\\n\\n' }}"
        "{%- endif %}"
        "{%- endmacro %}"
        "{%- macro ofc_after(m, first) %}"
        "{%- if m.role == 'tool' %}" + _text(style.result_close) + "{%- elif m.role == 'assistant' and m.tool_calls %}"
        "{%- if m.content %}{{- '\\n' }}{%- endif %}" + style.calls + "{%- elif tools and m.role == 'system' %}"
        "{{- '\\n\\n' }}" + style.listing + "{%- endif %}"
        "{%- endmacro %}"
    )


_BLOCK = re.compile(r"(\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\})", re.S)
_ACCESS = re.compile(
    r"(?<![\w.\]'\"])(?P<base>[A-Za-z_]\w*(?:\[\s*-?\d+\s*\])?)\s*"
    r"(?:\[\s*(?P<q>['\"])(?P<item>content|role)(?P=q)\s*\]|\.(?P<attr>content|role)\b)"
)
_LOOP = re.compile(r"\bfor\s+(\w+)\s+in\s+[^%]*messages\b")


#: whether the conversation has no system message (then the tools lead its first message)
_NO_SYSTEM = "messages[0].role != 'system'"
#: the first message of a loop over the messages, and where a template drops the system
#: message, the message after it
_FIRST = {
    True: f"(loop.first and {_NO_SYSTEM})",
    False: f"((loop.first and {_NO_SYSTEM}) or (loop.index0 == 1 and not {_NO_SYSTEM}))",
}


def _rewrite_block(block: str, loop_names: set[str], renders_system: bool) -> str:
    def replace(match: re.Match[str]) -> str:
        base = match.group("base")
        field = match.group("item") or match.group("attr")
        if base == "loop":
            return match.group(0)
        if field == "role":
            return f"({base}.role if {base}.role != 'tool' else 'user')"
        if base in loop_names:
            first = _FIRST[renders_system]
        elif re.fullmatch(r"\w+\[\s*0\s*\]", base):
            first = _NO_SYSTEM
        else:
            first = "false"
        return f"(ofc_before({base}, {first}) ~ {base}.content ~ ofc_after({base}, {first}))"

    return _ACCESS.sub(replace, block)


def extended_template(template: str, tools_format: str, *, renders_system: bool = True) -> str:
    """`template` with a tools section in `tools_format` (one of TOOLS_FORMATS); where the
    template drops a system message (`renders_system` false), the tools lead the first message
    after it."""
    style = style_of(tools_format)
    loop_names = set(_LOOP.findall(template))
    pieces = _BLOCK.split(template)
    for index in range(1, len(pieces), 2):
        if not pieces[index].startswith("{#"):
            pieces[index] = _rewrite_block(pieces[index], loop_names, renders_system)
    return macro(style) + "".join(pieces)


def style_of(tools_format: str) -> ToolsStyle:
    try:
        return STYLES[tools_format]
    except KeyError:
        raise SourceError(
            f"no tools section is written in the format {tools_format!r}; give --tools-format one of: "
            f"{', '.join(TOOLS_FORMATS)}"
        ) from None


def extend(source: TemplateSource, tools_format: str) -> TemplateSource:
    """The source with its template extended by a tools section in `tools_format`.

    Checked on probe conversations before it is returned: without tools it renders what the
    template rendered, with tools it lists them once, writes an earlier call and a tool result.
    A template whose content reads the rewrite cannot follow is one SourceError line.
    """
    from .verify.runner import with_stand_in_tokens

    with_system = _render(with_stand_in_tokens(source), [_SYSTEM, _USER], None)
    renders_system = with_system is not None and "OFC-SYSTEM" in with_system
    template = extended_template(source.template, tools_format, renders_system=renders_system)
    extended = dataclasses.replace(source, template=template)
    problem = _check(source, extended)
    if problem:
        raise SourceError(
            f"{source.origin}: cannot add a {tools_format} tools section to this chat template ({problem}); "
            'write a template with tools for the model (docs/USAGE.md, "A model whose template has no tools")'
        )
    return extended


def _render(source: TemplateSource, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str | None:
    from .hf.reference import ReferenceRenderError, render

    try:
        return render(
            source.template, messages, tools, add_generation_prompt=True, special_tokens=source.special_tokens
        )
    except ReferenceRenderError:
        return None


_USER: dict[str, Any] = {"role": "user", "content": "OFC-USER"}
_SYSTEM: dict[str, Any] = {"role": "system", "content": "OFC-SYSTEM"}
_ANSWER: dict[str, Any] = {"role": "assistant", "content": "OFC-ANSWER"}
_CALL: dict[str, Any] = {"type": "function", "function": {"name": "ofc_probe_call", "arguments": {"x": "OFC-ARG"}}}
_PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "ofc_probe_tool",
        "description": "OFC-TOOL",
        "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
    },
}


def _check(source: TemplateSource, extended: TemplateSource) -> str:
    """What the extended template gets wrong on the probe conversations the template renders
    ("" when nothing). A bare .jinja is rendered with stand-in special tokens, as `verify` does."""
    from .verify.runner import with_stand_in_tokens

    source, extended = with_stand_in_tokens(source), with_stand_in_tokens(extended)
    plain = ([_USER], [_SYSTEM, _USER], [_USER, _ANSWER, _USER], [_SYSTEM, _USER, _ANSWER, _USER])
    for messages in plain:
        if _render(extended, list(messages), None) != _render(source, list(messages), None):
            return "it renders a conversation without tools differently"
    listed = 0
    for messages in ([_USER], [_SYSTEM, _USER]):
        if _render(source, list(messages), None) is None:
            continue  # the template refuses it (no system role...): so does the extension
        rendered = _render(extended, list(messages), [_PROBE_TOOL])
        if rendered is None or rendered.count("ofc_probe_tool") != 1 or "OFC-USER" not in rendered:
            return "the tools are not listed once"
        listed += 1
    calls: list[dict[str, Any]] = [
        _USER,
        {"role": "assistant", "content": "", "tool_calls": [_CALL]},
        {"role": "tool", "content": "OFC-RESULT"},
    ]
    rendered = _render(extended, calls, [_PROBE_TOOL])
    if not listed or rendered is None or "ofc_probe_call" not in rendered or "OFC-RESULT" not in rendered:
        return "an earlier call and its result do not render"
    return ""


def tool_capable(template: TemplateSource | Capabilities) -> bool:
    """Whether a chat template has tools at all: it lists the offered tools or writes calls
    (read off probe renders, or off a conversion's capabilities, which are the same probes)."""
    from .convert.result import Capabilities

    if isinstance(template, Capabilities):
        return template.tools or template.tool_calls
    from .hf.shapes import probe

    shape = probe(template.template, template.special_tokens)
    return shape.tools or shape.tool_calls


def tool_less_note(what: str) -> str:
    """The one line that says a model's template has no tools, and what to do."""
    return (
        f"{what}: its chat template has no tools (it lists no tools and writes no calls), so the model "
        f"sees none; to try it with tools, add a tools section with --tools-format FORMAT "
        f"({', '.join(TOOLS_FORMATS)}), e.g. --tools-format hermes"
    )


def convert_with_tools_section(
    source: str | os.PathLike[str] | TemplateSource, tools_format: str, **limits: Any
) -> Conversion:
    """`convert` of the source extended by a tools section, its format recorded in the
    TEMPLATE's first comment as a normal build records a learned one (see `learn.convert_with_format`);
    `source` as for `convert`, `limits` its `max_output` and `max_seconds`.
    A template that has tools already is refused: its own section is what the model was trained on."""
    from .convert import convert
    from .convert.sources import TemplateSource, load_source
    from .parsers.learned_format import UNPRINTED_TAG

    style = style_of(tools_format)
    if not isinstance(source, TemplateSource):
        source = load_source(source)
    if tool_capable(source):
        raise SourceError(
            f"{source.origin}: the chat template has tools of its own; --tools-format only adds a tools "
            "section to a template without one: build without it"
        )
    extended = extend(source, tools_format)
    tag = None if style.ollama_reads_it else UNPRINTED_TAG
    return convert(extended, family="auto", tool_format=style.name, tool_tag=tag, **limits)
