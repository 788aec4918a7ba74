"""One BOS on every tier: the server adds it, and the built template does not write a second.

The families whose source template writes `bos_token` (Gemma 3, Typhoon 2) are built with the
`bos` fix, which renders it as nothing because Ollama's runner puts BOS in front of every
prompt. Whether that holds on llama-server (0.3x) as on v0.24.0's runner is shown here with a
scripted model whose BOS is the family's own BOS token: `prompt_eval_count` must be the
render's token count plus exactly one, and Ollama's own library template for the same family
must show the same one-token difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ollama
import pytest

from ollama_fc.build import build
from ollama_fc.families import load_family
from ollama_fc.testbed.scripted import count_tokens, write_scripted_gguf
from ollama_fc.testbed.server import rendered_prompt
from tests.family_cases import CASES
from tests.shared_data import shared_path

pytestmark = pytest.mark.ollama

# Ollama's own hand-written template for the family's base model, where the library has one.
LIBRARY_TEMPLATE = {"gemma3-tools": "gemma3-instruct.gotmpl", "typhoon2": "llama3-instruct.gotmpl"}
CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
]


def evaluated_beyond_the_render(host: str, model: str, specials: list[str]) -> int:
    """Tokens the server evaluated minus the tokens of the prompt it rendered (the added BOS)."""
    render = rendered_prompt(host, model, CONVERSATION)
    answer = ollama.Client(host=host).chat(model, CONVERSATION, options={"temperature": 0})
    assert answer.prompt_eval_count is not None
    return answer.prompt_eval_count - count_tokens(render, specials)


@pytest.mark.parametrize("family", sorted(LIBRARY_TEMPLATE))
def test_the_server_adds_one_bos_and_the_template_none(family: str, ollama_server: Any, tmp_path: Path) -> None:
    tokens = load_family(family).recipe.special_tokens
    assert tokens.bos_token
    specials = [tokens.bos_token, *tokens.control]
    end = CASES[family].end

    def gguf(name: str) -> Path:
        # one blob per model: two models on one blob share llama-server's prompt cache
        return write_scripted_gguf(
            tmp_path / f"{name}.gguf", f"Rome, from {name}." + end, special_tokens=specials, bos_token=tokens.bos_token
        )

    host = ollama_server.host
    built = build(family, from_=str(gguf("built")), name=f"bos-{family}", host=host)
    assert tokens.bos_token not in rendered_prompt(host, built.name, CONVERSATION)
    assert evaluated_beyond_the_render(host, built.name, specials) == 1

    library = shared_path("corpus", "ollama-templates", "template", LIBRARY_TEMPLATE[family]).read_text(
        encoding="utf-8"
    )
    client = ollama.Client(host=host)
    base = gguf("library")
    client.create(model=f"library-{family}", files={base.name: client.create_blob(base)}, template=library)
    assert evaluated_beyond_the_render(host, f"library-{family}", specials) == 1
