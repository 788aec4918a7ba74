"""`run_tools`' memory of the calls a conversation already answered (its stop rules run against
the real server in tests/test_client_e2e.py)."""

from __future__ import annotations

from ollama import Message

from ollama_fc.loop import answered_calls, call_key


def test_a_call_is_the_same_whatever_the_order_of_its_arguments() -> None:
    assert call_key("f", {"a": 1, "b": [2]}) == call_key("f", {"b": [2], "a": 1})
    assert call_key("f", {"a": 1}) != call_key("f", {"a": "1"})
    assert call_key("f", {"a": 1}) != call_key("g", {"a": 1})


def test_each_result_answers_the_call_of_its_turn_in_order() -> None:
    call = Message.ToolCall.Function
    turn = Message(
        role="assistant",
        tool_calls=[
            Message.ToolCall(function=call(name="get_weather", arguments={"city": "Paris"})),
            Message.ToolCall(function=call(name="get_time", arguments={"zone": "UTC"})),
        ],
    ).model_dump(exclude_none=True)
    transcript = [
        {"role": "user", "content": "Weather and time?"},
        turn,
        {"role": "tool", "content": "sunny"},
        {"role": "tool", "content": "noon"},
        {"role": "assistant", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
    ]
    assert answered_calls(transcript) == {
        call_key("get_weather", {"city": "Paris"}): "sunny",
        call_key("get_time", {"zone": "UTC"}): "noon",
    }  # Oslo's call has no result yet: it is not answered
