"""False-sharing detection from SPE records (what `perf c2c` does with Arm SPE, seed section 5).

A load whose data came from another core's cache (data source PEER-CPU or PEER-CLUSTER: a
local peer snoop) or another socket (REMOTE: a remote peer snoop) shows that the line moved
between caches. Lines with such loads AND stores, from more than one thread or CPU, are the
candidates; they are ranked by peer-snoop loads. For each line: the offsets touched (loads and
stores per offset), the code addresses (with symbols and DWARF source lines when an ELF is
given), and how many threads and CPUs took part. `false_sharing` is set when stores and loads
by different threads use disjoint offsets of the line (true sharing uses the same bytes).

Data-source codes are CPU-specific; the default set is Neoverse N1's (seed table 4.2).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .native import HAS

LCL_PEER = (9, 12)   # PEER-CPU, PEER-CLUSTER
RMT_PEER = (13,)     # REMOTE


@dataclass
class CodeAddr:
    pc: int
    loads: int = 0
    stores: int = 0
    lcl_peer: int = 0
    rmt_peer: int = 0
    offsets: set = field(default_factory=set)
    threads: set = field(default_factory=set)
    cpus: set = field(default_factory=set)
    total_lat: int = 0
    symbol: str = ""
    source: str = ""


@dataclass
class Entry:
    """One (offset, code address) pair of a line: the rows of perf c2c's Pareto table."""
    offset: int
    pc: int
    records: int = 0
    loads: int = 0
    stores: int = 0
    lcl_peer: int = 0
    rmt_peer: int = 0
    cpus: set = field(default_factory=set)
    lat_lcl: int = 0   # sums of total latency, for the mean cycles of each kind of load
    lat_rmt: int = 0
    lat_load: int = 0  # loads that were no peer snoop


@dataclass
class Line:
    addr: int
    records: int = 0
    loads: int = 0
    stores: int = 0
    lcl_peer: int = 0
    rmt_peer: int = 0
    l1_hit: int = 0
    store_l1_miss: int = 0
    threads: set = field(default_factory=set)
    cpus: set = field(default_factory=set)
    offsets: dict = field(default_factory=dict)   # offset -> [loads, stores, set(threads)]
    code: dict = field(default_factory=dict)      # pc -> CodeAddr
    entries: dict = field(default_factory=dict)   # (offset, pc) -> Entry
    false_sharing: bool = False

    @property
    def peer(self) -> int:
        return self.lcl_peer + self.rmt_peer


def _ldst_lines(recs: np.ndarray, line_size: int):
    m = (recs["op_class"] == 1) & (recs["present"] & HAS["va"] != 0)
    r = recs[m]
    return r, r["vaddr"] >> np.uint64(line_size.bit_length() - 1)


class Candidates:
    """First pass over a large input: the lines with a peer-snoop load and with a store."""

    def __init__(self, line_size: int = 64, lcl=LCL_PEER, rmt=RMT_PEER):
        if line_size <= 0 or line_size & (line_size - 1):
            raise ValueError("line size must be a power of two")
        self.line_size, self.peer_codes = line_size, tuple(lcl) + tuple(rmt)
        self.peer: set = set()
        self.store: set = set()

    def add(self, recs: np.ndarray) -> None:
        r, line = _ldst_lines(recs, self.line_size)
        is_st = (r["op"] & 1) == 1
        ds = np.where(r["present"] & HAS["ds"] != 0, r["data_source"].astype(np.int64), -1)
        self.peer.update(np.unique(line[~is_st & np.isin(ds, self.peer_codes)]).tolist())
        self.store.update(np.unique(line[is_st]).tolist())

    def lines(self) -> set:
        return self.peer & self.store


def on_lines(recs: np.ndarray, lines: set, line_size: int = 64) -> np.ndarray:
    """The load/store records of a batch that touch the given lines (second pass)."""
    r, line = _ldst_lines(recs, line_size)
    return r[np.isin(line, np.fromiter(lines, dtype=np.uint64, count=len(lines)))]


def thread_ids(recs: np.ndarray) -> np.ndarray:
    """The thread of each record: CONTEXTIDR (the kernel writes the PID there) or the AUX tid."""
    has_ctx = recs["present"] & HAS["ctx"] != 0
    return np.where(has_ctx, recs["context"].astype(np.int64), recs["tid"].astype(np.int64))


def analyse(recs: np.ndarray, line_size: int = 64, lcl=LCL_PEER, rmt=RMT_PEER,
            min_peer: int = 1) -> list[Line]:
    """Ranked contended lines (most peer-snoop loads first)."""
    if line_size <= 0 or line_size & (line_size - 1):
        raise ValueError("line size must be a power of two")
    r, _line = _ldst_lines(recs, line_size)
    if not len(r):
        return []
    tids = thread_ids(r)
    is_st = (r["op"] & 1) == 1
    ds = np.where(r["present"] & HAS["ds"] != 0, r["data_source"].astype(np.int64), -1)
    lcl_m = ~is_st & np.isin(ds, lcl)
    rmt_m = ~is_st & np.isin(ds, rmt)
    line = r["vaddr"] >> np.uint64(line_size.bit_length() - 1)
    # lines worth a look: at least one peer-snoop load and at least one store
    peer_lines = set(np.unique(line[lcl_m | rmt_m]).tolist())
    store_lines = set(np.unique(line[is_st]).tolist())
    cand = peer_lines & store_lines
    if not cand:
        return []
    sel = np.isin(line, np.fromiter(cand, dtype=np.uint64))
    out: dict[int, Line] = {}
    shift = line_size.bit_length() - 1
    ev = r["events"]
    for i in np.nonzero(sel)[0].tolist():
        la = int(line[i]) << shift
        L = out.get(la)
        if L is None:
            L = out[la] = Line(la)
        off = int(r["vaddr"][i]) - la
        st = bool(is_st[i])
        t, c, pc = int(tids[i]), int(r["cpu"][i]), int(r["pc"][i])
        L.records += 1
        L.threads.add(t)
        L.cpus.add(c)
        o = L.offsets.setdefault(off, [0, 0, set()])
        o[1 if st else 0] += 1
        o[2].add(t)
        ca = L.code.get(pc)
        if ca is None:
            ca = L.code[pc] = CodeAddr(pc)
        ca.offsets.add(off)
        ca.threads.add(t)
        ca.cpus.add(c)
        lat = int(r["total_lat"][i])
        ca.total_lat += lat
        e = L.entries.get((off, pc))
        if e is None:
            e = L.entries[(off, pc)] = Entry(off, pc)
        e.records += 1
        e.cpus.add(c)
        if st:
            L.stores += 1
            ca.stores += 1
            e.stores += 1
            if ev[i] >> 3 & 1:
                L.store_l1_miss += 1
        else:
            L.loads += 1
            ca.loads += 1
            e.loads += 1
            if lcl_m[i]:
                L.lcl_peer += 1
                ca.lcl_peer += 1
                e.lcl_peer += 1
                e.lat_lcl += lat
            elif rmt_m[i]:
                L.rmt_peer += 1
                ca.rmt_peer += 1
                e.rmt_peer += 1
                e.lat_rmt += lat
            else:
                e.lat_load += lat
                if ds[i] == 0:
                    L.l1_hit += 1
    lines = [L for L in out.values() if L.peer >= min_peer and (len(L.threads) > 1 or len(L.cpus) > 1)]
    for L in lines:
        L.false_sharing = _false_sharing(L)
    lines.sort(key=lambda L: (-L.peer, -L.records, L.addr))
    return lines


def _false_sharing(L: Line) -> bool:
    """Stores by one thread and loads by another thread at offsets the other never writes:
    some writer's offsets W and some other reader's offsets R with W - R and R - W both
    non-empty. Offsets are bit masks, and threads are grouped by mask, so the test is over the
    few distinct masks, not over pairs of threads (a line can see thousands of threads)."""
    w: dict[int, int] = defaultdict(int)  # thread -> mask of offsets stored
    r: dict[int, int] = defaultdict(int)
    for ca in L.code.values():
        m = 0
        for off in ca.offsets:
            m |= 1 << off
        for t in ca.threads:
            if ca.stores:
                w[t] |= m
            if ca.loads:
                r[t] |= m
    by_w: dict[int, set] = defaultdict(set)
    by_r: dict[int, set] = defaultdict(set)
    for t, m in w.items():
        by_w[m].add(t)
    for t, m in r.items():
        by_r[m].add(t)
    for wm, wt in by_w.items():
        for rm, rt in by_r.items():
            if wm & ~rm and rm & ~wm and (len(wt) > 1 or len(rt) > 1 or wt != rt):
                return True
    return False


def verdict(lines: list[Line]) -> str:
    """One sentence on the whole run, the same on the terminal and in the HTML page."""
    if not lines:
        return "no cache line has both peer-snoop loads and stores from more than one thread or CPU"
    fs = [L for L in lines if L.false_sharing]
    if not fs:
        return (f"no false sharing: in the {len(lines)} contended line(s) the threads load and store the "
                "same offsets (true sharing)")
    return (f"false sharing in {len(fs)} of {len(lines)} contended line(s) ("
            + ", ".join(f"{L.addr:#x}" for L in fs)
            + "): threads store to and load from different offsets of one line; move those fields "
            "to separate cache lines")


def annotate(lines: list[Line], symbols=None, source_lines: bool = False) -> None:
    """Fill symbol and source:line of every code address; `symbols` is a
    profile.symbols.SymbolMap, source lines come from its ELF's DWARF line table."""
    pcs = sorted({pc for L in lines for pc in L.code})
    src = symbols.source_lines(pcs) if (source_lines and symbols is not None) else {}
    for L in lines:
        for pc, ca in L.code.items():
            ca.symbol = (symbols.name(pc) if symbols else None) or ""
            ca.source = src.get(pc, "")
