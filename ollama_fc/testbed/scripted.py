"""Scripted test models: tiny llama GGUFs whose every answer is a text chosen by the test.

A real model cannot be made to say a given tool call on demand, and a mock of Ollama proves
nothing. A scripted model runs through the real server (tokenizer, runner, sampler, template,
tool-call parser) yet its output is fixed, so a test can assert the exact text or call.

How the network works (one layer, all weights written by hand):

* Vocabulary: the 256 byte-level tokens of a GPT-2 style BPE tokenizer, the caller's special
  tokens (control type), an optional trigger token (user-defined type, so the tokenizer finds
  it as one token however the template spells the text around it), and one token per piece of
  the scripts. With no merges that fire, a prompt tokenizes into bytes and special tokens
  only, so script pieces never occur in a prompt.
* Residual features: ONE (every token), START (every prompt-side token), TRIG (the trigger
  token), FLAG (written by attention), GO_FIRST / GO_AFTER (written by the feed-forward
  block), one one-hot feature per script piece, and a padding feature that gives every
  embedding the same norm so RMSNorm scales all tokens alike.
* Attention: one head whose query is constant and whose key is large only on the trigger
  token, in the slowest-rotating RoPE pair (so position barely matters); its value carries
  TRIG into FLAG. FLAG is about 1 when the trigger is anywhere in the context, else 0.
* Feed-forward: two SwiGLU units with steep gates compute GO_FIRST = START and not FLAG,
  GO_AFTER = START and FLAG (about 1 or about 0).
* Output: a successor table. GO_FIRST leads to the first piece of the first script, GO_AFTER
  to the first piece of the second; each piece leads to the next; the last leads to EOS. The
  winning logit leads by hundreds, so any temperature, top-k/top-p or seed gives the script.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import gguf
import numpy as np

from ..errors import OllamaFcError

MAX_PIECE_BYTES = 16
"""Script pieces are kept short: longer pieces are where loaders were seen to misbehave."""

LOGIT_MARGIN = 500.0
HEAD_DIM = 32
TRIGGER_SCORE = 40.0
ROPE_BASE = 1.0e8
CONTEXT_LENGTH = 8192

BOS = "<|scripted_bos|>"
EOS = "<|scripted_eos|>"

# Residual-stream feature indices; script piece k lives at PIECES + k.
ONE, START, TRIG, FLAG, GO_FIRST, GO_AFTER, PAD, PIECES = 0, 1, 2, 3, 4, 5, 6, 7
EMBEDDING_SQUARED_NORM = 4.0
GATE_STEEPNESS = 40.0
FFN_LENGTH = 32


class ScriptError(OllamaFcError):
    """A script cannot be encoded as a scripted model (too repetitive, or a one-byte answer)."""


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map, which llama.cpp's BPE decodes."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_UNICODE = _byte_to_unicode()


def _bpe_text(data: bytes) -> str:
    return "".join(BYTE_TO_UNICODE[b] for b in data)


def _char_boundaries(text: str) -> list[int]:
    """Byte offsets at which the UTF-8 encoding of `text` may be cut without splitting a character."""
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + len(char.encode("utf-8")))
    return offsets


def split_script(text: str, taken: set[str]) -> list[bytes]:
    """Cut `text` into pieces of 2..16 bytes, each new to `taken` (vocabulary strings).

    Pieces must be distinct because the model's state is its last token: a repeated piece
    could not know which of its two successors comes next. Longest pieces are tried first;
    `taken` is extended with the pieces chosen.
    """
    if not text:
        return []
    data = text.encode("utf-8")
    cuts = _char_boundaries(text)
    budget = [20000]

    def search(position: int, used: set[str]) -> list[bytes] | None:
        if position == len(data):
            return []
        budget[0] -= 1
        if budget[0] < 0:
            return None
        ends = [c for c in cuts if 2 <= c - position <= MAX_PIECE_BYTES]
        for end in reversed(ends):
            piece = data[position:end]
            vocab_text = _bpe_text(piece)
            if vocab_text in used:
                continue
            used.add(vocab_text)
            rest = search(end, used)
            if rest is not None:
                return [piece, *rest]
            used.discard(vocab_text)
        return None

    chosen = search(0, set(taken))
    if chosen is None:
        raise ScriptError(
            f"cannot encode the script {text[:60]!r}: it must be at least 2 bytes and split into "
            f"distinct pieces of at most {MAX_PIECE_BYTES} bytes; make it less repetitive"
        )
    taken.update(_bpe_text(piece) for piece in chosen)
    return chosen


def _split_on(text: str, specials: Sequence[str]) -> list[str]:
    """`text` cut before and after every occurrence of a special token (longest first)."""
    if not specials:
        return [text] if text else []
    pattern = "|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True))
    return [part for part in re.split(f"({pattern})", text) if part]


def count_tokens(text: str, special_tokens: Sequence[str] = (), trigger: str | None = None) -> int:
    """How many tokens a scripted model's tokenizer makes of a prompt `text` (BOS not included).

    Special tokens (and the trigger, when the model has one) are one token each, found before
    anything else as llama.cpp does; every other byte is one token, as no merge ever fires.
    A test compares this with the server's `prompt_eval_count` to see which prompt was run.
    """
    whole = sorted({BOS, EOS, *special_tokens, *([trigger] if trigger else [])}, key=len, reverse=True)
    count = position = 0
    while position < len(text):
        token = next((t for t in whole if text.startswith(t, position)), None)
        if token is None:
            count += len(text[position].encode())
            position += 1
        else:
            count += 1
            position += len(token)
    return count


def write_scripted_gguf(
    path: str | Path,
    script: str,
    *,
    after: str | None = None,
    trigger: str = "<tool_response>",
    special_tokens: Sequence[str] = (),
    chat_template: str | None = None,
    bos_token: str = BOS,
    emit_special_tokens: bool = False,
    context_length: int = CONTEXT_LENGTH,
) -> Path:
    """Write a llama GGUF that answers `script`, or `after` once `trigger` is in the prompt.

    `chat_template` is stored as `tokenizer.chat_template`, the Jinja template a GGUF converted
    from a Hugging Face model carries (Ollama 0.3x may render with it instead of the TEMPLATE).
    `bos_token` spells the BOS token (a family's own, e.g. `<bos>`, to see whether a template
    writes a second one); it may also be one of `special_tokens`.

    With `emit_special_tokens`, a special token spelt in a script is generated as that token
    (as a real model emits its control tokens), not as text; each such token may occur once
    across both scripts, unless it ends them, and must not be the last token of a prompt.

    `context_length` is the trained context Ollama caps `num_ctx` at: every prompt byte is a
    token here, so an agent's prompt of tens of kilobytes needs more than the default.
    """
    path = Path(path)
    tokens: list[str] = []
    types: list[int] = []

    def add(text: str, kind: gguf.TokenType) -> int:
        tokens.append(text)
        types.append(int(kind))
        return len(tokens) - 1

    bos = add(bos_token, gguf.TokenType.CONTROL)
    eos = add(EOS, gguf.TokenType.CONTROL)
    for b in range(256):
        add(BYTE_TO_UNICODE[b], gguf.TokenType.NORMAL)
    # The tokenizer needs one merge; 0xFF never occurs in UTF-8 text, so this one never fires
    # (and its result is in the vocabulary, as a merge into an unknown string loses bytes).
    never_merged = BYTE_TO_UNICODE[0xFF]
    add(never_merged * 2, gguf.TokenType.NORMAL)
    for special in dict.fromkeys(special_tokens):
        if special == bos_token:
            continue
        if special in tokens:
            raise ScriptError(f"special token {special!r} clashes with a built-in token of the scripted model")
        add(special, gguf.TokenType.CONTROL)
    trigger_id: int | None = None
    if after is not None:
        if not trigger:
            raise ScriptError("a scripted model with an `after` script needs a non-empty trigger")
        trigger_id = tokens.index(trigger) if trigger in tokens else add(trigger, gguf.TokenType.USER_DEFINED)
    prompt_side = len(tokens)

    taken = set(tokens)
    emitted = [t for t in dict.fromkeys(special_tokens) if t != trigger] if emit_special_tokens else []

    def chain_of(text: str) -> list[int]:
        ids: list[int] = []
        for segment in _split_on(text, emitted):
            if segment in emitted:
                ids.append(tokens.index(segment))
            else:
                ids.extend(add(_bpe_text(p), gguf.TokenType.NORMAL) for p in split_script(segment, taken))
        return ids

    first_ids = chain_of(script)
    after_ids = chain_of(after) if after is not None else []
    successors: dict[int, int] = {}
    for chain in (first_ids, after_ids):
        for position, token in enumerate(chain):
            successor = chain[position + 1] if position + 1 < len(chain) else eos
            if successors.setdefault(token, successor) != successor:
                raise ScriptError(f"the special token {tokens[token]!r} occurs twice in the scripts")
    # One feature per generated token: the script pieces, then the special tokens scripts emit.
    feature = {token: PIECES + k for k, token in enumerate(sorted(successors))}

    n_vocab = len(tokens)
    n_embd = max(64, math.ceil((PIECES + len(feature)) / 32) * 32)

    embeddings = np.zeros((n_vocab, n_embd), dtype=np.float32)
    embeddings[:, ONE] = 1.0
    embeddings[:prompt_side, START] = 1.0
    if trigger_id is not None:
        embeddings[trigger_id, TRIG] = 1.0
    for token, index in feature.items():
        embeddings[token, START] = 0.0  # a generated token never starts an answer
        embeddings[token, index] = 1.0
    squared = (embeddings**2).sum(axis=1)
    embeddings[:, PAD] = np.sqrt(EMBEDDING_SQUARED_NORM - squared)

    # RMSNorm with unit weights multiplies every embedding by the same gain.
    gain = math.sqrt(n_embd / EMBEDDING_SQUARED_NORM)
    wq = np.zeros((HEAD_DIM, n_embd), dtype=np.float32)
    wk = np.zeros((HEAD_DIM, n_embd), dtype=np.float32)
    wv = np.zeros((HEAD_DIM, n_embd), dtype=np.float32)
    wo = np.zeros((n_embd, HEAD_DIM), dtype=np.float32)
    if trigger_id is not None:
        # Scores are q.k / sqrt(HEAD_DIM); the last RoPE pair turns by ~3e-8 rad per position.
        side = math.sqrt(TRIGGER_SCORE * math.sqrt(HEAD_DIM))
        wq[HEAD_DIM - 2, ONE] = side / gain
        wk[HEAD_DIM - 2, TRIG] = side / gain
        wv[0, TRIG] = 1.0 / gain
        wo[FLAG, 0] = 1.0

    # SwiGLU: silu(gate) * up. A gate of +-GATE_STEEPNESS/2 is a clean on/off; `up` is ONE.
    gate = np.zeros((FFN_LENGTH, n_embd), dtype=np.float32)
    up = np.zeros((FFN_LENGTH, n_embd), dtype=np.float32)
    down = np.zeros((n_embd, FFN_LENGTH), dtype=np.float32)
    steep = GATE_STEEPNESS / gain
    gate[0, START], gate[0, FLAG], gate[0, ONE] = steep, -steep, -0.5 * steep
    gate[1, START], gate[1, FLAG], gate[1, ONE] = steep, steep, -1.5 * steep
    up[0, ONE] = up[1, ONE] = 1.0 / gain
    down[GO_FIRST, 0] = down[GO_AFTER, 1] = 2.0 / GATE_STEEPNESS

    # The residual's squared norm stays below 7 (4 + FLAG^2 + GO^2): a margin of at least
    # LOGIT_MARGIN * 0.75 survives the final RMSNorm.
    scale = LOGIT_MARGIN / math.sqrt(n_embd / 7.0)
    output = np.zeros((n_vocab, n_embd), dtype=np.float32)
    output[first_ids[0] if first_ids else eos, GO_FIRST] += scale
    output[after_ids[0] if after_ids else eos, GO_AFTER] += scale
    for token, successor in successors.items():
        output[successor, feature[token]] += scale

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("ollama-fc scripted test model")
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32))
    writer.add_context_length(context_length)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN_LENGTH)
    writer.add_head_count(1)
    writer.add_head_count_kv(1)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(ROPE_BASE)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(n_vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{never_merged} {never_merged}"])
    writer.add_bos_token_id(bos)
    writer.add_eos_token_id(eos)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    if chat_template is not None:
        writer.add_chat_template(chat_template)

    ones = np.ones(n_embd, dtype=np.float32)
    tensors = {
        "token_embd.weight": embeddings,
        "output_norm.weight": ones,
        "output.weight": output,
        "blk.0.attn_norm.weight": ones,
        "blk.0.attn_q.weight": wq,
        "blk.0.attn_k.weight": wk,
        "blk.0.attn_v.weight": wv,
        "blk.0.attn_output.weight": wo,
        "blk.0.ffn_norm.weight": ones,
        "blk.0.ffn_gate.weight": gate,
        "blk.0.ffn_up.weight": up,
        "blk.0.ffn_down.weight": down,
    }
    for name, tensor in tensors.items():
        writer.add_tensor(name, tensor)

    path.parent.mkdir(parents=True, exist_ok=True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
