"""Format names to parsers, and the order in which formats are tried when none is known."""

from __future__ import annotations

from ..errors import ToolCallError
from ..learn.format import LEARNED_PREFIX
from .base import ParseResult, ToolCallParser, ToolsArg
from .function_list import FunctionListParser
from .functools_list import FunctoolsParser
from .hermes import HermesParser
from .json_calls import JsonCallsParser
from .learned import learned_parser
from .llama3_json import Llama3JsonParser
from .minimax_ts import MiniMaxTypeScriptParser
from .mistral import MistralParser
from .pythonic import PythonicParser
from .streaming import recover_text

PARSERS: dict[str, ToolCallParser] = {
    parser.name: parser
    for parser in (
        HermesParser(),
        MiniMaxTypeScriptParser(),
        FunctoolsParser(),
        MistralParser(),
        FunctionListParser(),
        PythonicParser(),
        Llama3JsonParser(),
        JsonCallsParser(),
    )
}
"""Every format. With no format given all are active at once; where two share a marker (`[`,
`{`) the one listed first reads the region first: the Typhoon2 shapes before plain pythonic
lists, Llama 3 JSON before generic JSON."""

FORMATS: tuple[str, ...] = tuple(PARSERS)


def parsers_for(format: str | None) -> list[ToolCallParser]:
    """The parsers to run for a format name, or all of them for None.

    A `learned:<token>` name (a format learned from a chat template) is read from its token.
    """
    if format is None:
        return list(PARSERS.values())
    if format.startswith(LEARNED_PREFIX):
        return [learned_parser(format)]
    try:
        return [PARSERS[format]]
    except KeyError:
        raise ToolCallError(f"unknown tool-call format {format!r}; use one of: {', '.join(FORMATS)}") from None


def parse_tool_calls(text: str, format: str | None = None, tools: ToolsArg = None) -> ParseResult:
    """Recover the tool calls written in a model's text, and the content left without them.

    `format` is one of FORMATS, or None to try them all. With `tools`, only calls naming an
    offered tool count; other call-shaped text stays content.
    """
    return recover_text(text, parsers_for(format), tools)
