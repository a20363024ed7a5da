"""SPE records -> spe-parser's tables (load/store, branch, other) as CSV or Parquet.

Column names and order are spe-parser's (Arm telemetry-solution tools/spe_parser, schema.py),
so scripts written for it keep working; CSV values are written the way its CSV files are
(hex strings, true/false, empty when a packet was absent). Parquet keeps addresses as uint64
(cheaper and exact) and the string columns as strings. A `symbol` column is appended when
symbols are given, a `time` column with --perf-time.

The columns and the names of values are defined here; the rows are computed and encoded by the C
writer (src/native/spe_tab.c) straight from the decoder's records, which is what makes
`hpmkit spe decode` fast end to end.
"""
from __future__ import annotations

from typing import Iterable

from .native import HAS  # numpy is imported where arrays are used: decode can run without it

LDST_COLS = ["cpu", "op", "pc", "el", "atomic", "excl", "ar", "subclass", "event", "issue_lat",
             "total_lat", "vaddr", "xlat_lat", "paddr", "data_source", "context", "ts"]
BRANCH_COLS = ["cpu", "op", "pc", "el", "condition", "indirect", "event", "issue_lat", "total_lat",
               "br_tgt", "br_tgt_lvl", "pbt", "pbt_lvl", "context", "ts"]
OTHER_COLS = ["cpu", "op", "pc", "el", "subclass", "sve_evl", "sve_pred", "sve_fp", "condition",
              "event", "issue_lat", "total_lat", "context", "ts"]
KINDS = {"ldst": LDST_COLS, "branch": BRANCH_COLS, "other": OTHER_COLS}

# Events packet bits (Arm ARM "Events packet"). Bits 12-15 are IMPLEMENTATION DEFINED: 12 is
# Neoverse N1's late prefetch (perf names it so for N1 only), 13-15 have no name and print as
# EVn, like every other unnamed bit. One name per bit, so the event strings convert back.
EVENT_NAMES = {0: "EXCEPTION-GEN", 1: "RETIRED", 2: "L1D-ACCESS", 3: "L1D-REFILL", 4: "TLB-ACCESS",
               5: "TLB-REFILL", 6: "NOT-TAKEN", 7: "MISPRED", 8: "LLC-ACCESS", 9: "LLC-REFILL",
               10: "REMOTE-ACCESS", 11: "ALIGNMENT", 12: "LATE-PREFETCH",
               16: "TRANSACTIONAL", 17: "SVE-PARTIAL-PRED", 18: "SVE-EMPTY-PRED",
               19: "L2D-ACCESS", 20: "L2D-MISS", 21: "CACHE-DATA-MODIFIED", 22: "RECENTLY-FETCHED",
               23: "DATA-SNOOPED", 24: "STREAMING-SVE", 25: "SMCU"}
# Neoverse N1 data source encodings (seed table 4.2; spe-parser's names). CPU-specific.
N1_DATA_SOURCES = {0: "L1D", 8: "L2D", 9: "PEER-CPU", 10: "LOCAL-CLUSTER", 11: "LL-CACHE",
                   12: "PEER-CLUSTER", 13: "REMOTE", 14: "DRAM"}
LDST_SUBCLASS = {0x00: "GP-REG", 0x04: "SIMD-FP", 0x10: "UNSPEC-REG", 0x30: "NV-SYSREG",
                 0x14: "MTE-TAG", 0x20: "MEMCPY", 0x24: "MEMSET"}


def event_string(ev: int) -> str:
    return ":".join(EVENT_NAMES.get(b, f"EV{b}") for b in range(64) if ev >> b & 1)


_EVENT_BITS = {name: b for b, name in EVENT_NAMES.items()}


def event_bits(text: str) -> int:
    """The events payload an `event` column value stands for (the inverse of event_string)."""
    v = 0
    for name in filter(None, text.split(":")):
        b = _EVENT_BITS.get(name)
        if b is None:
            if not (name.startswith("EV") and name[2:].isdigit() and int(name[2:]) < 64):
                raise ValueError(f"unknown SPE event name {name!r}")
            b = int(name[2:])
        v |= 1 << b
    return v


def ds_name(v: int) -> str:
    return N1_DATA_SOURCES.get(int(v), str(int(v)))


def is_atomic(op: np.ndarray) -> np.ndarray:
    return (op & 0xE2) == 0x02


def split(recs: np.ndarray) -> dict[str, np.ndarray]:
    """Records by table, as the writer splits them: ldst (class 1), branch (class 2), other
    (class 0; class 3 ends a record instead); records without an operation type packet (e.g. a
    lone TIMESTAMP closing an empty record) go to "none"."""
    cls = recs["op_class"]
    return {"ldst": recs[cls == 1], "branch": recs[cls == 2], "other": recs[(cls == 0) | (cls == 3)],
            "none": recs[cls == 0xFF]}


def _subclass_ldst(op: int) -> str:
    if (op & 0xE2) == 0x02:
        return ""  # atomic/exclusive/acquire-release: spe-parser leaves the subclass empty
    if (op & 0x0A) == 0x08:
        return "SVE"
    return LDST_SUBCLASS.get(op & 0xFE, "")


# rows per Parquet row group: the writer holds one group per table (about 6 MB at this size;
# larger groups measured slower, their buffers being fresh pages)
ROWS = 1 << 16


def byte_names(kind: str, col: str) -> list[str]:
    """The text of the `op` or `subclass` column of a table for each operation type payload byte."""
    if col == "op":
        if kind == "ldst":
            return ["ST" if v & 1 else "LD" for v in range(256)]
        return ["B" if kind == "branch" else "OTHER"] * 256
    if kind == "ldst":
        return [_subclass_ldst(v) for v in range(256)]
    return ["SVE" if (v & 0x89) == 0x08 else "OTHER" for v in range(256)]


class _SymbolIndex:
    """The `symbol` column: the index of each PC's function name in the list the writer holds."""

    def __init__(self, symbols, writer):
        self.symbols, self.writer = symbols, writer
        self.by_name: dict[str, int] = {}
        self.by_pc: dict[int, int] = {}

    def __call__(self, pcs):
        import numpy as np
        uniq, inv = np.unique(pcs, return_inverse=True)
        out = np.empty(len(uniq), dtype=np.uint32)
        new = []
        for i, pc in enumerate(uniq.tolist()):
            j = self.by_pc.get(pc)
            if j is None:
                name = self.symbols.name(pc) or ""
                j = self.by_name.get(name)
                if j is None:
                    j = self.by_name[name] = len(self.by_name)
                    new.append(name)
                self.by_pc[pc] = j
            out[i] = j
        self.writer.add_symbols(new)
        return out[inv.reshape(-1)]


def _ahead(batches: Iterable, depth: int = 2):
    """The batches, made in a second thread: reading and C decoding there overlap with the C
    table writing here (both release the GIL), which is most of the wall time on two cores.
    An error of the input is raised here; leaving early stops the other thread."""
    import queue
    import threading
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def produce():
        try:
            for b in batches:
                if stop.is_set():
                    break
                q.put(b)
            else:
                q.put(end)
        except BaseException as e:  # handed to the consumer, which raises it
            q.put(e)
        finally:
            close = getattr(batches, "close", None)
            if close:
                close()  # in this thread: the input's files are closed here

    t = threading.Thread(target=produce, name="spe-decode", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is end:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while t.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get(timeout=0.05)
            except queue.Empty:
                pass
        t.join()


def write_tables(batches: Iterable, prefix: str, fmt: str, symbols=None,
                 kinds: Iterable[str] = ("ldst", "branch", "other"), time_conv=None,
                 hint: str = "give another -o PREFIX") -> tuple[dict[str, tuple[str, int]], int]:
    """Write PREFIX-ldst.csv / -branch / -other (or .parquet), all of them or none (an error is an
    OutputError, or the error of the input). time_conv: None, or a callable returning the file's
    TimeConv (known once its record has been read, before the AUX data) to add a `time` column in
    perf-clock nanoseconds. Returns ({kind: (path, rows)}, the number of records that had no
    operation type packet and so are in no table)."""
    import gc
    ext = "csv" if fmt == "csv" else "parquet"
    kinds = list(kinds)
    paths = {k: f"{prefix}-{k}.{ext}" for k in kinds}
    gc_was = gc.isenabled()
    gc.disable()  # no cycle collections while batches stream through (a few % of the time)
    try:
        return _write(batches, paths, fmt, symbols, kinds, time_conv, hint)
    finally:
        if gc_was:
            gc.enable()


def _write(batches, paths, fmt, symbols, kinds, time_conv, hint):
    from . import native
    from .outfiles import Outputs
    with Outputs(list(paths.values()), hint) as out:
        w = native.TableSet(fmt, ROWS)
        try:
            for k in kinds:
                cols = KINDS[k] + (["symbol"] if symbols is not None else []) + (["time"] if time_conv else [])
                w.open(k, out.fd(paths[k]), cols)
                w.names(k, "op", byte_names(k, "op"))
                w.names(k, "subclass", byte_names(k, "subclass"))
            w.names(None, "event", [EVENT_NAMES.get(b, "") for b in range(64)])
            w.names(None, "data_source", [ds_name(v) for v in range(256)])
            sym_index = _SymbolIndex(symbols, w) if symbols is not None else None
            tc = None
            for b in _ahead(batches):
                if not len(b):
                    continue
                sym = sym_index(b["pc"]) if sym_index else None
                t = None
                if time_conv is not None:
                    if tc is None:
                        tc = time_conv()
                        if tc is None:
                            from ..errors import UsageError
                            raise UsageError("--perf-time needs a TIME_CONV record before the SPE data "
                                             "(perf 5.10 and later write one)")
                    import numpy as np
                    t = np.where(b["present"] & HAS["ts"] != 0, tc.to_perf_time(b["ts"]), 0).astype(np.uint64)
                try:
                    w.add(b, sym, t)
                except OSError as e:
                    raise out.fail(e) from None
                release = getattr(b, "release", None)
                if release:
                    release()  # the decoder reuses the buffer
            try:
                w.finish()
            except OSError as e:
                raise out.fail(e) from None
            rows = w.rows()
        finally:
            w.close()
        out.publish()
    idx = native.TableSet.KIND
    return {k: (paths[k], rows[idx[k]]) for k in kinds}, rows[3]
