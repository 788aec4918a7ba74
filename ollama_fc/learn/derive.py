"""Derive a LearnedFormat from the call texts of probe conversations.

1. Render probes: one call with simple string arguments, two parallel calls, one call with
   awkward values (quotes, newlines, unicode, numbers, booleans, null, nesting), one call with
   content before it.
2. In the one-call text, find how the call writes its name and arguments: a JSON object that
   holds both, the name then a JSON object, the name then tagged parameters, or `name(...)`.
3. Cut the parallel text at the two calls: what precedes both is the call opener, what follows
   both the call closer, what is left the block's own opener, closer and the separator.
4. Read every probe back with the derived format; any disagreement means it was not learned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..convert.sources import TemplateSource
from ..hf.reference import ReferenceRenderError, compile_template
from ..hf.shapes import Shape, probe
from ..parsers.learned import fixed
from ..parsers.learned_format import CALL_ID, CALL_NAME, INDEX, FormatNotLearned, LearnedFormat, framing_tokens, unquote
from ..parsers.lenient import NotALiteral, read_value, scan_balanced
from .probes import CALL_IDS, Call, Probe, call_text, calling_shape, turn_end
from .roundtrip import round_trip

SIMPLE = Probe("one call", (Call("get_weather", {"city": "Paris", "unit": "celsius"}),))
PARALLEL = Probe(
    "two parallel calls",
    (Call("get_weather", {"city": "Paris", "unit": "celsius"}), Call("get_time", {"zone": "Tokyo", "style": "iso"})),
)
THREE = Probe(
    "three parallel calls",
    (
        Call("get_weather", {"city": "Lima", "unit": "celsius"}),
        Call("get_weather", {"city": "Quito", "unit": "kelvin"}),
        Call("get_time", {"zone": "UTC", "style": "iso"}),
    ),
)
AWKWARD = Probe(
    "awkward values",
    (
        Call(
            "get_weather",
            {
                "city": 'Saint-Étienne "le centre"\nligne 2 ✓ 東京',
                "days": 3,
                "ratio": -1.5,
                "metric": True,
                "note": None,
                "filters": {"tags": ["a", "b"], "range": {"min": 0, "max": 10}},
            },
        ),
    ),
)
CONTENT = Probe("content before the call", SIMPLE.calls, content="Let me check that for you.")


@dataclass
class _Span:
    start: int
    end: int
    name_end: int = 0
    args_start: int = 0


def learn_from_source(source: TemplateSource, shape: Shape | None = None) -> LearnedFormat:
    """The tool-call format `source`'s template writes; FormatNotLearned with a one-line reason.

    `shape` is the template's input shape (`hf.shapes.probe`) when the caller has it.
    """
    try:
        compile_template(source.template)
    except ReferenceRenderError as exc:
        raise FormatNotLearned(str(exc)) from None
    if shape is None:
        shape = probe(source.template, source.special_tokens)
    shape = calling_shape(source, shape)
    if not shape.tool_calls:
        raise FormatNotLearned("the template renders no tool calls (an assistant's calls leave no text)")
    single = call_text(source, shape, SIMPLE)
    if single is None:
        raise FormatNotLearned("the template refuses a one-call conversation")
    parallel = call_text(source, shape, PARALLEL) if shape.parallel_calls else None
    spec = _derive(single, parallel)
    if parallel is not None:
        three = call_text(source, shape, THREE)
        if three is not None:
            spec.block_rejoin = _rejoin(spec, _with_ids(unquote(three, spec.string_quote)))
    _drop_turn_end(spec, turn_end(source, shape))
    _refine_values(spec, source, shape, single)
    spec.special_tokens = framing_tokens(
        [
            spec.block_open,
            spec.call_open,
            spec.name_close,
            spec.param_open,
            spec.param_close,
            spec.call_close,
            spec.block_close,
        ]
    )
    _check(spec, source, shape)
    return spec


# --- step 2: one call ---


def _json_values(text: str) -> list[tuple[int, int, Any]]:
    """The bracketed literals of `text`, outermost only, with their spans."""
    found: list[tuple[int, int, Any]] = []
    index = 0
    while index < len(text):
        if text[index] in "{[":
            end = scan_balanced(text, index)
            if end is not None:
                try:
                    found.append((index, end, read_value(text[index:end])))
                    index = end
                    continue
                except NotALiteral:
                    pass
        index += 1
    return found


def _path_to(value: Any, wanted: Any, parse_strings: bool = False, prefix: str = "") -> tuple[str, bool] | None:
    """The dotted path of `wanted` inside nested dicts; the flag says it was a JSON string there."""
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        path = f"{prefix}{key}"
        if item == wanted:
            return path, False
        if parse_strings and isinstance(item, str):
            try:
                if json.loads(item) == wanted:
                    return path, True
            except ValueError:
                pass
        inner = _path_to(item, wanted, parse_strings, path + ".")
        if inner is not None:
            return inner
    return None


def _call_spans(text: str, calls: tuple[Call, ...], spec: LearnedFormat | None) -> tuple[list[_Span], LearnedFormat]:
    """Where each call is written in `text`, and the style that writes it that way."""
    values = _json_values(text)
    style = spec.style if spec else None
    # a JSON object per call, or one list of them
    for start, end, value in values:
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(item, dict) for item in items):
            continue
        if (
            len(items) == len(calls)
            and all(item == {call.name: call.arguments} for item, call in zip(items, calls))
            and style in (None, "json")
        ):
            found = LearnedFormat(style="json", name_is_key=True, list_wrapped=isinstance(value, list))
            return _element_spans(text, start, end, value, len(calls)), found
    json_calls = []
    for start, end, value in values:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                json_calls.append((start, end, value, item))
    if len(json_calls) >= len(calls) and style in (None, "json"):
        first = json_calls[0][3]
        name_path = _path_to(first, calls[0].name)
        args_path = _path_to(first, calls[0].arguments, parse_strings=True)
        if name_path and args_path and (calls[0].arguments or True):
            matched = [(s, e, v) for (s, e, v, item) in json_calls if any(_path_to(item, call.name) for call in calls)]
            list_value = matched[0][2] if isinstance(matched[0][2], list) else None
            found = LearnedFormat(
                style="json",
                name_key=name_path[0],
                arguments_key=args_path[0],
                arguments_as_string=args_path[1],
                list_wrapped=list_value is not None,
            )
            if list_value is not None:
                return _element_spans(text, matched[0][0], matched[0][1], list_value, len(calls)), found
            return [_Span(s, e) for s, e, _ in matched[: len(calls)]], found
    spans: list[_Span] = []
    index = 0
    kind: str | None = None
    for call in calls:
        name_at = _find_name(text, call.name, index)
        if name_at < 0:
            raise FormatNotLearned(f"the call text does not show the function name: {_short(text)}")
        name_end = name_at + len(call.name)
        after = next(((s, e) for s, e, v in values if s >= name_end and v == call.arguments), None)
        # a name written again before the arguments (Glimmer's `to=NAME` header, then its
        # `<invoke name="NAME">`): the call's own is the last, the first is part of its opener
        first_key = text.find(next(iter(call.arguments)), name_end) if call.arguments else -1
        limit = after[0] if after is not None else first_key
        again = _find_name(text, call.name, name_end)
        while 0 <= again < limit:
            name_at, name_end = again, again + len(call.name)
            again = _find_name(text, call.name, name_end)
        if after is not None and kind in (None, "name_json") and not text[name_end : after[0]].rstrip().endswith("("):
            kind = "name_json"
            spans.append(_Span(name_at, after[1], name_end, after[0]))
            index = after[1]
            continue
        if text.startswith("(", name_end) and kind in (None, "pythonic"):
            closed = scan_balanced(text, name_end)
            if closed is None:
                raise FormatNotLearned(f"unbalanced call text: {_short(text)}")
            end = closed
            if after is not None and after[1] == end - 1:
                kind = "name_json"  # TypeScript-style functions.name({...})
                spans.append(_Span(name_at, after[1], name_end, after[0]))
                index = after[1]
                continue
            kind = "pythonic"
            spans.append(_Span(name_at, end, name_end, name_end))
            index = end
            continue
        kind = "tagged"
        spans.append(_Span(name_at, -1, name_end, name_end))
        index = name_end
    return spans, LearnedFormat(style=kind or "tagged")  # type: ignore[arg-type]


def _find_name(text: str, name: str, start: int) -> int:
    """The name as a whole word (not inside `get_weather_v2`, nor a longer identifier)."""
    for match in re.finditer(re.escape(name), text[start:]):
        at = start + match.start()
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
    return -1


def _element_spans(text: str, start: int, end: int, value: Any, count: int) -> list[_Span]:
    """The spans of a list's elements (or of the one object)."""
    if not isinstance(value, list):
        return [_Span(start, end)]
    spans: list[_Span] = []
    index = start + 1
    while len(spans) < count and index < end:
        open_at = text.find("{", index)
        if open_at < 0:
            break
        close = scan_balanced(text, open_at) or end
        spans.append(_Span(open_at, close))
        index = close
    return spans


# --- tagged parameters ---


def _tagged(text: str, span: _Span, call: Call, spec: LearnedFormat | None) -> tuple[LearnedFormat, int]:
    """Learn (or follow) `param_open KEY param_mid VALUE param_close` from a call with two
    string arguments; return the format and where the call's last parameter ends."""
    keys = list(call.arguments)
    if len(keys) != 2 or not all(isinstance(v, str) for v in call.arguments.values()):
        raise FormatNotLearned("tagged parameters need a two-argument probe")
    positions: list[int] = []
    index = span.name_end
    for key in keys:
        for needle in (key, call.arguments[key]):
            at = text.find(needle, index)
            if at < 0:
                raise FormatNotLearned(f"the call text does not show argument {needle!r}: {_short(text)}")
            positions.append(at)
            index = at + len(needle)
    k1, v1, k2, v2 = positions
    (key1, value1), (key2, value2) = call.arguments.items()
    quoted = text[v1 - 1 : v1] == '"' and text[v1 + len(value1) : v1 + len(value1) + 1] == '"'
    q = 1 if quoted else 0
    a = text[span.name_end : k1]
    b = text[k1 + len(key1) : v1 - q]
    c = text[v1 + len(value1) + q : k2]
    d = text[k2 + len(key2) : v2 - q]
    after_last = v2 + len(value2) + q
    e = text[after_last:]
    if b != d:
        raise FormatNotLearned(f"two parameters are written differently ({b!r}, {d!r})")
    if spec is not None:
        if not text.startswith(spec.param_close, after_last):
            raise FormatNotLearned("the parallel probe writes parameters differently from the single one")
        return spec, after_last + len(spec.param_close)
    param_open = _token_start(_common_suffix(a, c))
    name_close = a[: len(a) - len(param_open)]
    param_close = _common_prefix(c[: len(c) - len(param_open)], e)
    separator = c[len(param_close) : len(c) - len(param_open)]
    if separator.strip() or not param_open.strip() or not param_close.strip():
        raise FormatNotLearned(f"cannot tell where one parameter ends and the next starts ({c!r})")
    found = LearnedFormat(
        style="tagged",
        name_close=name_close,
        param_open=param_open,
        param_mid=b,
        param_close=param_close,
        raw_strings=not quoted,
    )
    return found, after_last + len(param_close)


# --- step 3: the block around the calls ---


def _string_quote(text: str, value: str) -> str:
    """The text around a string value when it is not a JSON quote: Gemma 4 writes `<|"|>x<|"|>`."""
    at = text.find(value)
    if at < 0:
        return ""
    end = at + len(value)
    for size in range(2, 16):
        before, after = text[at - size : at], text[end : end + size]
        if before == after and before.strip() and not before.strip("\"' \n"):
            return ""
        if before == after and before.strip() and before.strip() == before:
            return before
    return ""


def _derive(single: str, parallel: str | None) -> LearnedFormat:
    quote = _string_quote(single, "Paris")
    if quote and _string_quote(single, "celsius") != quote:
        quote = ""
    single = unquote(_with_ids(single), quote)
    parallel = unquote(parallel, quote) if parallel is not None else None
    spans, spec = _call_spans(single, SIMPLE.calls, None)
    if spec.style == "tagged":
        spec, end = _tagged(single, spans[0], SIMPLE.calls[0], None)
        spans[0].end = end
    closes = [_name_close(single, span) for span in spans if spec.style == "name_json"]
    if parallel is not None:
        parallel = _with_ids(parallel)
        pspans, pspec = _call_spans(parallel, PARALLEL.calls, spec)
        if pspec.style != spec.style or len(pspans) != 2:
            raise FormatNotLearned("the one-call and two-call probes write calls differently")
        if spec.style == "tagged":
            for span, call in zip(pspans, PARALLEL.calls):
                _, span.end = _tagged(parallel, span, call, spec)
        closes += [_name_close(parallel, span) for span in pspans if spec.style == "name_json"]
        names = [call.name for call in PARALLEL.calls]
        pre = _named(parallel[: pspans[0].start], names)
        mid = _named(parallel[pspans[0].end : pspans[1].start], names)
        post = _named(parallel[pspans[1].end :], names)
        call_open = _token_start(_common_suffix(pre, mid))
        call_close = _common_prefix(mid[: len(mid) - len(call_open)], post)
        separator = mid[len(call_close) : len(mid) - len(call_open)]
        block_open = pre[: len(pre) - len(call_open)]
        block_close = post[len(call_close) :]
        one_pre = _named(single[: spans[0].start], names)
        one_post = _named(single[spans[0].end :], names)
        if _squash(one_pre) != _squash(block_open + call_open):
            raise FormatNotLearned(
                f"the one-call and two-call probes frame calls differently ({_short(one_pre)} vs {_short(block_open + call_open)})"
            )
        # a block closer left out after one call (DeepSeek R1's distilled templates write it
        # only after the second) is a block closer all the same
        if _squash(one_post) not in {_squash(call_close + block_close), _squash(call_close)}:
            raise FormatNotLearned(
                f"the one-call and two-call probes close calls differently ({_short(one_post)} vs {_short(call_close + block_close)})"
            )
    else:
        call_open, call_close, separator = "", "", ""
        names = [SIMPLE.calls[0].name]
        block_open, block_close = _named(single[: spans[0].start], names), _named(single[spans[0].end :], names)
        if spec.style in ("name_json", "tagged"):  # the name's opener is the call's own
            call_open, block_open = block_open, ""
            call_close, block_close = block_close, ""
    if spec.list_wrapped or spec.style == "pythonic":
        spec.list_wrapped = block_open.rstrip().endswith("[") and block_close.lstrip().startswith("]")
    spec.block_open, spec.block_close = block_open.strip(), block_close.strip()
    spec.call_open, spec.call_close = call_open.lstrip() if not block_open.strip() else call_open, call_close
    spec.call_separator = separator
    if spec.style == "name_json":
        spec.name_close = _general(closes)
    spec.string_quote = quote
    if not spec.block_open and spec.block_close and spec.call_close.strip():
        spec.end, spec.block_close = spec.block_close, ""
    if spec.name_first and not spec.name_close.strip() and spec.style != "name_json":
        raise FormatNotLearned("nothing marks where a call starts (the name is the first thing written)")
    return spec


def _named(text: str, names: list[str]) -> str:
    """`text` (what frames the calls) with the calls' names in it as {name}."""
    for name in names:
        text = re.sub(rf"(?<![\w.\-]){re.escape(name)}(?![\w\-])", CALL_NAME, text)
    return text


def _token_start(text: str) -> str:
    """`text` from its first whitespace or tag start on: a common suffix such as `>\n<invoke`
    begins with the end of the previous tag, which belongs to the text before it."""
    cut = next((i for i, ch in enumerate(text) if ch.isspace() or ch in "<["), 0)
    return text[cut:]


def _name_close(text: str, span: _Span) -> str:
    return text[span.name_end : span.args_start]


def _general(variants: list[str]) -> str:
    """One text for all variants; digits that differ between calls become {index}."""
    if len(set(variants)) <= 1:
        return variants[0] if variants else ""
    general = {re.sub(r"\d+", INDEX, variant) for variant in variants}
    if len(general) == 1:
        return general.pop()
    raise FormatNotLearned(f"calls are written differently from one call to the next ({variants!r})")


def _with_ids(text: str) -> str:
    for call_id in CALL_IDS:
        text = text.replace(call_id, CALL_ID)
    return text


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _common_suffix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[len(a) - n :]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _short(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _drop_turn_end(spec: LearnedFormat, end: str) -> None:
    """A template that writes no empty turn leaves its turn's end in the last closer (Nemotron
    Nano 2's `]</TOOLCALL><SPECIAL_12>`): the model stops at that token, so it is not the format's."""
    if not end:
        return
    for field in ("block_close", "call_close"):
        closer = getattr(spec, field)
        if closer.rstrip().endswith(end) and closer.strip() != end:
            setattr(spec, field, closer.rstrip()[: -len(end)])
            spec.end = spec.end or end  # a stop sequence
            return


def _rejoin(spec: LearnedFormat, text: str) -> str | None:
    """What the template writes between a closed block and a call after it, when calls after
    the second are written after the block's closer (DeepSeek R1's distilled templates close
    the block after every call but the first, then write `<｜end▁of▁sentence｜>`); else None."""
    closer = spec.block_close.strip()
    if not closer or spec.list_wrapped or spec.style == "pythonic":
        return None
    try:
        spans, _ = _call_spans(text, THREE.calls, spec)
        if spec.style == "tagged":
            for span, call in zip(spans, THREE.calls):
                _, span.end = _tagged(text, span, call, spec)
    except FormatNotLearned:
        return None
    if len(spans) != 3:
        return None
    gap = text[spans[1].end : spans[2].start]
    normal = re.compile(fixed(spec.call_close + spec.call_separator + spec.call_open).pattern + r"\Z")
    if normal.match(text[spans[0].end : spans[1].start]) is None or normal.match(gap):
        return None
    closed = fixed(spec.call_close + closer).match(gap)
    reopened = re.search(fixed(spec.call_open).pattern + r"\Z", gap)
    if closed is None or reopened is None or reopened.start() < closed.end():
        return None
    return gap[closed.end() : reopened.start()]


# --- values of tagged parameters ---


def _refine_values(spec: LearnedFormat, source: TemplateSource, shape: Shape, single: str) -> None:
    """Tagged formats may write non-string values after another mid (DeepSeek V3.2's
    `string="false"`), pythonic ones strings as they are: read it off the awkward probe."""
    if spec.style not in ("tagged", "pythonic"):
        return
    text = call_text(source, shape, AWKWARD)
    if text is None:
        return
    if spec.style == "pythonic":
        _pythonic_values(spec, single, text)
        return
    at = text.find("days")
    value_at = text.find("3", at + 4) if at >= 0 else -1
    if value_at < 0:
        return
    mid = text[at + 4 : value_at]
    if mid != spec.param_mid and mid.strip():
        spec.param_mid_string, spec.param_mid = spec.param_mid, mid


def _pythonic_values(spec: LearnedFormat, single: str, awkward: str) -> None:
    """What a pythonic template writes after each value (vLLM's ToolACE template: `city=Parisr`)
    and whether it writes strings as they are (`city="a "b"\n"`, or with no quotes at all)."""
    key = re.search(r"\bcity\s*=\s*", single)
    if key is None:
        return
    at = single.find("Paris", key.end())
    quote = single[key.end() : at]
    if at < 0 or quote not in ("", '"', "'"):
        return
    after = single[at + len("Paris") :]
    after = after[len(quote) :] if quote and after.startswith(quote) else after
    spec.param_close = re.split(r"[\s,)]|unit", after, maxsplit=1)[0]
    city = AWKWARD.calls[0].arguments["city"]
    spec.raw_strings = city in awkward and f"city={quote}{city}{quote}{spec.param_close}" in awkward


# --- step 4: read every probe back ---


def _check(spec: LearnedFormat, source: TemplateSource, shape: Shape) -> None:
    for probe_ in (SIMPLE, PARALLEL, THREE, AWKWARD, CONTENT):
        if probe_ in (PARALLEL, THREE) and not shape.parallel_calls:
            continue
        outcome, _ = round_trip(spec, source, shape, probe_)
        if outcome.status == "mismatch" and not outcome.detail.startswith("content"):
            raise FormatNotLearned(
                f"what the template writes for the {probe_.label} probe does not read back: {outcome.detail}"
            )
