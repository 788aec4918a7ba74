"""What converting a hostile template costs, against converting the largest corpus template.

Each conversion runs in a fresh process (so its peak memory is its own), with the default
limits: the wall time until it fails with its one-line error, and the process's peak resident
memory. The anchor is the conversion of the largest corpus template (Gemma 4, about 0.95 MB of
Go template), which succeeds.
Run: python -m benchmarks.hostile_convert
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.table import Row, print_table

HERE = Path(__file__).resolve().parent

ANCHOR = HERE.parent.parent / "shared" / "corpus" / "templates" / "gemma-4-31b-it.jinja"

HOSTILE = {
    "range(10**7) unrolled": "{% for i in range(10000000) %}{{ i }}{% endfor %}",
    "nested range(100000)": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{{ j }}{% endfor %}{% endfor %}"
    ),
    "string doubled 64 times": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"
    ),
    "'ab' * 10**10": "{{ 'ab' * 10000000000 }}",
    "macro calling itself twice, 40 deep": (
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}x{% endmacro %}{{ f(40) }}"
    ),
}

CHILD = """
import sys
from pathlib import Path
from ollama_fc.convert import convert
from ollama_fc.errors import OllamaFcError
try:
    if sys.argv[1] == "path":
        convert(Path(sys.argv[2]))
    else:
        convert(template=sys.argv[2])
    print("converted")
except OllamaFcError as exc:
    print(exc)
"""


def run(kind: str, value: str) -> tuple[float, int, str]:
    """Wall seconds, peak resident MB and the one line printed, for one conversion."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind, value], stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    assert child.stdout is not None
    line = child.stdout.read().strip()
    child.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss // 1024, line


def measure() -> list[Row]:
    anchor_seconds, anchor_mb, _ = run("path", str(ANCHOR))
    rows = []
    for name, template in HOSTILE.items():
        seconds, mb, line = run("template", template)
        rows.append(
            Row(
                f"hostile: {name} / largest corpus template",
                f"{seconds:.2f} s, {mb} MB",
                f"{anchor_seconds:.2f} s, {anchor_mb} MB",
                seconds / anchor_seconds,
                line[:90],
            )
        )
    return rows


if __name__ == "__main__":
    print_table(measure())
