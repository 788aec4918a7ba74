"""Writing a file so that a failure leaves the old one whole."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from .errors import OllamaFcError

#: why a path with a name over the file system's limit cannot be opened
TOO_LONG = "the path is too long: a file or folder name has at most 255 bytes"


def short_path(path: str | os.PathLike[str], keep: int = 200) -> str:
    """A path fit for a one-line message: the middle of a very long one left out."""
    text = str(path)
    return text if len(text) <= keep else f"{text[: keep // 2]}...{text[-keep // 2 :]}"


def write_text_atomically(path: str | os.PathLike[str], text: str, *, hint: str = "") -> None:
    """Write `text` to a temporary file beside `path`, then put it in place in one step: a full
    disk or a killed process leaves the old file as it was. A failure is one OllamaFcError line
    (`hint` says what to do)."""
    target = Path(path)
    temporary: str | None = None
    try:
        mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".ofc-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        reason = TOO_LONG if exc.errno == errno.ENAMETOOLONG else (exc.strerror or str(exc))
        raise OllamaFcError(f"cannot write {short_path(target)}: {reason}{'; ' + hint if hint else ''}") from None
    finally:  # whatever failed, no temporary file is left behind
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _default_mode() -> int:
    """What a new file gets under the process's umask (mkstemp makes it private)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
