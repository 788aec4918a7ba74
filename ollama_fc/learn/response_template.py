"""A model's own description of its output format: the declarative `response_template`.

transformers (5.13 and later) reads a `response_template` from tokenizer_config.json and turns a
generation back into a message with `parse_response`; vLLM consumes the same. It names each
field of the message (thinking, tool calls, content) by the texts that open and close it and the
parser of its body. Where a model ships one, it is the model author's word on the format, so it
is read in place of a format learned from the chat template; and a learned format is written as
one (`ollama-fc formats learn --response-template`), for the tools that read them.

Three shapes of tool-call field map onto a learned format: a JSON call between literal texts
(Hermes, Qwen2.5), a name caught by the opening pattern followed by JSON arguments (Gemma 4,
whose strings are quoted by `<|"|>`), and a name followed by XML-style parameters (Qwen3-Coder).
Anything else (a transform that builds calls another way, a regex that is more than fixed text)
is not read: FormatNotLearned says which part, and the chat template is learned instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..parsers.learned_format import FormatNotLearned, LearnedFormat, framing_tokens

if TYPE_CHECKING:
    from ..convert.sources import TemplateSource

NAME_GROUP = r"(?P<name>[\w.\-:]+)"
KEY_GROUP = r"(?P<key>[\w.\-]+)"
VALUE_GROUP = r"(?P<value>.*?)"
FUNCTION = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
# What a fixed text of a regex may hold besides escaped characters: optional whitespace.
_WHITESPACE = re.compile(r"\\s[*+?]?|\\n[*+?]?")
_GROUP = re.compile(r"\(\?P<(\w+)>[^()]*\)")


def to_response_template(learned: LearnedFormat, start_anchor: str) -> dict[str, Any]:
    """The learned format as a `response_template` (`start_anchor` is the text the chat template
    writes to open the model's turn, e.g. `<|im_start|>assistant\\n`)."""
    if not start_anchor:
        raise FormatNotLearned("no start anchor: the chat template writes nothing to open the model's turn")
    return {
        "version": 1,
        "defaults": {"role": "assistant"},
        "start_anchor": start_anchor,
        "fields": {"tool_calls": _tool_calls_field(learned), "content": {"content": "text"}},
    }


def _tool_calls_field(learned: LearnedFormat) -> dict[str, Any]:
    if learned.block_open.strip() or learned.list_wrapped or learned.name_is_key or learned.arguments_as_string:
        raise FormatNotLearned(f"format {learned.summary()} has no response_template form here (a block of calls)")
    close = learned.call_close.strip()
    if not close:
        raise FormatNotLearned(f"format {learned.summary()} has no closing text for a call")
    if learned.style == "json":
        return {
            "open": learned.call_open.strip(),
            "close": close,
            "repeats": True,
            "content": "json",
            **_json_args(learned),
            "transform": {
                "type": "function",
                "function": {
                    "name": f"{{content.{learned.name_key}}}",
                    "arguments": f"{{content.{learned.arguments_key}}}",
                },
            },
        }
    opening = _pattern(learned.call_open) + NAME_GROUP + _pattern(learned.name_close)
    if learned.style == "name_json":
        return {
            "open_pattern": opening,
            "close": close,
            "repeats": True,
            "content": "json",
            **_json_args(learned),
            "transform": FUNCTION,
        }
    if learned.style == "tagged" and learned.param_open.strip() and learned.param_close.strip():
        tag = _pattern(learned.param_open) + KEY_GROUP + _pattern(learned.param_mid) + VALUE_GROUP
        return {
            "open_pattern": opening,
            "close_pattern": _pattern(learned.call_close),
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": tag + _pattern(learned.param_close),
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": FUNCTION,
        }
    raise FormatNotLearned(f"format {learned.summary()} has no response_template form here")


def _json_args(learned: LearnedFormat) -> dict[str, Any]:
    if not learned.string_quote:
        return {}
    quote = learned.string_quote
    return {"content_args": {"unquoted_keys": True, "string_delims": [[quote, quote]]}}


def _pattern(text: str) -> str:
    """A fixed text as a regex: its characters escaped, each run of whitespace optional."""
    return "".join(r"\s*" if piece.isspace() else re.escape(piece) for piece in re.split(r"(\s+)", text) if piece)


def start_anchor(source: TemplateSource) -> str:
    """What the chat template writes to open the model's turn: the generation prompt after a
    user message (`<|im_start|>assistant\n`), leading whitespace dropped."""
    from ..hf.reference import ReferenceRenderError, render

    messages = [{"role": "user", "content": "Hello."}]
    try:
        without = render(source.template, messages, add_generation_prompt=False, special_tokens=source.special_tokens)
        with_prompt = render(
            source.template, messages, add_generation_prompt=True, special_tokens=source.special_tokens
        )
    except ReferenceRenderError as exc:
        raise FormatNotLearned(f"the chat template does not render a generation prompt ({exc})") from None
    if not with_prompt.startswith(without):
        raise FormatNotLearned("the chat template's generation prompt does not extend the conversation")
    return with_prompt[len(without) :].lstrip()


def learned_from_response_template(spec: Any) -> LearnedFormat:
    """`from_response_template`, with the format's framing tokens filled in as learning does."""
    learned = from_response_template(spec)
    texts = [learned.call_open, learned.name_close, learned.param_open, learned.param_close, learned.call_close]
    learned.special_tokens = framing_tokens(texts)
    return learned


def from_response_template(spec: Any) -> LearnedFormat:
    """The learned format a `response_template` describes; FormatNotLearned naming the part that
    has no learned form."""
    fields = spec.get("fields") if isinstance(spec, dict) else None
    field = fields.get("tool_calls") if isinstance(fields, dict) else None
    if not isinstance(field, dict):
        raise FormatNotLearned("the response_template has no tool_calls field")
    content = field.get("content", "text")
    args = field.get("content_args") or {}
    quote = _string_quote(args)
    close = _literal(field, "close", "close_pattern")
    if "open" in field and content == "json":
        name_key, arguments_key = _json_keys(field.get("transform"))
        return LearnedFormat(
            style="json",
            call_open=_first(field["open"]),
            call_close=close,
            name_key=name_key,
            arguments_key=arguments_key,
            string_quote=quote,
        )
    before, after = _around(field.get("open_pattern"), "name", "open_pattern")
    if field.get("transform", FUNCTION) != FUNCTION:
        raise FormatNotLearned("the tool_calls transform does not build {name} and {content} into a call")
    if content == "json":
        name_close = _unescape(after, "open_pattern")
        return LearnedFormat(
            style="name_json", call_open=before, name_close=name_close, call_close=close, string_quote=quote
        )
    if content == "xml-inline":
        param_open, rest = _around(args.get("tag_pattern"), "key", "tag_pattern")
        param_mid, param_close = _around(rest, "value", "tag_pattern")
        return LearnedFormat(
            style="tagged",
            call_open=before,
            name_close=_unescape(after, "open_pattern"),
            call_close=close,
            param_open=param_open,
            param_mid=param_mid,
            param_close=_unescape(param_close, "tag_pattern"),
            raw_strings=True,
        )
    raise FormatNotLearned(f"the tool_calls content parser {content!r} has no learned form")


def _first(value: Any) -> str:
    literal = value[0] if isinstance(value, list) and value else value
    if not isinstance(literal, str) or not literal:
        raise FormatNotLearned("the tool_calls field's open text is empty")
    return literal


def _literal(field: dict[str, Any], literal_key: str, pattern_key: str) -> str:
    if literal_key in field:
        return _first(field[literal_key])
    pattern = field.get(pattern_key)
    if not isinstance(pattern, str):
        raise FormatNotLearned(f"the tool_calls field has no {literal_key!r} or {pattern_key!r}")
    return _unescape(pattern, pattern_key)


def _around(pattern: Any, group: str, where: str) -> tuple[str, str]:
    """The fixed text before the named group of a pattern, and the pattern after the group."""
    if not isinstance(pattern, str):
        raise FormatNotLearned(f"the tool_calls field has no {where}")
    match = next((m for m in _GROUP.finditer(pattern) if m.group(1) == group), None)
    if match is None:
        raise FormatNotLearned(f"{where} {pattern!r} has no (?P<{group}>...) group")
    return _unescape(pattern[: match.start()], where), pattern[match.end() :]


def _unescape(pattern: str, where: str) -> str:
    """The fixed text a regex stands for; FormatNotLearned when it is more than that."""
    text = _WHITESPACE.sub("\n", pattern)
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
            continue
        if char in ".^$*+?{}[]()|":
            raise FormatNotLearned(f"{where} {pattern!r} is more than a fixed text")
        out.append(char)
        index += 1
    return "".join(out)


def _json_keys(transform: Any) -> tuple[str, str]:
    """The keys of the call's name and arguments in its JSON, from the field's transform."""
    if transform is None or transform == "{content}":
        return "name", "arguments"
    function = transform.get("function") if isinstance(transform, dict) else None
    if function == "{content}":
        return "name", "arguments"
    if isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and isinstance(arguments, str):
            keys = [re.fullmatch(r"\{content\.([\w.]+)\}", text) for text in (name, arguments)]
            if keys[0] and keys[1]:
                return keys[0].group(1), keys[1].group(1)
    raise FormatNotLearned("the tool_calls transform does not take the call from its JSON")


def _string_quote(args: dict[str, Any]) -> str:
    delims = args.get("string_delims") or []
    if not delims:
        return ""
    first = delims[0]
    if not (isinstance(first, list) and len(first) == 2 and first[0] == first[1] and isinstance(first[0], str)):
        raise FormatNotLearned("string_delims that open and close with different texts have no learned form")
    return first[0]


def response_template_of(path: str | Path) -> Any | None:
    """The `response_template` of a tokenizer_config.json (given, or in a model folder), or None."""
    path = Path(path)
    config = path / "tokenizer_config.json" if path.is_dir() else path
    if config.suffix != ".json" or not config.is_file():
        return None
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # the template loader reports an unreadable file in its own words
    return data.get("response_template") if isinstance(data, dict) else None
