"""Typed decoders of the side records every room needs: MMAP/MMAP2, COMM, FORK/EXIT.

One decoder per record kind, so the profile ingest, SPE's load bias and the lab read a
mapping or a task the same way (signed pids: -1 is the kernel's, not 4294967295; MMAP2's
build-id form; the executable test). They decode; what a record means for a profile (perf's
naming of JIT memory, which maps are the kernel's, thread name inheritance) stays with the
room that uses it. A record too short for its fixed fields raises struct.error, which the
callers turn into their own message with the record's offset.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from . import format as F

PROT_EXEC = 4
MISC_MMAP_DATA = 1 << 13        # MMAP (no prot field): a data mapping (perf record -d)
_TASK = struct.Struct("<iiii")  # pid, ppid, tid, ptid (FORK and EXIT share the layout)
_IDS = struct.Struct("<iiQQQ")  # pid, tid, start, len, pgoff (MMAP and MMAP2 begin alike)


def _cstr(b) -> str:
    return bytes(b).split(b"\0", 1)[0].decode("utf-8", "replace")


@dataclass(frozen=True)
class Mmap:
    """A mapping from PERF_RECORD_MMAP or MMAP2: where a file was loaded."""
    pid: int
    tid: int
    start: int
    length: int
    pgoff: int
    filename: str
    exec: bool                  # MMAP2: PROT_EXEC; MMAP: not flagged as data
    cpumode: int                # header.misc & MISC_CPUMODE_MASK (kernel maps say so here)
    build_id: bytes | None = None   # MMAP2 with MISC_MMAP_BUILD_ID (at most 20 bytes)
    prot: int | None = None     # MMAP2 only
    flags: int | None = None    # MMAP2 only

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass(frozen=True)
class Comm:
    """PERF_RECORD_COMM: a thread's new name; exec when it came with an exec."""
    pid: int
    tid: int
    comm: str
    exec: bool


@dataclass(frozen=True)
class Task:
    """PERF_RECORD_FORK or EXIT: a thread and its parent."""
    pid: int
    ppid: int
    tid: int
    ptid: int
    time: int


def mmap(rec) -> Mmap:
    """Decode a MMAP or MMAP2 record (rec: hpmkit.perfdata.Record)."""
    p = rec.payload
    pid, tid, start, length, pgoff = _IDS.unpack_from(p, 0)
    cpumode = rec.misc & F.MISC_CPUMODE_MASK
    if rec.type == F.REC["MMAP"]:
        return Mmap(pid, tid, start, length, pgoff, _cstr(p[32:]),
                    not rec.misc & MISC_MMAP_DATA, cpumode)
    bid = None
    if rec.misc & F.MISC_MMAP_BUILD_ID:
        # the build-id form replaces maj/min/ino/ino_generation by size, 3 pad, 20 bytes
        n = p[32]
        bid = bytes(p[36:36 + min(n, 20)]) or None
    prot, flags = struct.unpack_from("<II", p, 56)
    return Mmap(pid, tid, start, length, pgoff, _cstr(p[64:]), bool(prot & PROT_EXEC), cpumode,
                bid, prot, flags)


def comm(rec, trailer: int = 0) -> Comm:
    """Decode a COMM record; trailer: bytes of its sample_id trailer (PerfData.trailer_size),
    which follow the name and are not part of it."""
    p = rec.payload
    pid, tid = struct.unpack_from("<ii", p, 0)
    return Comm(pid, tid, _cstr(p[8:len(p) - trailer]), bool(rec.misc & F.MISC_COMM_EXEC))


def fork(rec) -> Task:
    """Decode a FORK (or EXIT: the same layout) record."""
    pid, ppid, tid, ptid = _TASK.unpack_from(rec.payload, 0)
    # the time field is only read when present: the ids are what every caller needs
    time = struct.unpack_from("<Q", rec.payload, 16)[0] if len(rec.payload) >= 24 else 0
    return Task(pid, ppid, tid, ptid, time)
