"""Format names to parsers, the order in which shapes are tried, and the Ollama tags they answer to.

A new format is one module and one line below: its markers join the scanner, and its tags join
the client's tag-to-format map (`format_for_tag`) and `KNOWN_TAGS`, which must hold every marker
the converter looks for in a template (`markers.KNOWN_MARKERS`; a test checks it).
"""

from __future__ import annotations

from ..errors import ToolCallError
from .apertus import ApertusParser
from .base import ParseResult, ToolCallParser, ToolsArg
from .command_r import CommandRParser
from .deepseek import DeepSeekV3Parser, DeepSeekV31Parser
from .deepseek_dsml import DeepSeekDsmlParser
from .function_list import FunctionListParser
from .functionary import FunctionaryParser
from .functiongemma import FunctionGemmaParser
from .functools_list import FunctoolsParser
from .gemma4 import Gemma4Parser
from .glm45 import Glm45Parser
from .harmony import HarmonyParser
from .hermes import HermesParser
from .hunyuan import HunyuanParser
from .internlm import InternLMParser
from .json_calls import JsonCallsParser
from .kimi_k2 import KimiK2Parser
from .learned import learned_parser
from .learned_format import LEARNED_PREFIX
from .llama3_json import Llama3JsonParser
from .longcat import LongCatParser
from .minicpm import MiniCPMParser
from .minimax_m2 import MiniMaxM2Parser
from .minimax_ts import MiniMaxTypeScriptParser
from .mistral import MistralParser
from .pythonic import PythonicParser
from .seed_oss import SeedOssParser
from .step3 import Step3Parser
from .streaming import recover_text
from .wrapped import WrappedParser

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
        WrappedParser(),
        Gemma4Parser(),
        HarmonyParser(),
        DeepSeekV3Parser(),
        DeepSeekV31Parser(),
        DeepSeekDsmlParser(),
        MiniMaxM2Parser(),
        Glm45Parser(),
        KimiK2Parser(),
        SeedOssParser(),
        CommandRParser(),
        FunctionaryParser(),
        InternLMParser(),
        Step3Parser(),
        LongCatParser(),
        HunyuanParser(),
        FunctionGemmaParser(),
        MiniCPMParser(),
        ApertusParser(),
    )
}
"""Every format. All are active for every parse; where two share a marker (`[`, `{`) the one
listed first reads the region first (the Typhoon2 shapes before plain pythonic lists, Llama 3
JSON before generic JSON), except that a named format goes before all the others."""

FORMATS: tuple[str, ...] = tuple(PARSERS)

KNOWN_TAGS: tuple[str, ...] = tuple(dict.fromkeys(tag for parser in PARSERS.values() for tag in parser.tags))
"""Every tool tag a parser answers to: texts a template writes before its calls."""


def parsers_for(format: str | None) -> list[ToolCallParser]:
    """The parsers to run for a format name: that format's first, then every other shape (a
    model may print a shape it was not trained on); all of them in registry order for None.
    A `learned:<token>` name (a format learned from a chat template) is read from its token."""
    if format is None:
        return list(PARSERS.values())
    if format.startswith(LEARNED_PREFIX):
        return [learned_parser(format), *PARSERS.values()]
    try:
        own = PARSERS[format]
    except KeyError:
        raise ToolCallError(f"unknown tool-call format {format!r}; use one of: {', '.join(FORMATS)}") from None
    return [own, *(parser for parser in PARSERS.values() if parser is not own)]


def format_for_tag(tag: str) -> str | None:
    """The format whose declared tag the Ollama tool tag `tag` holds (the longest match wins),
    or None when no parser declares one."""
    best: tuple[int, str] | None = None
    for parser in PARSERS.values():
        for declared in parser.tags:
            if declared in tag and (best is None or len(declared) > best[0]):
                best = (len(declared), parser.name)
    return best[1] if best else None


def parse_tool_calls(text: str, format: str | None = None, tools: ToolsArg = None) -> ParseResult:
    """Recover the tool calls written in a model's text, and the content left without them.

    `format` is one of FORMATS (its shape is tried first), or None; every shape is recovered
    either way. With `tools`, only calls naming an offered tool count; other call-shaped text
    stays content.
    """
    return recover_text(text, parsers_for(format), tools)
