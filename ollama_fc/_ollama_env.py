"""Import `ollama` with a malformed OLLAMA_HOST hidden.

The ollama package builds a default client when imported and raises on an address it cannot
parse (`localhost:99999`), which would make every command, even `--help`, and every
`import ollama_fc` fail with a traceback. The package imports this module first; the address
is checked where a server is contacted (`build.resolve_host`, or `ollama.Client` itself).
"""

from __future__ import annotations

import os

_host = os.environ.pop("OLLAMA_HOST", None)
try:
    import ollama  # noqa: F401
finally:
    if _host is not None:
        os.environ["OLLAMA_HOST"] = _host
