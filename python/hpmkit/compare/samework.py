"""Same work under another name: a ranked function's work below the row's callers on both
sides, counting the routines that do that work under another name on one ISA
(data/compare/same-work.tsv).

riscv64 clears pages with memset (clear_page is a macro over it), arm64 with clear_page. A
context ranked as `__handle_mm_fault > memset` then sets riscv64's page clearing against
arm64's other memsets there, while arm64's clear_page samples below the same callers are
unmatched or matched elsewhere. The ranking stays by name (what a per-function count sees
too); for each ranked kernel row whose function has such other names on a side and whose
callers have samples in them, this adds the function's work by any of its names below the
row's callers (the anchor without its last frame; the whole workload for a top-name row) on
each side, and the A/B ratio of that, sampled and, where the lab's call-path counts exist,
exact. Symmetric by construction: every path below the callers whose leaf is the function or
one of its other names counts, on both sides, whichever context it was matched in.
"""
from __future__ import annotations

from .contexts import KERNEL
from .names import same_work


def _below(ctx: dict, prefix: tuple, names: tuple[str, ...]) -> tuple[float, float]:
    """(all, under another name): samples (cost vectors) or exact instructions (numbers) of the
    kernel paths below `prefix` whose leaf is one of `names`: the function, then its other
    names."""
    total = other = 0.0
    k = len(prefix)
    for (space, path), cost in ctx.items():
        if space != KERNEL or len(path) <= k or path[-1] not in names or path[:k] != prefix:
            continue
        c = float(cost[0]) if hasattr(cost, "__len__") else float(cost)
        total += c
        if path[-1] != names[0]:
            other += c
    return total, other


def annotate(summary: dict, res, src=None) -> int:
    """Add row["same_work"] to ranked kernel rows whose function's work is done under another
    name below the row's callers on either side; returns how many rows got one."""
    maps = [same_work(res.a.isa, res.a.kernel), same_work(res.b.isa, res.b.kernel)]
    if not any(maps):
        return 0
    rows = {(r.workload, r.space, r.group.anchor): r for r in res.ranked}
    done = 0
    for d in summary.get("ranking", []):
        r = rows.get((d["workload"], d["space"], tuple(d["anchor"])))
        if r is None or r.space != KERNEL:
            continue
        f, wl = r.function, r.workload
        prefix = tuple(r.group.anchor[:-1])
        names = [tuple([f] + sorted(n for n, to in m.items() if to == f)) for m in maps]
        got = [_below(side.by_workload[wl], prefix, nm) for side, nm in zip((res.a, res.b), names)]
        if not (got[0][1] or got[1][1]):
            continue   # no work under another name below these callers
        ta, tb = res.a.totals[wl][0], res.b.totals[wl][0]
        sa, sb = got[0][0] / ta, got[1][0] / tb
        out = {"under": list(prefix),
               "a": {"names": list(names[0]), "samples": got[0][0], "other_name_samples": got[0][1]},
               "b": {"names": list(names[1]), "samples": got[1][0], "other_name_samples": got[1][1]},
               "ratio": sa / sb if sa > 0 and sb > 0 else None, "exact_ratio": None}
        if src is not None and src.has_paths() and all(wl in t for t in (src.ta, src.tb, src.qa, src.qb)):
            tot_a, tot_b = src.table(src.ta[wl])[1], src.table(src.tb[wl])[1]
            ea = _below(src.path_table(src.qa[wl], wl, res.a), prefix, names[0])[0]
            eb = _below(src.path_table(src.qb[wl], wl, res.b), prefix, names[1])[0]
            if tot_a and tot_b and ea > 0 and eb > 0:
                out["exact_ratio"] = (ea / tot_a) / (eb / tot_b)
        d["same_work"] = out
        done += 1
    return done


def lines(summary: dict) -> list[str]:
    """One line per annotated row, for the terminal report."""
    out = []
    isa = (summary["a"]["isa"] or "A", summary["b"]["isa"] or "B")
    for d in summary.get("ranking", []):
        s = d.get("same_work")
        if not s:
            continue
        also = [f"{isa[k]} also as {', '.join(s[side]['names'][1:])} ({s[side]['other_name_samples']:.0f} samples)"
                for k, side in ((0, "a"), (1, "b")) if s[side]["other_name_samples"]]
        where = f"below {' > '.join(s['under'][-2:])}" if s["under"] else "anywhere in the workload"
        rat = f"x{s['ratio']:.2f}" if s["ratio"] else "n/a"
        ex = f" (exact x{s['exact_ratio']:.2f})" if s.get("exact_ratio") else ""
        out.append(f"  #{d['rank']} {d['function']} ({d['workload']}): {'; '.join(also)}; all of "
                   f"{d['function']}'s work {where}: {rat}{ex}")
    return out
