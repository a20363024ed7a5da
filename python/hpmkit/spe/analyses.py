"""SPE analyses on decoded records (numpy arrays of RECORD_DTYPE).

The methodology is the Arm SPE performance analysis paper's (shared seed 002): precise PC
hotspots, latency per data source with the derived execution latency total - issue - xlat,
event combinations, the sampling interval (base interval, jitter, ERnd), the derived load
latency (section 4.2.4), the bandwidth estimate (section 4.4.2) and the sampling-quality
ratios from the SAMPLE_* PMU events (section 2.3.1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from .native import HAS
from .tables import EVENT_NAMES, ds_name, event_string

OPS = ("ld", "st", "ldst", "branch", "other")


def op_mask(recs: np.ndarray, op: str) -> np.ndarray:
    cls, o = recs["op_class"], recs["op"]
    if op == "ld":
        return (cls == 1) & (o & 1 == 0)
    if op == "st":
        return (cls == 1) & (o & 1 == 1)
    if op == "ldst":
        return cls == 1
    if op == "branch":
        return cls == 2
    if op == "other":
        return (cls == 0) | (cls == 3)
    raise UsageError(f"--op must be one of {', '.join(OPS)}, not {op!r}")


@dataclass
class Filter:
    op: str | None = None
    el: int | None = None
    pc_lo: int | None = None
    pc_hi: int | None = None
    min_latency: int | None = None
    cpu: int | None = None

    def active(self) -> bool:
        return any(v is not None for v in (self.op, self.el, self.pc_lo, self.pc_hi, self.min_latency, self.cpu))

    def apply(self, recs: np.ndarray) -> np.ndarray:
        if not self.active():
            return recs  # no copy when nothing is filtered
        m = np.ones(len(recs), dtype=bool)
        if self.op:
            m &= op_mask(recs, self.op)
        if self.el is not None:
            m &= recs["pc_el"] == self.el
        if self.pc_lo is not None:
            m &= recs["pc"] >= np.uint64(self.pc_lo)
        if self.pc_hi is not None:
            m &= recs["pc"] < np.uint64(self.pc_hi)
        if self.min_latency is not None:
            m &= recs["total_lat"] >= self.min_latency
        if self.cpu is not None:
            m &= recs["cpu"] == self.cpu
        return recs[m]

    def describe(self) -> str:
        parts = []
        if self.op:
            parts.append(f"op={self.op}")
        if self.el is not None:
            parts.append(f"el={self.el}")
        if self.pc_lo is not None:
            parts.append(f"pc in [{self.pc_lo:#x}, {self.pc_hi:#x})")
        if self.min_latency is not None:
            parts.append(f"total latency >= {self.min_latency}")
        if self.cpu is not None:
            parts.append(f"cpu={self.cpu}")
        return ", ".join(parts) or "none"


# Every analysis is an accumulator fed batch by batch (decode.batches), so memory stays bounded
# by the number of distinct PCs / sources / events, not by the number of records; the functions
# taking one array are the same accumulators fed once. Latency counters are 16-bit, so their
# distributions are kept as exact histograms: means and percentiles equal numpy's on all values.

def _counts_add(acc: dict, values: np.ndarray) -> None:
    if len(values):
        u, c = np.unique(values, return_counts=True)
        for k, n in zip(u.tolist(), c.tolist()):
            acc[k] = acc.get(k, 0) + n


# ---- hotspots ---------------------------------------------------------------------------------

class Hotspots:
    """Samples per PC and per symbol (SPE PCs are exact: no skid to correct)."""

    def __init__(self):
        self.n = 0
        self.pcs: dict[int, int] = {}

    def add(self, recs: np.ndarray) -> None:
        self.n += len(recs)
        _counts_add(self.pcs, recs["pc"])

    def result(self, symbols=None, top: int = 20) -> dict:
        n = self.n
        items = sorted(self.pcs.items(), key=lambda kv: (-kv[1], kv[0]))
        by_pc = [(pc, c, 100.0 * c / n, (symbols.name(pc) if symbols else None) or "") for pc, c in items[:top]]
        by_sym: dict[str, int] = {}
        if symbols is not None:
            for pc, c in self.pcs.items():
                name = symbols.name(pc) or "[unknown]"
                by_sym[name] = by_sym.get(name, 0) + c
        sym_rows = sorted(by_sym.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return {"total": n, "by_pc": by_pc, "by_symbol": [(s, c, 100.0 * c / n) for s, c in sym_rows],
                "pc_counts": dict(self.pcs)}


def hotspots(recs: np.ndarray, symbols=None, top: int = 20) -> dict:
    h = Hotspots()
    h.add(recs)
    return h.result(symbols, top)


# ---- latency ----------------------------------------------------------------------------------

@dataclass
class LatStats:
    n: int
    saturated: int
    negative: int = 0
    mean: float = float("nan")
    p50: float = float("nan")
    p90: float = float("nan")
    p99: float = float("nan")
    lo: int = 0
    hi: int = 0


EXEC_OFFSET = 2 * 65535  # exec = total - issue - xlat lies in [-131070, 65535]


class Hist:
    """Exact distribution of small integers (offset makes negative values indexable)."""

    def __init__(self, size: int, offset: int = 0):
        self.counts = np.zeros(size, dtype=np.int64)
        self.offset = offset

    def add(self, v: np.ndarray) -> None:
        if len(v):
            self.counts += np.bincount(v + self.offset, minlength=len(self.counts))

    def values(self) -> np.ndarray:
        """Bin values of nonzero bins (for plots)."""
        return np.flatnonzero(self.counts) - self.offset

    def stats(self, saturated: int, negative: int = 0) -> LatStats:
        c = self.counts
        n = int(c.sum())
        s = LatStats(n + saturated + negative, saturated, negative)
        if n:
            nz = np.flatnonzero(c)
            vals = nz - self.offset
            s.mean = float((vals * c[nz]).sum() / n)
            cum = np.cumsum(c[nz])

            def at(rank):  # value of the rank-th smallest (0-based)
                return float(vals[np.searchsorted(cum, rank, side="right")])

            out = []
            for q in (0.50, 0.90, 0.99):  # numpy's default 'linear' percentile
                h = (n - 1) * q
                lo = int(np.floor(h))
                a = at(lo)
                out.append(a + (h - lo) * (at(min(lo + 1, n - 1)) - a))
            s.p50, s.p90, s.p99 = out
            s.lo, s.hi = int(vals[0]), int(vals[-1])
        return s


class _LatGroup:
    def __init__(self):
        self.records = 0
        self.h = {k: Hist(65536) for k in ("total", "issue", "xlat")}
        self.h["exec"] = Hist(65536 + EXEC_OFFSET + 1, EXEC_OFFSET)
        self.sat = {k: 0 for k in ("total", "issue", "xlat", "exec")}
        self.neg = 0

    def add(self, r: np.ndarray, sat_value: int) -> None:
        self.records += len(r)
        vals = {k: r[f"{k}_lat"].astype(np.int64) for k in ("total", "issue", "xlat")}
        sats = {k: v >= sat_value for k, v in vals.items()}
        for k in vals:
            self.sat[k] += int(sats[k].sum())
            self.h[k].add(vals[k][~sats[k]])
        anysat = sats["total"] | sats["issue"] | sats["xlat"]
        exe = vals["total"] - vals["issue"] - vals["xlat"]
        neg = ~anysat & (exe < 0)
        self.sat["exec"] += int(anysat.sum())
        self.neg += int(neg.sum())
        self.h["exec"].add(exe[~anysat & ~neg])

    def result(self) -> dict:
        out = {"records": self.records}
        for k in ("total", "issue", "xlat"):
            out[k] = self.h[k].stats(self.sat[k])
        out["exec"] = self.h["exec"].stats(self.sat["exec"], self.neg)
        out["exec_hist"] = self.h["exec"]
        return out


class Latency:
    """Per data source (loads: where the data came from) the total/issue/xlat/exec latencies.
    Saturated counters (value >= sat_value, 4095 for the 12-bit counters of Neoverse N1) are
    counted apart and left out of means and percentiles; so is exec when a part saturated, and
    exec values below zero are counted apart too."""

    def __init__(self, sat_value: int = 4095):
        self.sat_value = sat_value
        self.groups: dict[object, _LatGroup] = {}

    def _g(self, key) -> _LatGroup:
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = _LatGroup()
        return g

    def add(self, recs: np.ndarray) -> None:
        self._g("all").add(recs, self.sat_value)
        has = recs["present"] & HAS["ds"] != 0
        if (~has).any():
            self._g(None).add(recs[~has], self.sat_value)
        for v in np.unique(recs["data_source"][has]).tolist():
            self._g(v).add(recs[has & (recs["data_source"] == v)], self.sat_value)

    def result(self) -> dict:
        out = {"all": self._g("all").result()}
        keys = sorted(k for k in self.groups if isinstance(k, int))
        for k in keys:
            out[ds_name(k)] = self.groups[k].result()
        if None in self.groups and keys:
            out["(no source)"] = self.groups[None].result()
        return out


def latency(recs: np.ndarray, sat_value: int = 4095) -> dict:
    lat = Latency(sat_value)
    lat.add(recs)
    return lat.result()


# ---- data sources and events -----------------------------------------------------------------

class Sources:
    """Loads per data source, %, mean total latency (saturated values left out)."""

    def __init__(self, sat_value: int = 4095):
        self.sat_value = sat_value
        self.n = 0
        self.count: dict[int, int] = {}
        self.lat_sum: dict[int, int] = {}
        self.lat_n: dict[int, int] = {}

    def add(self, recs: np.ndarray) -> None:
        ld = recs[op_mask(recs, "ld")]
        self.n += len(ld)
        has = ld["present"] & HAS["ds"] != 0
        key = np.where(has, ld["data_source"].astype(np.int64), -1)
        _counts_add(self.count, key)
        tot = ld["total_lat"].astype(np.int64)
        ok = tot < self.sat_value
        for v in np.unique(key).tolist():
            m = (key == v) & ok
            self.lat_sum[v] = self.lat_sum.get(v, 0) + int(tot[m].sum())
            self.lat_n[v] = self.lat_n.get(v, 0) + int(m.sum())

    def result(self) -> list[tuple[str, int, float, float]]:
        rows = []
        for v, c in self.count.items():
            name = "(no data source packet)" if v < 0 else ds_name(v)
            mean = self.lat_sum[v] / self.lat_n[v] if v >= 0 and self.lat_n.get(v) else float("nan")
            rows.append((name, c, 100.0 * c / max(self.n, 1), mean))
        rows.sort(key=lambda r: (-r[1], r[0]))
        return rows


def data_sources(recs: np.ndarray) -> list[tuple[str, int, float, float]]:
    s = Sources()
    s.add(recs)
    return s.result()


class Events:
    """(op, events joined with ':', count, % of the op's records), like the seed's table 4.5."""

    def __init__(self):
        self.by_op: dict[str, dict[int, int]] = {op: {} for op in ("ld", "st", "branch", "other")}

    def add(self, recs: np.ndarray) -> None:
        for op, acc in self.by_op.items():
            _counts_add(acc, recs["events"][op_mask(recs, op)])

    def result(self, top: int = 30) -> list[tuple[str, str, int, float]]:
        rows = []
        for op, acc in self.by_op.items():
            n = sum(acc.values())
            for e, c in acc.items():
                rows.append((op.upper(), event_string(e) or "(none)", c, 100.0 * c / n))
        rows.sort(key=lambda x: (-x[2], x[0], x[1]))
        return rows[:top]


def event_combinations(recs: np.ndarray, top: int = 30) -> list[tuple[str, str, int, float]]:
    e = Events()
    e.add(recs)
    return e.result(top)


class LoadSpan:
    """Sampled loads and the first/last load timestamp (for the seed's estimates)."""

    def __init__(self):
        self.loads = 0
        self.first: int | None = None
        self.last: int | None = None

    def add(self, recs: np.ndarray) -> None:
        ld = recs[op_mask(recs, "ld")]
        self.loads += len(ld)
        ts = ld["ts"][ld["present"] & HAS["ts"] != 0]
        if len(ts):
            lo, hi = int(ts.min()), int(ts.max())
            self.first = lo if self.first is None else min(self.first, lo)
            self.last = hi if self.last is None else max(self.last, hi)


# ---- sampling interval and estimates ---------------------------------------------------------

def sampling_interval(period: int | None, min_interval: int, jitter: bool, ernd: int) -> dict:
    """The actual SPE sampling interval (seed 4.2.4, table 4.3).
    base: the -c period rounded down to a multiple of 256 (PMSIRR_EL1.INTERVAL counts in units
    of 256), at least min_interval (caps/min_interval), or min_interval when no -c was given.
    actual: base + 1 without jitter; with jitter base + 128 when ERnd = 0, base + 1 when ERnd = 1."""
    if period is None:
        base = min_interval
    else:
        base = max(period & ~0xFF, min_interval)
    add = 128 if (jitter and ernd == 0) else 1
    return {"period": period, "min_interval": min_interval, "base": base, "jitter": jitter, "ernd": ernd,
            "interval": base + add}


def ns_per_tick(cntfrq_hz: float | None = None, time_conv=None) -> float:
    if cntfrq_hz:
        return 1e9 / cntfrq_hz
    if time_conv is not None and time_conv.time_mult:
        return time_conv.time_mult / float(1 << time_conv.time_shift)
    raise UsageError("give --cntfrq HZ (the generic timer frequency, CNTFRQ_EL0; 25000000 on Neoverse N1 "
                     "servers) or use a perf.data that has a TIME_CONV record")


def derived_load_latency(nloads: int, ts_first: int, ts_last: int, interval: int, nspt: float) -> dict:
    """Seed 4.2.4: (time between first and last sampled load) / (sampled loads x interval)."""
    span_ns = (ts_last - ts_first) * nspt
    executed = nloads * interval
    return {"loads_sampled": nloads, "interval": interval, "loads_executed": executed,
            "span_ticks": ts_last - ts_first, "span_ns": span_ns,
            "latency_ns": span_ns / executed if executed else float("nan")}


def bandwidth(nloads: int, ts_first: int, ts_last: int, interval: int, bytes_per_load: int, nspt: float) -> dict:
    """Seed 4.4.2: estimated bytes read = samples x interval x bytes per load, over the span."""
    total = nloads * interval * bytes_per_load
    span_ns = (ts_last - ts_first) * nspt
    return {"loads_sampled": nloads, "interval": interval, "bytes_per_load": bytes_per_load,
            "bytes": total, "span_ticks": ts_last - ts_first, "span_ns": span_ns,
            "mb_per_s": total / (span_ns / 1e9) / 1e6 if span_ns > 0 else float("nan")}


def ts_span(recs: np.ndarray) -> tuple[int, int]:
    ts = recs["ts"][recs["present"] & HAS["ts"] != 0]
    if not len(ts):
        raise UsageError("the selected records carry no timestamps (record with ts_enable=1)")
    return int(ts.min()), int(ts.max())


QUALITY_EVENTS = ("SAMPLE_POP", "SAMPLE_FEED", "SAMPLE_FILTRATE", "SAMPLE_COLLISION")


def quality(counts: dict[str, int], records: int | None = None) -> list[tuple[str, float, str]]:
    """Seed table 2.2 ratios; with the decoded record count, how many filtered samples arrived."""
    missing = [e for e in QUALITY_EVENTS if e not in counts]
    if missing:
        raise UsageError(f"sampling quality needs the counts of {', '.join(missing)} (--counts NAME=VALUE,...)")
    pop, feed, filt, coll = (counts[e] for e in QUALITY_EVENTS)

    def div(a, b):
        return a / b if b else float("nan")
    rows = [("spe_sampling_ratio", div(feed, pop), "SAMPLE_FEED / SAMPLE_POP"),
            ("spe_filter_ratio", div(filt, feed), "SAMPLE_FILTRATE / SAMPLE_FEED"),
            ("spe_collision_ratio", div(coll, pop), "SAMPLE_COLLISION / SAMPLE_POP")]
    if records is not None:
        rows.append(("records_per_filtrate", div(records, filt), "decoded records / SAMPLE_FILTRATE"))
    return rows


__all__ = ["Filter", "hotspots", "latency", "data_sources", "event_combinations", "sampling_interval",
           "derived_load_latency", "bandwidth", "quality", "EVENT_NAMES"]
