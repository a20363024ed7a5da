"""SPE records -> spe-parser's tables (load/store, branch, other) as CSV or Parquet.

Column names and order are spe-parser's (Arm telemetry-solution tools/spe_parser, schema.py),
so scripts written for it keep working; CSV values are written the way its CSV files are
(hex strings, true/false, empty when a packet was absent). Parquet keeps addresses as uint64
(cheaper and exact) and the string columns as strings. A `symbol` column is appended when
symbols are given.
"""
from __future__ import annotations

import os
import tempfile
from typing import Iterable

import numpy as np

from .native import HAS

LDST_COLS = ["cpu", "op", "pc", "el", "atomic", "excl", "ar", "subclass", "event", "issue_lat",
             "total_lat", "vaddr", "xlat_lat", "paddr", "data_source", "context", "ts"]
BRANCH_COLS = ["cpu", "op", "pc", "el", "condition", "indirect", "event", "issue_lat", "total_lat",
               "br_tgt", "br_tgt_lvl", "pbt", "pbt_lvl", "context", "ts"]
OTHER_COLS = ["cpu", "op", "pc", "el", "subclass", "sve_evl", "sve_pred", "sve_fp", "condition",
              "event", "issue_lat", "total_lat", "context", "ts"]
KINDS = {"ldst": LDST_COLS, "branch": BRANCH_COLS, "other": OTHER_COLS}

EVENT_NAMES = {0: "EXCEPTION-GEN", 1: "RETIRED", 2: "L1D-ACCESS", 3: "L1D-REFILL", 4: "TLB-ACCESS",
               5: "TLB-REFILL", 6: "NOT-TAKEN", 7: "MISPRED", 8: "LLC-ACCESS", 9: "LLC-REFILL",
               10: "REMOTE-ACCESS", 11: "ALIGNMENT", 12: "LATE-PREFETCH", 13: "DATA-SNOOPED",
               16: "TRANSACTIONAL", 17: "SVE-PARTIAL-PRED", 18: "SVE-EMPTY-PRED",
               19: "L2D-ACCESS", 20: "L2D-MISS", 21: "CACHE-DATA-MODIFIED", 22: "RECENTLY-FETCHED",
               23: "DATA-SNOOPED"}
# Neoverse N1 data source encodings (seed table 4.2; spe-parser's names). CPU-specific.
N1_DATA_SOURCES = {0: "L1D", 8: "L2D", 9: "PEER-CPU", 10: "LOCAL-CLUSTER", 11: "LL-CACHE",
                   12: "PEER-CLUSTER", 13: "REMOTE", 14: "DRAM"}
LDST_SUBCLASS = {0x00: "GP-REG", 0x04: "SIMD-FP", 0x10: "UNSPEC-REG", 0x30: "NV-SYSREG",
                 0x14: "MTE-TAG", 0x20: "MEMCPY", 0x24: "MEMSET"}


def publish(tmp: str, path: str) -> None:
    """Give a finished temporary file the usual permissions (mkstemp makes it 0600) and move it
    into place in one step."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    os.replace(tmp, path)


def event_string(ev: int) -> str:
    return ":".join(EVENT_NAMES.get(b, f"EV{b}") for b in range(64) if ev >> b & 1)


def ds_name(v: int) -> str:
    return N1_DATA_SOURCES.get(int(v), str(int(v)))


def _map_unique(values: np.ndarray, fn) -> np.ndarray:
    """fn applied once per distinct value (columns repeat a lot: events, PCs, sources)."""
    if len(values) == 0:
        return np.zeros(0, dtype=object)
    uniq, inv = np.unique(values, return_inverse=True)
    table = np.array([fn(u) for u in uniq.tolist()], dtype=object)
    return table[inv]


def _dict_strings(values: np.ndarray, fn, absent: np.ndarray | None = None):
    """A pyarrow string column: fn per distinct value, expanded in C++ (no per-row Python)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if len(values) == 0:
        return pa.array([], pa.string())
    if values.dtype.kind in "bu" and values.dtype.itemsize <= 2:
        # small domain (op byte, data source, flags): O(n) with bincount instead of a sort
        v = values.astype(np.int64)
        uniq = np.flatnonzero(np.bincount(v))
        index = np.zeros(int(uniq[-1]) + 1, dtype=np.int32)
        index[uniq] = np.arange(len(uniq), dtype=np.int32)
        inv = index[v]
    else:
        uniq, inv = np.unique(values, return_inverse=True)
        inv = inv.astype(np.int32)
    names = [fn(u) for u in uniq.tolist()]
    if absent is not None and absent.any():
        names.append("")
        inv = np.where(absent, len(names) - 1, inv).astype(np.int32)
    return pc.take(pa.array(names, pa.string()), pa.array(inv))


_HEXDIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_SHIFTS = np.arange(60, -4, -4, dtype=np.uint64)


def _hex_strings(values: np.ndarray, present: np.ndarray):
    """'0x...' lower-case hex (no leading zeros) of uint64s, '' where absent; built with numpy
    into a pyarrow StringArray's buffers."""
    import pyarrow as pa
    v = values.astype(np.uint64)
    n = len(v)
    nib = ((v[:, None] >> _SHIFTS[None, :]) & np.uint64(0xF)).astype(np.uint8)  # (n, 16)
    nz = nib != 0
    first = np.where(nz.any(axis=1), nz.argmax(axis=1), 15)  # index of the first digit printed
    chars = np.empty((n, 18), dtype=np.uint8)
    chars[:, 0] = ord("0")
    chars[:, 1] = ord("x")
    chars[:, 2:] = _HEXDIGITS[nib]
    keep = np.empty((n, 18), dtype=bool)
    keep[:, :2] = True
    keep[:, 2:] = np.arange(16)[None, :] >= first[:, None]
    keep &= present[:, None]
    data = chars[keep]
    lengths = keep.sum(axis=1, dtype=np.int32)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data.tobytes()))


def is_atomic(op: np.ndarray) -> np.ndarray:
    return (op & 0xE2) == 0x02


def split(recs: np.ndarray) -> dict[str, np.ndarray]:
    """Records by table: ldst (class 1), branch (class 2), other (class 0 or 3); records without
    an operation type packet (e.g. a lone TIMESTAMP closing an empty record) go to "none"."""
    cls = recs["op_class"]
    return {"ldst": recs[cls == 1], "branch": recs[cls == 2], "other": recs[(cls == 0) | (cls == 3)],
            "none": recs[cls == 0xFF]}


def _subclass_ldst(op: int) -> str:
    if (op & 0xE2) == 0x02:
        return ""  # atomic/exclusive/acquire-release: spe-parser leaves the subclass empty
    if (op & 0x0A) == 0x08:
        return "SVE"
    return LDST_SUBCLASS.get(op & 0xFE, "")


def columns(recs: np.ndarray, kind: str, typed: bool = False, symbols=None, time_conv=None) -> dict:
    """pyarrow columns of one table. typed=False: CSV form like spe-parser (hex strings, empty
    when absent); True: Parquet types (addresses uint64, 0 when absent)."""
    import pyarrow as pa
    pres = recs["present"]
    op = recs["op"].astype(np.int64)
    n = len(recs)
    c: dict = {}

    def addr(name, flag):
        has = pres & flag != 0
        if typed:
            return pa.array(np.where(has, recs[name], 0).astype(np.uint64))
        return _hex_strings(recs[name], has)

    def const(text):
        return pa.array(np.full(n, text, dtype=object), pa.string())

    for col in KINDS[kind]:
        if col == "cpu":
            c[col] = pa.array(recs["cpu"].astype(np.int32))
        elif col == "op":
            if kind == "ldst":
                c[col] = _dict_strings(recs["op"] & 1, lambda v: "ST" if v else "LD")
            elif kind == "branch":
                c[col] = const("B")
            else:
                c[col] = _dict_strings(recs["op_class"], lambda v: "OTHER" if v == 0 else "")
        elif col == "pc":
            c[col] = addr("pc", HAS["pc"])
        elif col == "el":
            c[col] = pa.array(recs["pc_el"].astype(np.int8))
        elif col == "atomic":
            c[col] = pa.array(is_atomic(op) & (op & 0x04 != 0))
        elif col == "excl":
            c[col] = pa.array(is_atomic(op) & (op & 0x08 != 0))
        elif col == "ar":
            c[col] = pa.array(is_atomic(op) & (op & 0x10 != 0))
        elif col == "subclass":
            if kind == "ldst":
                c[col] = _dict_strings(recs["op"], _subclass_ldst)
            else:
                c[col] = _dict_strings((recs["op"] & 0x89) == 0x08, lambda v: "SVE" if v else "OTHER")
        elif col == "sve_evl":
            c[col] = pa.array(np.where((op & 0x89) == 0x08, 32 << ((op >> 4) & 7), 0).astype(np.int32))
        elif col == "sve_pred":
            c[col] = pa.array(((op & 0x89) == 0x08) & (op & 0x4 != 0))
        elif col == "sve_fp":
            c[col] = pa.array(((op & 0x89) == 0x08) & (op & 0x2 != 0))
        elif col == "condition":
            if kind == "other":
                c[col] = pa.array(((op & 0x89) != 0x08) & (op & 1 != 0))
            else:
                c[col] = pa.array(op & 1 != 0)
        elif col == "indirect":
            c[col] = pa.array((op & 0xFE) == 0x02)
        elif col == "event":
            c[col] = _dict_strings(recs["events"], event_string)
        elif col in ("issue_lat", "total_lat", "xlat_lat"):
            c[col] = pa.array(recs[col].astype(np.int32))
        elif col == "vaddr":
            c[col] = addr("vaddr", HAS["va"])
        elif col == "paddr":
            c[col] = addr("paddr", HAS["pa"])
        elif col == "data_source":
            c[col] = _dict_strings(recs["data_source"], ds_name, absent=pres & HAS["ds"] == 0)
        elif col == "br_tgt":
            c[col] = addr("tgt", HAS["tgt"])
        elif col == "br_tgt_lvl":
            c[col] = pa.array(recs["tgt_el"].astype(np.int8))
        elif col == "pbt":
            c[col] = addr("pbt", HAS["pbt"])
        elif col == "pbt_lvl":
            c[col] = pa.array(recs["pbt_el"].astype(np.int8))
        elif col == "context":
            has = pres & HAS["ctx"] != 0
            if typed:
                c[col] = pa.array(np.where(has, recs["context"].astype(np.int64), -1))
            else:
                c[col] = _hex_strings(recs["context"], has)
        elif col == "ts":
            c[col] = pa.array(recs["ts"].astype(np.uint64))
    if symbols is not None:
        c["symbol"] = _dict_strings(recs["pc"], lambda v: symbols.name(v) or "")
    if time_conv is not None:
        t = np.where(pres & HAS["ts"] != 0, time_conv.to_perf_time(recs["ts"]), 0).astype(np.uint64)
        c["time"] = pa.array(t)
    return c


class TableWriter:
    """Streams batches of one table to CSV or Parquet; the file appears only when complete."""

    def __init__(self, path: str, kind: str, fmt: str, symbols=None, time_conv=None):
        """time_conv: None, or a callable returning the file's TimeConv (known once its record
        has been read, before the AUX data) to add a `time` column in perf-clock nanoseconds."""
        self.path, self.kind, self.fmt, self.symbols = path, kind, fmt, symbols
        self.time_conv = time_conv
        d = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = tempfile.mkstemp(prefix=".spe-", suffix=".tmp", dir=d)
        os.close(fd)
        self.rows = 0
        self._pq = None
        self._f = None
        if fmt == "csv":
            self._f = open(self.tmp, "wb")
            cols = KINDS[kind] + (["symbol"] if symbols is not None else []) + (["time"] if time_conv else [])
            self._f.write((",".join(f'"{c}"' for c in cols) + "\n").encode())

    def _tc(self):
        if self.time_conv is None:
            return None
        tc = self.time_conv()
        if tc is None:
            from ..errors import UsageError
            raise UsageError("--perf-time needs a TIME_CONV record before the SPE data (perf 5.10 and later write one)")
        return tc

    def write(self, recs: np.ndarray) -> None:
        import pyarrow as pa
        if not len(recs):
            return
        self.rows += len(recs)
        cols = columns(recs, self.kind, typed=self.fmt != "csv", symbols=self.symbols, time_conv=self._tc())
        table = pa.table(cols)
        if self.fmt == "csv":
            import pyarrow.compute as pc
            import pyarrow.csv as pcsv
            # spe-parser's files quote nothing but the header; a symbol name with a comma or a
            # quote makes this batch quote its strings (still valid CSV)
            style = "none"
            if "symbol" in cols and pc.any(pc.match_substring_regex(cols["symbol"], '[,"\\n]')).as_py():
                style = "needed"
            pcsv.write_csv(table, self._f, pcsv.WriteOptions(include_header=False, quoting_style=style))
        else:
            import pyarrow.parquet as pq
            if self._pq is None:
                self._pq = pq.ParquetWriter(self.tmp, table.schema)
            self._pq.write_table(table)

    def close(self, ok: bool = True) -> None:
        if self._f:
            self._f.close()
        if self.fmt == "parquet":
            if self._pq is None and ok:
                import pyarrow as pa
                import pyarrow.parquet as pq
                from .native import RECORD_DTYPE
                from .perfmeta import TimeConv
                cols = columns(np.zeros(0, RECORD_DTYPE), self.kind, typed=True, symbols=self.symbols,
                               time_conv=TimeConv(0, 1, 0) if self.time_conv else None)
                pq.write_table(pa.table(cols), self.tmp)
            elif self._pq is not None:
                self._pq.close()
        if ok:
            publish(self.tmp, self.path)
        elif os.path.exists(self.tmp):
            os.unlink(self.tmp)


ROWS = 1 << 18


def write_tables(batches: Iterable[np.ndarray], prefix: str, fmt: str, symbols=None,
                 kinds: Iterable[str] = ("ldst", "branch", "other"), time_conv=None) -> tuple[dict[str, tuple[str, int]], int]:
    """Write PREFIX-ldst.csv / -branch / -other (or .parquet). Returns ({kind: (path, rows)},
    the number of records that had no operation type packet and so are in no table)."""
    ext = "csv" if fmt == "csv" else "parquet"
    writers = {k: TableWriter(f"{prefix}-{k}.{ext}", k, fmt, symbols, time_conv) for k in kinds}
    ok = False
    no_op = 0
    pending: list[np.ndarray] = []
    npending = 0

    def flush():
        nonlocal no_op, pending, npending
        if not pending:
            return
        parts = split(np.concatenate(pending) if len(pending) > 1 else pending[0])
        pending, npending = [], 0
        no_op += len(parts["none"])
        for k, w in writers.items():
            w.write(parts[k])

    try:
        # batches of about ROWS records: large Parquet row groups and few per-batch costs
        for b in batches:
            pending.append(b)
            npending += len(b)
            if npending >= ROWS:
                flush()
        flush()
        ok = True
    finally:
        for w in writers.values():
            w.close(ok)
    return {k: (w.path, w.rows) for k, w in writers.items()}, no_op
