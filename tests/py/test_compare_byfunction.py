"""Functions A spends more of a workload in (python/hpmkit/compare/byfunction.py): per
workload and sampled function, the A/B ratio of shares, listed when its selection-adjusted
interval lies at x1.2 or above.

Expected rows are worked out by hand from synthetic contexts; on the bundled suite every row
is checked against the lab's exact per-function counts of the same runs (test_lab_suite.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpmkit.compare import analyse, byfunction, summary, text, truth
from hpmkit.compare.contexts import Contexts
from test_compare_support import ExactTables

K = "kernel"


def _side(isa, paths: dict, total: int):
    by = {"w": {(K, p): np.array([float(n), 0.0, float(n) * 100]) for p, n in paths.items()}}
    tot = {"w": np.array([float(total), 0.0, float(total) * 100])}
    return Contexts(isa, "6.1.192", isa, by, tot, {}, {"w": {"instructions"}}, [])


def _res():
    a = _side("riscv64", {("sys_sched_yield", "schedule", "finish_task_switch"): 600,
                          ("sys_read", "vfs_read"): 500,
                          ("do_page_fault", "memset"): 400,          # arm64: clear_page, same work
                          ("sys_dup", "alloc_fd"): 120,              # x1.5 on 120/80: too uncertain
                          ("sys_getpid", "getpid_thin"): 40,         # 9 on B: work only A does
                          ("sys_close", "close_fd"): 30,             # 0.3 % of A's workload
                          ("sys_write", "vfs_write"): 8310}, 10000)
    b = _side("aarch64", {("sys_sched_yield", "schedule", "finish_task_switch"): 300,
                          ("sys_read", "vfs_read"): 480,
                          ("do_page_fault", "clear_page"): 100,
                          ("sys_dup", "alloc_fd"): 80,
                          ("sys_getpid", "getpid_thin"): 9,
                          ("sys_close", "close_fd"): 10,
                          ("sys_write", "vfs_write"): 9021}, 10000)
    return analyse.run(a, b, analyse.Options(metrics=("instructions",), min_samples=10, min_contexts=1,
                                             detectors=["zscore"], noise_check=False))


def test_functions_with_a_ratio_of_at_least_1_2_by_their_interval_are_listed():
    got = byfunction.find(_res())
    # candidates: both sides >= 10 samples and >= 0.5 % of A: finish_task_switch, vfs_read,
    # memset (clear_page folded into it), alloc_fd, vfs_write
    assert got["candidates"] == 5 and got["metric"] == "instructions" and got["floor"] == 1.2
    # 2 picked by the marginal bound; their interval is widened for that (BY: 1 - 0.05*2/5)
    assert got["z"] == pytest.approx(analyse.selection_z(2, 5))
    rows = [(r["function"], r["samples"], r["share"]) for r in got["rows"]]
    # by the extra share: finish_task_switch 6 % - 3 %, memset 4 % - 1 %
    assert rows == [("finish_task_switch", [600.0, 300.0], [0.06, 0.03]),
                    ("memset", [400.0, 100.0], [0.04, 0.01])]
    r = got["rows"][0]
    h = got["z"] * math.sqrt(1 / 600 + 1 / 300)
    assert r["ratio"] == pytest.approx(2.0) and r["ci"] == pytest.approx([2 * math.exp(-h), 2 * math.exp(h)])
    assert r["via"] == ["sys_sched_yield", "schedule"] and r["via_share"] == 1.0
    # a higher floor keeps only what its interval still clears
    assert [x["function"] for x in byfunction.find(_res(), floor=2.5)["rows"]] == ["memset"]


def test_rows_are_checked_against_exact_per_function_counts():
    res = _res()
    got = byfunction.find(res)
    src = ExactTables("w", ({(K, "finish_task_switch"): 590.0, (K, "memset"): 400.0}, 10000.0),
                      ({(K, "finish_task_switch"): 310.0, (K, "clear_page"): 40.0, (K, "memset"): 60.0}, 10000.0))
    assert byfunction.annotate_exact(got, res, src) == 2
    ex = {r["function"]: r["exact"] for r in got["rows"]}
    assert ex["finish_task_switch"]["ratio"] == pytest.approx(590 / 310)
    assert ex["memset"] == {"share_a": 0.04, "share_b": 0.01, "ratio": 4.0}   # clear_page is memset's work
    c = byfunction.check(got)
    assert c == {"with_exact": 2, "at_least_floor": 2, "inside_interval": 2,
                 "median_abs_error": pytest.approx((abs(2 / (590 / 310) - 1) + 0) / 2)}


def test_report_section_and_truth_hits(tmp_path):
    res = _res()
    s = summary.to_dict(res, 25)
    s["by_function"] = byfunction.find(res)
    out = text.render(s)
    sec = out[out.index("Functions riscv64 spends more of a workload in"):].splitlines()
    assert "(widened for picking 2 of 5: z 2.33); 2 rows, 2 functions" in sec[0], sec[0]
    assert sec[3].split()[:6] == ["w", "finish_task_switch", "600/300", "6.0", "3.0", "2.00"]
    t = tmp_path / "t.tsv"
    t.write_text("function\tworkload\treason\tevidence\nfinish_task_switch\t*\tfence\tx\nalloc_fd\t*\t-\tx\n")
    entries = truth.load(t)
    assert byfunction.truth_hits(s["by_function"], entries, [0, 1]) == {
        0: {"function": "finish_task_switch", "workload": "w"}}


def test_nothing_listed_means_no_section():
    res = _res()
    s = summary.to_dict(res, 25)
    s["by_function"] = byfunction.find(res, floor=100.0)
    assert s["by_function"]["rows"] == [] and "spends more of a workload in" not in text.render(s)
