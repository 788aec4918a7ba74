"""One Ollama template from a tokenizer_config.json's named templates: `tool_use` and `default`.

transformers renders with the `tool_use` template whenever tools are given and with `default`
otherwise; the Go template makes the same choice on `.Tools`.
"""

from __future__ import annotations

from ..errors import ConversionError
from .result import Capabilities, Conversion, ConversionWarning


def choose_on_tools(default: Conversion, tool_use: Conversion) -> Conversion:
    """`tool_use`'s template where the request has tools, `default`'s where it has none.

    `define`s cannot sit inside an `if`, so both templates' helpers come first (the same
    helper is defined once). The `tool_use` branch comes first, so Ollama reads its tool-call
    tag from that template. The branch actions trim no whitespace: each template keeps its own
    text exactly.
    """
    helpers, with_tools = dict(tool_use._defines), tool_use._without_defines
    default_helpers, without_tools = default._defines, default._without_defines
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
