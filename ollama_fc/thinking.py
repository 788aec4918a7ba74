"""Split a model's leading `<think>…</think>` block from its answer, as Ollama does, chunk by chunk.

A model created with `PARSER passthrough` gets no parsing from Ollama, thinking included, so the
response side does what Ollama's own thinking parser (`thinking.Parser`, v0.24.0) does for a
thinking model: only a block that opens the output (after whitespace) is thinking; whitespace
after the opening tag and after the closing tag is dropped; text that does not start with the
tag is all content, untouched; a later `<think>` is content. Where Ollama would lose text (a
stream that ends inside a half-written opening tag or closing tag) it is kept here instead.

Each character is looked at a bounded number of times: only a possible tag prefix (at most the
tag's length) and leading whitespace are held back between chunks.
"""

from __future__ import annotations

from typing import Any

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_LOOKING, _AFTER_OPEN, _THINKING, _AFTER_CLOSE, _DONE = range(5)


def think_enabled(think: Any, model_thinks: bool) -> bool:
    """Whether Ollama would split thinking for a request's `think` value.

    Like Ollama: a thinking-capable model thinks when the request does not say; `True` and the
    levels "low", "medium", "high" (and "max") turn it on; `False` or any other value leaves the
    text as the model wrote it.
    """
    if think is None:
        return model_thinks
    if isinstance(think, bool):
        return think
    return think in ("low", "medium", "high", "max")


class ThinkingSplitter:
    """Feed the model's text chunk by chunk; get back (thinking, content) for each chunk."""

    def __init__(self, opening: str = THINK_OPEN, closing: str = THINK_CLOSE) -> None:
        self.opening = opening
        self.closing = closing
        self._state = _LOOKING
        self._space = ""  # leading whitespace, before the opening tag
        self._held = ""  # a partial opening tag, or a partial closing tag

    def feed(self, text: str) -> tuple[str, str]:
        """Consume one chunk; return the thinking and the content that can be released now."""
        thinking: list[str] = []
        content: list[str] = []
        while text:
            if self._state == _LOOKING:
                text = self._look(text, content)
            elif self._state == _AFTER_OPEN:
                text = text.lstrip()
                if text:
                    self._state = _THINKING
            elif self._state == _THINKING:
                text = self._think(text, thinking)
            elif self._state == _AFTER_CLOSE:
                text = text.lstrip()
                if text:
                    self._state = _DONE
            else:
                content.append(text)
                text = ""
        return "".join(thinking), "".join(content)

    def finish(self) -> tuple[str, str]:
        """End of output: release what is held (Ollama drops it)."""
        held, self._held = self._held, ""
        if self._state == _THINKING:
            return held, ""
        if self._state == _LOOKING:
            self._state = _DONE
            space, self._space = self._space, ""
            return "", space + held
        return "", ""

    def _look(self, text: str, content: list[str]) -> str:
        """Before anything but whitespace: is this the opening tag? Returns the unread text."""
        index = 0
        while index < len(text):
            char = text[index]
            if not self._held and char.isspace():
                self._space += char
            elif char == self.opening[len(self._held)]:
                self._held += char
                if self._held == self.opening:
                    self._state = _AFTER_OPEN
                    self._space = self._held = ""
                    return text[index + 1 :]
            else:
                self._state = _DONE
                content.append(self._space + self._held)  # no thinking: content keeps its whitespace
                self._space = self._held = ""
                return text[index:]
            index += 1
        return ""

    def _think(self, text: str, thinking: list[str]) -> str:
        """Inside the block: thinking up to the closing tag. Returns the text after it."""
        window = self._held + text
        self._held = ""
        end = window.find(self.closing)
        if end >= 0:
            thinking.append(window[:end])
            self._state = _AFTER_CLOSE
            return window[end + len(self.closing) :]
        keep = _overlap(window, self.closing)
        thinking.append(window[: len(window) - keep])
        self._held = window[len(window) - keep :]
        return ""


def _overlap(text: str, tag: str) -> int:
    """Length of the longest end of `text` that starts `tag` (shorter than the tag)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0
