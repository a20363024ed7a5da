"""The C record scanner (build/native/libhpmperf.so) behind a small Python API.

scan(pd) streams the data section of an open PerfData through the scanner once (file or pipe
mode, compressed records decompressed on the way) and returns numpy columns: samples (attr,
pid, tid, time, cpu, period, stack; with extra=True also off, ip, addr, mode, nbranch), the
deduplicated raw call chains per (pid, chain), group-read rows, and every other record (offset,
type, time, the event of its trailer, the number of samples before it, and a copy of its bytes
for the types asked for). Each sample and record also gets its place in perf's delivery order
(dseq; see perfdata_order.c).
It knows no policy: deltas, symbols and comm names are the caller's.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from .. import native
from . import format as F
from .reader import COMPRESSED, STREAM_TYPES, PerfData, Record

CHUNK = 1 << 20   # records per native call: progress granularity, not a limit
PD_MORE, PD_STOP, PD_LIMIT = 0, 1, 2
# records the stream handles in Python: the scanner stops at them
STOP_TYPES = set(COMPRESSED) | set(STREAM_TYPES) | {F.REC["HEADER_ATTR"]}
# perf-synthesised records that tell the reader about the file (names, features...)
USER_INFO = {F.REC[n] for n in ("HEADER_FEATURE", "EVENT_UPDATE", "HEADER_BUILD_ID",
                                "TIME_CONV", "AUXTRACE_INFO")}


class _Attr(ctypes.Structure):
    _fields_ = [("sample_type", ctypes.c_uint64), ("read_format", ctypes.c_uint64),
                ("regs_user_n", ctypes.c_uint32), ("regs_intr_n", ctypes.c_uint32),
                ("branch_hw_index", ctypes.c_uint32), ("branch_counters", ctypes.c_uint32),
                ("sample_id_all", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


# column numbers of perfdata_scan.c `enum col`, with their numpy types
_COLS = [("off", np.uint64), ("attr", np.int32), ("ip", np.uint64), ("pid", np.int32),
         ("tid", np.int32), ("time", np.uint64), ("cpu", np.int32), ("period", np.uint64),
         ("addr", np.uint64), ("mode", np.uint8), ("stack", np.int32),
         ("dseq", np.uint64), ("nbranch", np.uint32),
         ("read_sample", np.uint64), ("read_member", np.int32), ("read_id", np.uint64),
         ("read_value", np.uint64),
         ("stack_pid", np.int32), ("stack_start", np.uint64), ("stack_len", np.uint32),
         ("chain", np.uint64), ("other_off", np.uint64), ("other_type", np.uint32),
         ("other_before", np.uint64), ("other_time", np.uint64), ("other_attr", np.int32),
         ("other_start", np.uint64), ("other_len", np.uint32), ("other_dseq", np.uint64),
         ("blob", np.uint8)]

_lib = None
U64P = ctypes.POINTER(ctypes.c_uint64)


def _load():
    global _lib
    if _lib is None:
        lib = native.load("hpmperf")
        lib.pdscan__new.restype = ctypes.c_void_p
        lib.pdscan__new.argtypes = [ctypes.POINTER(_Attr), ctypes.c_uint32]
        lib.pdscan__add_attrs.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Attr), ctypes.c_uint32]
        lib.pdscan__delete.argtypes = [ctypes.c_void_p]
        lib.pdscan__keep_extra.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.pdscan__set_types.argtypes = [ctypes.c_void_p, U64P, U64P]
        lib.pdscan__reserve.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        lib.pdscan__add_ids.argtypes = [ctypes.c_void_p, U64P, ctypes.c_uint32, ctypes.c_int32]
        lib.pdscan__run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                    ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                                    ctypes.c_uint64, U64P]
        lib.pdscan__note.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p,
                                     ctypes.c_uint64]
        lib.pdscan__count.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64]
        lib.pdscan__column.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_void_p), U64P]
        lib.pdscan__type_counts.restype = U64P
        lib.pdscan__type_counts.argtypes = [ctypes.c_void_p]
        lib.pdscan__unknown_ids.restype = ctypes.c_uint64
        lib.pdscan__unknown_ids.argtypes = [ctypes.c_void_p]
        lib.pdscan__error.restype = ctypes.c_char_p
        lib.pdscan__error.argtypes = [ctypes.c_void_p, U64P]
        lib.pdorder.argtypes = [U64P, ctypes.c_uint64, U64P, U64P,
                                ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint64, U64P, U64P]
        _lib = lib
    return _lib


@dataclass
class ScanResult:
    cols: dict[str, np.ndarray]
    type_counts: dict[int, int]     # records seen per type
    unknown_ids: int                # samples whose id matched no attr (not in cols)
    user: list[Record] = field(default_factory=list)   # the perf-synthesised info records

    def other_records(self, types: Iterable[int] | None = None) -> list[tuple[int, Record]]:
        """(delivery number, Record) of the copied non-SAMPLE records, in delivery order."""
        c = self.cols
        want = None if types is None else set(types)
        blob = c["blob"]
        out = []
        for k in np.argsort(c["other_dseq"], kind="stable").tolist():
            ln = int(c["other_len"][k])
            t = int(c["other_type"][k])
            if not ln or (want is not None and t not in want):
                continue
            s = int(c["other_start"][k])
            raw = blob[s:s + ln].tobytes()
            misc, size = int.from_bytes(raw[4:6], "little"), int.from_bytes(raw[6:8], "little")
            out.append((int(c["other_dseq"][k]), Record(int(c["other_off"][k]), t, misc, size,
                                                        raw[8:])))
        return out


def _cattr(a) -> _Attr:
    return _Attr(a.sample_type, a.read_format, bin(a.sample_regs_user).count("1"),
                 bin(a.sample_regs_intr).count("1"),
                 int(bool(a.branch_sample_type & F.BRANCH_HW_INDEX)),
                 int(bool(a.branch_sample_type & F.BRANCH_COUNTERS)), int(a.sample_id_all), 0)


def _bitmap(types) -> ctypes.Array:
    m = (ctypes.c_uint64 * 4)()
    for t in types:
        m[t >> 6] |= 1 << (t & 63)
    return m


class _Native:
    """The scanner as the reader's bulk consumer."""

    def __init__(self, pd: PerfData, copy: set[int], extra: bool):
        self.lib = lib = _load()
        self.pd = pd
        arr = (_Attr * max(len(pd.attrs), 1))(*[_cattr(a) for a in pd.attrs])
        self.h = lib.pdscan__new(arr, len(pd.attrs))
        if not self.h:
            raise MemoryError("pdscan__new")
        self.owner = _Handle(lib, self.h)   # frees the C columns with the last array using them
        lib.pdscan__keep_extra(self.h, int(extra))
        lib.pdscan__set_types(self.h, _bitmap(copy | USER_INFO), _bitmap(STOP_TYPES))
        if pd.data_end is not None:
            # a sample takes >= 24 bytes: untouched reserved pages cost nothing, copies would
            if lib.pdscan__reserve(self.h, (pd.data_end - pd.data_offset) // 24 + 1) < 0:
                raise MemoryError("pdscan__reserve")
        for a in pd.attrs:
            self._ids(a)
        self.nxt = ctypes.c_uint64()

    def _ids(self, a) -> None:
        if a.ids:
            ids = (ctypes.c_uint64 * len(a.ids))(*a.ids)
            if self.lib.pdscan__add_ids(self.h, ids, len(a.ids), a.index) < 0:
                raise MemoryError("pdscan__add_ids")

    def add_attrs(self, attrs) -> None:
        arr = (_Attr * len(attrs))(*[_cattr(a) for a in attrs])
        if self.lib.pdscan__add_attrs(self.h, arr, len(attrs)) < 0:
            raise MemoryError("pdscan__add_attrs")
        for a in attrs:
            self._ids(a)

    def __call__(self, src, off_fixed) -> None:
        rc = self.lib.pdscan__run(self.h, src.addr, src.lo, src.hi, src.base,
                                  (1 << 64) - 1 if off_fixed is None else off_fixed, CHUNK,
                                  ctypes.byref(self.nxt))
        src.lo = self.nxt.value
        if rc == -12:
            raise MemoryError("perf.data scan")
        if rc < 0:
            off = ctypes.c_uint64()
            why = self.lib.pdscan__error(self.h, ctypes.byref(off)).decode()
            raise self.pd.error(off.value, why)

    def note(self, rec: Record) -> None:
        raw = _pack(rec)
        if self.lib.pdscan__note(self.h, rec.offset, raw, len(raw)) < 0:
            raise MemoryError("pdscan__note")

    def count(self, typ: int) -> None:
        self.lib.pdscan__count(self.h, typ, 1)


def _pack(rec: Record) -> bytes:
    return rec.type.to_bytes(4, "little") + rec.misc.to_bytes(2, "little") + \
        rec.size.to_bytes(2, "little") + rec.payload


def scan(pd: PerfData, progress: Callable[[int, int | None], None] | None = None,
         extra: bool = False, copy: Iterable[int] = ()) -> ScanResult:
    """Decode every record of pd's data section. progress(done_bytes, total_bytes) is called
    now and then. extra=True also returns per-sample off, ip, addr, mode and nbranch columns;
    `copy`: record types whose bytes are kept (other_records())."""
    nat = _Native(pd, set(copy), extra)
    listener = nat.add_attrs
    pd._attr_listeners.append(listener)
    try:
        pd.truncation = None
        if pd.pipe:
            for rec in pd._prelude_records:
                nat.note(rec)
        for _ in pd._walk(pd._source(), native=nat, progress=progress):
            pass
    finally:
        pd._attr_listeners.remove(listener)
    lib, h = nat.lib, nat.h
    cols = {}
    for i, (name, dt) in enumerate(_COLS):
        p, n = ctypes.c_void_p(), ctypes.c_uint64()
        lib.pdscan__column(h, i, ctypes.byref(p), ctypes.byref(n))
        if name in ("dseq", "other_dseq"):
            continue
        if n.value:
            # zero-copy view of the C column; the buffer object keeps the handle alive
            buf = (ctypes.c_char * (n.value * np.dtype(dt).itemsize)).from_address(p.value)
            buf._owner = nat.owner
            cols[name] = np.frombuffer(buf, dtype=dt)
        else:
            cols[name] = np.zeros(0, dtype=dt)
    ns, no = len(cols["attr"]), len(cols["other_before"])
    cols["dseq"] = np.zeros(ns, np.uint64)
    cols["other_dseq"] = np.zeros(no, np.uint64)
    ptr = lambda a, t=ctypes.c_uint64: a.ctypes.data_as(ctypes.POINTER(t))  # noqa: E731
    if lib.pdorder(ptr(cols["time"]), ns, ptr(cols["other_before"]),
                   ptr(cols["other_time"]), ptr(cols["other_type"], ctypes.c_uint32), no,
                   ptr(cols["dseq"]), ptr(cols["other_dseq"])) < 0:
        raise MemoryError("pdorder")
    tc = lib.pdscan__type_counts(h)
    counts = {t: tc[t] for t in range(256) if tc[t]}
    res = ScanResult(cols, counts, lib.pdscan__unknown_ids(h))
    # names, features and build ids announced in the stream (pipe mode)
    for _d, rec in res.other_records(USER_INFO):
        if rec.type != F.REC["HEADER_ATTR"]:
            pd.apply_user(rec)
    pd._apply_event_desc()
    return res


class _Handle:
    def __init__(self, lib, h):
        self.lib, self.h = lib, h

    def __del__(self):
        self.lib.pdscan__delete(self.h)
