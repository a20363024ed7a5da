"""Reference for hpmkit's C table writer (src/native/spe_tab.c): spe-parser's tables built
column by column with numpy and written by pyarrow's own CSV and Parquet writers.

This was hpmkit's writer before the C one; tests/py/test_spe_tables.py requires both to give
identical tables, so the C encoders are checked against an independent implementation of the
formats (pyarrow's) on the same records.
"""
from __future__ import annotations

import numpy as np

from hpmkit.spe.native import HAS
from hpmkit.spe.tables import KINDS, _subclass_ldst, ds_name, event_string, is_atomic


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


def write(recs: np.ndarray, path: str, kind: str, fmt: str, symbols=None, time_conv=None) -> None:
    """One table of `recs` (already of this kind) written by pyarrow."""
    import pyarrow as pa
    cols = columns(recs, kind, typed=fmt != "csv", symbols=symbols, time_conv=time_conv)
    table = pa.table(cols)
    if fmt == "csv":
        import pyarrow.csv as pcsv
        with open(path, "wb") as f:
            f.write((",".join(f'"{c}"' for c in cols) + "\n").encode())
            if len(recs):
                pcsv.write_csv(table, f, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    else:
        import pyarrow.parquet as pq
        pq.write_table(table, path)
