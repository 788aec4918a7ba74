"""`convert()`: a Jinja chat template in, an Ollama TEMPLATE with its parameters out."""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jinja2 import nodes

from ..errors import ConversionError, SourceError
from ..hf.bounded import bounded_renders
from ..hf.leading_bos import bos_only_leads
from ..hf.reference import ReferenceRenderError, render
from ..hf.shapes import Shape, probe
from ..jinja_index import TreeIndex
from ..markers import KNOWN_MARKERS, family_marker, tag_of_text
from .go import ir
from .limits import DEFAULT_MAX_OUTPUT, DEFAULT_MAX_SECONDS, Limits
from .named import choose_on_tools
from .result import Capabilities, Conversion, ConversionWarning
from .sources import TemplateSource, load_source
from .translate import Translator
from .translate.core import Translation

PROBE_NAME = "ofc_probe_function"


def _template_source(source: str | os.PathLike[str] | TemplateSource | None, template: str | None) -> TemplateSource:
    """The one template `convert()` was given: a path, a TemplateSource, or `template=` text."""
    if (source is None) == (template is None):
        raise TypeError("convert() takes a path or TemplateSource, or template= text: exactly one of them")
    if template is not None:
        return TemplateSource(template)
    if isinstance(source, TemplateSource):
        return source
    return load_source(source)  # type: ignore[arg-type]


def _probe(template: str, tokens: dict[str, str], messages: list[dict[str, Any]], tools: Any = None) -> str | None:
    """The Hugging Face render of a closed conversation, or None when the template refuses it."""
    try:
        return render(template, messages, tools, add_generation_prompt=False, special_tokens=tokens)
    except ReferenceRenderError:
        return None


def _translate(translator: Translator) -> Translation:
    try:
        return translator.translate(compact=True)
    except RecursionError as exc:
        raise ConversionError("the chat template nests too deeply to translate") from exc


def _first_line_naming(tree: nodes.Template, name: str) -> int | None:
    lines = [n.lineno for n in tree.find_all(nodes.Name) if n.name == name]
    return min(lines) if lines else None


def _capabilities(index: TreeIndex, template: str, shape: Shape) -> Capabilities:
    """What the template renders, read off probe renders (thinking, which no probe covers, off its text)."""
    names = {n.name for n in index.all(nodes.Name)}
    attrs = {n.attr for n in index.all(nodes.Getattr)} | {
        n.arg.value for n in index.all(nodes.Getitem) if isinstance(n.arg, nodes.Const)
    }
    return Capabilities(
        system_role=shape.system_role,
        tools=shape.tools,
        tool_calls=shape.tool_calls,
        parallel_calls=shape.parallel_calls,
        tool_results=shape.tool_results,
        thinking=bool({"reasoning_content", "thinking", "enable_thinking"} & (attrs | names)) or "<think>" in template,
    )


def _tool_marker(source: TemplateSource) -> str | None:
    """The literal text a model prints before a call, read off the template's own rendering."""
    base = [{"role": "user", "content": "Q"}]
    call = {"type": "function", "function": {"name": PROBE_NAME, "arguments": {"x": 1}}}
    with_call = _probe(
        source.template, source.special_tokens, base + [{"role": "assistant", "content": "", "tool_calls": [call]}]
    )
    without = _probe(source.template, source.special_tokens, base + [{"role": "assistant", "content": ""}])
    if with_call and without is not None and PROBE_NAME in with_call:
        start = 0
        while start < min(len(with_call), len(without)) and with_call[start] == without[start]:
            start += 1
        while start > 0 and not with_call[start - 1].isspace():
            start -= 1  # back to the start of the token the two renders share a prefix of
        rendered = with_call[start : with_call.index(PROBE_NAME)]
        for marker in KNOWN_MARKERS:
            if marker in rendered:
                return marker
        head = rendered.split("{")[0].strip()
        if head and len(head) <= 24 and not head.startswith('"'):
            return head
    for marker in KNOWN_MARKERS:
        if marker in source.template:
            return marker
    return None


def _stop_tokens(source: TemplateSource) -> list[str]:
    """eos and the end-of-turn token the template writes right after an assistant's text."""
    stops: list[str] = []
    needle = "OFCANSWER"
    rendered = _probe(
        source.template,
        source.special_tokens,
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": needle}],
    )
    if not rendered or needle not in rendered:  # templates that read content as a list of parts
        parts = [{"type": "text", "text": text} for text in ("Q", needle)]
        rendered = _probe(
            source.template,
            source.special_tokens,
            [{"role": "user", "content": [parts[0]]}, {"role": "assistant", "content": [parts[1]]}],
        )
    if rendered and needle in rendered:
        after = rendered[rendered.index(needle) + len(needle) :].lstrip(" ")
        match = re.match(r"(<\|[^|>]{1,40}\|>|<[a-z_/]{1,30}>|</s>|\[/?[A-Z_]{2,20}\]|<[^<>\s]{1,40}>)", after)
        if match:
            stops.append(match.group(1))
    eos = source.special_tokens.get("eos_token")
    if eos and eos not in stops:
        stops.append(eos)
    return stops


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a conversion runs.

    A conversion makes hundreds of thousands of small objects (the Jinja tree, Go IR nodes and
    their tuples) that live until it ends; the collector, triggered every few hundred new
    objects, walked them again and again and freed almost nothing: a quarter of converting the
    corpus. Turned back on, it runs as usual from the next object made: the cycles a conversion
    leaves (the translator's own, a compiled reference template's) are young and freed then. A
    caller that turned the collector off keeps it off; a conversion inside another (a template's
    tool-use variant) leaves it to the outer one."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@_collector_paused()
def convert(
    source: str | os.PathLike[str] | TemplateSource | None = None,
    *,
    template: str | None = None,
    special_tokens: dict[str, str] | None = None,
    family: str | None = None,
    tool_format: str | None = None,
    tool_tag: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> Conversion:
    """Translate a Jinja chat template into an Ollama Go TEMPLATE (see translate/).

    The template is `source`, a path (a str is always a path: a .jinja, tokenizer_config.json,
    model folder or .gguf) or a loaded TemplateSource, or else the text given as `template=`.
    `family`/`tool_format` put the family marker at the start; `tool_tag` makes Ollama's
    tool-call tag that text instead of the marker read off the template's own renders.
    `max_output` (characters of Go template) and `max_seconds` bound what converting an
    untrusted template may cost (see limits.py).
    """
    started = time.monotonic()
    loaded = _template_source(source, template)
    if not loaded.template.strip():
        raise SourceError(
            f"{loaded.origin}: the chat template is empty; give the model's chat template "
            "(chat_template.jinja, or tokenizer_config.json with a `chat_template`)"
        )
    if loaded.tool_use is not None:
        options: dict[str, Any] = dict(
            family=family, tool_format=tool_format, tool_tag=tool_tag, max_output=max_output, max_seconds=max_seconds
        )
        with_tools = dataclasses.replace(loaded, template=loaded.tool_use, tool_use=None)
        plain = dataclasses.replace(loaded, tool_use=None)
        return choose_on_tools(
            convert(plain, special_tokens=special_tokens, **options),
            convert(with_tools, special_tokens=special_tokens, **options),
        )
    tokens = {**loaded.special_tokens, **(special_tokens or {})}
    loaded = dataclasses.replace(loaded, special_tokens=tokens)
    limits = Limits(max_output=max_output, max_seconds=max_seconds)
    # Ollama's runner adds BOS unless the model says otherwise: a literal leading one is dropped
    translator = Translator(loaded.template, tokens, limits, runner_adds_bos=loaded.add_bos_token is not False)
    translated = _translate(translator)
    with bounded_renders(loaded.template, started, max_seconds):
        shape = probe(loaded.template, tokens, translator.role_names)
        translator, translated = _bos_left_to_runner(loaded, limits, shape, translator, translated)
        capabilities = _capabilities(translator.index, loaded.template, shape)
        # a template naming `tools` gets Ollama's tool round trip even where no probe renders it, so
        # that Ollama >= 0.30 keeps this Go template rather than preferring a GGUF's Jinja one
        names_tools = any(n.name == "tools" for n in translator.index.all(nodes.Name))
        tool_aware = capabilities.tools or names_tools or capabilities.tool_calls
        marker = None
        if tool_aware:
            marker = (tool_tag if tool_tag is not None else _tool_marker(loaded)) or ""
        header = _header(family, tool_format, marker, lists_tools=capabilities.tools or names_tools)
        template = header + translated.text
        # in source order: a macro expanded at several call sites warns in the order it was expanded
        warnings = sorted(translated.warnings, key=lambda w: w.line or 0)
        stops = _stop_tokens(loaded)
    conversion = Conversion(
        template=template,
        parameters={"stop": stops} if stops else {},
        warnings=warnings,
        capabilities=capabilities,
        tool_call_tag=None if marker is None else tag_of_text(marker),  # (the header's is the first)
        special_tokens=tokens,
    )
    conversion._defines, conversion._without_defines = translated.defines, header + translated.body
    return conversion


def _bos_left_to_runner(
    loaded: TemplateSource, limits: Limits, shape: Shape, translator: Translator, translated: Translation
) -> tuple[Translator, Translation]:
    """A BOS every probe render prints first, and only there, in a way the translator cannot
    see (in a loop, in a value): translated again as "", with a warning, since Ollama's runner
    adds BOS itself; else the translation as it is."""
    tokens = loaded.special_tokens
    bos = translated.leading_bos
    if not (bos and bos in translated.text and bos_only_leads(loaded.template, tokens, shape)):
        return translator, translated
    translator = Translator(loaded.template, {**tokens, "bos_token": ""}, limits)
    translated = _translate(translator)
    translated.warnings.append(
        ConversionWarning(
            construct=f"bos_token ({bos})",
            line=_first_line_naming(translator.tree, "bos_token"),
            effect="printed as nothing: every probe render prints it first and only there, "
            "and Ollama's runner adds BOS itself (the model's add_bos_token), the model sees one",
        )
    )
    return translator, translated


def _header(family: str | None, tool_format: str | None, marker: str | None, lists_tools: bool) -> str:
    """What Ollama reads off a template before rendering it, written as blocks that never
    render: the family marker, `.Messages` (so it renders the whole conversation at once), and
    for a tool-aware template (`marker` not None) its tool-call tag, a tool-result branch and,
    where the template does not list the tools itself, `.Tools`."""
    header = family_marker(family, tool_format or "auto") if family else ""  # (a comment: text as Ollama keeps it)
    # Ollama renders per turn (dropping tool messages) unless the template names `.Messages`
    header += _never_rendered(ir.Field(("Messages",)))
    if marker is not None:
        # Ollama reads its tool-call tag from the first `if` on a `.ToolCalls` field and wants a
        # tool-result branch; this block never renders but makes both explicit.
        tool_result = ir.call("eq", ir.Field(("Role",)), ir.String.of("tool"))
        header += _never_rendered(ir.Field(("ToolCalls",)), tool_result, text=marker)
        if not lists_tools:
            # it writes calls but not the tool list (DeepSeek V3/R1: tools go in a system
            # message): naming `.Tools` lets Ollama accept a request with tools at all
            header += _never_rendered(ir.Field(("Tools",)))
    return header


def _never_rendered(*named: ir.Operand, text: str = "") -> str:
    """`{{- if and false NAMED...}}TEXT{{- end}}`: a block Ollama reads (the fields it names, the
    text inside) that never renders."""
    trim = ir.Trim(left=True)
    opening = ir.Open("if", ir.pipe_of(ir.command("and", ir.Bool(False), *named)), trim=trim)
    return ir.render(opening, compact=True) + text + ir.render(ir.End(trim=trim), compact=True)
