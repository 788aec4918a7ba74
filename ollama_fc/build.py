"""`ollama-fc build FAMILY`: create an Ollama model from a base and a family's curated template.

The template goes to Ollama's create API as a field (a Modelfile value cannot hold a line ending
in three quotes), with the family marker at its start so a client finds the tool-call format
from `show` alone. The base is an Ollama model (pulled when missing) or a local GGUF (uploaded).

By default the model is created with Ollama's `passthrough` parser: Ollama still renders the
tools into the prompt (the template reads `.Tools`, so the model keeps the `tools` capability)
but returns the model's text untouched, and ollama-fc's client parses calls and thinking. Ollama's
own parser, derived from the template, drops or cuts some outputs it cannot read (docs/USAGE.md, "Who
parses the model's text"). `ollama_parses=True` leaves the parsing to Ollama, for apps that talk
to Ollama directly.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import ollama
from ollama import ProgressResponse
from ollama._types import CreateRequest

from .convert.result import Conversion
from .errors import BuildError, OllamaUnavailableError, SourceError
from .families import FamilyTemplate, family_template, load_family
from .files import TOO_LONG, short_path
from .markers import PASSTHROUGH_PARSER
from .recovery import parser_from_show

#: step, bytes or units done, total (None when the step has no size).
ProgressCallback = Callable[[str, "int | None", "int | None"], None]

DEFAULT_HOST = "http://127.0.0.1:11434"
CHUNK = 1 << 20


@dataclass(frozen=True)
class BuildResult:
    name: str
    base: str
    #: the TEMPLATE and parameters created, with the conversion's warnings
    conversion: Conversion
    #: the family's template and fixes (None: built from a GGUF's own chat template)
    built: FamilyTemplate | None
    seconds: float
    #: the built-in parser the created model has (None: Ollama parses with the template's tag)
    parser: str | None = None
    #: things the user should know about the created model, one line each
    notes: tuple[str, ...] = ()

    @property
    def fixes(self) -> list[str]:
        """The curated fixes applied on top of the faithful conversion (none for a GGUF's own template)."""
        return self.built.fixes if self.built else []


def resolve_host(host: str | None = None) -> str:
    """The server URL: `host`, else OLLAMA_HOST (as `ollama` accepts it), else the default port."""
    given = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
    value = given.strip().rstrip("/")
    if "://" not in value:
        value = "http://" + value
    parts = urlsplit(value)
    hostname = parts.hostname or "127.0.0.1"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 11434)
    except ValueError as exc:  # a port out of range or not a number
        origin = "the host" if host else "OLLAMA_HOST"
        raise OllamaUnavailableError(
            f"{origin} {given!r} is not a valid address ({exc}); give host:port, e.g. 127.0.0.1:11434"
        ) from None
    return f"{parts.scheme}://{hostname}:{port}{parts.path}"


def default_name(family: str) -> str:
    """`<family>-fc`: never the name of the library model a user may have pulled as the base."""
    return f"{family}-fc"


def _noop(step: str, done: int | None, total: int | None) -> None:
    return None


def check_reachable(host: str) -> str:
    """Ollama's version at `host`, or an error saying how to start it."""
    try:
        response = httpx.get(f"{host}/api/version", timeout=5)
        response.raise_for_status()
        return str(response.json().get("version", "unknown"))
    except (httpx.HTTPError, ValueError) as exc:
        raise OllamaUnavailableError(
            f"cannot reach Ollama at {host} ({type(exc).__name__}); start it with `ollama serve`, "
            "or set OLLAMA_HOST to the address it listens on"
        ) from exc


def is_gguf_path(base: str) -> bool:
    """A base names a file when it looks like one; anything else is an Ollama model name."""
    try:
        return base.endswith(".gguf") or base.startswith((".", "/", "~")) or Path(base).is_file()
    except OSError:  # a name too long for the file system: only a path can be that
        return True


def _check_gguf(path: Path) -> None:
    """Refuse a file that is not a readable GGUF before uploading it: Ollama (v0.24.0) has no
    API to delete an uploaded blob, so a broken file would stay on the server."""
    try:
        is_file = path.is_file()
    except OSError as exc:
        reason = TOO_LONG if exc.errno == errno.ENAMETOOLONG else f"cannot open ({exc.strerror})"
        raise SourceError(f"{short_path(path)}: {reason}; give a shorter path to a .gguf file") from None
    if not is_file:
        raise SourceError(f"{path}: no such file; give a .gguf file or the name of an Ollama model")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise SourceError(f"{path}: not a GGUF file (no GGUF header); convert it to GGUF first")
    import gguf  # heavy import, only needed here

    try:
        gguf.GGUFReader(str(path), "r")
    except Exception as exc:  # the reader raises assorted errors on truncated or corrupt files
        raise SourceError(
            f"{path}: cannot read GGUF ({exc}); the file looks truncated or damaged, download it again"
        ) from None


def upload_gguf(host: str, path: Path, progress: ProgressCallback = _noop) -> tuple[str, bool]:
    """Upload a GGUF as a blob (skipped when the server has it); its digest, and whether it
    was uploaded now. The caller checks the file first (`_check_gguf`)."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            done += len(chunk)
            progress(f"hashing {path.name}", done, size)
    name = f"sha256:{digest.hexdigest()}"
    url = f"{host}/api/blobs/{name}"
    if httpx.head(url, timeout=30).status_code == 200:
        progress(f"{path.name} already on the server", size, size)
        return name, False

    def chunks() -> Iterator[bytes]:
        sent = 0
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                sent += len(chunk)
                progress(f"uploading {path.name}", sent, size)
                yield chunk

    response = httpx.post(url, content=chunks(), timeout=None)
    if response.status_code not in (200, 201):
        raise BuildError(f"uploading {path} to Ollama failed: {response.text.strip() or response.status_code}")
    return name, True


def ensure_model(client: ollama.Client, base: str, progress: ProgressCallback = _noop) -> None:
    """Make sure the base model is on the server, pulling it with progress when it is not."""
    try:
        client.show(base)
        return
    except ollama.ResponseError as exc:
        if exc.status_code != 404:
            raise BuildError(f"cannot look up base model {base!r}: {exc.error}") from exc
    try:
        for event in client.pull(base, stream=True):
            progress(_step(event.status, event.digest), event.completed, event.total)
    except ollama.ResponseError as exc:
        raise BuildError(
            f"base model {base!r} is not in Ollama and pulling it failed: {exc.error}; "
            "check the name (`ollama list`) or pass --from a .gguf file"
        ) from exc


def create_model(
    client: ollama.Client, model: str, *, parser: str | None = None, **fields: Any
) -> Iterator[ProgressResponse]:
    """`client.create(model, stream=True, **fields)` plus the request's `parser` field.

    ollama-python's `create` has no `parser` argument, so the request goes through the client's
    own request machinery (host, headers, errors as ollama.ResponseError) with the field added.
    """
    request = CreateRequest(model=model, stream=True, **fields).model_dump(exclude_none=True)
    if parser:
        request["parser"] = parser
    return client._request(ProgressResponse, "POST", "/api/create", json=request, stream=True)


def _step(status: str | None, digest: str | None) -> str:
    status = status or ""
    if digest and digest.split(":")[-1][:12] not in status:
        return f"{status} {digest.split(':')[-1][:12]}"
    return status


def build(
    family: str | None,
    *,
    from_: str | None = None,
    name: str | None = None,
    faithful: bool = False,
    skip_fixes: Collection[str] = (),
    host: str | None = None,
    progress: ProgressCallback = _noop,
    ollama_parses: bool = False,
    tools_format: str | None = None,
) -> BuildResult:
    """Create `name` on the Ollama at `host` from `from_` with the family's curated template, or,
    with no family, with the faithful conversion of the `from_` GGUF's own chat template (its
    tool-call format learned from it, as `ollama-fc convert` writes it).

    The model gets `PARSER passthrough` (ollama-fc's client parses its text) unless
    `ollama_parses`, which leaves the parsing to Ollama. `tools_format` adds a tools section in
    that format to a GGUF's chat template that has none (tools_section.py).
    """
    started = time.monotonic()
    built: FamilyTemplate | None = None
    notes: list[str] = []
    if family is not None and tools_format is not None:
        raise BuildError(f"family {family} has its own tools section; --tools-format is for a template without one")
    if family is not None:
        loaded = load_family(family)
        base = from_ or loaded.recipe.base
        if not base:
            raise BuildError(f"family {family} has no suggested base: {loaded.recipe.no_base}")
        built = family_template(loaded, faithful=faithful, skip=skip_fixes)
        conversion = built.conversion
        default = default_name(family)
        path = Path(base).expanduser() if is_gguf_path(base) else None
        if path is not None:
            _check_gguf(path)
    else:
        if not from_ or not is_gguf_path(from_):
            raise BuildError(
                "give a family (`ollama-fc list`), or --from a model your Ollama has (`ollama list`) or a "
                ".gguf file, to build with its own chat template"
            )
        base = from_
        path = Path(from_).expanduser()
        _check_gguf(path)
        conversion, notes = _own_template(path, tools_format)
        default = gguf_model_name(path)
    host = resolve_host(host)
    check_reachable(host)
    client = ollama.Client(host=host)
    name = name or default

    source: dict[str, object]
    uploaded = False
    if path is not None:
        digest, uploaded = upload_gguf(host, path, progress)
        source = {"files": {path.name: digest}}
    else:
        ensure_model(client, base, progress)
        source = {"from_": base}
    parser = None if ollama_parses else PASSTHROUGH_PARSER
    try:
        for event in create_model(
            client, name, parser=parser, template=conversion.template, parameters=conversion.parameters, **source
        ):
            progress(_step(event.status, event.digest), event.completed, event.total)
        created = parser_from_show(client.show(name))
    except ollama.ResponseError as exc:
        hint = f"; Ollama could not read {path}: if it is truncated or damaged, download it again" if path else ""
        if uploaded:  # Ollama v0.24.0 has POST and HEAD /api/blobs, no DELETE
            hint += " (its uploaded copy stays on the server until Ollama restarts and prunes unused blobs)"
        raise BuildError(f"ollama create {name} failed: {exc.error}{hint}") from exc
    if parser and created != parser:
        notes.append(
            f"the Ollama at {host} did not keep PARSER {parser} (Ollama before v0.12 has no parsers): "
            f"it parses {name}'s tool calls itself, and may drop outputs it cannot read",
        )
    elif created != parser:
        # Ollama copies a base model's PARSER when the create request names none.
        notes.append(
            f"{name} keeps the parser {created!r} of its base {base}: Ollama does not parse its tool calls "
            "with the template's tag; build with ollama-fc's parsing (the default), or from a GGUF file",
        )
    return BuildResult(
        name=name,
        base=base,
        conversion=conversion,
        built=built,
        seconds=time.monotonic() - started,
        parser=created,
        notes=tuple(notes),
    )


def _own_template(path: Path, tools_format: str | None = None) -> tuple[Conversion, list[str]]:
    """The faithful conversion of a GGUF's own chat template with its learned tool-call format,
    and a note when no format could be learned (the client then tries every built-in one) or the
    template has no tools; with `tools_format`, the template with a tools section in that format."""
    from .learn import convert_with_format  # the learner loads the converter: only a GGUF build needs it
    from .tools_section import convert_with_tools_section, tool_capable, tool_less_note

    if tools_format is not None:
        return convert_with_tools_section(path, tools_format), []
    conversion, learned, reason = convert_with_format(path)
    if not tool_capable(conversion.capabilities):
        return conversion, [tool_less_note(path.name)]
    if learned is None and conversion.capabilities.tools:
        return conversion, [f"{reason}; clients try the built-in formats"]
    return conversion, []


def gguf_model_name(path: Path) -> str:
    """`<file stem>-fc` in the characters Ollama allows in a model name."""
    stem = re.sub(r"[^a-z0-9_.-]+", "-", path.name.removesuffix(".gguf").lower()).strip("-._")
    return f"{stem or 'model'}-fc"
