"""FunctionGemma: `<start_function_call>call:NAME{key:<escape>text<escape>,n:42}<end_function_call>`.

Gemma 4's call syntax under FunctionGemma's own tags, strings quoted by `<escape>`; read by the
Gemma 4 reader, with its drift (a paren shell, quotes in place of `<escape>`, a call left
unclosed at the end of the reply).

Sources: google/functiongemma-270m-it's chat template and model card, Ollama's
`model/parsers/functiongemma.go` tests, vLLM's `test_functiongemma_tool_parser.py`.
"""

from __future__ import annotations

import re

from .base import Marker
from .gemma4 import Gemma4Parser

OPEN = "<start_function_call>"
CLOSE = "<end_function_call>"


class FunctionGemmaParser(Gemma4Parser):
    name = "functiongemma"
    models = "FunctionGemma 270M"
    markers = (Marker(OPEN, "tag", closers=((CLOSE, True),)),)
    tags = (OPEN,)
    opener = OPEN
    closer = CLOSE
    quote = "<escape>"
    space_or_close = re.compile(rf"(?:\s|{re.escape(CLOSE)})*")
