"""Reference renders of an untrusted template within a time and memory bound.

The converter renders a template as transformers does to read its capabilities and stop
tokens. A template may loop for minutes (a macro calling itself twice per level) or double a
string until memory runs out, inside jinja2 where no check of ours runs. A timer interrupts the
render between two Python steps: past the deadline or past a growth of the process's memory it
raises ConversionError naming the template line being rendered. Signals reach only the main
thread, and the timer is not set while the caller has one of its own (ITIMER_REAL): then the
renders run unbounded.
"""

from __future__ import annotations

import resource
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from ..errors import ConversionError
from .reference import compile_template

#: how often the timer looks (seconds)
TICK = 0.02
#: how much the process may grow while rendering (bytes); probe renders need a few MB
DEFAULT_MAX_GROWTH = 256 << 20


def _resident_bytes() -> int:
    """The process's resident memory now (Linux), else its peak so far."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _template_line(template: str, frame: FrameType | None) -> int | None:
    """The line of the template being rendered at `frame` (jinja2 maps its generated code)."""
    compiled = compile_template(template)
    while frame is not None:
        if frame.f_code.co_filename == "<template>":
            return compiled.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return None


@contextmanager
def bounded_renders(
    template: str, started: float, seconds: float, max_growth: int = DEFAULT_MAX_GROWTH
) -> Iterator[None]:
    """Renders of `template` inside stop with ConversionError once `seconds` have passed since
    `started` (a `time.monotonic()`) or once the process has grown by `max_growth` bytes."""
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield  # signals reach only the main thread, and a caller's own timer is left alone
        return
    deadline = started + seconds
    ceiling = _resident_bytes() + max_growth

    def check(signum: int, frame: FrameType | None) -> None:
        if time.monotonic() > deadline:
            why = (
                f"takes longer than {seconds:g} s to render as transformers does "
                "(raise the limit with max_seconds= or --max-seconds if the template is trusted)"
            )
        elif _resident_bytes() > ceiling:
            why = f"needs more than {max_growth >> 20} MB to render as transformers does"
        else:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        line = _template_line(template, frame)
        raise ConversionError(f"line {line if line is not None else '?'}: the template {why}")

    previous = signal.signal(signal.SIGALRM, check)
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
