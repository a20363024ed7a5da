"""Work only A does: kernel functions that take a real part of a workload on A and next to
nothing on B.

The ranking compares matched contexts with enough samples on both sides. A function that B
does not run in a workload at all has no ratio there: its contexts are too thin on B or match
nothing, and the ranking cannot show it, although it is the plainest kind of extra work (on
Linux 6.1, riscv64 has no lockless get_user_pages_fast, so every shared-futex operation takes
the slow page-table walk -- `follow_page_mask`, `find_vma` -- that arm64 skips). So, per
workload and by the sampled function alone (the frame a sample is in, whatever its callers):
every kernel function with at least `min_samples` samples on A and fewer than that on B is
listed with its share of A's workload and the callers A reached it through most.

Names are compared after hpmkit's normalisation, with the same-work names of
data/compare/same-work.tsv folded into the function they stand for (arm64's `clear_page` is
riscv64's `memset`). A function B shows in no workload at all is marked so: B's kernel may
inline it (arm64 inlines its spinlocks) or not have it, so its cost is in B's callers and the
row says less than one whose function B runs elsewhere.

Where the lab's per-function counts exist (`<workload>.exact.tsv`), each row gets the exact
shares of both sides: B's should be next to none if the function is really A's alone there.
"""
from __future__ import annotations

from collections import defaultdict

from .analyse import is_pseudo
from .contexts import KERNEL
from .names import same_work

MIN_SHARE = 0.005   # the text report lists rows with at least 0.5 % of the workload's samples


def _leaves(ctx: dict, fold: dict[str, str]) -> dict[str, list]:
    """function -> [samples, cycles, instructions, {caller path: samples}] of the kernel
    samples whose sampled frame is that function."""
    out: dict[str, list] = {}
    for (space, path), cost in ctx.items():
        if space != KERNEL or not path:
            continue
        f = fold.get(path[-1], path[-1])
        if is_pseudo(f):
            continue
        e = out.setdefault(f, [0.0, 0.0, 0.0, defaultdict(float)])
        for i in range(3):
            e[i] += float(cost[i])
        e[3][path[:-1]] += float(cost[0])
    return out


def find(res, min_samples: int | None = None) -> dict:
    """{"rows": [...]}: one row per (workload, function) with >= min_samples samples on A and
    fewer on B, largest share of A's workload first."""
    n = res.options.min_samples if min_samples is None else min_samples
    fold_a, fold_b = same_work(res.a.isa, res.a.kernel), same_work(res.b.isa, res.b.kernel)
    seen_b: set[str] = set()
    for ctx in res.b.by_workload.values():
        for space, path in ctx:
            if space == KERNEL:
                seen_b.update(fold_b.get(f, f) for f in path)
    rows = []
    for wl in res.workloads:
        la = _leaves(res.a.by_workload[wl], fold_a)
        lb = _leaves(res.b.by_workload[wl], fold_b)
        ta, tb = res.a.totals[wl], res.b.totals[wl]
        for f, (smp, _cyc, ins, callers) in la.items():
            sb = lb.get(f, [0.0])[0]
            if smp < n or sb >= n:
                continue
            via, via_n = max(callers.items(), key=lambda kv: (kv[1], kv[0]))
            rows.append({"workload": wl, "function": f, "samples": [smp, sb],
                         "share": [smp / ta[0] if ta[0] else None, sb / tb[0] if tb[0] else None],
                         "instructions": ins, "b_has_it": f in seen_b,
                         "via": list(via), "via_share": via_n / smp})
    rows.sort(key=lambda r: (-(r["share"][0] or 0.0), r["workload"], r["function"]))
    return {"rows": rows, "min_samples": n}


def exact_shares(src, res, wl: str, f: str) -> tuple[float | None, float | None] | None:
    """Exact (share of A's workload, share of B's) of kernel function `f`'s own instructions,
    same-work names folded, from the lab's per-function tables; None where a side has none."""
    if src is None or wl not in src.ta or wl not in src.tb:
        return None
    cache = src.__dict__.setdefault("_function_shares", {})   # exact table -> ({f: share}, total)

    def share(t, side):
        if t not in cache:
            fold = same_work(side.isa, side.kernel)
            per, total = src.table(t)
            acc: dict[str, float] = defaultdict(float)
            for (space, g), v in per.items():
                if space == KERNEL:
                    acc[fold.get(g, g)] += v
            cache[t] = ({g: v / total for g, v in acc.items()} if total else {}, total)
        got, total = cache[t]
        return got.get(f, 0.0) if total else None

    return share(src.ta[wl], res.a), share(src.tb[wl], res.b)


def annotate_exact(found: dict, res, src) -> int:
    """Add row["exact"] = {"share_a", "share_b"} from the per-function exact tables (the
    function's own instructions over all of the workload's) where both sides have them."""
    if src is None or not src.any():
        return 0
    done = 0
    for r in found["rows"]:
        e = exact_shares(src, res, r["workload"], r["function"])
        if e is None:
            continue
        r["exact"] = {"share_a": e[0], "share_b": e[1]}
        done += 1
    return done


def truth_hits(found: dict, truth, missed: list[int]) -> dict[int, dict]:
    """{entry index: the largest listed row naming it} for truth entries the ranking missed
    that a row of MIN_SHARE or more names (the entry's function or an alias)."""
    out: dict[int, dict] = {}
    for i in missed:
        t = truth[i]
        for r in found["rows"]:   # largest share first
            if (r["share"][0] or 0) >= MIN_SHARE and r["function"] in t.names() and t.in_workload(r["workload"]):
                out[i] = {"function": r["function"], "workload": r["workload"]}
                break
    return out


def lines(summary: dict, top: int = 12) -> list[str]:
    """The terminal report's section (empty when no row reaches MIN_SHARE)."""
    o = summary.get("one_sided") or {}
    rows = [r for r in o.get("rows", []) if (r["share"][0] or 0) >= MIN_SHARE]
    if not rows:
        return []
    isa = (summary["a"]["isa"] or "A", summary["b"]["isa"] or "B")
    out = [f"Work only {isa[0]} does: kernel functions with {o['min_samples']} or more samples on "
           f"{isa[0]} and fewer on {isa[1]} in a workload, at least {100 * MIN_SHARE:.1f} % of it "
           f"({len(rows)} of {len(o['rows'])}; * = {isa[1]} shows the function in no workload: "
           "inlined there, or not in its kernel)"]
    has_exact = any(r.get("exact") for r in rows)
    head = ["workload", "function", "samples A/B", "% of A", "mostly below"]
    if has_exact:
        head[4:4] = ["exact % A", "exact % B"]
    body = []
    for r in rows[:top]:
        cells = [r["workload"], r["function"] + ("" if r["b_has_it"] else " *"),
                 f"{r['samples'][0]:.0f}/{r['samples'][1]:.0f}", _pct(r["share"][0])]
        if has_exact:
            e = r.get("exact") or {}
            cells += [_pct(e.get("share_a")), _pct(e.get("share_b"), 2)]
        cells.append(" > ".join(r["via"][-2:]) + (f" ({100 * r['via_share']:.0f} %)" if r["via"] else ""))
        body.append(cells)
    from .text import _table
    out += _table(head, body, right={2, 3, 4, 5} if has_exact else {2, 3})
    if len(rows) > top:
        out.append(f"({len(rows) - top} more rows in --json: one_sided)")
    return out


def _pct(x, nd=1):
    return "-" if x is None else f"{100 * x:.{nd}f}"
