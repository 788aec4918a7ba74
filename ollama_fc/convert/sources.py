"""Find a model's Jinja chat template and its special token strings, wherever they are published.

A template alone is not enough to render it: `{{ bos_token }}` and friends come from the tokenizer
data next to it. Every loader returns both, plus a short description of where they came from.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SourceError
from ..files import TOO_LONG, short_path

GGUF_MAGIC = b"GGUF"

#: tokenizer_config.json keys whose values are special token strings a template may reference.
TOKEN_KEYS = ("bos_token", "eos_token", "pad_token", "unk_token", "sep_token", "cls_token", "mask_token")


@dataclass(frozen=True)
class TemplateSource:
    """A Jinja chat template with the special token strings its `*_token` variables stand for."""

    template: str
    special_tokens: dict[str, str] = field(default_factory=dict)
    origin: str = "<string>"
    #: the `tool_use` template of a tokenizer_config.json listing named templates: transformers
    #: renders with it instead of `template` whenever tools are given
    tool_use: str | None = None
    #: whether the model's tokenizer adds BOS itself (tokenizer_config.json or GGUF
    #: `add_bos_token`); None when the source does not say, where Ollama's runner adds it
    add_bos_token: bool | None = None

    def chosen(self, tools: bool) -> str:
        """The template transformers renders a conversation with, given tools or not."""
        return self.tool_use if tools and self.tool_use is not None else self.template


def load_source(path: str | os.PathLike[str]) -> TemplateSource:
    """Load the chat template from a .jinja file, tokenizer_config.json, HF model folder or .gguf."""
    path = Path(path)
    try:
        path.stat()
    except FileNotFoundError:
        pass
    except OSError as exc:  # a name over 255 bytes, a path through a file...
        if exc.errno == errno.ENAMETOOLONG:
            raise SourceError(f"{short_path(path)}: {TOO_LONG}; give a shorter path") from None
        raise SourceError(f"{short_path(path)}: cannot open ({exc.strerror}); check the path") from None
    if not path.exists():
        raise SourceError(
            f"{path}: no such file or folder; give a .jinja, tokenizer_config.json, model folder or .gguf"
        )
    if path.is_dir():
        return _from_folder(path)
    # sniffing a pipe (`/dev/stdin`) would eat the bytes the template is read from
    if path.suffix == ".gguf" or (path.is_file() and _has_gguf_magic(path)):
        return _from_gguf(path)
    if path.suffix == ".json":
        data = _read_json(path)
        if path.name == "chat_template.json":
            return _from_config(
                data, path, tokens=_folder_tokens(path.parent), add_bos_token=_folder_add_bos(path.parent)
            )
        return _from_config(data, path, tokens=_tokens_from_config(data))
    return TemplateSource(
        template=_read_text(path),
        special_tokens=_folder_tokens(path.parent),
        origin=str(path),
        add_bos_token=_folder_add_bos(path.parent),
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text ({exc.reason}); is this really a chat template?") from exc
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from exc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: broken JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def _token_string(value: Any) -> str | None:
    """A special token is a string or an AddedToken dict `{"content": ...}`."""
    if isinstance(value, str):
        return value
    content = value.get("content") if isinstance(value, Mapping) else None
    return content if isinstance(content, str) else None


def _tokens_from_config(data: Any) -> dict[str, str]:
    if not isinstance(data, Mapping):
        return {}
    tokens: dict[str, str] = {}
    for key in TOKEN_KEYS:
        token = _token_string(data.get(key))
        if token is not None:
            tokens[key] = token
    return tokens


def _pick_template(value: Any, path: Path) -> tuple[str, str | None]:
    """`chat_template` is a string, or a list of `{"name", "template"}`: "default" (else the
    first) for conversations without tools, and the "tool_use" one, if any, for those with."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, list):
        named: dict[Any, str] = {
            entry.get("name"): entry["template"]
            for entry in value
            if isinstance(entry, Mapping) and isinstance(entry.get("template"), str)
        }
        tool_use = named.get("tool_use")
        if "default" in named:
            return named["default"], tool_use if tool_use != named["default"] else None
        if named:
            return next(iter(named.values())), None
    raise SourceError(
        f"{path}: no chat template found (no usable `chat_template` entry); give the model's chat_template.jinja, or a tokenizer_config.json that has one"
    )


def _from_config(data: Any, path: Path, tokens: dict[str, str], add_bos_token: bool | None = None) -> TemplateSource:
    if not isinstance(data, Mapping) or "chat_template" not in data:
        raise SourceError(
            f"{path}: no chat template found (no `chat_template` key); give the model's chat_template.jinja, or a tokenizer_config.json that has one"
        )
    template, tool_use = _pick_template(data["chat_template"], path)
    add_bos = data.get("add_bos_token")
    return TemplateSource(
        template=template,
        special_tokens=tokens,
        origin=str(path),
        tool_use=tool_use,
        add_bos_token=add_bos if isinstance(add_bos, bool) else add_bos_token,
    )


def _folder_tokens(folder: Path) -> dict[str, str]:
    """Special tokens of a HF folder: special_tokens_map.json, overridden by tokenizer_config.json."""
    tokens: dict[str, str] = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        candidate = folder / name
        if candidate.is_file():
            tokens.update(_tokens_from_config(_read_json(candidate)))
    return tokens


def _folder_add_bos(folder: Path) -> bool | None:
    """`add_bos_token` of the folder's tokenizer_config.json, None when it does not say."""
    config = folder / "tokenizer_config.json"
    data = _read_json(config) if config.is_file() else None
    value = data.get("add_bos_token") if isinstance(data, Mapping) else None
    return value if isinstance(value, bool) else None


def _from_folder(folder: Path) -> TemplateSource:
    tokens = _folder_tokens(folder)
    add_bos = _folder_add_bos(folder)
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return TemplateSource(
            template=_read_text(jinja), special_tokens=tokens, origin=str(jinja), add_bos_token=add_bos
        )
    for name in ("chat_template.json", "tokenizer_config.json"):
        candidate = folder / name
        if candidate.is_file():
            data = _read_json(candidate)
            if isinstance(data, Mapping) and "chat_template" in data:
                return _from_config(data, candidate, tokens, add_bos)
    raise SourceError(
        f"{folder}: no chat template found (looked for chat_template.jinja, chat_template.json, "
        "and `chat_template` in tokenizer_config.json)"
    )


def _has_gguf_magic(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from exc


def _from_gguf(path: Path) -> TemplateSource:
    if not _has_gguf_magic(path):
        raise SourceError(f"{path}: not a GGUF file (bad magic); give a .gguf model file")
    import gguf  # heavy import, only needed here

    try:
        reader = gguf.GGUFReader(str(path), "r")
    except Exception as exc:  # the reader raises assorted errors on truncated or corrupt files
        raise SourceError(
            f"{path}: cannot read GGUF ({exc}); the file looks truncated or damaged, download it again"
        ) from exc

    def field_value(key: str) -> Any:
        found = reader.get_field(key)
        return None if found is None else found.contents()

    template = field_value(gguf.Keys.Tokenizer.CHAT_TEMPLATE)
    if not isinstance(template, str) or not template:
        raise SourceError(
            f"{path}: no chat template found (GGUF has no `tokenizer.chat_template`); convert the model's chat_template.jinja or tokenizer_config.json instead"
        )
    vocabulary = field_value(gguf.Keys.Tokenizer.LIST) or []
    tokens: dict[str, str] = {}
    for name, key in (
        ("bos_token", gguf.Keys.Tokenizer.BOS_ID),
        ("eos_token", gguf.Keys.Tokenizer.EOS_ID),
        ("pad_token", gguf.Keys.Tokenizer.PAD_ID),
        ("unk_token", gguf.Keys.Tokenizer.UNK_ID),
    ):
        token_id = field_value(key)
        if isinstance(token_id, int) and 0 <= token_id < len(vocabulary):
            tokens[name] = str(vocabulary[token_id])
    add_bos = field_value(gguf.Keys.Tokenizer.ADD_BOS)
    return TemplateSource(
        template=template,
        special_tokens=tokens,
        origin=str(path),
        add_bos_token=add_bos if isinstance(add_bos, bool) else None,
    )
