"""How many tool-less chat templates take a tools section (`--tools-format`), and how exactly.

    python -m benchmarks.tools_section [--formats hermes,mistral]

Over the reference corpus (`../shared/corpus/templates`, next to this repository): the templates
that have no tools (`tool_capable` is false), and for each format those to which a section is
added (`extend`'s probe checks pass) and that convert; each of those is then rendered on the
battery, the extended Jinja by the Hugging Face reference and the converted Go by Ollama's own
template package (pinned and newest version), as `verify` does. A bare `.jinja` gets the stand-in
`<s>` / `</s>` special tokens, as in benchmarks/fidelity.py. The reasons a section is not added
are counted by their text.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from ollama_fc import oracle
from ollama_fc.convert.sources import TemplateSource, load_source
from ollama_fc.errors import OllamaFcError
from ollama_fc.tools_section import TOOLS_FORMATS, convert_with_tools_section, extend, tool_capable
from ollama_fc.verify.runner import compare, open_oracles, with_stand_in_tokens

REPO = Path(__file__).resolve().parents[1]

CORPUS = REPO.parent / "shared" / "corpus" / "templates"


def _reason(error: Exception) -> str:
    """The error's text without the template's path, for counting."""
    text = str(error)
    text = re.sub(r"^\S+\.jinja: ", "", text)
    return re.sub(r"\s*\(docs/USAGE\.md.*$", "", text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default=",".join(TOOLS_FORMATS), help="comma-separated formats")
    args = parser.parse_args()
    formats = [name for name in args.formats.split(",") if name]
    paths = sorted(CORPUS.glob("*.jinja"))
    if not paths:
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 1
    sources: dict[str, TemplateSource] = {}
    for path in paths:
        try:
            source = with_stand_in_tokens(load_source(path))
        except OllamaFcError:
            continue
        if not tool_capable(source):
            sources[path.name] = source
    print(f"{len(paths)} templates, {len(sources)} without tools")
    print()
    print("| format | section added and converted | every battery case exact (both versions) | not added |")
    print("|---|---|---|---|")
    reasons: dict[str, Counter[str]] = {}
    with open_oracles((oracle.PINNED, oracle.LATEST)) as engines:
        for name in formats:
            added = exact = 0
            reasons[name] = Counter()
            for source in sources.values():
                try:
                    conversion = convert_with_tools_section(source, name)
                except OllamaFcError as exc:
                    reasons[name][_reason(exc)] += 1
                    continue
                added += 1
                _, results = compare(extend(source, name), conversion.template, engines)
                rendered = [case for case in results if case.status != "cannot-render"]
                exact += bool(rendered) and all(case.status == "exact" for case in rendered)
            print(f"| `{name}` | {added} | {exact} | {len(sources) - added} |")
    for name, counted in reasons.items():
        print(f"\nnot added, `{name}`:")
        for reason, count in counted.most_common():
            print(f"- {count}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
