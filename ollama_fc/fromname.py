"""`ollama-fc build --from NAME`: a model the user's Ollama already has, made to call tools.

The model's own chat template (`installed`) is converted, or Ollama's template is kept where it
renders exactly what the Jinja renders (checked case by case with the template oracle); the
tool-call format is learned from the Jinja and recorded in the TEMPLATE's first comment. The new
model is created FROM the same weights blob (so no RENDERER or PARSER of the old model comes
along), with `PARSER passthrough`, and with the old model's parameters (stop tokens, context,
sampling), SYSTEM message, license and adapters.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import ollama

from .build import BuildResult, ProgressCallback, _noop, _step, check_reachable, create_model, resolve_host
from .convert.result import Conversion
from .errors import BuildError, OllamaFcError
from .installed import InstalledModel, blob_digest, installed_model, is_jinja, no_template_error
from .markers import MARKER_PATTERN, PASSTHROUGH_PARSER
from .recovery import parser_from_show
from .tools_section import TOOLS_FORMATS


@dataclass(frozen=True)
class TemplateChoice:
    """The TEMPLATE created, and which one it is and why, in one line."""

    template: str
    kept: bool
    why: str

    def line(self) -> str:
        return f"{'kept Ollama' if self.kept else 'converted the model'}'s template: {self.why}"


def fc_name(name: str) -> str:
    """`NAME-fc`, the tag kept after it (`qwen2.5-coder:0.5b` -> `qwen2.5-coder-fc:0.5b`)."""
    base, colon, tag = name.rpartition(":")
    if not colon or "/" in tag:
        base, tag = name, ""
    return f"{base}-fc" + (f":{tag}" if tag and tag != "latest" else "")


def build_installed(
    from_: str,
    *,
    name: str | None = None,
    host: str | None = None,
    progress: ProgressCallback = _noop,
    ollama_parses: bool = False,
    tools_format: str | None = None,
) -> tuple[BuildResult, TemplateChoice]:
    """Create `name` (default `fc_name(from_)`) from the Ollama model `from_` with its own chat
    template; with `tools_format`, its own chat template with a tools section in that format
    added (for a template without tools; see `tools_section`). Raises an OllamaFcError with one
    line when it cannot, and then creates nothing."""
    started = time.monotonic()
    host = resolve_host(host)
    version = check_reachable(host)
    client = ollama.Client(host=host)
    model = installed_model(client, from_, host)
    if model.source is None:
        raise no_template_error(model)
    weights = _weights(model)
    if tools_format is not None:
        from .tools_section import convert_with_tools_section

        conversion = convert_with_tools_section(model.source, tools_format)  # refuses a template with tools
        why = f"a {tools_format} tools section is added to it (Ollama's template has no tools to keep)"
        choice = TemplateChoice(conversion.template, kept=False, why=why)
        notes: list[str] = []
    else:
        from .learn import convert_with_format  # the converter and learner: only a build needs them

        conversion, learned, reason = convert_with_format(model.source)
        if not conversion.capabilities.tools:
            raise BuildError(
                f"{from_}'s chat template has no tools (it never renders the tools offered); give "
                f"--tools-format hermes (or {', '.join(f for f in TOOLS_FORMATS if f != 'hermes')}) to add a tools "
                "section in that format"
            )
        notes = [f"{reason}; clients try the built-in formats"] if learned is None else []
        choice = choose_template(model, conversion, version, progress)
    parameters = _parameters(model.parameters, conversion.parameters)
    name = name or fc_name(from_)
    parser = None if ollama_parses else PASSTHROUGH_PARSER
    fields: dict[str, Any] = {"files": weights, "template": choice.template, "parameters": parameters}
    if model.adapters:
        fields["adapters"] = model.adapter_digests()
    if model.show.license:
        fields["license"] = model.show.license
    system = _system(host, from_)
    if system:
        fields["system"] = system
    try:
        for event in create_model(client, name, parser=parser, **fields):
            progress(_step(event.status, event.digest), event.completed, event.total)
        created = parser_from_show(client.show(name))
    except ollama.ResponseError as exc:
        raise BuildError(f"ollama create {name} failed: {exc.error}") from exc
    if parser and created != parser:
        notes.append(
            f"the Ollama at {host} did not keep PARSER {parser} (Ollama before v0.12 has no parsers): "
            f"it parses {name}'s tool calls itself, and may drop outputs it cannot read"
        )
    result = BuildResult(
        name=name,
        base=from_,
        conversion=conversion.model_copy(update={"template": choice.template, "parameters": parameters}),
        built=None,
        seconds=time.monotonic() - started,
        parser=created,
        notes=tuple(notes),
    )
    return result, choice


def _system(host: str, name: str) -> str | None:
    """The model's SYSTEM message: `show` returns it, but ollama-python's ShowResponse drops it."""
    try:
        response = httpx.post(f"{host}/api/show", json={"model": name}, timeout=30)
        response.raise_for_status()
        system = response.json().get("system")
    except (httpx.HTTPError, ValueError) as exc:
        raise BuildError(f"cannot read the SYSTEM message of {name} from Ollama ({type(exc).__name__})") from None
    return system if isinstance(system, str) and system else None


def _weights(model: InstalledModel) -> dict[str, str]:
    """create's `files`: the model's FROM blobs by digest (they are on the server already)."""
    froms = [value for value in [model.weights] if value]
    digests = [blob_digest(value) for value in froms]
    if not digests or None in digests:
        raise BuildError(
            f"{model.name}'s weights are not a blob Ollama names (FROM {model.weights}); give --from the .gguf file"
        )
    return {"model.gguf": str(digests[0])}


def _parameters(own: dict[str, Any], converted: dict[str, list[str]]) -> dict[str, Any]:
    """The model's parameters with the converted template's stop tokens added to its own."""
    merged: dict[str, Any] = {**converted, **own}
    stops = [*own.get("stop", []), *converted.get("stop", [])]
    if stops:
        merged["stop"] = list(dict.fromkeys(stops))
    return merged


def choose_template(
    model: InstalledModel, conversion: Conversion, version: str, progress: ProgressCallback = _noop
) -> TemplateChoice:
    """Ollama's template where it renders every case exactly as the model's Jinja does, else
    the conversion; the choice and the reason in one line."""
    converted = conversion.template

    def convert(why: str) -> TemplateChoice:
        return TemplateChoice(converted, kept=False, why=why)

    ollama_template = model.template
    if model.built_by_ollama_fc:
        return convert(f"{model.name} was built by ollama-fc; its template is converted afresh")
    if model.renderer:
        return convert(
            f"Ollama renders {model.name}'s prompts with its built-in renderer {model.renderer}, not a template"
        )
    if is_jinja(ollama_template):
        return convert("Ollama's template is the model's Jinja itself, which a Go TEMPLATE cannot be")
    if ".Messages" not in ollama_template:
        return convert("Ollama's template renders no conversation (no .Messages), so no tools and no calls")
    assert model.source is not None
    progress("comparing Ollama's template with the model's Jinja, case by case", None, None)
    from . import oracle
    from .verify.runner import compare, open_oracles

    wanted = oracle.PINNED if _minor(version) < 30 else oracle.LATEST
    try:
        with open_oracles([wanted]) as engines:
            _, cases = compare(model.source, ollama_template, engines)
    except OllamaFcError as exc:
        return convert(f"Ollama's template could not be compared with the Jinja ({exc})")
    rendered = [case for case in cases if case.status != "cannot-render"]
    differing = [case.name for case in rendered if case.status != "exact"]
    if differing:
        shown = ", ".join(differing[:3]) + (", ..." if len(differing) > 3 else "")
        return convert(
            f"Ollama's template renders {len(differing)} of {len(rendered)} conversations "
            f"differently from the model's Jinja ({shown})"
        )
    marker = MARKER_PATTERN.match(converted)  # the learned format, recorded for the client
    kept = (marker.group(0) if marker else "") + ollama_template
    return TemplateChoice(
        kept, kept=True, why=f"it renders all {len(rendered)} conversations exactly as the model's Jinja"
    )


def _minor(version: str) -> int:
    """The minor number of an Ollama version (`0.24.0` -> 24); 0 when it is not a number."""
    parts = version.lstrip("v").split(".")
    try:
        return int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return 0
