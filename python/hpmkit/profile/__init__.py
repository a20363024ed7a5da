"""Profiles: one columnar model (model.Profile) for perf.data and perf-script recordings.

    ingest(path, kallsyms=None, progress=None) -> Profile
detects perf.data by its PERFILE2 magic, otherwise parses perf script text (or folded stacks).
"""
from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import ReadError
from .model import Profile

__all__ = ["Profile", "ingest"]


def ingest(path: str | os.PathLike, *, kallsyms: str | None = None, symfs: str | None = None,
           srcline: str = "own", progress: Callable[[str, int, int], None] | None = None) -> Profile:
    """Read a perf.data file or perf script / folded text into a Profile.
    progress(stage, done, total) is called during long reads. srcline: "own" (DWARF lines
    of files that carry their own debug info), "all" (also separate debug files), "none"."""
    path = os.fspath(path)
    if path == "-":
        # standard input: `perf record -o - | hpmkit profile import -` (pipe-mode perf.data)
        from .perfdata_ingest import ingest_perfdata
        return ingest_perfdata(path, kallsyms=kallsyms, symfs=symfs, srcline=srcline,
                               progress=progress)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise ReadError(path, f"cannot open: {e.strerror}") from e
    if head in (b"PERFILE2", b"2ELIFREP", b"PERFFILE"):   # PERFFILE: the legacy header
        from .perfdata_ingest import ingest_perfdata
        return ingest_perfdata(path, kallsyms=kallsyms, symfs=symfs, srcline=srcline,
                               progress=progress)
    from .script_ingest import ingest_text
    return ingest_text(path, progress=progress)
