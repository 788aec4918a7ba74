"""The response side's policy on one reply, whole and streamed: a call that fails its check
loses nothing the model wrote, and a call that does not commit (a required argument left out)
is never a call. Fed ollama's own ChatResponse objects as the client receives them."""

from __future__ import annotations

import random

import pytest
from ollama import ChatResponse, Message

from ollama_fc import InvalidToolCall
from ollama_fc.recovery import StreamRewriter, offer, recover_response

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
INVALID = (
    "Checking.\n"
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "many"}}</tool_call>\n'
    "One moment."
)


def whole(text: str, validate: bool = True) -> ChatResponse:
    response = ChatResponse(model="m", done=True, message=Message(role="assistant", content=text), eval_count=9)
    return recover_response(response, offer(TOOLS, None), "hermes", validate)


def chunks(text: str, seed: int) -> list[ChatResponse]:
    rng = random.Random(seed)
    cut = sorted(rng.sample(range(1, len(text)), 12))
    parts = [text[a:b] for a, b in zip([0, *cut], [*cut, len(text)])]
    out = [ChatResponse(model="m", done=False, message=Message(role="assistant", content=part)) for part in parts]
    out.append(ChatResponse(model="m", done=True, message=Message(role="assistant", content=""), eval_count=9))
    return out


def streamed(text: str, seed: int, validate: bool = True) -> tuple[list[ChatResponse], InvalidToolCall | None]:
    rewriter = StreamRewriter(offer(TOOLS, None), "hermes", validate)
    got: list[ChatResponse] = []
    try:
        for chunk in rewriter.stream(chunks(text, seed)):
            got.append(chunk)
    except InvalidToolCall as error:
        return got, error
    return got, None


def calls_of(message: Message) -> list[tuple[str, dict[str, object]]]:
    return [(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or []]


def test_an_invalid_call_raises_with_the_whole_reply() -> None:
    with pytest.raises(InvalidToolCall, match="argument 'days'") as caught:
        whole(INVALID)
    reply = caught.value.response
    assert reply.message.content == INVALID
    assert calls_of(reply.message) == [("get_weather", {"city": "Paris", "days": "many"})]
    assert reply.done and reply.eval_count == 9


@pytest.mark.parametrize("seed", range(8))
def test_a_streamed_invalid_call_raises_at_the_end_with_the_whole_reply(seed: int) -> None:
    """Nothing after the call is lost with the stream: the exception comes once the reply has
    ended, and the chunks yielded before it never hold call text."""
    yielded, error = streamed(INVALID, seed)
    assert error is not None and error.response.message.content == INVALID
    assert calls_of(error.response.message) == [("get_weather", {"city": "Paris", "days": "many"})]
    shown = "".join(chunk.message.content or "" for chunk in yielded)
    assert "<tool_call" not in shown and INVALID.startswith(shown)


@pytest.mark.parametrize("seed", range(4))
def test_without_validation_the_call_comes_as_written(seed: int) -> None:
    response = whole(INVALID, validate=False)
    assert calls_of(response.message) == [("get_weather", {"city": "Paris", "days": "many"})]
    assert response.message.content.split() == ["Checking.", "One", "moment."]
    got, error = streamed(INVALID, seed, validate=False)
    assert error is None
    assert [call for chunk in got for call in calls_of(chunk.message)] == calls_of(response.message)


@pytest.mark.parametrize("validate", [True, False])
def test_a_call_missing_a_required_argument_stays_text(validate: bool) -> None:
    text = 'Sure: <tool_call>{"name": "get_weather", "arguments": {"days": 2}}</tool_call>'
    assert whole(text, validate).message.content == text
    got, error = streamed(text, 3, validate)
    assert error is None and "".join(chunk.message.content or "" for chunk in got) == text
    assert not any(chunk.message.tool_calls for chunk in got)


def test_null_for_an_optional_argument_keeps_the_call() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": null}}</tool_call>'
    assert calls_of(whole(text).message) == [("get_weather", {"city": "Oslo"})]


def test_the_proxy_engine_releases_a_call_cut_short_as_text() -> None:
    """Ollama's stream ends mid-call (the connection went away): the held text is sent as it
    was written, never dropped, and it is not a call."""
    from ollama_fc.serve.recovering import ResponseRecovery

    recovery = ResponseRecovery(TOOLS, "hermes", "m")
    half = 'Checking. <tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    shown = ""
    for chunk in chunks(half, 1)[:-1]:
        message = recovery.chunk(chunk)
        shown += chunk.message.content if message is None else message.content or ""
    rest = recovery.cut_short()
    assert rest is not None and not rest.tool_calls
    assert shown + (rest.content or "") == half


def test_the_proxy_engine_fails_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the engine fail on some output, the response goes back as Ollama sent it."""
    from ollama_fc.serve import recovering

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a parser bug")

    recovery = recovering.ResponseRecovery(TOOLS, "hermes", "m")
    monkeypatch.setattr(recovering, "recover_response", broken)
    monkeypatch.setattr(recovery.rewriter, "rewrite", broken)
    response = ChatResponse(model="m", done=True, message=Message(role="assistant", content=INVALID))
    assert recovery.whole(response) is None
    assert [recovery.chunk(chunk) for chunk in chunks(INVALID, 2)] == [None] * 14
    assert recovery.cut_short() is None


CUT_CALL = '{"name": "get_weather", "arguments": {"city": "Paris"'


def stream_text(text: str, seed: int) -> tuple[str, list[tuple[str, dict[str, object]]]]:
    got, error = streamed(text, seed)
    assert error is None
    content = "".join(chunk.message.content or "" for chunk in got)
    return content, [call for chunk in got for call in calls_of(chunk.message)]


@pytest.mark.parametrize("seed", range(3))
def test_a_cut_call_after_openings_that_never_close_is_read_streamed_and_whole(seed: int) -> None:
    text = '{"city": "Pa' * 10 + CUT_CALL
    message = whole(text).message
    assert calls_of(message) == [("get_weather", {"city": "Paris"})]
    assert message.content == '{"city": "Pa' * 10
    assert stream_text(text, seed) == (message.content, calls_of(message))


@pytest.mark.parametrize("tail", ["", " get_weather", CUT_CALL])
def test_thousands_of_openings_that_never_close_stay_text(tail: str) -> None:
    """Each unclosed end that fails is read again from its next bracket; past a budget of reads
    proportional to the output the rest stays text (the reads were quadratic before: this
    output took minutes), the call at the end missed rather than any call invented."""
    text = '{"city": "Pa' * 5000 + tail
    message = whole(text).message
    assert (message.content, calls_of(message)) == (text, [])
    assert stream_text(text, 0) == (text, [])
