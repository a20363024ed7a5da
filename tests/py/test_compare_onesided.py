"""Work only A does (python/hpmkit/compare/onesided.py): functions with a real share of a
workload on A and fewer than --min-samples samples on B, which no ratio can rank.

Expected rows are worked out by hand from the synthetic contexts; on the bundled suite the
rows are checked against the lab's exact per-function counts (test_lab_suite.py)."""
from __future__ import annotations

import json
import subprocess

import numpy as np

from conftest import ROOT
from hpmkit.compare import analyse, onesided, summary, text, truth
from hpmkit.compare.contexts import Contexts
from test_compare_support import ExactTables

HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"
K = "kernel"
FUTEX = ("sys_futex", "do_futex", "futex_wake", "get_futex_key", "get_user_pages_fast",
         "internal_get_user_pages_fast")
FAULT = ("do_page_fault", "handle_mm_fault", "__handle_mm_fault")


def _side(isa, workloads):
    by, tot = {}, {}
    for wl, (paths, total) in workloads.items():
        by[wl] = {(K, p): np.array([float(n), 0.0, float(n) * 100]) for p, n in paths.items()}
        tot[wl] = np.array([float(total), 0.0, float(total) * 100])
    return Contexts(isa, "6.1.192", isa, by, tot, {}, {wl: {"instructions"} for wl in workloads}, [])


def _run(a, b, min_samples=10):
    return analyse.run(a, b, analyse.Options(metrics=("samples",), min_samples=min_samples,
                                             min_contexts=1, detectors=["zscore"], noise_check=False))


def _ab():
    # riscv64 has no lockless GUP: the shared futex walks the page tables (follow_page_mask,
    # which arm64 runs elsewhere, and mtree_load, which it never shows); arm64 clears pages
    # with clear_page where riscv64 uses memset
    a = _side("riscv64", {
        "sem": ({FUTEX: 300, FUTEX + ("get_user_pages_unlocked", "__get_user_pages", "follow_page_mask"): 150,
                 FUTEX + ("get_user_pages_unlocked", "find_vma", "mtree_load"): 60,
                 ("sys_read", "vfs_read"): 30, ("sys_getpid", "[unknown]"): 40,
                 ("sys_getpid", "__sched_text_start"): 40}, 1000),
        "fault": ({FAULT + ("memset",): 500, FAULT: 100, ("sys_mmap", "follow_page_mask"): 9}, 1000)})
    b = _side("aarch64", {
        "sem": ({FUTEX: 400, ("sys_read", "vfs_read"): 5, ("sys_getpid",): 80}, 1000),
        "fault": ({FAULT + ("alloc_zeroed_user_highpage_movable", "clear_page"): 300, FAULT: 200,
                   ("sys_mmap", "follow_page_mask"): 20}, 1000)})
    return a, b


def test_functions_a_runs_and_b_does_not_are_listed_by_share():
    res = _run(*_ab())
    got = onesided.find(res)
    rows = [(r["workload"], r["function"], r["samples"], r["b_has_it"]) for r in got["rows"]]
    # follow_page_mask: 150 on A, none on B in `sem` (B runs it in `fault`); mtree_load: B
    # never shows it; vfs_read: 30 against 5 (fewer than 10 on B) is listed too. memset is
    # not: arm64's clear_page is the same work (same-work.tsv), 300 samples. Pseudo frames
    # ([unknown], section markers) name no function and internal_get_user_pages_fast has
    # 400 on B
    assert rows == [("sem", "follow_page_mask", [150.0, 0.0], True),
                    ("sem", "mtree_load", [60.0, 0.0], False),
                    ("sem", "vfs_read", [30.0, 5.0], True)]
    r = got["rows"][0]
    assert r["share"] == [0.15, 0.0] and r["instructions"] == 15000.0
    assert r["via"] == list(FUTEX + ("get_user_pages_unlocked", "__get_user_pages")) and r["via_share"] == 1.0
    # --min-samples sets both cuts: at 40, vfs_read (30) is out and memset's 500 vs 300 too
    assert [x["function"] for x in onesided.find(res, min_samples=40)["rows"]] == ["follow_page_mask", "mtree_load"]


def test_report_lists_rows_of_half_a_percent_and_marks_functions_b_never_shows():
    res = _run(*_ab())
    s = summary.to_dict(res, 25)
    s["one_sided"] = onesided.find(res)
    out = text.render(s)
    sec = out[out.index("Work only riscv64 does"):].splitlines()
    assert "(3 of 3; * = aarch64 shows the function in no workload" in sec[0]
    assert sec[3].split()[:5] == ["sem", "follow_page_mask", "150/0", "15.0", "get_user_pages_unlocked"]
    assert sec[4].split()[:4] == ["sem", "mtree_load", "*", "60/0"]
    assert "get_user_pages_unlocked > __get_user_pages (100 %)" in sec[3]


def test_missed_truth_entries_named_by_a_row_are_reported(tmp_path):
    t = tmp_path / "t.tsv"
    t.write_text("function\tworkload\treason\tevidence\nfollow_page_mask\t*\tslow GUP\tmm/gup.c\n"
                 "memcpy\t*\tbyte loop\tx\n")
    entries = truth.load(t)
    res = _run(*_ab())
    got = onesided.find(res)
    assert onesided.truth_hits(got, entries, [0, 1]) == {0: {"function": "follow_page_mask", "workload": "sem"}}
    assert onesided.truth_hits(got, entries, [1]) == {}


def test_exact_shares_come_from_the_per_function_tables():
    res = _run(*_ab())
    got = onesided.find(res)
    src = ExactTables("sem",
                      ({(K, "follow_page_mask"): 1400.0, (K, "mtree_load"): 700.0, ("user", "mtree_load"): 99.0}, 10000.0),
                      ({(K, "follow_page_mask"): 3.0}, 12000.0))
    assert onesided.annotate_exact(got, res, src) == 3
    ex = {r["function"]: r["exact"] for r in got["rows"]}
    assert ex["follow_page_mask"] == {"share_a": 0.14, "share_b": 0.00025}
    assert ex["mtree_load"] == {"share_a": 0.07, "share_b": 0.0}   # user-space rows are not the kernel's
    assert onesided.annotate_exact(got, res, None) == 0


def test_compare_json_and_html_carry_the_section(tmp_path):
    suite = ROOT / "examples" / "rt-tests"
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    p = subprocess.run([HPMKIT, "compare", suite / "riscv64", "--vs", suite / "aarch64", "-q",
                        "--json", out, "--html", page], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    o = json.loads(out.read_text())["one_sided"]
    assert o["min_samples"] == 10 and o["rows"]
    assert all(r["samples"][0] >= 10 > r["samples"][1] for r in o["rows"])
    shares = [r["share"][0] for r in o["rows"]]
    assert shares == sorted(shares, reverse=True)
    html = page.read_text()
    assert "<h2>Work only riscv64 does (" in html and o["rows"][0]["function"] in html


def test_a_ranked_context_says_which_of_its_frames_holds_as_work():
    """A context merges A's deeper frames into its anchor, and its ratio is that subtree's:
    the row names the sampled function most of A's samples of it are in."""
    a = _side("riscv64", {"w": ({FAULT + ("ptep_clear_flush",): 100,
                                 FAULT + ("ptep_clear_flush", "flush_tlb_page", "__sbi_tlb_flush_range"): 300,
                                 FAULT: 600}, 1000)})
    b = _side("aarch64", {"w": ({FAULT + ("ptep_clear_flush",): 50, FAULT: 950}, 1000)})
    res = _run(a, b, min_samples=1)
    row = next(r for r in res.rows if r.group.anchor == FAULT + ("ptep_clear_flush",))
    assert row.group.kind == "partial" and row.a[0] == 400
    d = summary.row_dict(row, res, True)
    assert d["a_top_leaf"] == {"function": "__sbi_tlb_flush_range", "share": 0.75}
    exact_row = next(r for r in res.rows if r.group.anchor == FAULT)
    assert summary.row_dict(exact_row, res, True)["a_top_leaf"] == {"function": "__handle_mm_fault", "share": 1.0}
