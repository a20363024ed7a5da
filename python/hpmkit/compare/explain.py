"""Every context of a comparison and why it was or was not ranked (`hpmkit compare --explain`).

The ranking shows the few contexts that won; this table shows all of them, so that a large
ratio that got no rank (too thin, no detector vote, within sampling noise, never matched) can
be looked up instead of being invisible. It is written even when there are too few contexts to
rank at all. TSV, one line per context:

    status  rank  workload  space  function  match  samples_a  samples_b
    ratio_<m>  ci95_lo_<m>  ci95_hi_<m>  votes_<m>   (for each metric of the run)
    [exact_ratio_instructions]   (when exact tables lie beside both sides' profiles)
    score  why  path

`exact_ratio_instructions`: for a matched kernel context, the A/B ratio of the exact
instructions of the call paths merged into it, from the lab's per-path tables of the same runs
(exact.py; '-' for other rows). It is there to judge the sampled ratio beside it, not to rank.

status: ranked | not-ranked | thin | unmatched-A | unmatched-B. `votes_<m>`: the detectors that
flagged the metric ('-': none). `path`: the matched anchor (root -> leaf, ';'-separated), or
the unmatched context's own path. Rows: ranked by rank, then not-ranked and thin by their
first metric's ratio (largest first), then unmatched by samples.
"""
from __future__ import annotations

import math

from . import detect as det
from .analyse import Result, Row

STATUS_ORDER = ("ranked", "not-ranked", "thin", "unmatched-A", "unmatched-B")


def _num(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.4g}"


def status_of(r: Row, res: Result) -> tuple[str, str]:
    """(status, reason) of one matched context."""
    o = res.options
    if r.thin:
        if r.a[0] < o.min_samples or r.b[0] < o.min_samples:
            return "thin", (f"too thin: {r.a[0]:.0f} / {r.b[0]:.0f} samples on A / B, fewer than "
                            f"--min-samples {o.min_samples} on a side")
        bad = [m for m in res.metrics if not math.isfinite(r.ratio.get(m, math.nan))]
        return "thin", f"no ratio for {', '.join(bad)} (zero on a side)"
    if r.rank is not None:
        return "ranked", f"anomalous on {', '.join(r.anomalous)}"
    if r.pseudo and r.score > 0:
        what = ("a section marker (the symbolizer named a function after its section)" if r.marker
                else "a pseudo-frame that names no function")
        return "not-ranked", f"anomalous on {', '.join(r.anomalous)}, but {r.function} is {what}: never ranked"
    if not res.detection:
        return "not-ranked", (f"nothing ranked: only {len(res.rows) - res.thin} matched context(s) have "
                              f"enough samples, detection needs --min-contexts {o.min_contexts}")
    n = len(res.detectors)
    parts = []
    for m in res.metrics:
        votes = r.votes.get(m, [])
        if m in r.noise:
            lo, hi = r.ci(m)
            parts.append(f"{m}: flagged by {len(votes)} of {n} detectors, but its 95% interval "
                         f"{_num(lo)}-{_num(hi)} reaches the median ratio {_num(res.medians.get(m))} "
                         "(sampling noise)")
        elif not votes:
            parts.append(f"{m}: no detector flagged ratio {_num(r.ratio.get(m))} "
                         f"(median {_num(res.medians.get(m))})")
        else:
            parts.append(f"{m}: {len(votes)} of {n} detectors, fewer than --vote {o.vote:g}")
    return "not-ranked", "; ".join(parts)


def rows(res: Result, exact=None) -> list[list[str]]:
    """The table's lines (without the header), sorted as the module docstring says; `exact`
    (exact.Exact) adds the exact ratio column."""
    first = res.metrics[0]
    out: list[tuple[tuple, list[str]]] = []
    for r in res.rows:
        status, why = status_of(r, res)
        cells = [status, "-" if r.rank is None else str(r.rank), r.workload, r.space, r.function,
                 f"{r.group.kind} {r.group.depth}", f"{r.a[0]:.0f}", f"{r.b[0]:.0f}"]
        for m in res.metrics:
            lo, hi = r.ci(m)
            cells += [_num(r.ratio.get(m)), _num(lo), _num(hi), ",".join(r.votes.get(m, [])) or "-"]
        if exact is not None:
            cells.append(_num(exact.ratio(r)))
        cells += [_num(r.score) if r.rank is not None else "-", why, ";".join(r.group.anchor)]
        ratio = r.ratio.get(first, math.nan)
        key = (STATUS_ORDER.index(status), r.rank or 0, -ratio if math.isfinite(ratio) else math.inf,
               r.workload, r.group.anchor)
        out.append((key, cells))
    sides = ((res.a, res.b, "A"), (res.b, res.a, "B"))
    for wl, um in res.unmatched.items():
        for k, (side, other, tag) in enumerate(sides):
            for space, path in um[k]:
                n = side.by_workload[wl][(space, path)][0]
                cells = [f"unmatched-{tag}", "-", wl, space, path[-1], "-",
                         f"{n:.0f}" if tag == "A" else "0", "0" if tag == "A" else f"{n:.0f}"]
                cells += ["-"] * (4 * len(res.metrics) + (exact is not None))
                cells += ["-", f"no context of {other.isa or other.label} matches it (exact, partial, "
                               "parent or leaf name)", ";".join(path)]
                out.append(((STATUS_ORDER.index(cells[0]), 0, -n, wl, path), cells))
    out.sort(key=lambda kv: kv[0])
    return [c for _, c in out]


def header(res: Result, exact=None) -> list[str]:
    h = ["status", "rank", "workload", "space", "function", "match", "samples_a", "samples_b"]
    for m in res.metrics:
        h += [f"ratio_{m}", f"ci95_lo_{m}", f"ci95_hi_{m}", f"votes_{m}"]
    if exact is not None:
        h.append("exact_ratio_instructions")
    return h + ["score", "why", "path"]


def render(res: Result, exact=None) -> str:
    a, b = res.a, res.b
    lines = [f"# hpmkit compare --explain: A = {a.isa} ({a.label}), B = {b.isa} ({b.label})",
             f"# detectors: {', '.join(det.LABELS[d] for d in res.detectors) or 'not run'}; "
             f"--min-samples {res.options.min_samples}, --vote {res.options.vote:g}",
             "\t".join(header(res, exact))]
    lines += ["\t".join(c.replace("\t", " ") for c in r) for r in rows(res, exact)]
    return "\n".join(lines) + "\n"
