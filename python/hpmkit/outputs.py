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
    _check_parents(p, option)


def check_folder(path: str | os.PathLike, option: str = "output") -> None:
    """As check(), for an output that is a folder (made when missing): refused before any
    work when it is a file or lies under one, or when it cannot be made or written."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {p}: is a file, not a folder")
    _check_parents(p, option, include_self=True)


def _check_parents(p: Path, option: str, include_self: bool = False) -> None:
    """The nearest existing folder above p (or p itself) must be a folder we can write in."""
    for d in ([p.absolute()] if include_self else []) + list(p.absolute().parents):
        if d.exists():
            if not d.is_dir():
                raise UsageError(f"{option} {p}: {d} is not a folder")
            if not os.access(d, os.W_OK | os.X_OK):
                raise UsageError(f"{option} {p}: cannot write in {d} (permission denied)")
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
