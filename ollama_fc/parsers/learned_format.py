"""A tool-call format learned from a chat template, as data.

The format says how a model writes a block of calls: the text that opens and closes the block,
the text around each call and between calls, and how one call writes its name and arguments.
It is serialised as JSON (`ollama-fc formats learn`) and, compactly, inside the Go TEMPLATE's
family-marker comment, so a model carries its own format through `ollama create` and `show`.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import OllamaFcError, ToolCallError

UNPRINTED_TAG = "<|ollama-fc:learned-format|>"
"""Ollama's tool tag for a converted template whose calls Ollama cannot read itself: text no
model prints, so Ollama leaves the calls in the content (its parser drops a response that
starts with its tag and does not parse) and ollama_fc.Client reads them."""

LEARNED_PREFIX = "learned:"
"""A format name of this form carries its learned format: `learned:<compact token>`."""

INDEX = "{index}"
"""Placeholder in a marker for a call's position (`:0`, `:1` in Kimi K2's `functions.f:0`)."""
CALL_ID = "{id}"
"""Placeholder in a marker for a call's id (Solar Open writes it before the name)."""
CALL_NAME = "{name}"
"""Placeholder in a marker for the call's name written a second time (Glimmer's `to=NAME`
header before its `<invoke name="NAME">`)."""
PLACEHOLDERS = (INDEX, CALL_ID, CALL_NAME)


class FormatNotLearned(OllamaFcError):
    """The template does not show a tool-call format that can be read back (the reason says why)."""


Style = Literal["json", "name_json", "tagged", "pythonic"]

SPECIAL_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>"  # <|im_start|>
    r"|<｜[^｜<>]{1,40}｜>"  # DeepSeek's <｜tool▁calls▁begin｜>
    r"|</?｜[^<>\s]{1,60}>"  # DeepSeek V3.2's <｜DSML｜invoke ...
    r"|<\|[\w:.\-]{1,40}>|<[\w:.\-]{1,40}\|>"  # Gemma 4's <|tool_call> ... <tool_call|>
    r"|\[[A-Z_]{2,20}\]"  # Mistral's [TOOL_CALLS]
    r"|</?[A-Za-z_][\w:.\-]{0,40}>"  # <tool_call>, </parameter>
)


class LearnedFormat(BaseModel):
    """How one model writes tool calls, read off its own chat template.

    style: how one call writes its name and arguments:
      - "json": a JSON object holding the name and the arguments (`name_key`, `arguments_key`
        are dotted paths; `name_is_key` for `{"NAME": {...}}`); `list_wrapped` when the block
        is one JSON list of such objects;
      - "name_json": the name as text, `name_close`, then the arguments as a JSON object;
      - "tagged": the name as text, `name_close`, then each argument as
        `param_open KEY param_mid VALUE param_close` (XML-style parameters);
      - "pythonic": `name(key=value, ...)`, in a `[...]` list when `list_wrapped`.
    `string_quote` is a text that quotes strings instead of `"` (Gemma 4's `<|"|>`), keys bare.
    `end` is what the template writes after a turn's calls when nothing opens a block of them
    (Gemma 4's `<|tool_response>`), or the end of the turn a template writes after the calls
    where it writes no empty turn (Nemotron Nano 2's `<SPECIAL_12>`): it ends the model's turn,
    so it is a stop sequence.
    `block_rejoin` is what a template writes after a closed block before more calls of the same
    turn (DeepSeek R1's distilled templates close the block after every call but the first, then
    write `<｜end▁of▁sentence｜>` and the next call; None when calls never follow a closed block):
    the calls after it belong to the turn too.
    """

    model_config = ConfigDict(extra="forbid")

    style: Style
    block_open: str = ""
    block_close: str = ""
    call_open: str = ""
    call_close: str = ""
    call_separator: str = ""
    name_close: str = ""
    name_key: str = "name"
    arguments_key: str = "arguments"
    name_is_key: bool = False
    arguments_as_string: bool = False
    list_wrapped: bool = False
    param_open: str = ""
    param_mid: str = ""
    param_mid_string: str = ""
    param_close: str = ""
    raw_strings: bool = False
    string_quote: str = ""
    end: str = ""
    block_rejoin: str | None = None
    special_tokens: list[str] = []

    @property
    def opener(self) -> str:
        """The first fixed text of a block: where the scanner starts to hold text."""
        first = self.block_open or self.call_open
        for placeholder in PLACEHOLDERS:
            first = first.split(placeholder)[0]
        words = first.split()
        return words[0] if words else first  # up to the first whitespace, which models may vary

    @property
    def name_first(self) -> bool:
        """Whether a reply starts with the first call's name, its opener written by the prompt
        (Functionary's `>>>` or `<|recipient|>`): then the name and `name_close` mark a call."""
        return self.style in ("name_json", "tagged") and not (self.block_open + self.call_open).strip()

    @property
    def closer(self) -> str:
        """The last fixed text of a block, or "" when a block runs to the end of the output."""
        if not self.block_open.strip() and self.call_close.strip():
            last = self.call_close  # calls close themselves: one region per call
        else:
            last = self.block_close or (self.call_close if not self.block_open else "")
        return last.strip() or last

    @property
    def ollama_reads_it(self) -> bool:
        """Whether Ollama's own parser reads these calls: JSON objects with `name` and
        `arguments` (or `parameters`) after the template's tag."""
        return (
            self.style == "json"
            and self.name_key == "name"
            and self.arguments_key in ("arguments", "parameters")
            and not (self.name_is_key or self.arguments_as_string or self.string_quote)
        )

    def token(self) -> str:
        """A compact, Go-comment-safe form (zlib + base64url, no `*/`, no spaces)."""
        data = self.model_dump_json(exclude_defaults=True).encode("utf-8")
        return base64.urlsafe_b64encode(zlib.compress(data, 9)).decode("ascii").rstrip("=")

    @classmethod
    def from_token(cls, token: str) -> LearnedFormat:
        """The format a `token()` encodes; ToolCallError naming the problem otherwise."""
        try:
            padded = token + "=" * (-len(token) % 4)
            data = zlib.decompress(base64.urlsafe_b64decode(padded.encode("ascii")))
            return cls.model_validate_json(data)
        except (ValueError, zlib.error, ValidationError) as exc:
            raise ToolCallError(
                f"the learned tool-call format in the template is damaged ({type(exc).__name__}); "
                "convert the template again with this ollama-fc"
            ) from None

    def format_name(self) -> str:
        """The name to give `parse_tool_calls(format=...)` or `Client.chat(tool_format=...)`."""
        return LEARNED_PREFIX + self.token()

    def summary(self) -> str:
        """One line: the style and the fixed texts around a call."""
        parts: list[str] = [self.style]
        if self.name_first:
            parts.append(f"the reply starts with the name, then {self.name_close!r}")
            if self.call_separator.strip():
                parts.append(f"between calls {self.call_separator.strip()!r}")
        for label, text in (("block", self.block_open), ("call", self.call_open), ("close", self.closer)):
            if text.strip():
                parts.append(f"{label} {text.strip()!r}")
        if self.block_rejoin is not None:
            parts.append(f"more calls after {(self.block_rejoin.strip() or self.call_open.strip())!r}")
        return ", ".join(parts)


def framing_tokens(texts: list[str]) -> list[str]:
    """The special-token-looking pieces of the fixed texts, in order, once each."""
    found: dict[str, None] = {}
    for text in texts:
        for match in SPECIAL_TOKEN.finditer(text):
            found[match.group()] = None
    return list(found)


def unquote(text: str, quote: str) -> str:
    """`text` with strings quoted by `quote` rewritten as JSON strings (bare keys stay bare)."""
    if not quote or quote not in text:
        return text
    pieces = text.split(quote)
    if len(pieces) % 2 == 0:  # an unclosed string: the text was cut inside a value
        return text
    return "".join(json.dumps(piece, ensure_ascii=False) if index % 2 else piece for index, piece in enumerate(pieces))
