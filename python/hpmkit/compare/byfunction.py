"""Functions A spends more of a workload in: per workload, by the sampled function alone.

The ranking looks for outliers among call-stack contexts: a context whose ratio stands out
from the thousands of others. A function that costs A clearly more in every workload that
runs it, but only ×1.5-2 where the outliers are ×3-20, is no outlier and is not ranked
(riscv64's `finish_task_switch`: ×1.4-1.9 by exact count in five ksuite workloads, thousands
of samples each). This table asks the plainer question perf diff asks, with an honest
interval: per workload, every kernel function (the frame the sample is in, whatever its
callers; same-work names folded as data/compare/same-work.tsv says) with at least
`min_samples` samples on both sides and MIN_SHARE of A's workload, whose A/B ratio of shares
is FLOOR or more at the lower end of its interval. The interval is widened for the selection
(Benjamini-Yekutieli false-coverage-rate intervals over every (workload, function) pair that
could have been listed, analyse.selection_z): listing only the pairs that came out high
would otherwise make marginal bounds fail more often than they say.

Rows are ordered by the extra share of the workload A spends there (A's share less B's),
the work a fix would save. Where the lab's per-function counts exist, each row gets the exact
shares of both sides and their ratio. Functions B does not run (too few samples) are the
"work only A does" table's (onesided.py).
"""
from __future__ import annotations

from statistics import median

from .analyse import interval, selection_z
from .names import same_work
from .onesided import MIN_SHARE, _leaves, exact_shares, truth_hits  # noqa: F401 (truth_hits: the
# same question of this table's rows, each of MIN_SHARE or more)

FLOOR = 1.2   # the ratio a listed function is at least (the ranking's "real by exact count")


def find(res, min_samples: int | None = None, floor: float = FLOOR) -> dict:
    """{"rows": [...], "candidates": m, "z": z}: (workload, function) rows whose ratio's lower
    bound at the selection-adjusted z is `floor` or more, largest extra share first."""
    n = res.options.min_samples if min_samples is None else min_samples
    fold_a, fold_b = same_work(res.a.isa, res.a.kernel), same_work(res.b.isa, res.b.kernel)
    metric = 2 if "instructions" in res.metrics else 0   # cost column: samples, cycles, instructions
    cand = []
    for wl in res.workloads:
        la = _leaves(res.a.by_workload[wl], fold_a)
        lb = _leaves(res.b.by_workload[wl], fold_b)
        ta, tb = res.a.totals[wl][metric], res.b.totals[wl][metric]
        if not (ta > 0 and tb > 0):
            continue
        for f, ea in la.items():
            eb = lb.get(f)
            if eb is None or ea[0] < n or eb[0] < n:
                continue
            sa, sb = ea[metric] / ta, eb[metric] / tb
            if sa < MIN_SHARE or not (sa > 0 and sb > 0):
                continue
            via, via_n = max(ea[3].items(), key=lambda kv: (kv[1], kv[0]))
            cand.append({"workload": wl, "function": f, "samples": [ea[0], eb[0]],
                         "share": [sa, sb], "ratio": sa / sb, "via": list(via),
                         "via_share": via_n / ea[0]})

    # select by the marginal bound, then hold the selected to the interval that stays
    # honest for R picked of m (fewer left -> a smaller z; one pass is on the safe side)
    picked = [r for r in cand if interval(r["ratio"], *r["samples"])[0] >= floor]
    z = selection_z(len(picked), len(cand))
    rows = []
    for r in picked:
        r["ci"] = list(interval(r["ratio"], *r["samples"], z))
        if r["ci"][0] >= floor:
            rows.append(r)
    rows.sort(key=lambda r: (-(r["share"][0] - r["share"][1]), r["workload"], r["function"]))
    return {"rows": rows, "candidates": len(cand), "z": z, "floor": floor, "min_samples": n,
            "metric": ("samples", "cycles", "instructions")[metric]}


def annotate_exact(found: dict, res, src) -> int:
    """Add row["exact"] = {"share_a", "share_b", "ratio"} from the lab's per-function counts."""
    done = 0
    for r in found["rows"]:
        e = exact_shares(src, res, r["workload"], r["function"])
        if e is None:
            continue
        a, b = e
        r["exact"] = {"share_a": a, "share_b": b,
                      "ratio": a / b if a is not None and b else None}
        done += 1
    return done


def check(found: dict) -> dict | None:
    """How the listed rows fare against the exact ratios: how many have one, how many are at
    least FLOOR by it, and how many exact ratios lie inside the row's interval."""
    ex = [r for r in found["rows"] if (r.get("exact") or {}).get("ratio") is not None]
    if not ex:
        return None
    return {"with_exact": len(ex),
            "at_least_floor": sum(bool(r["exact"]["ratio"] >= found["floor"]) for r in ex),
            "inside_interval": sum(bool(r["ci"][0] <= r["exact"]["ratio"] <= r["ci"][1]) for r in ex),
            "median_abs_error": float(median(abs(r["ratio"] / r["exact"]["ratio"] - 1) for r in ex))}


def lines(summary: dict, top: int = 12) -> list[str]:
    """The terminal report's section (empty when no row is listed)."""
    o = summary.get("by_function") or {}
    rows = o.get("rows") or []
    if not rows:
        return []
    isa = (summary["a"]["isa"] or "A", summary["b"]["isa"] or "B")
    nfun = len({r["function"] for r in rows})
    out = [f"Functions {isa[0]} spends more of a workload in: {o['metric']} share of the sampled "
           f"function, {isa[0]}/{isa[1]} at least x{o['floor']:g} at the lower end of the interval "
           f"(widened for picking {len(rows)} of {o['candidates']}: z {o['z']:.2f}); "
           f"{len(rows)} rows, {nfun} functions; by the extra share of the workload"]
    has_exact = any(r.get("exact") for r in rows)
    head = ["workload", "function", "samples A/B", "% of A", "% of B", "ratio [interval]", "mostly below"]
    if has_exact:
        head[6:6] = ["exact"]
    body = []
    for r in rows[:top]:
        cells = [r["workload"], r["function"], f"{r['samples'][0]:.0f}/{r['samples'][1]:.0f}",
                 f"{100 * r['share'][0]:.1f}", f"{100 * r['share'][1]:.1f}",
                 f"{r['ratio']:.2f} [{r['ci'][0]:.2f}-{r['ci'][1]:.2f}]"]
        if has_exact:
            e = (r.get("exact") or {}).get("ratio")
            cells.append("-" if e is None else f"{e:.2f}")
        cells.append(" > ".join(r["via"][-2:]) + (f" ({100 * r['via_share']:.0f} %)" if r["via"] else ""))
        body.append(cells)
    from .text import _table
    out += _table(head, body, right={2, 3, 4, 5, 6} if has_exact else {2, 3, 4, 5})
    if len(rows) > top:
        out.append(f"({len(rows) - top} more rows in --json: by_function)")
    c = o.get("exact_check")
    if c:
        out.append(f"exact counts of the same runs: {c['with_exact']} rows checked; x{o['floor']:g} or more for "
                   f"{c['at_least_floor']}, inside the interval for {c['inside_interval']}, median error "
                   f"{100 * c['median_abs_error']:.0f} %")
    return out

