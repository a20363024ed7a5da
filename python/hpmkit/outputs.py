"""Files the commands write: checked before the work starts, written whole or not at all.

A report that took a minute to compute must not end in a traceback because its folder does
not exist, and an interrupted command (Ctrl-C) or a full disk must not leave half a file
under the name the user gave: text goes to a temporary file beside the destination and is
renamed over it only when complete. Missing folders are made. A write that fails anyway (a
full disk, a folder that takes no files) is one line naming the file, the cause and what to do
(errors.OutputError), never a traceback.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import UsageError, write_error


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


def write_text(path: str | os.PathLike, text: str, option: str | None = None) -> None:
    """Write `text` to `path` atomically (temporary file + rename), making missing folders.

    A failure (a full disk, a folder that takes no files, permissions) is an OutputError: one
    line naming the file, the cause and what to do (`option`, e.g. "--html", is the option to
    give another file to), with nothing left behind. An existing path that is not a regular
    file (/dev/null, /dev/stdout, a FIFO) is written in place: renaming over it would replace
    the device, not write to it. A symbolic link to a file is followed (the link stays)."""
    path = given = Path(path)
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        _write_in_place(path, text, option)
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    parent = path.parent if str(path.parent) else Path(".")
    tmp = None
    made = [d for d in [parent.absolute(), *parent.absolute().parents] if not d.exists()]
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)   # closing flushes: a full disk may fail only here
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
        tmp = made = None
    except OSError as e:
        raise write_error(given, e, option) from None
    finally:
        if tmp is not None:   # failed or interrupted: no temporary file left behind,
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in made or ():  # nor a folder made for it
            try:
                d.rmdir()
            except OSError:
                break


def _write_in_place(path: Path, text: str, option: str | None) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise write_error(path, e, option, partial=True) from None
