"""Outlier detection on per-context log ratios (Wu et al. 2.2.2 and table 5).

Each metric is one 1-D feature: log(ratio A/B) of every matched, non-thin context. Every
detector gives a score per context; contamination c turns scores into labels (the top c of
scores), and c is chosen per detector and metric from CONTAMINATIONS by the silhouette rule:
the largest c whose silhouette is >= SILHOUETTE_MIN (0.7), else the c with the best
silhouette. On the paper's table 5 this rule picks SO_GAAL-0.15, the setting its authors chose
by hand. PyOD's contamination only sets the threshold on scores that do not depend on it, so
each detector is fitted once per metric and the thresholds are applied here.

Only high-side outliers (log ratio above the median: A relatively worse) are kept; the
others are places where A does better, which this report is not about.

Scale: LSCP (and PyOD in general) costs ~1 ms per point in Python. Above `fit_cap` contexts a
detector is fitted on `fit_cap` evenly spaced order statistics of the feature and the scores of
the other points are interpolated between them (the feature is 1-D and sorted, so neighbours in
the fit set bracket every point); LSCP's cap is LSCP_CAP (400); the z-score detector always
uses all points.
"""
from __future__ import annotations

import importlib.util
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError

CONTAMINATIONS = (0.05, 0.10, 0.15, 0.20)
SILHOUETTE_MIN = 0.7
ZSCORE_CUT = 3.5
LSCP_CAP = 400  # Iglewicz & Hoaglin's modified z-score cut-off
BASE = ("zscore", "lof", "ecod", "iforest", "lscp")
TORCH = ("sogaal", "lunar")
ALL = BASE + TORCH
LABELS = {"zscore": "robust z", "lof": "LOF", "ecod": "ECOD", "iforest": "IForest", "lscp": "LSCP",
          "sogaal": "SO_GAAL", "lunar": "LUNAR"}


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def resolve(names: list[str] | None) -> tuple[list[str], list[str]]:
    """Detectors to run and notes about the ones left out."""
    notes = []
    if names is None:
        if torch_available():
            return list(ALL), notes
        notes.append("SO_GAAL and LUNAR not run: torch is not installed (pip install torch to add them)")
        return list(BASE), notes
    bad = [n for n in names if n not in ALL]
    if bad:
        raise UsageError(f"--detectors: unknown {', '.join(bad)}; choose from {', '.join(ALL)}")
    if any(n in TORCH for n in names) and not torch_available():
        raise UsageError("--detectors: sogaal and lunar need torch, which is not installed "
                         "(pip install torch, or leave them out)")
    if not names:
        raise UsageError("--detectors: give at least one detector")
    return list(dict.fromkeys(names)), notes


@dataclass
class MetricDetection:
    metric: str
    n: int
    flags: dict[str, np.ndarray] = field(default_factory=dict)        # detector -> bool, high side
    contamination: dict[str, float | None] = field(default_factory=dict)
    silhouette: dict[str, dict[str, float]] = field(default_factory=dict)  # detector -> {c: s}
    notes: list[str] = field(default_factory=list)

    @property
    def rate(self) -> np.ndarray:
        if not self.flags:
            return np.zeros(self.n)
        return np.mean(np.vstack(list(self.flags.values())), axis=0)


def _model(name: str, n: int, seed: int):
    # imported here: pyod pulls in numba/sklearn and would slow every `hpmkit --help`
    if name == "lof":
        from pyod.models.lof import LOF
        return LOF(n_neighbors=max(2, min(20, n - 1)))
    if name == "ecod":
        from pyod.models.ecod import ECOD
        return ECOD()
    if name == "iforest":
        from pyod.models.iforest import IForest
        return IForest(n_estimators=100, random_state=seed)
    if name == "lscp":
        from pyod.models.lof import LOF
        from pyod.models.lscp import LSCP
        ks = [k for k in (5, 10, 20, 30) if k < n - 1] or [max(2, n - 2)]
        return LSCP([LOF(n_neighbors=k) for k in ks], local_region_size=max(2, min(30, n - 1)),
                    random_state=seed)
    if name == "sogaal":
        import torch
        torch.manual_seed(seed)
        from pyod.models.so_gaal import SO_GAAL
        return SO_GAAL()
    if name == "lunar":
        import torch
        torch.manual_seed(seed)
        from pyod.models.lunar import LUNAR
        return LUNAR(n_neighbours=max(2, min(5, n - 1)))
    raise AssertionError(name)


def _fit_scores(name: str, x: np.ndarray, seed: int) -> np.ndarray:
    model = _model(name, len(x), seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn/pyod chatter about feature names and n_jobs
        np.random.seed(seed)  # LSCP draws its subspaces from the global generator too
        model.fit(x.reshape(-1, 1))
    return np.asarray(model.decision_scores_, dtype=np.float64)


def robust_z(x: np.ndarray) -> np.ndarray:
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    scale = mad / 0.6745 if mad > 0 else np.mean(np.abs(x - med)) * 1.2533
    if scale <= 0:
        return np.zeros_like(x)
    return (x - med) / scale


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Silhouette of a two-class labelling of a 1-D feature, exact, O(n log n).

    sklearn's silhouette_score is O(n^2) in memory; on a line the mean distance from a point
    to a set is a prefix-sum computation over the sorted set.
    """
    k = int(labels.sum())
    if k == 0 or k == len(x):
        return float("nan")
    xs = [np.sort(x[labels == c]) for c in (False, True)]
    cs = [np.concatenate(([0.0], np.cumsum(s))) for s in xs]

    def mean_dist(v: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
        s, cum = xs[c], cs[c]
        i = np.searchsorted(s, v)
        below = v * i - cum[i]
        above = (cum[-1] - cum[i]) - v * (len(s) - i)
        return below + above, np.full(len(v), len(s), dtype=np.float64)

    total = 0.0
    for c in (0, 1):
        v = xs[c]
        if len(v) == 1:
            continue  # s(i) = 0 for singletons, as in Rousseeuw
        own, n_own = mean_dist(v, c)
        a = own / (n_own - 1)
        oth, n_oth = mean_dist(v, 1 - c)
        b = oth / n_oth
        m = np.maximum(a, b)
        total += float(np.sum(np.where(m > 0, (b - a) / np.where(m > 0, m, 1), 0.0)))
    return total / len(x)


def detect_metric(metric: str, x: np.ndarray, detectors: list[str], *, seed: int = 0,
                  fit_cap: int = 4000, progress=None) -> MetricDetection:
    n = len(x)
    out = MetricDetection(metric, n)
    med = np.median(x)
    high = x > med
    order = np.argsort(x, kind="stable")
    for k, name in enumerate(detectors):
        if progress:
            progress(f"outlier detection ({metric}, {n} contexts)", LABELS[name], k, len(detectors))
        if name == "zscore":
            z = robust_z(x)
            lab = z > ZSCORE_CUT
            out.flags[name] = lab & high
            out.contamination[name] = None
            out.silhouette[name] = {f">{ZSCORE_CUT}": silhouette(x, np.abs(z) > ZSCORE_CUT)}
            continue
        # LSCP scores every point in a Python loop (~1 ms each): fit it on fewer points
        cap = min(fit_cap, LSCP_CAP) if name == "lscp" else fit_cap
        idx = order[np.unique(np.round(np.linspace(0, n - 1, cap)).astype(int))] if n > cap else order
        xf = x[idx]
        try:
            sf = _fit_scores(name, xf, seed)
        except Exception as e:  # a detector that cannot run on this data is reported, not fatal
            out.notes.append(f"{metric}: {LABELS[name]} skipped: {type(e).__name__}: {e}")
            continue
        if not np.all(np.isfinite(sf)):
            out.notes.append(f"{metric}: {LABELS[name]} skipped: non-finite scores")
            continue
        if n > cap:  # xf is sorted: order statistics of x
            s_all = np.interp(x, xf, sf)
        else:
            s_all = np.empty(n)
            s_all[idx] = sf
        sils, labels = {}, {}
        for c in CONTAMINATIONS:
            thr = np.percentile(sf, 100 * (1 - c))
            lf = sf > thr
            sils[f"{c:.2f}"] = silhouette(xf, lf)
            labels[c] = s_all > thr
        ok = [c for c in CONTAMINATIONS if sils[f"{c:.2f}"] >= SILHOUETTE_MIN]
        if ok:
            chosen = max(ok)
        else:
            finite = [c for c in CONTAMINATIONS if np.isfinite(sils[f"{c:.2f}"])]
            chosen = max(finite, key=lambda c: (sils[f"{c:.2f}"], -c)) if finite else CONTAMINATIONS[0]
        out.contamination[name] = chosen
        out.silhouette[name] = sils
        out.flags[name] = labels[chosen] & high
    return out
