"""The method end to end on two sides of contexts: match, ratios, thin rule, detection, score.

Ratios (Wu et al. 2.2.1): for a matched context and metric m, share_X = cost_X[m] / total_X[m],
where total_X is the whole workload's cost on side X (user + kernel, every sample), so a run
that is uniformly slower on A does not make every context anomalous, and recordings of
different length compare. ratio = share_A / share_B; CPI ratio = cycles ratio / instructions
ratio (the context's CPI relative to its run's CPI, A over B). With normalise="none" the raw
costs are compared (for recordings of exactly the same work).

Score (2.2.3): per metric, outlier rate (share of detectors that flag the context on the high
side) x proportion (the context's share of A's cycles, instructions or samples) x ratio, when
the rate reaches `vote` (default: half the detectors), else 0; summed over metrics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import HpmkitError, UsageError
from . import detect as det
from .contexts import COSTS, KERNEL, USER, Contexts
from .match import KINDS, Group, match

METRICS = ("cycles", "instructions", "cpi", "samples")
DEFAULT_METRICS = ("cycles", "instructions", "cpi")
CI_Z = 1.96


class NotEnoughSamples(HpmkitError):
    """Too few matched contexts with enough samples to tell normal from anomalous. `result`
    holds what was computed before detection (every matched context, nothing ranked), so an
    explanation of each context can still be written."""

    def __init__(self, message: str, result: "Result | None" = None):
        super().__init__(message)
        self.result = result


@dataclass
class Options:
    metrics: tuple[str, ...] | None = None     # None: the default ones both sides carry
    min_samples: int = 10                       # per side, per matched context
    min_contexts: int = 10                      # non-thin contexts needed for detection
    detectors: list[str] | None = None
    seed: int = 0
    vote: float = 0.5
    normalise: str = "total"
    scope: str = "kernel"                       # kernel | all (kernel and user contexts)
    max_partial: int = 3
    parent_levels: int = 2
    fit_cap: int = 4000
    noise_check: bool = True                    # flags must clear the ratio's 95% interval
    quote_within: float = 0.15                  # a ratio is quoted when known within this (0: always)
    fcr: bool = False                           # intervals of ranked rows adjusted for the selection


FLAT = 1e-3   # ratios that all lie within 0.1 % of each other carry no information


def flat(vals) -> bool:
    """All positive ratios within FLAT of each other (CPI when cycles are counted as instructions)."""
    vals = [v for v in vals if v is not None and math.isfinite(v) and v > 0]
    return bool(vals) and max(vals) <= min(vals) * (1 + FLAT)


@dataclass
class Row:
    workload: str
    space: str
    group: Group
    a: np.ndarray          # samples, cycles, instructions (sums of the merged contexts)
    b: np.ndarray
    share_a: dict[str, float] = field(default_factory=dict)
    share_b: dict[str, float] = field(default_factory=dict)
    ratio: dict[str, float] = field(default_factory=dict)
    thin: bool = False
    rate: dict[str, float] = field(default_factory=dict)
    votes: dict[str, list[str]] = field(default_factory=dict)   # metric -> detectors flagging
    anomalous: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)    # flagged, but within sampling noise
    parts: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    rank: int | None = None

    @property
    def function(self) -> str:
        return self.group.anchor[-1]

    @property
    def pseudo(self) -> bool:
        """The context names no function: `[kernel-entry]` (samples in the entry code),
        `[unknown]` (an unresolved frame), or a section/linker marker (`__sched_text_start`,
        `_stext`: a symbolizer that named the first function of a section after its section,
        profile.symbols.is_marker). Such a context is never ranked: there is nothing a port
        could fix under that name."""
        return is_pseudo(self.function)

    @property
    def marker(self) -> bool:
        """The context is named by a section/linker marker, not a function."""
        return _is_marker(self.function)

    def ci(self, metric: str, z: float = None) -> tuple[float, float]:
        """Approximate 95% interval of the ratio from sampling noise (Poisson counts); z: the
        normal quantile of another level (Result.selection_z)."""
        return interval(self.ratio.get(metric, math.nan), self.a[0], self.b[0], z)

    def quoted(self, within: float, z: float = None) -> bool:
        """Whether the ratio is known well enough to print as a number: its 95 % interval lies
        within x/÷ (1 + within) of it. Otherwise the report gives the interval's lower bound
        ("at least"), the claim the samples support: a thin side of 15-40 samples puts the
        point estimate 20-35 % off the exact ratio (measured on ksuite), and ranking selects
        the ones that came out high."""
        if within <= 0:
            return True
        na, nb = self.a[0], self.b[0]
        if not (na > 0 and nb > 0):
            return False
        return (z or CI_Z) * math.sqrt(1 / na + 1 / nb) <= math.log1p(within)


def interval(r: float, na: float, nb: float, z: float = None) -> tuple[float, float]:
    """Interval of a ratio of two sampled shares from the sample counts behind them (Poisson
    counts, on the log scale); z: the normal quantile (default 95 %)."""
    if not (na > 0 and nb > 0 and r > 0 and math.isfinite(r)):
        return (math.nan, math.nan)
    h = (z or CI_Z) * math.sqrt(1 / na + 1 / nb)
    return (r * math.exp(-h), r * math.exp(h))


def _is_marker(name: str) -> bool:
    from ..profile.symbols import is_marker   # here: hpmkit.profile imports pyarrow
    return is_marker(name)


def is_pseudo(name: str) -> bool:
    """A frame name that names no function: `[kernel-entry]`, `[unknown]`, or a section
    marker (Row.pseudo)."""
    return (name.startswith("[") and name.endswith("]")) or _is_marker(name)


@dataclass
class Coverage:
    """Tables 3 and 4 of the paper, per side (0 = A, 1 = B)."""

    contexts: list[int] = field(default_factory=lambda: [0, 0])          # kernel contexts
    with_stack: list[int] = field(default_factory=lambda: [0, 0])        # >= 2 kernel frames
    matched: list[int] = field(default_factory=lambda: [0, 0])
    matched_with_stack: list[int] = field(default_factory=lambda: [0, 0])
    by_kind: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in KINDS})
    depth: dict[str, int] = field(default_factory=dict)                  # depth label -> groups
    # per workload: samples [all, kernel, matched kernel] per side
    workload: dict[str, list[list[float]]] = field(default_factory=dict)


@dataclass
class Result:
    a: Contexts
    b: Contexts
    options: Options
    metrics: list[str]
    workloads: list[str]
    rows: list[Row]
    ranked: list[Row]
    coverage: Coverage
    detection: dict[str, det.MetricDetection]
    detectors: list[str]
    warnings: list[str]
    thin: int
    unmatched: dict[str, list[list[tuple]]]   # workload -> [A unmatched, B unmatched] (space, path)
    medians: dict[str, float]
    within_noise: int                         # metric flags dropped by the noise check
    selection_z: float = CI_Z                 # the ranked rows' interval quantile (--fcr)


def selection_z(ranked: int, eligible: int, level: float = 0.95) -> float:
    """Normal quantile of intervals that stay honest after selection: R of m rankable
    contexts were picked for their high ratios, so marginal 95 % intervals of the picked ones
    miss more often than 5 % (measured: 8 % of ranked lower bounds above the exact ratio).
    Benjamini & Yekutieli's false-coverage-rate intervals (JASA 2005) widen each selected
    interval to level 1 - R(1-level)/m, which bounds the expected share of non-covering
    intervals among the selected by 1-level."""
    from statistics import NormalDist
    if ranked <= 0 or eligible <= 0:
        return CI_Z
    alpha = (1 - level) * min(ranked, eligible) / eligible
    return NormalDist().inv_cdf(1 - alpha / 2)


def _metrics_for(a: Contexts, b: Contexts, wls: list[str], want: tuple[str, ...] | None,
                 warnings: list[str]) -> list[str]:
    def has(side: Contexts, wl: str, m: str) -> bool:
        if m == "samples":
            return True
        if m == "cpi":
            return {"cycles", "instructions"} <= side.has.get(wl, set())
        return m in side.has.get(wl, set())

    if want is not None:
        bad = [m for m in want if m not in METRICS]
        if bad:
            raise UsageError(f"--metrics: unknown {', '.join(bad)}; choose from {', '.join(METRICS)}")
        for m in want:
            for side in (a, b):
                missing = [w for w in wls if not has(side, w, m)]
                if missing:
                    raise UsageError(
                        f"--metrics {m}: {side.label or side.isa} has no {m if m != 'cpi' else 'cycles+instructions'} "
                        f"for workload(s) {', '.join(missing)}; record them (hpm record -e cycles,instructions) "
                        f"or leave {m} out of --metrics")
        return list(want)
    got = []
    for m in DEFAULT_METRICS:
        lacking = [f"{side.label or side.isa}:{w}" for side in (a, b) for w in wls if not has(side, w, m)]
        if lacking:
            warnings.append(f"metric {m} left out: not recorded in {', '.join(lacking[:4])}"
                            + (" ..." if len(lacking) > 4 else ""))
        else:
            got.append(m)
    if not got:
        raise UsageError("neither cycles nor instructions is recorded on both sides; record them "
                         "(hpm record -e cycles,instructions) or compare sample counts with --metrics samples")
    return got


def _ratios(row: Row, ta: np.ndarray, tb: np.ndarray, metrics: list[str], normalise: str) -> None:
    for i, m in enumerate(COSTS):
        if normalise == "total":
            row.share_a[m] = row.a[i] / ta[i] if ta[i] > 0 else math.nan
            row.share_b[m] = row.b[i] / tb[i] if tb[i] > 0 else math.nan
        else:
            row.share_a[m], row.share_b[m] = float(row.a[i]), float(row.b[i])
    for m in metrics:
        if m == "cpi":
            row.ratio[m] = _div(_div(row.share_a["cycles"], row.share_b["cycles"]),
                                _div(row.share_a["instructions"], row.share_b["instructions"]))
        else:
            row.ratio[m] = _div(row.share_a[m], row.share_b[m])


def _div(x: float, y: float) -> float:
    return x / y if (y > 0 and math.isfinite(x) and math.isfinite(y) and x > 0) else math.nan


def _fold_notes(side: str, notes: list[str]) -> list[str]:
    """One line per kind of skip across a side's profiles, instead of one per profile."""
    import re
    folded: dict[str, list[int]] = {}
    empty: dict[str, list[str]] = {}     # --comm/--pid chose nothing: what -> workloads
    out = []
    for n in notes:
        m = re.fullmatch(r"([^:]+): (no sample of .*)", n)
        if m:
            empty.setdefault(m[2], []).append(m[1])
            continue
        m = re.fullmatch(r"[^:]+: (ingest skipped|--comm/--pid left out) (\d+) (.*)", n)
        if m:
            folded.setdefault((m[1], m[3]), []).append(int(m[2]))
        else:
            out.append(f"{side}: {n}")
    for (how, what), counts in folded.items():
        out.append(f"{side}: {how} {sum(counts)} {what} in {len(counts)} profile(s)")
    for what, wls in empty.items():
        out.append(f"{side}: {what}: workload(s) {', '.join(wls[:6])}{' ...' if len(wls) > 6 else ''} "
                   f"({len(wls)}) left out")
    return out


def run(a: Contexts, b: Contexts, opts: Options | None = None, progress=None) -> Result:
    opts = opts or Options()
    say = progress or (lambda *a: None)
    warnings: list[str] = _fold_notes(a.isa or a.label, a.notes) + _fold_notes(b.isa or b.label, b.notes)
    if opts.normalise not in ("total", "none"):
        raise UsageError(f"--normalise: '{opts.normalise}' is not total or none")
    if a.isa and b.isa and a.isa == b.isa:
        warnings.append(f"both sides are {a.isa}: comparing two recordings of the same ISA")
    wls = sorted(a.by_workload.keys() & b.by_workload.keys())
    for side, other in ((a, b), (b, a)):
        only = sorted(side.by_workload.keys() - other.by_workload.keys())
        if only:
            warnings.append(f"workload(s) {', '.join(only)} only in {side.label or side.isa}: not compared")
    if not wls:
        raise UsageError(f"no workload is on both sides (A: {', '.join(sorted(a.by_workload)) or 'none'}; "
                         f"B: {', '.join(sorted(b.by_workload)) or 'none'}); profiles pair by meta.workload "
                         "or file name")
    metrics = _metrics_for(a, b, wls, opts.metrics, warnings)
    spaces = (KERNEL,) if opts.scope == "kernel" else (KERNEL, USER)
    cov = Coverage()
    rows: list[Row] = []
    unmatched: dict[str, list[list[tuple]]] = {}
    for wi, wl in enumerate(wls):
        say("matching contexts", wl, wi, len(wls))
        ca, cb = a.by_workload[wl], b.by_workload[wl]
        ta, tb = a.totals[wl], b.totals[wl]
        wcov = cov.workload.setdefault(wl, [[ta[0], 0.0, 0.0], [tb[0], 0.0, 0.0]])
        um: list[list[tuple]] = [[], []]
        for space in spaces:
            pa = {p: v for (s, p), v in ca.items() if s == space}
            pb = {p: v for (s, p), v in cb.items() if s == space}
            res = match(pa, pb, max_partial=opts.max_partial, parent_levels=opts.parent_levels)
            if space == KERNEL:
                for i, side in enumerate((pa, pb)):
                    cov.contexts[i] += len(side)
                    cov.with_stack[i] += sum(1 for p in side if len(p) >= 2)
                    wcov[i][1] += sum(v[0] for v in side.values())
            for g in res.groups:
                row = Row(wl, space, g, pa[g.a[0]].copy() if len(g.a) == 1 else np.sum([pa[p] for p in g.a], axis=0),
                          pb[g.b[0]].copy() if len(g.b) == 1 else np.sum([pb[p] for p in g.b], axis=0))
                _ratios(row, ta, tb, metrics, opts.normalise)
                row.thin = row.a[0] < opts.min_samples or row.b[0] < opts.min_samples \
                    or not all(math.isfinite(row.ratio[m]) for m in metrics)
                rows.append(row)
                if space == KERNEL:
                    for i, ps in enumerate((g.a, g.b)):
                        cov.matched[i] += len(ps)
                        cov.matched_with_stack[i] += sum(1 for p in ps if len(p) >= 2)
                        cov.by_kind[g.kind][i] += len(ps)
                    wcov[0][2] += row.a[0]
                    wcov[1][2] += row.b[0]
                    cov.depth[g.depth] = cov.depth.get(g.depth, 0) + 1
            um[0] += [(space, p) for p in res.unmatched_a]
            um[1] += [(space, p) for p in res.unmatched_b]
        unmatched[wl] = um
    live = [r for r in rows if not r.thin]
    thin = len(rows) - len(live)
    if len(live) < opts.min_contexts:
        raise NotEnoughSamples(
            f"not enough samples: {len(live)} matched context(s) have >= {opts.min_samples} samples on both "
            f"sides ({len(rows)} matched, {thin} too thin); outlier detection needs at least "
            f"{opts.min_contexts}. Record longer or at a higher frequency, or lower --min-samples",
            Result(a, b, opts, metrics, wls, rows, [], cov, {}, [], warnings, thin, unmatched, {}, 0))
    detectors, notes = det.resolve(opts.detectors)
    warnings += notes
    detection = {}
    for m in metrics:
        x = np.log(np.array([r.ratio[m] for r in live]))
        d = det.detect_metric(m, x, detectors, seed=opts.seed, fit_cap=opts.fit_cap, progress=say)
        warnings += d.notes
        detection[m] = d
        rate = d.rate
        flagged = set(np.flatnonzero(rate > 0).tolist())
        for i, r in enumerate(live):
            r.rate[m] = float(rate[i])
            r.votes[m] = [k for k, f in d.flags.items() if f[i]] if i in flagged else []
    medians = {m: float(np.median([r.ratio[m] for r in live])) for m in metrics}
    for m in metrics:
        vals = [r.ratio[m] for r in live]
        if m == "cpi" and flat(vals):
            warnings.append(f"cpi: the ratio is {medians[m]:.2f} in every context (within {FLAT:.1%}): cycles equal "
                            "instructions in "
                            "these recordings (as under QEMU -icount, which counts instructions only), so CPI "
                            "says nothing here; CPI differences need hardware counters")
    within_noise = 0
    for r in live:
        r.score = 0.0
        for m in metrics:
            i = COSTS.index("cycles" if m == "cpi" else m)
            total = a.totals[r.workload][i]
            prop = r.a[i] / total if total > 0 else 0.0  # the context's share of A's work
            flagged = r.rate[m] >= opts.vote and r.rate[m] > 0
            # contamination-based detectors always flag their top c; a flag whose ratio is not
            # above the typical ratio beyond sampling noise is counted, not scored
            if flagged and opts.noise_check and not r.ci(m)[0] > medians[m]:
                r.noise.append(m)
                within_noise += 1
                flagged = False
            # the ratio enters the score at its lower 95 % bound: ranked on a point estimate,
            # a thin context's noisy high ratio outranks well-measured ones and the top of the
            # ranking overstates its ratios (the winner's curse; measured against exact counts)
            part = r.rate[m] * prop * r.ci(m)[0] if flagged else 0.0
            if part > 0:
                r.anomalous.append(m)
            r.parts[m] = part
            r.score += part
    pseudo = sorted({r.function for r in live if r.score > 0 and r.pseudo})
    if pseudo:
        n = sum(1 for r in live if r.score > 0 and r.pseudo)
        warnings.append(f"{n} anomalous context(s) named by a pseudo-frame ({', '.join(pseudo)}) not ranked: "
                        "they name no function (" + ("section markers name a section; " if any(
                            _is_marker(f) for f in pseudo) else "") + "--explain lists them)")
    ranked = sorted((r for r in live if r.score > 0 and not r.pseudo),
                    key=lambda r: (-r.score, r.workload, r.space, r.group.anchor))
    for i, r in enumerate(ranked, 1):
        r.rank = i
    z = selection_z(len(ranked), len(live)) if opts.fcr else CI_Z
    return Result(a, b, opts, metrics, wls, rows, ranked, cov, detection, detectors, warnings, thin,
                  unmatched, medians, within_noise, z)
