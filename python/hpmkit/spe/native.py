"""ctypes binding of the C SPE decoder (src/native/spe_*.c, build/native/libhpmspe.so).

numpy is imported only when records are asked for as numpy arrays: `hpmkit spe decode` without
filters or symbols moves records from the decoder to the table writer as raw buffers, and saves
numpy's import (a good part of its run time on a small file).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, fields

from .. import native

RECORD_SIZE = 96  # sizeof(struct spe_record), checked against the library at load

# numpy mirror of struct spe_record (src/native/spe.h), made on first use (RECORD_DTYPE)
_RECORD_FIELDS = [
    ("pc", "<u8"), ("tgt", "<u8"), ("vaddr", "<u8"), ("paddr", "<u8"), ("pbt", "<u8"),
    ("ts", "<u8"), ("events", "<u8"), ("offset", "<u8"),
    ("context", "<u4"), ("total_lat", "<u2"), ("issue_lat", "<u2"), ("xlat_lat", "<u2"),
    ("data_source", "<u2"), ("present", "<u2"),
    ("op_class", "u1"), ("op", "u1"), ("pc_el", "u1"), ("pc_ns", "u1"), ("tgt_el", "u1"),
    ("pbt_el", "u1"), ("pa_ns", "u1"), ("ctx_el", "u1"), ("op_flags", "u1"), ("_pad", "u1"),
    ("cpu", "<i4"), ("tid", "<i4"),
]
_dtype = None


def record_dtype():
    global _dtype
    if _dtype is None:
        import numpy as np
        _dtype = np.dtype(_RECORD_FIELDS)
        assert _dtype.itemsize == RECORD_SIZE
    return _dtype


def __getattr__(name: str):
    if name == "RECORD_DTYPE":  # `from .native import RECORD_DTYPE` imports numpy then
        return record_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer: the address of any contiguous buffer, read-only ones included."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]


_EMPTY = ctypes.create_string_buffer(1)  # what an empty chunk points at (never NULL)
_EMPTY_ADDR = ctypes.addressof(_EMPTY)


class RawBatch:
    """Records as the C decoder wrote them (RECORD_SIZE bytes each), without numpy. release()
    hands the buffer back to its decoder for the next batch (fresh buffers cost page faults)."""
    __slots__ = ("buf", "n", "_pool")

    def __init__(self, buf: bytearray, n: int, pool: list | None = None):
        self.buf, self.n, self._pool = buf, n, pool

    def __len__(self) -> int:
        return self.n

    def address(self) -> int:
        return ctypes.addressof((ctypes.c_char * len(self.buf)).from_buffer(self.buf))

    def release(self) -> None:
        if self._pool is not None and len(self._pool) < 8:
            self._pool.append(self.buf)  # list.append is atomic: the decoder may be in another thread
        self.buf, self._pool, self.n = bytearray(), None, 0

HAS = {"pc": 1 << 0, "tgt": 1 << 1, "va": 1 << 2, "pa": 1 << 3, "pbt": 1 << 4, "ts": 1 << 5,
       "ev": 1 << 6, "ctx": 1 << 7, "tot": 1 << 8, "issue": 1 << 9, "xlat": 1 << 10,
       "ds": 1 << 11, "op": 1 << 12, "end": 1 << 13, "cut": 1 << 14}

# op_flags bits (spe.h SPE_OPF_*): perf's view of all operation type packets of a record
OPF = {"other": 1 << 0, "ldst": 1 << 1, "branch": 1 << 2, "sve_other": 1 << 3, "ld": 1 << 4, "st": 1 << 5,
       "sve_ldst": 1 << 6}

KIND_NAMES = ["BAD", "PAD", "END", "TIMESTAMP", "ADDRESS", "COUNTER", "CONTEXT", "OP_TYPE",
              "EVENTS", "DATA_SOURCE"]


class _Pkt(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint8), ("index", ctypes.c_uint8), ("len", ctypes.c_uint8),
                ("ext", ctypes.c_uint8), ("_pad", ctypes.c_uint32), ("payload", ctypes.c_uint64)]


class _Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "bytes", "packets", "pad_bytes", "records", "bad_bytes", "bad_runs", "dropped_records",
        "unterminated", "unknown_addr", "unknown_counter", "unknown_op_class", "first_bad_offset",
        "cut_records", "empty_cuts", "extra_events", "extra_op")]


@dataclass
class Stats:
    """What a decode saw and skipped; every skipped byte and dropped record is counted."""
    bytes: int = 0
    packets: int = 0
    pad_bytes: int = 0
    records: int = 0
    bad_bytes: int = 0
    bad_runs: int = 0
    dropped_records: int = 0
    unterminated: int = 0
    unknown_addr: int = 0
    unknown_counter: int = 0
    unknown_op_class: int = 0
    cut_records: int = 0
    empty_cuts: int = 0
    extra_events: int = 0
    extra_op: int = 0

    def add(self, other: "Stats") -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def problems(self) -> list[str]:
        """Human lines for everything that was skipped or dropped (empty when clean)."""
        out = []
        if self.bad_bytes:
            out.append(f"{self.bad_bytes} bad byte(s) skipped in {self.bad_runs} run(s) while resynchronising")
        if self.cut_records:
            out.append(f"{self.cut_records} record(s) cut short by a bad byte or an operation type of class 3, "
                       "kept with the packets they had (as perf samples them)")
        if self.empty_cuts:
            out.append(f"{self.empty_cuts} decode error(s) between records made no record "
                       "(perf makes an empty sample of each)")
        if self.dropped_records:
            out.append(f"{self.dropped_records} partial record(s) before the first complete record of their "
                       "stream dropped (broken by a bad byte or class-3 operation type, as perf drops them)")
        if self.unterminated:
            out.append(f"{self.unterminated} record(s) without END/TIMESTAMP at the end of the data dropped")
        if self.unknown_addr:
            out.append(f"{self.unknown_addr} address packet(s) with an unknown index ignored")
        if self.unknown_counter:
            out.append(f"{self.unknown_counter} counter packet(s) with an unknown index ignored")
        if self.unknown_op_class:
            out.append(f"{self.unknown_op_class} operation type packet(s) of reserved class 3 (each ends its record)")
        if self.extra_events:
            out.append(f"{self.extra_events} extra events packet(s) in a record: flags ORed (as perf)")
        if self.extra_op:
            out.append(f"{self.extra_op} extra operation type packet(s) in a record: merged (load/store over "
                       "branch over other; classes in op_flags)")
        return out


_lib = None


def lib() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        L = native.load("hpmspe")
        L.spe_pkt__decode.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.POINTER(_Pkt)]
        L.spe_pkt__desc.argtypes = [ctypes.POINTER(_Pkt), ctypes.c_char_p, ctypes.c_size_t]
        L.spe__dump.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_size_t,
                                ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        L.spe__dump.restype = ctypes.c_long
        L.spe_dec__new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        L.spe_dec__delete.argtypes = [ctypes.c_void_p]
        L.spe_dec__set_origin.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_uint64]
        L.spe_dec__feed.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                    ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        L.spe_dec__feed.restype = ctypes.c_long
        L.spe_dec__flush.argtypes = [ctypes.c_void_p]
        L.spe_dec__stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Stats)]
        L.spe__record_size.restype = ctypes.c_size_t
        P = ctypes.c_void_p
        L.spe_tabs__new.argtypes = [ctypes.POINTER(P), ctypes.c_int, ctypes.c_uint32]
        L.spe_tabs__delete.argtypes = [P]
        L.spe_tabs__open.argtypes = [P, ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
        L.spe_tabs__names.argtypes = [P, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.c_uint32]
        L.spe_tabs__add_symbols.argtypes = [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32]
        L.spe_tabs__add.argtypes = [P, P, ctypes.c_size_t, P, P]
        L.spe_tabs__finish.argtypes = [P]
        L.spe_tabs__rows.argtypes = [P, ctypes.POINTER(ctypes.c_uint64 * 4)]
        if L.spe__record_size() != RECORD_SIZE:
            raise RuntimeError(f"libhpmspe record size {L.spe__record_size()} != {RECORD_SIZE}: rebuild")
        _lib = L
    return _lib


def decode_packet(buf: bytes, pos: int = 0) -> tuple[int, str, int, int, str]:
    """One packet at buf[0:]: (length or negative error, kind, index, payload, perf description)."""
    p = _Pkt()
    n = lib().spe_pkt__decode(buf, len(buf), pos, ctypes.byref(p))
    if n <= 0:
        return n, "BAD", 0, 0, "Bad packet!"
    d = ctypes.create_string_buffer(256)
    lib().spe_pkt__desc(ctypes.byref(p), d, 256)
    return n, KIND_NAMES[p.kind], p.index, p.payload, d.value.decode()


def dump_lines(chunks, piece: int = 1 << 20):
    """`perf report -D` style listing of one SPE buffer given as an iterable of byte chunks;
    yields text blocks. Pieces of `piece` bytes keep the memory bounded for huge buffers."""
    look = 32  # a packet decode looks at most 16 bytes ahead
    pending = b""
    base = 0
    size = 0
    out = None
    used = ctypes.c_size_t()
    it = iter(chunks)
    done = False
    while not done:
        parts = [pending]
        have = len(pending)
        while have < piece + look:
            nxt = next(it, None)
            if nxt is None:
                done = True
                break
            parts.append(bytes(nxt))
            have += len(nxt)
        pending = b"".join(parts)
        limit = len(pending) if done else len(pending) - look
        pos = 0
        while pos < limit:
            take = min(piece, limit - pos)
            part = pending[pos:pos + take + look]
            if 110 * take + 64 > size:
                size = 110 * take + 64
                out = ctypes.create_string_buffer(size)
            n = lib().spe__dump(part, len(part), base + pos, take, out, size, ctypes.byref(used))
            if n < 0:
                raise RuntimeError("spe dump buffer too small")
            yield ctypes.string_at(out, n).decode()
            pos += used.value
        pending = pending[pos:]
        base += pos


def dump(buf: bytes) -> str:
    """`perf report -D` style listing of a raw SPE buffer (one line per packet)."""
    return "".join(dump_lines([buf]))


class Decoder:
    """One SPE stream (one AUX queue): feed chunks, get record batches: numpy arrays of
    RECORD_DTYPE, or RawBatch with arrays=False. Bounded memory."""

    def __init__(self, batch: int = 65536, arrays: bool = True):
        self._h = ctypes.c_void_p()
        rc = lib().spe_dec__new(ctypes.byref(self._h))
        if rc < 0:
            raise MemoryError("spe decoder")
        self._batch = batch
        self._arrays = arrays
        self._pool: list[bytearray] = []  # raw batch buffers handed back by RawBatch.release
        self._consumed = ctypes.c_size_t()

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and _lib is not None:
            _lib.spe_dec__delete(h)
            self._h = None

    def set_origin(self, cpu: int, tid: int, offset: int = 0) -> None:
        lib().spe_dec__set_origin(self._h, cpu, tid, offset)

    def feed(self, buf, last: bool = True):
        """Decode a bytes-like chunk; yields record batches as they fill (each a new one)."""
        mv = memoryview(buf).cast("B")
        n = len(mv)
        view = _PyBuffer()
        # the C decoder only reads: the address of read-only buffers (bytes, a read-only mmap)
        # too, without a copy
        _get_buffer(mv, ctypes.byref(view), 0)
        try:
            base, pos = view.buf, 0
            # sized for ~32-byte records (real ones are 32-64 bytes); denser data just takes
            # more rounds. Small batches come from the heap again and again instead of mmaps.
            cap = min(self._batch, max(1024, n // 32))
            feed = lib().spe_dec__feed
            if self._arrays:
                import numpy as np
                new = lambda: np.empty(cap, dtype=record_dtype())  # noqa: E731
                addr = lambda out: out.ctypes.data  # noqa: E731
            else:
                pool = self._pool

                def new():
                    while pool:
                        b = pool.pop()
                        if len(b) >= cap * RECORD_SIZE:
                            return b
                    return bytearray(cap * RECORD_SIZE)
                addr = lambda out: ctypes.addressof((ctypes.c_char * len(out)).from_buffer(out))  # noqa: E731
            out = new()  # handed out, not copied: a new one per batch
            while True:
                got = feed(self._h, base + pos if n else _EMPTY_ADDR, n - pos, int(last), addr(out), cap,
                           ctypes.byref(self._consumed))
                pos += self._consumed.value
                if got:
                    yield out[:got] if self._arrays else RawBatch(out, got, self._pool)
                    out = new()
                if pos >= n and got < cap:
                    break
        finally:
            _release_buffer(ctypes.byref(view))

    def flush(self) -> None:
        lib().spe_dec__flush(self._h)

    def stats(self) -> Stats:
        s = _Stats()
        lib().spe_dec__stats(self._h, ctypes.byref(s))
        return Stats(**{f.name: getattr(s, f.name) for f in fields(Stats)})

    def first_bad_offset(self) -> int | None:
        s = _Stats()
        lib().spe_dec__stats(self._h, ctypes.byref(s))
        return None if s.first_bad_offset == (1 << 64) - 1 else s.first_bad_offset


def decode_bytes(buf, cpu: int = -1, tid: int = -1):
    """All records of one raw SPE buffer: (numpy array, Stats)."""
    import numpy as np
    RECORD_DTYPE = record_dtype()
    d = Decoder()
    d.set_origin(cpu, tid, 0)
    parts = list(d.feed(buf, last=True))
    d.flush()
    recs = np.concatenate(parts) if parts else np.zeros(0, dtype=RECORD_DTYPE)
    return recs, d.stats()


class TableSet:
    """spe-parser tables written by the C writer (src/native/spe_tab.c) to open descriptors.
    Write failures raise OSError with the errno of the failed write."""

    KIND = {"ldst": 0, "branch": 1, "other": 2}

    def __init__(self, fmt: str, rows_per_group: int = 1 << 18):
        self._h = ctypes.c_void_p()
        rc = lib().spe_tabs__new(ctypes.byref(self._h), 1 if fmt == "parquet" else 0, rows_per_group)
        if rc < 0:
            raise MemoryError("spe table writer")

    def _check(self, rc: int) -> None:
        if rc < 0:
            import os
            raise OSError(-rc, os.strerror(-rc))

    def open(self, kind: str, fd: int, cols: list[str]) -> None:
        self._check(lib().spe_tabs__open(self._h, self.KIND[kind], fd, ",".join(cols).encode()))

    def names(self, kind: str | None, col: str, names: list[str]) -> None:
        blob = b"".join(n.encode() + b"\0" for n in names)
        self._check(lib().spe_tabs__names(self._h, -1 if kind is None else self.KIND[kind], col.encode(),
                                          blob, len(blob), len(names)))

    def add_symbols(self, names: list[str]) -> None:
        if names:
            blob = b"".join(n.encode(errors="replace").replace(b"\0", b"") + b"\0" for n in names)
            self._check(lib().spe_tabs__add_symbols(self._h, blob, len(blob), len(names)))

    def add(self, recs, sym=None, time=None) -> None:
        """Records (a numpy array or a RawBatch) and, for numpy arrays, their symbol indexes
        and times when the tables have those columns."""
        if not len(recs):
            return
        if isinstance(recs, RawBatch):
            if sym is not None or time is not None:
                raise ValueError("symbols and times come with numpy record arrays")
            self._check(lib().spe_tabs__add(self._h, recs.address(), len(recs), None, None))
            return
        import numpy as np
        recs = np.ascontiguousarray(recs, dtype=record_dtype())
        if sym is not None:
            sym = np.ascontiguousarray(sym, dtype=np.uint32)
        if time is not None:
            time = np.ascontiguousarray(time, dtype=np.uint64)
        self._check(lib().spe_tabs__add(self._h, recs.ctypes.data, len(recs),
                                        None if sym is None else sym.ctypes.data,
                                        None if time is None else time.ctypes.data))

    def finish(self) -> None:
        self._check(lib().spe_tabs__finish(self._h))

    def rows(self) -> tuple[int, int, int, int]:
        """(ldst, branch, other, records without an operation type)"""
        r = (ctypes.c_uint64 * 4)()
        lib().spe_tabs__rows(self._h, ctypes.byref(r))
        return tuple(r)

    def close(self) -> None:
        if self._h:
            lib().spe_tabs__delete(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self):
        if getattr(self, "_h", None) and _lib is not None:
            self.close()
