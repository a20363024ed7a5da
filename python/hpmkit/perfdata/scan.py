"""The C record scanner (build/native/libhpmperf.so) behind a small Python API.

scan(pd) walks the data section of an open PerfData once and returns numpy columns:
samples (offset, attr, ip, pid, tid, time, cpu, period, addr, cpumode, stack), the
deduplicated raw call chains per (pid, chain), group-read rows, and the offsets of every
non-SAMPLE record. It knows no policy: deltas, symbols and comm names are the caller's.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import native
from . import format as F
from .reader import PerfData

CHUNK = 1 << 20   # records per native call: progress granularity, not a limit


class _Attr(ctypes.Structure):
    _fields_ = [("sample_type", ctypes.c_uint64), ("read_format", ctypes.c_uint64),
                ("regs_user_n", ctypes.c_uint32), ("regs_intr_n", ctypes.c_uint32),
                ("branch_hw_index", ctypes.c_uint32), ("branch_counters", ctypes.c_uint32)]


# column numbers of perfdata_scan.c `enum col`, with their numpy types
_COLS = [("off", np.uint64), ("attr", np.int32), ("ip", np.uint64), ("pid", np.int32),
         ("tid", np.int32), ("time", np.uint64), ("cpu", np.int32), ("period", np.uint64),
         ("addr", np.uint64), ("mode", np.uint8), ("stack", np.int32),
         ("read_sample", np.uint64), ("read_member", np.int32), ("read_id", np.uint64),
         ("read_value", np.uint64),
         ("stack_pid", np.int32), ("stack_start", np.uint64), ("stack_len", np.uint32),
         ("chain", np.uint64), ("other_off", np.uint64), ("other_type", np.uint32)]

_lib = None


def _load():
    global _lib
    if _lib is None:
        lib = native.load("hpmperf")
        lib.pdscan__new.restype = ctypes.c_void_p
        lib.pdscan__new.argtypes = [ctypes.POINTER(_Attr), ctypes.c_uint32]
        lib.pdscan__delete.argtypes = [ctypes.c_void_p]
        lib.pdscan__keep_extra.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.pdscan__reserve.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        lib.pdscan__add_ids.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                        ctypes.c_uint32, ctypes.c_int32]
        lib.pdscan__run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                    ctypes.c_uint64, ctypes.c_uint64,
                                    ctypes.POINTER(ctypes.c_uint64)]
        lib.pdscan__column.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_uint64)]
        lib.pdscan__type_counts.restype = ctypes.POINTER(ctypes.c_uint64)
        lib.pdscan__type_counts.argtypes = [ctypes.c_void_p]
        lib.pdscan__unknown_ids.restype = ctypes.c_uint64
        lib.pdscan__unknown_ids.argtypes = [ctypes.c_void_p]
        lib.pdscan__error.restype = ctypes.c_char_p
        lib.pdscan__error.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]
        _lib = lib
    return _lib


@dataclass
class ScanResult:
    cols: dict[str, np.ndarray]
    type_counts: dict[int, int]     # records seen per type
    unknown_ids: int                # samples whose id matched no attr (not in cols)


def scan(pd: PerfData, progress: Callable[[int, int], None] | None = None,
         extra: bool = False) -> ScanResult:
    """Decode every record of pd's data section. progress(done_bytes, total_bytes) is called
    between chunks. extra=True also returns per-sample off, ip, addr and mode columns."""
    lib = _load()
    arr = (_Attr * len(pd.attrs))()
    for i, a in enumerate(pd.attrs):
        arr[i] = _Attr(a.sample_type, a.read_format, bin(a.sample_regs_user).count("1"),
                       bin(a.sample_regs_intr).count("1"),
                       int(bool(a.branch_sample_type & F.BRANCH_HW_INDEX)),
                       int(bool(a.branch_sample_type & F.BRANCH_COUNTERS)))
    h = lib.pdscan__new(arr, len(pd.attrs))
    if not h:
        raise MemoryError("pdscan__new")
    owner = _Handle(lib, h)     # frees the C columns when the last array using them goes
    lib.pdscan__keep_extra(h, int(extra))
    # a sample takes >= 24 bytes: untouched reserved pages cost nothing, copies would
    if lib.pdscan__reserve(h, pd.data_size // 24 + 1) < 0:
        raise MemoryError("pdscan__reserve")
    for a in pd.attrs:
        if a.ids:
            ids = (ctypes.c_uint64 * len(a.ids))(*a.ids)
            if lib.pdscan__add_ids(h, ids, len(a.ids), a.index) < 0:
                raise MemoryError("pdscan__add_ids")
    base = np.frombuffer(pd.map, dtype=np.uint8)
    ptr = base.ctypes.data
    pos, end = pd.data_offset, pd.data_offset + pd.data_size
    nxt = ctypes.c_uint64()
    try:
        while pos < end:
            rc = lib.pdscan__run(h, ptr, pos, end, CHUNK, ctypes.byref(nxt))
            if rc == -12:
                raise MemoryError("perf.data scan")
            if rc < 0:
                off = ctypes.c_uint64()
                why = lib.pdscan__error(h, ctypes.byref(off)).decode()
                raise pd.error(off.value, why)
            pos = nxt.value
            if progress:
                progress(pos - pd.data_offset, pd.data_size)
    finally:
        del base
    cols = {}
    for i, (name, dt) in enumerate(_COLS):
        p, n = ctypes.c_void_p(), ctypes.c_uint64()
        lib.pdscan__column(h, i, ctypes.byref(p), ctypes.byref(n))
        if n.value:
            # zero-copy view of the C column; the buffer object keeps the handle alive
            buf = (ctypes.c_char * (n.value * np.dtype(dt).itemsize)).from_address(p.value)
            buf._owner = owner
            cols[name] = np.frombuffer(buf, dtype=dt)
        else:
            cols[name] = np.zeros(0, dtype=dt)
    tc = lib.pdscan__type_counts(h)
    counts = {t: tc[t] for t in range(256) if tc[t]}
    return ScanResult(cols, counts, lib.pdscan__unknown_ids(h))


class _Handle:
    def __init__(self, lib, h):
        self.lib, self.h = lib, h

    def __del__(self):
        self.lib.pdscan__delete(self.h)
