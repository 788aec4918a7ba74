"""Per-family facts the family tests share: how a turn is delimited, what the model prints.

These come from the models' documentation (the seed documents), not from our code, so a test
that uses them checks our templates against the models' own formats.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Turns:
    #: text that opens the assistant's turn, and the token that ends any turn
    assistant: str
    end: str
    #: text that opens the turn holding a tool result
    tool_result: str
    #: what the model prints to call get_weather(city="Paris"), as its documentation shows
    call: str
    #: text in the family's rendering of a tool result (never in the system prompt)
    trigger: str


#: what every family's scripted model answers once the tool result is in its prompt
ANSWER = "It is 21 degrees and sunny in Paris."

HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'

CASES: dict[str, Turns] = {
    "minimax": Turns(
        assistant="<beginning_of_sentence>ai name=assistant\n",
        end="<end_of_sentence>",
        tool_result="<beginning_of_sentence>system function_response=functions\n",
        call='<function_call>```typescript\nfunctions.get_weather({"city": "Paris"})\n```',
        trigger="function_response=functions",
    ),
    "qwen2.5": Turns(
        assistant="<|im_start|>assistant",
        end="<|im_end|>",
        tool_result="<|im_start|>user\n<tool_response>",
        call=HERMES_CALL,
        trigger="<tool_response>",
    ),
    "gemma3-tools": Turns(
        assistant="<start_of_turn>model\n",
        end="<end_of_turn>",
        tool_result="<start_of_turn>tool\n",
        call=HERMES_CALL,
        trigger="<tool_response>",
    ),
    "phi4-mini": Turns(
        assistant="<|assistant|>",
        end="<|end|>",
        tool_result="<|tool|>",
        call='functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        trigger='{"result": ',
    ),
    "typhoon2": Turns(
        assistant="<|start_header_id|>assistant<|end_header_id|>\n\n",
        end="<|eot_id|>",
        tool_result="<|start_header_id|>tool<|end_header_id|>\n\n",
        call='[Function(arguments1={"city": "Paris"}, name1=get_weather)]',
        # the tool result is shown through tojson, so the quotes of its JSON text are escaped
        trigger='{\\"city\\"',
    ),
}


def turn(prompt: str, opener: str, end: str, after: str = "") -> str:
    """The body of the first turn that opens with `opener` after the text `after`."""
    start = prompt.index(opener, prompt.index(after) if after else 0) + len(opener)
    return prompt[start : prompt.index(end, start)]
