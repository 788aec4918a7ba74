"""One Ollama template from a tokenizer_config.json's named templates: `tool_use` and `default`.

transformers renders with the `tool_use` template whenever tools are given and with `default`
otherwise; the Go template makes the same choice on `.Tools`.
"""

from __future__ import annotations

import re

from ..errors import ConversionError
from .go.tree import action_spans
from .result import Capabilities, Conversion, ConversionWarning

#: an action's opening keyword: `{{- define "name"` or `{{ if`, `{{ end`, ...
_KEYWORD = re.compile(r"\{\{-?\s*(/\*|[a-z]+)(?:\s+\"([^\"]*)\")?")
_OPENS = {"if", "range", "with", "define", "block"}


def split_defines(template: str) -> tuple[dict[str, str], str]:
    """The template's top-level `define` blocks by name, and the template without them."""
    defines: dict[str, str] = {}
    rest: list[str] = []
    depth, last, start, name = 0, 0, 0, ""
    for begin, end in action_spans(template):
        match = _KEYWORD.match(template, begin)
        keyword = match.group(1) if match else ""
        if keyword == "define" and depth == 0:
            rest.append(template[last:begin])
            start, name = begin, match.group(2) if match else ""
        if keyword in _OPENS:
            depth += 1
        elif keyword == "end":
            depth -= 1
            if depth == 0 and name:
                defines[name] = template[start:end]
                name, last = "", end
    rest.append(template[last:])
    return defines, "".join(rest)


def choose_on_tools(default: Conversion, tool_use: Conversion) -> Conversion:
    """`tool_use`'s template where the request has tools, `default`'s where it has none.

    `define`s cannot sit inside an `if`, so both templates' helpers come first (the same
    helper is defined once). The `tool_use` branch comes first, so Ollama reads its tool-call
    tag from that template. The branch actions trim no whitespace: each template keeps its own
    text exactly.
    """
    helpers, with_tools = split_defines(tool_use.template)
    default_helpers, without_tools = split_defines(default.template)
    for name, text in default_helpers.items():
        if helpers.setdefault(name, text) != text:
            raise ConversionError(f"the default and tool_use templates need two different Go helpers named {name}")
    template = "".join(helpers.values()) + f"{{{{if .Tools}}}}{with_tools}{{{{else}}}}{without_tools}{{{{end}}}}"
    warnings = [*default.warnings] + [
        ConversionWarning(construct=f"tool_use template: {w.construct}", line=w.line, effect=w.effect)
        for w in tool_use.warnings
    ]
    stops = [*default.parameters.get("stop", [])]
    stops += [stop for stop in tool_use.parameters.get("stop", []) if stop not in stops]
    either = {
        name: getattr(default.capabilities, name) or getattr(tool_use.capabilities, name)
        for name in Capabilities.model_fields
    }
    return Conversion(
        template=template,
        parameters={**default.parameters, **tool_use.parameters, **({"stop": stops} if stops else {})},
        warnings=warnings,
        capabilities=Capabilities(**either),
        tool_call_tag=tool_use.tool_call_tag or default.tool_call_tag,
        special_tokens=default.special_tokens,
    )
