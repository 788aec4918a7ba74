"""The curated seed families: a model's own chat template plus a recipe, built into an Ollama TEMPLATE.

Each family lives in `converters/<family>/`: `template.jinja` (the chat template exactly as the
model publishes it) and `recipe.toml` (special tokens, the client's tool-call format, a suggested
base model, and the fixes applied on top of the faithful conversion).

A fix is one of three kinds, so every one can be switched off on its own:

* a Jinja patch (`find`/`replace`, the find text must occur exactly once), applied to the source
  template *before* conversion: the fixed template is still a Jinja template, and its Hugging Face
  render is what the converted Go template is checked against;
* a tool tag: the marker the model opens a call with, declared so that Ollama's parser derives
  exactly that tag from the template (it takes the first text inside `{{ if .ToolCalls }}`);
* stop strings: the tokens the model ends its turn with;
* no literal BOS: Ollama's runner puts BOS in front of every prompt itself, so a template that
  prints `bos_token` would give the model two.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from .convert import Conversion, TemplateSource, convert
from .errors import OllamaFcError, SourceError
from .files import write_text_atomically
from .markers import PASSTHROUGH_PARSER

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]


class Fix(BaseModel):
    """One curated change on top of the faithful conversion (exactly one kind per fix)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    what: str
    find: str | None = None
    replace: str | None = None
    tool_tag: str | None = None
    stop: list[str] | None = None
    drop_bos: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> Fix:
        kinds = [
            self.find is not None or self.replace is not None,
            self.tool_tag is not None,
            self.stop is not None,
            self.drop_bos,
        ]
        if sum(kinds) != 1:
            raise ValueError(f"fix {self.name!r} must have exactly one of find/replace, tool_tag, stop, drop_bos")
        if (self.find is None) != (self.replace is None):
            raise ValueError(f"fix {self.name!r} needs both find and replace")
        if self.tool_tag is not None and ("{" in self.tool_tag or not self.tool_tag.strip()):
            raise ValueError(f"fix {self.name!r}: a tool tag must be non-empty and contain no '{{'")
        return self


class SpecialTokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bos_token: str | None = None
    eos_token: str | None = None
    #: control tokens of the model's vocabulary the template prints (turn markers and the like).
    control: list[str] = []

    def variables(self) -> dict[str, str]:
        """The `*_token` variables a chat template reads."""
        return {key: value for key, value in (("bos_token", self.bos_token), ("eos_token", self.eos_token)) if value}


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    source: str
    tool_format: str
    #: an Ollama model the family runs on locally; empty when there is none (then `no_base` says why).
    base: str = ""
    no_base: str = ""
    notes: str = ""
    special_tokens: SpecialTokens = SpecialTokens()
    fixes: list[Fix] = []


@dataclass(frozen=True)
class Family:
    name: str
    recipe: Recipe
    #: the source chat template, as the model publishes it.
    template: str
    folder: Path

    @property
    def fix_names(self) -> list[str]:
        return [fix.name for fix in self.recipe.fixes]


@dataclass(frozen=True)
class FamilyTemplate:
    """What a build sends to Ollama, and how it was made."""

    family: Family
    #: the Jinja template after the Jinja patches: the Hugging Face reference for the Go template.
    jinja: str
    #: the conversion with the family marker, tag and stop fixes in its template and parameters.
    conversion: Conversion
    fixes: list[str]

    @property
    def template(self) -> str:
        """The Go TEMPLATE, starting with the family marker."""
        return self.conversion.template

    @property
    def parameters(self) -> dict[str, list[str]]:
        return self.conversion.parameters

    @property
    def tool_tag(self) -> str | None:
        """The tag Ollama's parser derives from `template`."""
        return self.conversion.tool_call_tag

    @property
    def warnings(self) -> list[str]:
        return [str(w) for w in self.conversion.warnings]


class UnknownFamilyError(OllamaFcError):
    """No folder in converters/ has this name."""


def converters_dir() -> Path:
    """The family folders: `ollama_fc/converters` links to the checkout's `converters/`, and a wheel
    carries a copy of it as package data."""
    return (Path(__file__).parent / "converters").resolve()


def family_names() -> list[str]:
    root = converters_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "recipe.toml").is_file())


def load_family(name: str) -> Family:
    folder = converters_dir() / name
    recipe_path = folder / "recipe.toml"
    if not recipe_path.is_file():
        known = ", ".join(family_names()) or "none installed"
        raise UnknownFamilyError(f"unknown family {name!r}; known families: {known}")
    try:
        recipe = Recipe.model_validate(tomllib.loads(recipe_path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise SourceError(f"{recipe_path}: invalid recipe: {exc}") from exc
    template = (folder / "template.jinja").read_text(encoding="utf-8")
    return Family(name=name, recipe=recipe, template=template, folder=folder)


def apply_patches(family: Family, fixes: Collection[str]) -> str:
    """The source template with the named Jinja patches applied, each matching exactly once."""
    template = family.template
    for fix in family.recipe.fixes:
        if fix.name not in fixes or fix.find is None or fix.replace is None:
            continue
        count = template.count(fix.find)
        if count != 1:
            raise SourceError(
                f"family {family.name}: fix {fix.name!r} must match the template exactly once, "
                f"matched {count} times; update its find text in {family.folder / 'recipe.toml'}"
            )
        template = template.replace(fix.find, fix.replace)
    return template


def selected_fixes(family: Family, *, faithful: bool = False, skip: Collection[str] = ()) -> list[str]:
    """The fixes a build applies: all of them, minus `skip`; none when `faithful`."""
    unknown = sorted(set(skip) - set(family.fix_names))
    if unknown:
        raise OllamaFcError(
            f"family {family.name} has no fix {', '.join(unknown)}; its fixes: {', '.join(family.fix_names)}"
        )
    if faithful:
        return []
    return [name for name in family.fix_names if name not in skip]


def family_template(family: Family | str, *, faithful: bool = False, skip: Collection[str] = ()) -> FamilyTemplate:
    """Convert the family's template with its fixes into the Go TEMPLATE and parameters to create."""
    if isinstance(family, str):
        family = load_family(family)
    recipe = family.recipe
    fixes = selected_fixes(family, faithful=faithful, skip=skip)
    jinja = apply_patches(family, fixes)
    tokens = recipe.special_tokens.variables()
    if any(fix.drop_bos for fix in recipe.fixes if fix.name in fixes):
        tokens["bos_token"] = ""
    source = TemplateSource(template=jinja, special_tokens=tokens, origin=str(family.folder / "template.jinja"))
    selected = [fix for fix in recipe.fixes if fix.name in fixes]
    tool_tag = next((fix.tool_tag for fix in selected if fix.tool_tag is not None), None)
    conversion = convert(source, family=family.name, tool_format=recipe.tool_format, tool_tag=tool_tag)
    stops = next((fix.stop for fix in selected if fix.stop is not None), None)
    if stops is not None:
        conversion = conversion.model_copy(update={"parameters": {**conversion.parameters, "stop": list(stops)}})
    return FamilyTemplate(family=family, jinja=jinja, conversion=conversion, fixes=fixes)


def modelfile(built: FamilyTemplate, from_: str | None = None, *, parser: str | None = PASSTHROUGH_PARSER) -> str:
    """A Modelfile equivalent to `ollama-fc build` for users without Python."""
    family, recipe = built.family, built.family.recipe
    base = from_ or recipe.base
    lines = [
        f"# ollama-fc family={family.name} format={recipe.tool_format}",
        f"# {recipe.description}",
        f"# Generated from converters/{family.name}/ by `ollama-fc modelfiles`; do not edit the TEMPLATE by hand.",
        f"# Fixes on top of the faithful conversion: {', '.join(built.fixes) or 'none'} "
        f"(converters/{family.name}/recipe.toml says why).",
    ]
    if parser == PASSTHROUGH_PARSER:
        lines.append(
            "# PARSER passthrough: Ollama returns the model's text as is and ollama_fc.Client parses tool calls "
            "and thinking; delete that line to let Ollama parse calls itself (for apps that talk to Ollama directly)."
        )
    if not base:
        lines.append(f"# {recipe.no_base}: edit FROM to point at it.")
        base = f"./{family.name}.gguf"
    else:
        lines.append("# FROM may be any Ollama model or .gguf file of this family.")
    lines.append(f"# Create it with: ollama create {family.name}-fc -f Modelfile")
    return "\n".join(lines) + "\n" + built.conversion.modelfile(base, parser=parser)


def modelfiles_dir() -> Path:
    return converters_dir().parent / "modelfiles"


def write_modelfiles(folder: Path | None = None, *, check: bool = False) -> list[Path]:
    """Regenerate <folder>/<family>/Modelfile for every family (by default the checkout's
    modelfiles/); return the ones that changed. With `check`, nothing is written: the returned
    paths are the stale ones."""
    root = modelfiles_dir() if folder is None else folder
    changed = []
    for name in family_names():
        path = root / name / "Modelfile"
        text = modelfile(family_template(name))
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        changed.append(path)
        if not check:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OllamaFcError(f"cannot create {path.parent}: {exc.strerror}; name a writable folder") from None
            write_text_atomically(path, text, hint="name a writable folder")
    return changed
