"""Reading a model the user's Ollama has (`installed`), and the pieces of `build --from NAME` and
`check` that need no server: parameters as `show` prints them, blob digests, the new model's name,
the stop tokens carried over, and how a reply is read."""

from __future__ import annotations

from ollama import ChatResponse, Message

from ollama_fc.diagnose import QUESTIONS, Outcome, describe_format, read_reply, written_format
from ollama_fc.fromname import _parameters, fc_name
from ollama_fc.installed import blob_digest, is_jinja, read_parameters
from ollama_fc.parsers.base import ParsedCall

# `ollama show --parameters` of a library model (qwen2.5-coder), as Ollama prints it
SHOWN = """stop                           "<|im_start|>"
stop                           "<|im_end|>"
num_ctx                        4096
temperature                    0.7
penalize_newline               false
"""


def test_parameters_are_read_as_create_takes_them() -> None:
    assert read_parameters(SHOWN) == {
        "stop": ["<|im_start|>", "<|im_end|>"],
        "num_ctx": 4096,
        "temperature": 0.7,
        "penalize_newline": False,
    }
    assert read_parameters(None) == {} and read_parameters("") == {}


def test_a_stop_token_with_a_quote_or_spaces_keeps_them() -> None:
    assert read_parameters('stop "a \\"b\\" c"\n') == {"stop": ['a "b" c']}


def test_the_converted_stop_tokens_join_the_models_own_once_each() -> None:
    own = {"stop": ["<|im_start|>", "<|im_end|>"], "num_ctx": 4096}
    assert _parameters(own, {"stop": ["<|im_end|>", "</tool_call>"]}) == {
        "stop": ["<|im_start|>", "<|im_end|>", "</tool_call>"],
        "num_ctx": 4096,
    }
    assert _parameters({}, {}) == {}


def test_a_blob_path_gives_its_digest() -> None:
    hexa = "a" * 64
    assert blob_digest(f"/home/u/.ollama/models/blobs/sha256-{hexa}") == f"sha256:{hexa}"
    assert blob_digest("/models/qwen.gguf") is None


def test_jinja_is_told_from_a_go_template() -> None:
    assert is_jinja("{%- for message in messages %}{{ message.content }}{% endfor %}")
    assert not is_jinja("{{ if .System }}{{ .System }}{{ end }}{{ .Prompt }}")
    assert not is_jinja(None) and not is_jinja("")


def test_the_new_model_is_named_after_the_old_one_with_its_tag() -> None:
    assert fc_name("mylib") == "mylib-fc"
    assert fc_name("mylib:latest") == "mylib-fc"
    assert fc_name("qwen2.5-coder:0.5b") == "qwen2.5-coder-fc:0.5b"
    assert fc_name("someone/model:q4") == "someone/model-fc:q4"
    assert fc_name("hf.co/someone/Some-Model-GGUF:Q4_K_M") == "hf.co/someone/Some-Model-GGUF-fc:Q4_K_M"
    assert fc_name("localhost:5000/model") == "localhost:5000/model-fc"


def reply(content: str = "", *, calls: list[tuple[str, dict[str, str]]] = (), **fields: object) -> ChatResponse:  # type: ignore[assignment]
    tool_calls = [
        Message.ToolCall(function=Message.ToolCall.Function(name=name, arguments=args)) for name, args in calls
    ]
    message = Message(role="assistant", content=content, tool_calls=tool_calls or None)
    return ChatResponse(model="m", message=message, done=True, **fields)


WEATHER, TIME, HAIKU = QUESTIONS


def test_a_parsed_call_of_the_right_tool_answers_its_question() -> None:
    outcome = read_reply(reply(calls=[("get_weather", {"city": "Paris, France"})]))
    assert outcome.kind == "call" and outcome.right_for(WEATHER)
    assert not outcome.right_for(TIME) and not outcome.right_for(HAIKU)


def test_a_call_left_in_the_text_is_told_apart() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    outcome = read_reply(reply(text))
    assert outcome.kind == "call as text" and not outcome.right_for(WEATHER)
    assert written_format(text, None) == "hermes"


def test_empty_cut_and_plain_replies() -> None:
    assert read_reply(reply("", eval_count=40)).kind == "empty"
    assert read_reply(reply("The sea rolls", done_reason="length")).kind == "cut"
    haiku = read_reply(reply("Waves fold into foam,\nsalt wind over the grey sea,\ngulls write on the sky."))
    assert haiku.kind == "text" and haiku.right_for(HAIKU) and not haiku.right_for(WEATHER)


def test_a_call_with_a_wrong_city_is_not_right() -> None:
    assert not Outcome("call", "", (ParsedCall("get_weather", {"city": "Lyon"}),)).right_for(WEATHER)


def test_a_learned_format_is_described_not_shown_as_its_token() -> None:
    from ollama_fc.learn import learn_format

    jinja = (
        "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>\n"
        '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n'
        "</tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
    )
    from ollama_fc.convert.sources import TemplateSource

    name = learn_format(TemplateSource(template=jinja)).format_name()
    described = describe_format(name)
    assert described.startswith("learned from the template: json") and "<tool_call>" in described
    assert describe_format("hermes") == "hermes"
