"""One hash over everything the converter emits: every corpus and seed conversion, and the
checked-in Modelfiles. A change that must not alter the converter's output (a refactor, a
formatting pass) prints the same hash before and after.

Run: python scripts/emitted_hash.py [--list]   (--list prints one hash per template)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "templates"


def conversion_digest(path: Path) -> str:
    from ollama_fc.convert import convert
    from ollama_fc.convert.sources import load_source
    from ollama_fc.errors import ConversionError

    try:
        result = convert(load_source(path))
    except ConversionError as exc:
        text = f"refused: {exc}"
    else:
        text = json.dumps(result.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    sources = sorted(CORPUS.glob("*.jinja")) + sorted((ROOT / "converters").glob("*/template.jinja"))
    if not CORPUS.is_dir():
        raise SystemExit("reference corpus not found next to the repository (expected ../shared/corpus)")
    total = hashlib.sha256()
    for path in sources:
        digest = conversion_digest(path)
        total.update(f"{path.parent.name}/{path.name} {digest}\n".encode())
        if "--list" in sys.argv:
            print(digest[:16], f"{path.parent.name}/{path.name}")
    for modelfile in sorted((ROOT / "modelfiles").glob("*/Modelfile")):
        total.update(modelfile.read_bytes())
    print(f"emitted-go {total.hexdigest()} over {len(sources)} templates and the Modelfiles")


if __name__ == "__main__":
    main()
