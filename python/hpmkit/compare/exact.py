"""Exact ratios beside sampled ones: each ranked context checked against exact instruction
counts of the same runs (`hpmkit lab record --exact` / `hpmkit lab suite`, which keep
`<workload>.exact.tsv` and `<workload>.exact-paths.tsv.gz` beside `<workload>.hpmprof`).

A context's cost is the instructions of its own frames (its function and the deeper frames
merged into it) along its paths. Two exact sources, best first:

- per call path (`.exact-paths.tsv.gz`, kernel contexts): the lab sampler counted every kernel
  instruction under the call path a sample at that instruction would read. The paths go
  through the same normalisation as the samples' (contexts.py), and a context's exact cost
  is the sum over the paths the ranking merged into it. Every kernel context is checkable.
- per function (`.exact.tsv`): a function's own instructions wherever it runs, so the
  context's exact cost is the sum over its frames' functions only when those functions run
  in this context alone: on each side, the samples whose leaf is one of them and whose path
  is outside the context must be under 1 % of those inside. Otherwise "not separable".

Shares are normalised like the sampled ones: by all instructions of the workload on that
side (the exact table's total).
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from ..exacttables import paths_name, read_exact, read_exact_paths
from .names import Normaliser

LEAK = 0.01


def tables_for(paths: list[Path], suffix: str = ".exact.tsv") -> dict[str, Path]:
    """workload -> exact table, for profiles that have one beside them."""
    out = {}
    for p in paths:
        stem = p.name.removesuffix(".hpmprof").split(".")[0]
        t = p.with_name(f"{stem}{suffix}")
        if t.is_file():
            out[stem] = t
    return out


def read_paths(path: Path, workload: str, side) -> dict[tuple[str, tuple[str, ...]], float]:
    """(space, path) -> exact kernel instructions, the paths normalised as the samples' are."""
    from .contexts import ContextTable, contexts

    t = ContextTable(side.isa, side.kernel, str(path))
    for n, stack in read_exact_paths(path):
        t.add(workload, stack, len(stack), n, None, n)
    return {k: float(c[2]) for k, c in contexts(t).by_workload.get(workload, {}).items()}


def read_table(path: Path, norm: Normaliser) -> tuple[dict[tuple[str, str], float], float]:
    """((space, normalised function) -> instructions, workload total)."""
    per: dict[tuple[str, str], float] = defaultdict(float)
    total = 0.0
    for r in read_exact(path):
        total += r["insns"]
        space = "kernel" if r["priv"] == "kernel" else "user"
        per[(space, norm(r["function"]))] += r["insns"]
    return per, total


def _own(row: dict, side: str) -> set[str]:
    k = len(row["anchor"])
    own = {row["anchor"][-1]}
    for s in row.get(f"stacks_{side}", []):
        own.update(s["path"][k:])
    return own


def _separable(fns: set[str], group: set, ctx: dict, space: str) -> bool:
    inside = outside = 0.0
    for (sp, path), cost in ctx.items():
        if sp != space or not path or path[-1] not in fns:
            continue
        if path in group:
            inside += cost[0]
        else:
            outside += cost[0]
    return inside > 0 and outside <= LEAK * inside


class Exact:
    """The exact tables beside both sides' profiles, read once each on demand."""

    def __init__(self, res, paths_a: list[Path], paths_b: list[Path]):
        self.res = res
        suffix = paths_name(".exact.tsv")
        self.ta, self.tb = tables_for(paths_a), tables_for(paths_b)
        self.qa, self.qb = tables_for(paths_a, suffix), tables_for(paths_b, suffix)
        self._norm: Normaliser | None = None
        self._cache: dict[Path, tuple | dict] = {}

    def any(self) -> bool:
        return bool(self.ta or self.tb)

    def has_paths(self) -> bool:
        return bool(set(self.qa) & set(self.qb) & set(self.ta) & set(self.tb))

    def table(self, t: Path):
        if t not in self._cache:
            if self._norm is None:
                self._norm = Normaliser.load()
            self._cache[t] = read_table(t, self._norm)
        return self._cache[t]

    def path_table(self, t: Path, wl: str, side):
        if t not in self._cache:
            self._cache[t] = read_paths(t, wl, side)
        return self._cache[t]

    def by_path(self, r) -> tuple[float, float] | None:
        """Exact (share A, share B) of a matched kernel context: the instructions of the call
        paths merged into it over all instructions of its workload, or None without tables."""
        wl = r.workload
        if r.space != "kernel" or not all(wl in t for t in (self.ta, self.tb, self.qa, self.qb)):
            return None
        tot_a, tot_b = self.table(self.ta[wl])[1], self.table(self.tb[wl])[1]
        xa = self.path_table(self.qa[wl], wl, self.res.a)
        xb = self.path_table(self.qb[wl], wl, self.res.b)
        ea = self._cost(r, xa, r.group.a, self.res.a) / tot_a if tot_a else math.nan
        eb = self._cost(r, xb, r.group.b, self.res.b) / tot_b if tot_b else math.nan
        return ea, eb

    @staticmethod
    def _cost(r, exact: dict, group: list, side) -> float:
        """Exact instructions of what the context stands for on one side. A top-name context
        collects the function's leftover paths, and which paths those are was decided by which
        ones happened to be sampled: counting only the sampled ones would compare the samples
        with the exact cost of a sample-chosen set, whose rare members were sampled because
        they were lucky (measured on ksuite: sampled/exact 1 standard error low on average,
        half of the ranked top-name rows over 2). So the side's paths that ended in the
        function and got no sample at all belong to it too."""
        cost = sum(exact.get((r.space, p), 0.0) for p in group)
        if r.group.kind == "top-name":
            leaf, seen = r.group.anchor[-1], side.by_workload.get(r.workload, {})
            cost += sum(v for (sp, p), v in exact.items()
                        if sp == r.space and p and p[-1] == leaf and (sp, p) not in seen)
        return cost

    def ratio(self, r) -> float | None:
        """Exact A/B ratio of a matched kernel context's call paths (None: no tables, or no
        instructions on a side)."""
        e = self.by_path(r)
        if e is None:
            return None
        ea, eb = e
        return ea / eb if eb > 0 and ea > 0 else None


def annotate(summary: dict, res, src: Exact) -> dict:
    """Add row["exact"] = {"ratio", "error", "note"} to ranked rows; returns the overall stats
    (also stored as summary["exact"])."""
    ta, tb = src.ta, src.tb
    stats = {"rows": 0, "with_exact": 0, "by_path": 0, "not_separable": 0, "no_table": 0,
             "errors": []}
    quoted: list[float] = []
    bounds: list[bool] = []
    if not src.any():
        return stats
    rows = {(r.workload, r.space, r.group.anchor): r for r in res.ranked}
    for d in summary.get("ranking", []):
        stats["rows"] += 1
        wl = d["workload"]
        if wl not in ta or wl not in tb:
            d["exact"] = {"ratio": None, "note": "no exact counts for this workload"}
            stats["no_table"] += 1
            continue
        r = rows.get((wl, d["space"], tuple(d["anchor"])))
        e = src.by_path(r) if r is not None else None
        if e is not None:
            ea, eb = e
            note = "exact instructions of the context's call paths"
            stats["by_path"] += 1
        else:
            (pa, tot_a), (pb, tot_b) = src.table(ta[wl]), src.table(tb[wl])
            fa, fb = _own(d, "a"), _own(d, "b")
            ok = r is not None and \
                _separable(fa, set(r.group.a), res.a.by_workload[wl], d["space"]) and \
                _separable(fb, set(r.group.b), res.b.by_workload[wl], d["space"])
            if not ok:
                d["exact"] = {"ratio": None, "note": "not separable: its functions also run in "
                              "other contexts, and the exact counts are per function"}
                stats["not_separable"] += 1
                continue
            ea = sum(pa.get((d["space"], f), 0.0) for f in fa) / tot_a if tot_a else math.nan
            eb = sum(pb.get((d["space"], f), 0.0) for f in fb) / tot_b if tot_b else math.nan
            note = "exact instructions of the context's functions"
        ratio = ea / eb if eb > 0 and ea > 0 else None
        sampled = (d.get("ratio") or {}).get("instructions")
        err = (sampled / ratio - 1) if (ratio and sampled) else None
        d["exact"] = {"ratio": ratio, "share_a": ea, "share_b": eb, "error": err, "note": note}
        stats["with_exact"] += 1
        if err is not None:
            stats["errors"].append(err)
            if d.get("quoted", True):
                quoted.append(abs(err))
            else:
                # a thin ratio is claimed as its lower bound: the claim holds when the exact
                # ratio is at or above it
                lo = (d.get("ci_fcr") or d.get("ci95") or {}).get("instructions", [None])[0]
                bounds.append(lo is not None and ratio >= lo)
    e = [abs(x) for x in stats["errors"]]
    stats["max_abs_error"] = max(e) if e else None
    stats["median_abs_error"] = sorted(e)[len(e) // 2] if e else None
    stats["within_15"] = sum(1 for x in e if x <= 0.15)
    stats["quoted"] = len(quoted)
    stats["quoted_max_abs_error"] = max(quoted) if quoted else None
    stats["quoted_median_abs_error"] = sorted(quoted)[len(quoted) // 2] if quoted else None
    stats["quoted_within_15"] = sum(1 for x in quoted if x <= 0.15)
    stats["bounds"] = len(bounds)
    stats["bounds_held"] = sum(bounds)
    stats["below_1_2"] = sum(1 for d in summary.get("ranking", [])
                             if (d.get("exact") or {}).get("ratio") is not None
                             and d["exact"]["ratio"] < 1.2)
    summary["exact"] = {k: v for k, v in stats.items() if k != "errors"}
    return stats
