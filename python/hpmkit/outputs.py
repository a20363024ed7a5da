"""Files the commands write: checked before the work starts, written whole or not at all.

A report that took a minute to compute must not end in a traceback because its folder does
not exist, and an interrupted command (Ctrl-C) or a full disk must not leave half a file
under the name the user gave: text goes to a temporary file beside the destination and is
renamed over it only when complete. Missing folders are made.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UsageError


def check(path: str | os.PathLike | None, option: str = "output") -> None:
    """Refuse, before any work, an output that can never be written: a folder given as the
    file, or a path through something that is not a folder. A missing folder is fine (it is
    made when the file is written)."""
    if path is None or os.fspath(path) in ("", "-"):
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} {p}: is a folder; give a file name")
    for parent in p.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{option} {p}: {parent} is not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UsageError(f"{option} {p}: cannot write in {parent} (permission denied)")
            break


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` atomically (temporary file + rename), making missing folders."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
