"""The result as plain data: what --json writes and what the HTML page embeds."""
from __future__ import annotations

import math

from . import detect as det
from .analyse import Result, Row
from .match import KINDS


def _num(x):
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else x


def side_desc(c) -> dict:
    return {"isa": c.isa, "kernel": c.kernel, "label": c.label}


def row_dict(r: Row, res: Result, detail: bool) -> dict:
    d = {
        "rank": r.rank, "score": _num(r.score), "function": r.function, "workload": r.workload,
        "space": r.space, "kind": r.group.kind, "depth": r.group.depth,
        "partial_stack": list(r.group.anchor[-3:]), "anchor": list(r.group.anchor),
        "anomalous": list(r.anomalous), "within_noise": list(r.noise),
        "ratio": {m: _num(r.ratio[m]) for m in res.metrics},
        "ci95": {m: [_num(v) for v in r.ci(m)] for m in res.metrics},
        # false: the interval is wider than --quote-within; quote the lower bound, not the ratio
        "quoted": r.quoted(res.options.quote_within, res.selection_z),
        "rate": {m: _num(r.rate.get(m)) for m in res.metrics},
        "votes": {m: r.votes.get(m, []) for m in res.metrics},
        "score_parts": {m: _num(r.parts.get(m, 0.0)) for m in res.metrics},
        "share_a": {k: _num(v) for k, v in r.share_a.items()},
        "share_b": {k: _num(v) for k, v in r.share_b.items()},
        "samples": [_num(r.a[0]), _num(r.b[0])],
        "cycles": [_num(r.a[1]), _num(r.b[1])], "instructions": [_num(r.a[2]), _num(r.b[2])],
    }
    if res.options.fcr:
        # the interval the report shows and bounds by: adjusted for the selection (--fcr)
        d["ci_fcr"] = {m: [_num(v) for v in r.ci(m, res.selection_z)] for m in res.metrics}
    if detail:
        ca = res.a.by_workload[r.workload]
        cb = res.b.by_workload[r.workload]
        # where A's samples of the context are: a context merges A's deeper frames into its
        # anchor, and its ratio is of that whole subtree; the heaviest sampled function says
        # which frame holds the work (riscv64's ptep_clear_flush context is mostly the SBI
        # TLB flush below it, not ptep_clear_flush's own code)
        leaves: dict[str, float] = {}
        for p in r.group.a:
            leaves[p[-1]] = leaves.get(p[-1], 0.0) + float(ca[(r.space, p)][0])
        if leaves and r.a[0] > 0:
            f, n = max(leaves.items(), key=lambda kv: (kv[1], kv[0]))
            d["a_top_leaf"] = {"function": f, "share": n / float(r.a[0])}
        d["stacks_a"] = [{"path": list(p), "samples": _num(ca[(r.space, p)][0])}
                         for p in sorted(r.group.a, key=lambda p: -ca[(r.space, p)][0])]
        d["stacks_b"] = [{"path": list(p), "samples": _num(cb[(r.space, p)][0])}
                         for p in sorted(r.group.b, key=lambda p: -cb[(r.space, p)][0])]
    return d


def to_dict(res: Result, top: int, truth_eval: dict | None = None, truth=None) -> dict:
    cov = res.coverage
    out = {
        "format": "hpmkit-compare", "version": 1,
        "a": side_desc(res.a), "b": side_desc(res.b),
        "workloads": res.workloads, "metrics": res.metrics,
        "options": {k: getattr(res.options, k) for k in (
            "min_samples", "min_contexts", "seed", "vote", "normalise", "scope", "max_partial",
            "parent_levels", "fit_cap", "noise_check", "quote_within", "fcr")},
        "selection_z": _num(res.selection_z),
        "detectors": [det.LABELS[d] for d in res.detectors],
        "warnings": res.warnings,
        "coverage": {
            "contexts": cov.contexts, "with_stack": cov.with_stack, "matched": cov.matched,
            "matched_with_stack": cov.matched_with_stack,
            "by_kind": {k: cov.by_kind[k] for k in KINDS}, "depth": dict(sorted(cov.depth.items())),
            "workloads": {wl: {"kernel_pct": [_pct(s[1], s[0]) for s in v],
                               "matched_pct": [_pct(s[2], s[0]) for s in v],
                               "coverage_pct": [_pct(s[2], s[1]) for s in v]}
                          for wl, v in sorted(cov.workload.items())},
        },
        "unmatched": {wl: [len(u[0]), len(u[1])] for wl, u in sorted(res.unmatched.items())},
        "matched_contexts": len(res.rows), "too_thin": res.thin, "within_noise": res.within_noise,
        "medians": {m: _num(v) for m, v in res.medians.items()},
        "detection": {m: {"n": d.n, "contamination": d.contamination,
                          "silhouette": {k: {c: _num(s) for c, s in v.items()} for k, v in d.silhouette.items()},
                          "notes": d.notes}
                      for m, d in res.detection.items()},
        "ranked": len(res.ranked),
        "ranking": [row_dict(r, res, True) for r in res.ranked[:top]],
    }
    if truth_eval is not None:
        out["truth"] = {
            "entries": [{"function": t.function,
                         "workload": ",".join(sorted(t.workloads)) if t.workloads else t.workload,
                         "reason": t.reason,
                         "evidence": t.evidence} for t in truth],
            "at_k": truth_eval["k"],
            "found": truth_eval["found"], "missed": truth_eval["missed"],
            "reached": truth_eval["reached"],
            "row_hits": truth_eval["rows"][:top],
        }
    return out


def _pct(x, y):
    return _num(100.0 * x / y) if y else None
