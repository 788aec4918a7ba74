"""`ollama-fc check NAME`: whether a model's tool calls work in Ollama as it is, and what fixes it.

The model is asked a few small questions with two tools offered, through plain Ollama (temperature
0, a fixed seed): two that a tool answers and one that no tool fits. Each reply is read as plain
Ollama returned it (a parsed call, the call left in the text, an empty or cut reply, a refusal, an
error) and as ollama-fc recovers it from the same reply (what `ollama_fc.Client` and
`ollama-fc serve` return). Tool calls work as they are when every question gets the right answer
on the way the model is meant to be used: plain Ollama, or for a model with `PARSER passthrough`
(what `ollama-fc build` makes) ollama-fc's client.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ollama
from ollama import ChatResponse

from .build import check_reachable, resolve_host
from .errors import OllamaUnavailableError
from .installed import InstalledModel, installed_model, is_jinja
from .markers import parse_tag, read_marker
from .parsers.base import ParsedCall
from .parsers.learned_format import LEARNED_PREFIX, LearnedFormat
from .parsers.registry import parsers_for
from .parsers.streaming import recover_text
from .recovery import DroppedOutputWarning, ModelProfile, offer, recover_response
from .tools_section import TOOLS_FORMATS

#: Deterministic replies, long enough for a call or a haiku.
OPTIONS: dict[str, Any] = {"temperature": 0, "seed": 7, "num_predict": 160}


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city's name"}},
                "required": ["city"],
            },
        },
    }


TOOLS = [
    _tool("get_weather", "Get the current weather in a city."),
    _tool("get_time", "Get the current local time in a city."),
]


@dataclass(frozen=True)
class Question:
    label: str
    text: str
    #: the tool and city a right answer calls (None: no tool fits, a right answer is text)
    tool: str | None = None
    city: str | None = None


QUESTIONS = (
    Question("weather in Paris", "What's the weather like in Paris right now?", "get_weather", "Paris"),
    Question("time in Tokyo", "What time is it in Tokyo right now?", "get_time", "Tokyo"),
    Question("a haiku (no tool fits)", "Write a haiku about the sea."),
)


@dataclass(frozen=True)
class Outcome:
    """One reply, read as a user gets it."""

    #: call, call as text, text, empty, cut, refused, error
    kind: str
    detail: str
    calls: tuple[ParsedCall, ...] = ()

    def right_for(self, question: Question) -> bool:
        if question.tool is None:
            return self.kind == "text"
        return (
            self.kind == "call"
            and len(self.calls) == 1
            and self.calls[0].name == question.tool
            and str(self.calls[0].arguments.get("city", "")).split(",")[0].strip() == question.city
        )

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


@dataclass(frozen=True)
class Answer:
    question: Question
    plain: Outcome
    recovered: Outcome
    #: the format whose parser reads the call text of the raw reply (None: no call text)
    written: str | None = None


@dataclass
class Diagnosis:
    model: InstalledModel
    version: str
    host: str
    profile: ModelProfile
    #: whether the model's own Jinja renders the tools offered (None: no Jinja found)
    own_tools: bool | None
    answers: list[Answer] = field(default_factory=list)

    @property
    def via_ollama_fc(self) -> bool:
        """The model is meant to be read by ollama-fc (Ollama returns its text untouched)."""
        return self.profile.passthrough

    @property
    def works(self) -> bool:
        """Every question answered right the way the model is meant to be used."""
        return bool(self.answers) and all(
            (a.recovered if self.via_ollama_fc else a.plain).right_for(a.question) for a in self.answers
        )

    def written(self) -> str | None:
        return next((a.written for a in self.answers if a.written), None)

    def fix(self) -> str | None:
        """The command that fixes the model (None: nothing to fix, or nothing ollama-fc can fix)."""
        if self.works:
            return None
        if self.via_ollama_fc and self.model.built_by_ollama_fc:
            return None  # built by ollama-fc already: what is wrong is the model's own answers
        if self.own_tools is False:
            others = ", ".join(f for f in TOOLS_FORMATS if f != "hermes")
            return f"ollama-fc build --from {self.model.name} --tools-format hermes  # or another format: {others}"
        if self.own_tools is None:
            return "ollama-fc build --from MODEL.gguf (the model's GGUF file, with its chat template)"
        return f"ollama-fc build --from {self.model.name}"


def _short(text: str, width: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _calls_text(calls: Sequence[ParsedCall]) -> str:
    return ", ".join(f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})" for call in calls)


def _ollama_calls(response: ChatResponse) -> tuple[ParsedCall, ...]:
    return tuple(
        ParsedCall(call.function.name, dict(call.function.arguments)) for call in response.message.tool_calls or []
    )


def read_reply(response: ChatResponse) -> Outcome:
    """What a reply is to a user: a parsed call, a call left in the text, text, empty, cut."""
    calls = _ollama_calls(response)
    if calls:
        return Outcome("call", _calls_text(calls), calls)
    content = response.message.content or ""
    if not content.strip():
        dropped = response.eval_count or 0
        return Outcome("empty", f"no text and no call ({dropped} tokens generated)" if dropped > 1 else "no text")
    left = recover_text(content, parsers_for(None), TOOLS).tool_calls
    if left:
        return Outcome("call as text", _short(content))
    if response.done_reason == "length":
        return Outcome("cut", f"at {OPTIONS['num_predict']} tokens: {_short(content, 32)}")
    return Outcome("text", _short(content))


def written_format(content: str, format_name: str | None) -> str | None:
    """The format whose parser alone reads a call in `content` (the declared one tried first)."""
    for parser in parsers_for(format_name):
        if recover_text(content, [parser], TOOLS).tool_calls:
            return parser.name
    return None


def describe_format(name: str | None) -> str:
    """A format name a person can read: a learned format's summary in place of its token."""
    if name is None:
        return "none (every built-in format is tried)"
    if name.startswith(LEARNED_PREFIX):
        try:
            return f"learned from the template: {LearnedFormat.from_token(name[len(LEARNED_PREFIX) :]).summary()}"
        except Exception:  # a damaged token: say so rather than fail the report
            return "a learned format that cannot be read"
    return name


Progress = Callable[[str], None]


def _quiet(line: str) -> None:
    return None


def ask(client: ollama.Client, model: str, question: Question) -> ChatResponse | Outcome:
    """Plain Ollama's reply, or the outcome of a request Ollama refused or failed."""
    try:
        return client.chat(model, [{"role": "user", "content": question.text}], tools=TOOLS, options=OPTIONS)
    except ollama.ResponseError as exc:
        if "does not support tools" in exc.error:
            return Outcome("refused", f"Ollama says the model does not support tools ({exc.status_code})")
        return Outcome("error", f"{exc.status_code} {_short(exc.error, 60)}")
    except ConnectionError as exc:
        raise OllamaUnavailableError(f"Ollama went away while asking {model}: {exc}") from None


def diagnose(name: str, *, host: str | None = None, progress: Progress = _quiet) -> Diagnosis:
    """Ask `name` the questions on the Ollama at `host`; the diagnosis."""
    host = resolve_host(host)
    version = check_reachable(host)
    client = ollama.Client(host=host)
    model = installed_model(client, name, host)
    progress(f"checking {name} on the Ollama at {host} (v{version})")
    profile = ModelProfile.from_show(model.show, name)
    own_tools = None
    if model.source is not None:
        from .hf.shapes import probe  # the Hugging Face renderer: only to read the Jinja

        own_tools = probe(model.source.template, model.source.special_tokens).tools
    diagnosis = Diagnosis(model=model, version=version, host=host, profile=profile, own_tools=own_tools)
    offered = offer(TOOLS, None)
    for number, question in enumerate(QUESTIONS, 1):
        progress(f"asking {name} ({number}/{len(QUESTIONS)}): {question.label}")
        reply = ask(client, name, question)
        if isinstance(reply, Outcome):
            diagnosis.answers.append(Answer(question, reply, reply))
            continue
        plain = read_reply(reply)
        thinking = profile.splits_thinking(None)
        with warnings.catch_warnings():  # a dropped reply is reported as "empty", not warned about
            warnings.simplefilter("ignore", DroppedOutputWarning)
            recovered = read_reply(
                recover_response(copy.deepcopy(reply), offered, profile.tool_format, False, thinking=thinking)
            )
        written = written_format(reply.message.content or "", profile.tool_format) if plain.kind != "call" else None
        diagnosis.answers.append(Answer(question, plain, recovered, written))
    return diagnosis


def report(diagnosis: Diagnosis) -> list[str]:
    """The diagnosis as the lines `check` prints."""
    model = diagnosis.model
    template = model.template
    ollama_tools = "tools" in (model.show.capabilities or [])
    if is_jinja(template):
        kind = "the model's own Jinja (Ollama renders it with its Jinja engine)"
    elif model.built_by_ollama_fc:
        kind = "a Go template built by ollama-fc"
    elif model.renderer:
        kind = f"unused: Ollama renders prompts with its built-in renderer {model.renderer}"
    else:
        if ".Tools" not in template:
            kind = "a Go template that renders no tools"
        elif ".ToolCalls" not in template:
            kind = "a Go template that writes no tool calls"
        else:
            kind = f"a Go template (tool tag {parse_tag(template)})"
    lines = [
        f"model: {model.name} on Ollama v{diagnosis.version}; PARSER {model.parser or '(none: Ollama derives one)'}",
        f"Ollama's template: {kind}; Ollama lists the tools capability: {'yes' if ollama_tools else 'no'}",
    ]
    if diagnosis.own_tools is None:
        lines.append(f"the model's own chat template: not found ({model.found_in})")
    else:
        renders = "renders tools" if diagnosis.own_tools else "has no tools at all (see --tools-format)"
        marker = read_marker(template) if ".Tools" in template else None
        if diagnosis.own_tools is False and marker:  # built with --tools-format: its template lists them
            renders = f"renders tools in the {marker[1]} tools section ollama-fc added (--tools-format)"
        lines.append(f"the model's own chat template ({model.found_in}): {renders}")
    lines.append(f"declared format: {describe_format(diagnosis.profile.tool_format)}")
    written = diagnosis.written()
    parsed_by_ollama = any(a.plain.kind == "call" for a in diagnosis.answers)
    lines.append(
        "written format: "
        + (
            describe_format(written)
            if written
            else ("read by Ollama's own parser" if parsed_by_ollama else "no call seen")
        )
    )
    width = max(len(a.question.label) for a in diagnosis.answers) if diagnosis.answers else 0
    for answer in diagnosis.answers:
        lines.append(f"  {answer.question.label:<{width}}  plain Ollama: {answer.plain.line()}")
        lines.append(f"  {'':<{width}}  ollama-fc:    {answer.recovered.line()}")
    way = "ollama-fc's client and proxy (PARSER passthrough)" if diagnosis.via_ollama_fc else "plain Ollama"
    if diagnosis.works:
        lines.append(f"tool calls work as they are, through {way}: nothing to fix")
        return lines
    lines.append(f"tool calls do not work as they are, through {way}")
    fix = diagnosis.fix()
    if fix:
        lines.append(f"fix: {fix}")
    else:
        lines.append("the model itself does not answer these questions with the right calls: no command fixes that")
    return lines
