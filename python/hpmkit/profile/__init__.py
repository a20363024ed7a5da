"""Profiles: one columnar model (model.Profile) for perf.data and perf-script recordings.

    ingest(path, kallsyms=None, progress=None) -> Profile
detects perf.data by its PERFILE2 magic, otherwise parses perf script text (or folded stacks).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable

from ..errors import ReadError
from .model import Profile, refuse_perf_directory

__all__ = ["Profile", "ingest"]


def ingest(path: str | os.PathLike, *, kallsyms: str | None = None, symfs: str | None = None,
           srcline: str = "own", progress: Callable[[str, int, int], None] | None = None) -> Profile:
    """Read a perf.data file or perf script / folded text into a Profile.
    progress(stage, done, total) is called during long reads. srcline: "own" (DWARF lines
    of files that carry their own debug info), "all" (also separate debug files), "none"."""
    path = os.fspath(path)
    refuse_perf_directory(path)
    if path != "-" and _is_stream(path):
        # a FIFO or a process substitution (<(...)) can be read once: copy it to a temporary
        # file, which the readers can seek in and open again (reading it twice would hang)
        import shutil
        import tempfile
        with tempfile.NamedTemporaryFile(prefix="hpmkit-stream-", delete=True) as tmp:
            try:
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, tmp, 1 << 20)
            except OSError as e:
                raise ReadError(path, f"cannot read: {e.strerror}") from e
            tmp.flush()
            if tmp.tell() == 0:
                raise ReadError(path, "the stream is empty (zero-sized data, nothing to do)",
                                "give the recording, or start its writer first")
            prof = ingest(tmp.name, kallsyms=kallsyms, symfs=symfs, srcline=srcline, progress=progress)
        src_meta = prof.meta.get("source")
        if isinstance(src_meta, dict):
            src_meta["path"] = path
        return prof
    if path == "-":
        # standard input: `perf record -o - | hpmkit profile import -` (pipe-mode perf.data)
        from .perfdata_ingest import ingest_perfdata
        return ingest_perfdata(path, kallsyms=kallsyms, symfs=symfs, srcline=srcline,
                               progress=progress)
    try:
        with open(path, "rb") as f:
            head = f.read(4096)   # the magic, and enough to tell text from binary
    except OSError as e:
        raise ReadError(path, f"cannot open: {e.strerror}") from e
    from ..perfdata.format import MAGICS
    if head[:8] in MAGICS:      # PERFILE2, its big-endian spelling, the legacy PERFFILE
        from .perfdata_ingest import ingest_perfdata
        return ingest_perfdata(path, kallsyms=kallsyms, symfs=symfs, srcline=srcline,
                               progress=progress)
    _not_a_recording(path, head)
    from .script_ingest import ingest_text
    return ingest_text(path, progress=progress)


def _is_stream(path: str) -> bool:
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


# Files users pass by mistake, known by their first bytes: each gets a message naming what it
# is and what to import instead (a text parser would quote their raw bytes back).
_MAGIC = (
    (b"\x7fELF", "an ELF file (a program or library), not a recording",
     "record it with 'hpm record -g -- PROGRAM' or 'perf record -g -- PROGRAM' and import the perf.data"),
    (b"\x1f\x8b", "a gzip-compressed file", "decompress it first (gunzip), then import the perf.data or text"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "decompress it first (zstd -d), then import it"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first (unxz), then import it"),
    # "BZh", the block size digit, then the first block's magic (or the end of an empty stream):
    # text may begin with "BZh"
    (re.compile(rb"BZh[1-9](\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)"),
     "a bzip2-compressed file", "decompress it first (bunzip2), then import it"),
    (b"PAR1", "a Parquet file, not a recording",
     "import the recording itself; a profile folder (NAME.hpmprof) is read as it is"),
)


def _not_a_recording(path: str, head: bytes) -> None:
    from ..errors import FormatError
    for magic, what, hint in _MAGIC:
        if magic.match(head) if isinstance(magic, re.Pattern) else head.startswith(magic):
            raise FormatError(path, what, hint)
    if b"\0" in head:
        raise FormatError(path, "a binary file that is neither perf.data (no PERFILE2 magic) nor text",
                          "give a perf.data file, perf script output or folded stacks")
