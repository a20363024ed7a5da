"""hpmkit compare, steps 3-5: ratios, thin rule, detection, score, ranking, truth metrics."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpmkit.compare import detect
from hpmkit.compare.analyse import NotEnoughSamples, Options, run
from hpmkit.compare.contexts import ContextTable, contexts
from hpmkit.compare.truth import Truth, evaluate
from hpmkit.errors import UsageError
from test_compare_support import tables


def _run(a, b, **kw):
    return run(contexts(a), contexts(b), Options(**kw))


def _key(r):
    return (r.rank, r.workload, r.group.anchor, round(r.score, 12), tuple(r.anomalous))


def test_planted_anomaly_ranks_first_on_every_seed_of_the_data():
    for seed in (1, 2, 3):
        a, b = tables(seed=seed, slow={"__asm_copy_to_user": 2.5})
        res = _run(a, b)
        top = res.ranked[0]
        assert top.function == "raw_copy_to_user" and top.workload == "pipe", (seed, top.function)
        assert {"cycles", "instructions"} <= set(top.anomalous)
        assert top.group.kind == "exact"


def test_ranking_is_deterministic():
    a, b = tables(seed=7, slow={"__asm_copy_to_user": 2.5, "clear_page": 2.0})
    first = [_key(r) for r in _run(a, b).ranked]
    second = [_key(r) for r in _run(*tables(seed=7, slow={"__asm_copy_to_user": 2.5, "clear_page": 2.0})).ranked]
    assert first == second and len(first) >= 2


def test_ratio_normalised_by_run_total_and_cpi():
    # A is uniformly 1.3x slower: after normalising by each run's total, every exact context
    # has the same ratio (the runs' kernel mixes differ only by the partial/unmatched stacks)
    a, b = tables(seed=3, noise=0.0)
    res = _run(a, b, detectors=["zscore"])
    exact = [r for r in res.rows if r.group.kind == "exact"]
    ta, tb = res.a.totals["pipe"][1], res.b.totals["pipe"][1]
    for r in exact:
        k = res.a.totals[r.workload][1] / res.b.totals[r.workload][1]
        assert r.ratio["cycles"] == pytest.approx(1.3 / k, rel=1e-9)
        assert r.ratio["cpi"] == pytest.approx(r.ratio["cycles"] / r.ratio["instructions"])
    assert ta > 0 and tb > 0
    assert res.ranked == []  # nothing anomalous in a uniform slowdown
    raw = _run(a, b, detectors=["zscore"], normalise="none")
    assert all(r.ratio["cycles"] == pytest.approx(1.3, rel=1e-9) for r in raw.rows if r.group.kind == "exact")


def test_score_is_rate_times_share_times_ratio_lower_bound():
    """score = outlier rate x share of A's work x the ratio's lower 95 % bound (a thin
    context's noisy ratio cannot outrank a well-measured one on its point estimate)."""
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    res = _run(a, b)
    top = res.ranked[0]
    total = 0.0
    for m in res.metrics:
        if m in top.anomalous:
            share = top.a[1 if m in ("cycles", "cpi") else 2] / res.a.totals["pipe"][1 if m in ("cycles", "cpi") else 2]
            assert top.parts[m] == pytest.approx(top.rate[m] * share * top.ci(m)[0])
            assert top.ci(m)[0] < top.ratio[m]
            total += top.parts[m]
        else:
            assert top.parts[m] == 0
    assert top.score == pytest.approx(total)


def test_too_thin_contexts_are_counted_not_ranked():
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    res = _run(a, b, min_samples=600)
    assert res.thin > 0
    assert all(r.a[0] >= 600 and r.b[0] >= 600 for r in res.ranked)
    assert all(r.rank is None for r in res.rows if r.thin)


def test_tiny_profiles_say_not_enough_samples():
    a, b = tables(seed=1, samples=3)
    with pytest.raises(NotEnoughSamples, match=r"not enough samples: 0 matched context\(s\) have >= 10 samples"):
        _run(a, b)


def test_missing_metric_is_left_out_with_a_warning_or_refused_when_asked():
    a, b = tables(seed=1)
    b2 = ContextTable("aarch64", "6.1", "arm-no-ins")
    for wl, st, nk, c in zip(b.workload, b.stack, b.nkernel, b.costs):
        b2.add(wl, st, nk, c[0], cycles=c[1])
    res = _run(a, b2, detectors=["zscore"])
    assert res.metrics == ["cycles"]
    assert any("metric instructions left out: not recorded in arm-no-ins:futex" in w for w in res.warnings)
    with pytest.raises(UsageError, match="--metrics cpi: arm-no-ins has no cycles\\+instructions"):
        _run(a, b2, metrics=("cpi",))


def test_different_workloads_warn_or_fail():
    a, b = tables(seed=1)
    b.workload = ["other" if w == "futex" else w for w in b.workload]
    b.has["other"] = b.has["futex"]
    res = _run(a, b, detectors=["zscore"])
    assert res.workloads == ["mprotect", "pipe"]
    assert any("futex only in riscv64-fixture" in w for w in res.warnings)
    assert any("other only in aarch64-fixture" in w for w in res.warnings)
    b.workload = ["x"] * len(b.workload)
    b.has = {"x": {"cycles", "instructions"}}
    with pytest.raises(UsageError, match="no workload is on both sides"):
        _run(a, b)


def test_unknown_detector_and_torch_detectors():
    with pytest.raises(UsageError, match="unknown nope"):
        detect.resolve(["lof", "nope"])
    names, notes = detect.resolve(None)
    if detect.torch_available():
        assert "sogaal" in names and "lunar" in names
    else:
        assert names == ["zscore", "lof", "ecod", "iforest", "lscp"]
        assert notes == ["SO_GAAL and LUNAR not run: torch is not installed (pip install torch to add them)"]
        with pytest.raises(UsageError, match="need torch"):
            detect.resolve(["sogaal"])


def test_silhouette_matches_the_definition():
    from sklearn.metrics import silhouette_score
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0, 0.1, 200), rng.normal(1.5, 0.2, 12)])
    lab = x > 0.8
    assert detect.silhouette(x, lab) == pytest.approx(silhouette_score(x.reshape(-1, 1), lab), rel=1e-9)
    assert math.isnan(detect.silhouette(x, np.zeros(len(x), bool)))


def test_contamination_rule_and_fit_cap():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 0.05, 300), [1.0, 1.2, 1.4]])
    d = detect.detect_metric("cycles", x, ["zscore", "lof", "ecod", "iforest", "lscp"], seed=0)
    for name, c in d.contamination.items():
        if name == "zscore":
            continue
        sil = d.silhouette[name]
        ok = [k for k, v in sil.items() if v >= detect.SILHOUETTE_MIN]
        assert f"{c:.2f}" == (max(ok) if ok else max(sil, key=sil.get))
    assert all(d.flags[n][-3:].all() for n in d.flags)  # the three planted points, by every detector
    # above fit_cap: fitted on order statistics, scores interpolated; same planted points found
    d2 = detect.detect_metric("cycles", x, ["lof", "iforest"], seed=0, fit_cap=100)
    assert all(d2.flags[n][-3:].all() for n in d2.flags)


def test_precision_and_recall_at_k():
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0, "finish_task_switch.isra.0": 1.8})
    res = _run(a, b)
    truth = [Truth("raw_copy_to_user", None, "misaligned copy", "", 2),
             Truth("finish_task_switch", "futex", "fence", "", 3),
             Truth("find_next_zero_bit", None, "no Zbb", "", 4)]
    ev = evaluate(res.ranked, truth, ks=(1, 2, 3))
    names = [(r.function, r.workload) for r in res.ranked[:3]]
    assert names[0] == ("raw_copy_to_user", "pipe")
    # rows: raw_copy_to_user (hit), finish_task_switch futex (hit) / pipe (miss: entry says futex)
    exp_rows = [[0] if n == ("raw_copy_to_user", "pipe") else [1] if n == ("finish_task_switch", "futex") else []
                for n in names]
    assert ev["rows"][:3] == exp_rows
    at = {x["k"]: x for x in ev["k"]}
    assert at[1]["precision"] == 1.0 and at[1]["recall"] == pytest.approx(1 / 3)
    assert at[3]["hits"] == sum(1 for h in exp_rows if h)
    assert ev["missed"] == [2]


def test_a_section_marker_is_never_ranked():
    # a symbolizer that named the first function of a section after the section (a kernel with
    # no data/compare/kernel-symbols.tsv row for the marker): the context names no function,
    # however anomalous, as [kernel-entry] and [unknown] do not
    from hpmkit.compare import explain
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    for t, n in ((a, 4000), (b, 200)):
        t.add("pipe", ["_start", "main", "sys_read", "schedule", "__kprobes_text_start"], 3,
              samples=n, cycles=n * 1e4, instructions=n * 6e3)
    res = _run(a, b)
    rows = [r for r in res.rows if r.function == "__kprobes_text_start"]
    assert rows and rows[0].score > 0 and rows[0].anomalous and rows[0].pseudo and rows[0].marker
    assert all(r.function != "__kprobes_text_start" for r in res.ranked)
    assert res.ranked[0].function == "raw_copy_to_user"
    assert any("(__kprobes_text_start) not ranked" in w and "section markers" in w for w in res.warnings)
    why = [" ".join(row) for row in explain.rows(res) if "__kprobes_text_start" in row]
    assert any("is a section marker" in w and "never ranked" in w for w in why), why
    # a function whose name only looks like one stays a function
    assert not [r for r in res.rows if r.function == "raw_copy_to_user"][0].pseudo
