"""A model the user's Ollama already has: its own chat template, weights, parameters and adapters.

`ollama show` gives the model's template, its Modelfile and parameters. The template is the
model's own Jinja where Ollama kept it (a GGUF imported into Ollama 0.3x); a library model or an
import into older Ollama has a Go template instead (hand-written, or `{{ .Prompt }}`), and then
the Jinja is the `tokenizer.chat_template` of the model's GGUF: the Modelfile's FROM line names
that blob, a file on the machine Ollama runs on. Against a remote Ollama the blob is not here,
and the user gives the GGUF instead (`--from model.gguf`).

Nothing here loads the converter: `check` and the client read a model with it.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ollama

from .convert.sources import TemplateSource
from .errors import OllamaFcError, SourceError
from .markers import read_marker

#: A FROM or ADAPTER line of `show`'s Modelfile, and the blob digest in its path.
_LINE = re.compile(r"^(FROM|ADAPTER)[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_BLOB = re.compile(r"sha256[-:]([0-9a-f]{64})$")
_INSTRUCTION = re.compile(r"^(PARSER|RENDERER)[ \t]+(\S+)[ \t]*$", re.MULTILINE)


class ModelNotFound(OllamaFcError):
    """The Ollama asked has no model of that name."""


def is_jinja(template: str | None) -> bool:
    """Whether a template `show` returned is Jinja: Go templates never write `{%` (a Jinja
    statement) or `{#` (a Jinja comment); chat templates write `{%` for their loop over messages."""
    return bool(template) and ("{%" in template or "{#" in template)  # type: ignore[operator]


def _value(text: str) -> Any:
    """A parameter's value as Ollama's create API takes it: a number where it is one."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def read_parameters(text: str | None) -> dict[str, Any]:
    """`show`'s parameters (one `name value` a line, `stop` repeated) as create's mapping."""
    parameters: dict[str, Any] = {}
    for line in (text or "").splitlines():
        name, _, value = line.strip().partition(" ")
        if not name or not value.strip():
            continue
        parsed = _value(value.strip())
        if name == "stop":
            parameters.setdefault("stop", []).append(str(parsed))
        else:
            parameters[name] = parsed
    return parameters


def blob_digest(path: str) -> str | None:
    """`sha256:<hex>` of a blob path Ollama prints (`.../blobs/sha256-<hex>`), else None."""
    match = _BLOB.search(path.strip().strip('"'))
    return f"sha256:{match.group(1)}" if match else None


@dataclass(frozen=True)
class InstalledModel:
    """What `show` says about a model, and its own chat template where one was found."""

    name: str
    show: ollama.ShowResponse
    #: the weights: the path of the FROM blob as Ollama prints it
    weights: str | None
    #: the ADAPTER blobs' paths
    adapters: tuple[str, ...] = ()
    #: the model's own Jinja chat template (None: not found, `missing` says why)
    source: TemplateSource | None = None
    #: where `source` was found, or why it was not
    found_in: str = ""
    instructions: dict[str, str] = field(default_factory=dict)

    @property
    def template(self) -> str:
        """Ollama's template of the model (Go, or the model's Jinja on 0.3x imports)."""
        return self.show.template or ""

    @property
    def parameters(self) -> dict[str, Any]:
        return read_parameters(self.show.parameters)

    @property
    def parser(self) -> str | None:
        """The model's PARSER line (Ollama's built-in parser for its replies), if any."""
        return self.instructions.get("PARSER")

    @property
    def renderer(self) -> str | None:
        """The model's RENDERER line (Ollama renders its prompts in Go code, not the template)."""
        return self.instructions.get("RENDERER")

    @property
    def built_by_ollama_fc(self) -> bool:
        return read_marker(self.template) is not None

    @property
    def weights_digest(self) -> str | None:
        return blob_digest(self.weights) if self.weights else None

    def adapter_digests(self) -> dict[str, str]:
        """The adapters as create's `adapters` field: a file name for each blob digest."""
        found = {}
        for index, path in enumerate(self.adapters):
            digest = blob_digest(path)
            if digest is None:
                raise SourceError(
                    f"adapter {path} of {self.name} is not a blob Ollama names; build from a Modelfile by hand"
                )
            found[f"adapter{index}.gguf"] = digest
        return found


def _modelfile_without_texts(show: ollama.ShowResponse) -> str:
    """`show`'s Modelfile with the template and license cut out, so their lines are not read
    as instructions."""
    modelfile = show.modelfile or ""
    for text in (show.template, show.license):
        if text:
            modelfile = modelfile.replace(text, "")
    return modelfile


def look_up(client: ollama.Client, name: str, host: str) -> ollama.ShowResponse:
    """`show NAME`, or one line saying the model is not there and what to do."""
    try:
        return client.show(name)
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            raise ModelNotFound(
                f"the Ollama at {host} has no model {name!r}; `ollama list` shows its models "
                "(pull this one with `ollama pull`), or give --from a .gguf file"
            ) from None
        raise OllamaFcError(f"Ollama cannot show {name!r}: {exc.error}") from None


def installed_model(client: ollama.Client, name: str, host: str) -> InstalledModel:
    """The model as `show` describes it, with its own chat template where one can be found."""
    return from_show(name, look_up(client, name, host))


def from_show(name: str, show: ollama.ShowResponse) -> InstalledModel:
    """The model `show` describes, with its own chat template where one can be found."""
    modelfile = _modelfile_without_texts(show)
    lines = _LINE.findall(modelfile)
    weights = next((value for kind, value in lines if kind == "FROM"), None)
    adapters = tuple(value for kind, value in lines if kind == "ADAPTER")
    instructions = {kind: value.lower() for kind, value in _INSTRUCTION.findall(modelfile)}
    source, found_in = _own_template(name, show, weights)
    return InstalledModel(
        name=name,
        show=show,
        weights=weights,
        adapters=adapters,
        source=source,
        found_in=found_in,
        instructions=instructions,
    )


def _own_template(name: str, show: ollama.ShowResponse, weights: str | None) -> tuple[TemplateSource | None, str]:
    """The model's Jinja chat template and where it was found, or None and why not."""
    from .convert.sources import load_source

    blob = Path(weights.strip().strip('"')) if weights else None
    gguf_source: TemplateSource | None = None
    why = ""
    if blob is None:
        why = f"`show` names no FROM blob for {name}"
    elif not blob.is_file():
        why = f"its GGUF {blob} is not a file on this machine (is Ollama remote?)"
    else:
        try:
            gguf_source = load_source(blob)
        except SourceError as exc:
            has_none = "no chat template" in str(exc)
            why = "its GGUF has no tokenizer.chat_template" if has_none else "its GGUF cannot be read"
    if is_jinja(show.template):
        tokens = gguf_source.special_tokens if gguf_source else {}
        add_bos = gguf_source.add_bos_token if gguf_source else None
        source = TemplateSource(
            template=show.template or "", special_tokens=tokens, origin=f"{name} (ollama show)", add_bos_token=add_bos
        )
        return source, "Ollama's template, the model's own Jinja"
    if gguf_source is not None:
        return (
            TemplateSource(
                template=gguf_source.template,
                special_tokens=gguf_source.special_tokens,
                origin=f"{name} (its GGUF's tokenizer.chat_template)",
                tool_use=gguf_source.tool_use,
                add_bos_token=gguf_source.add_bos_token,
            ),
            "the tokenizer.chat_template of its GGUF",
        )
    return None, f"Ollama's template is a Go template and {why}"


def no_template_error(model: InstalledModel) -> SourceError:
    """One line: no chat template of the model's own was found, and what to give instead."""
    return SourceError(
        f"no chat template of {model.name}'s own found ({model.found_in}); give --from the model's .gguf "
        "file (one with a chat template), or a family (`ollama-fc list`)"
    )


#: a learned format per model definition (its template and weights): learned once a process
_LEARNED: dict[str, str | None] = {}


def own_format(name: str, show: ollama.ShowResponse) -> str | None:
    """The tool-call format (a format name) learned from the model's own chat template, for a
    model ollama-fc did not build; None when there is no Jinja to learn from or it names no
    format. Learned once per template and weights digest in a process (the proxy and the client
    ask on every model's first request)."""
    key = hashlib.sha256(f"{show.template or ''}\0{_weights_line(show)}".encode()).hexdigest()
    if key not in _LEARNED:
        _LEARNED[key] = _learn(from_show(name, show))
    return _LEARNED[key]


def _weights_line(show: ollama.ShowResponse) -> str:
    found = _LINE.search(_modelfile_without_texts(show))
    return found.group(2) if found else ""


def _learn(model: InstalledModel) -> str | None:
    if model.source is None:
        return None
    from .learn import learn_format  # the learner loads the Hugging Face renderer: only here

    try:
        return learn_format(model.source).format_name()
    except OllamaFcError:  # FormatNotLearned, or a template the renderer refuses
        return None
    except Exception as exc:  # learning is a refinement: a chat must not fail for it
        warnings.warn(
            f"learning {model.name}'s tool-call format from its chat template failed "
            f"({type(exc).__name__}: {exc}); trying the format its Ollama template names",
            stacklevel=2,
        )
        return None
