"""The thinking split of passthrough models, without a server (tests/test_client_e2e.py checks it
against Ollama's own split on the real server, chunk by chunk)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ollama_fc.thinking import ThinkingSplitter, think_enabled


def split(chunks: list[str]) -> tuple[str, str]:
    splitter = ThinkingSplitter()
    thinking, content = [], []
    for chunk in chunks:
        piece = splitter.feed(chunk)
        thinking.append(piece[0])
        content.append(piece[1])
    piece = splitter.finish()
    return "".join(thinking) + piece[0], "".join(content) + piece[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>\n hmm \n</think>\n\nIt is sunny.", ("hmm \n", "It is sunny.")),
        ("  It is sunny.", ("", "  It is sunny.")),  # no thinking: content untouched
        ("\n<think></think>  Sunny.", ("", "Sunny.")),
        ("<think>a</think></think>b", ("a", "</think>b")),  # the first closing tag ends it
        ("Sure.<think>no</think>", ("", "Sure.<think>no</think>")),  # only a leading block
        ("<think>cut off", ("cut off", "")),
        # Ollama holds these back as possible tags and never releases them; they are kept here
        ("<think>almost</thi", ("almost</thi", "")),
        ("\n<thi", ("", "\n<thi")),
    ],
)
def test_split_follows_ollamas_rules(text: str, expected: tuple[str, str]) -> None:
    assert split([text]) == expected


FRAGMENTS = st.sampled_from(["<think>", "</think>", "<", "</", "<th", "think", ">", " ", "\n", "a", "é"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(FRAGMENTS, max_size=30), cuts=st.lists(st.integers(0, 200), max_size=12))
def test_any_chunking_gives_the_whole_text_result(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    positions = sorted({min(cut, len(text)) for cut in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in itertools.pairwise(positions)]
    thinking, content = split(chunks)
    assert (thinking, content) == split([text])
    assert len(thinking) + len(content) <= len(text)  # nothing invented


@pytest.mark.parametrize(
    ("think", "model_thinks", "expected"),
    [
        (None, True, True),  # Ollama turns thinking on for a thinking model by default
        (None, False, False),
        (True, False, True),
        ("low", False, True),
        ("max", True, True),
        (False, True, False),
        ("sometimes", True, False),
    ],
)
def test_think_values_as_ollama_reads_them(think: object, model_thinks: bool, expected: bool) -> None:
    assert think_enabled(think, model_thinks) is expected
