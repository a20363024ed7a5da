"""Same work under another name (python/hpmkit/compare/samework.py, data/compare/same-work.tsv).

The expected ratios are computed by hand from the synthetic contexts; the lab-suite figures are
checked against the exact call-path counts in README.md's check block (test_docs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from hpmkit.compare import analyse, samework, summary
from hpmkit.compare.contexts import Contexts
from hpmkit.compare.names import same_work
from hpmkit.errors import FormatError

K = "kernel"
FAULT = ("do_page_fault", "handle_mm_fault", "__handle_mm_fault")


def _side(isa, paths, total):
    ctx = {(K, p): np.array([float(n), 0.0, 0.0]) for p, n in paths.items()}
    return Contexts(isa, "6.1.192", isa, {"w": ctx}, {"w": np.array([float(total), 0.0, 0.0])},
                    {}, {"w": {"instructions"}}, [])


def _result(a, b):
    res = analyse.run(a, b, analyse.Options(metrics=("samples",), min_samples=1, min_contexts=1,
                                            detectors=["zscore"], noise_check=False))
    return res


def test_table_rows_apply_to_their_isa_only():
    assert same_work("aarch64", "6.1.192") == {"clear_page": "memset", "copy_page": "memcpy",
                                              "raw_copy_from_user": "raw_copy_to_user"}
    assert same_work("riscv64", "6.1.192") == {}
    assert same_work("x86_64", "6.1")["clear_page_erms"] == "memset"
    assert same_work(None, None) == {}


def test_bad_table_is_a_format_error(tmp_path):
    t = tmp_path / "s.tsv"
    t.write_text("isa\tfrom\tbefore\tname\tsame_as\nmips\t-\t-\tclear_page\tmemset\n")
    with pytest.raises(FormatError, match="isa 'mips'"):
        same_work("aarch64", "6.1", t)


def test_page_clearing_under_another_name_is_counted_on_both_sides():
    # riscv64 clears pages with memset right under __handle_mm_fault; arm64 with clear_page
    # deeper down, and uses memset there for something smaller
    a = _side("riscv64", {FAULT + ("memset",): 700, ("sys_read", "vfs_read"): 300}, 1000)
    b = _side("aarch64", {FAULT + ("memset",): 50,
                          FAULT + ("alloc_zeroed_user_highpage_movable", "get_page_from_freelist",
                                   "clear_page"): 350,
                          ("sys_read", "vfs_read"): 600}, 1000)
    res = _result(a, b)
    row = next(r for r in res.rows if r.group.anchor == FAULT + ("memset",))
    res.ranked = [row]
    row.rank = 1
    s = summary.to_dict(res, 25)
    assert samework.annotate(s, res) == 1
    got = s["ranking"][0]["same_work"]
    assert got["under"] == list(FAULT)
    assert got["b"] == {"names": ["memset", "clear_page"], "samples": 400.0, "other_name_samples": 350.0}
    assert got["a"]["samples"] == 700.0 and got["a"]["other_name_samples"] == 0.0
    assert got["ratio"] == pytest.approx((700 / 1000) / (400 / 1000))     # x1.75, not x14
    assert s["ranking"][0]["ratio"]["samples"] == pytest.approx(14.0)     # the ranking stays by name
    line, = samework.lines(s)
    assert "aarch64 also as clear_page (350 samples)" in line
    assert "below handle_mm_fault > __handle_mm_fault: x1.75" in line


def test_rows_without_other_names_below_their_callers_are_left_alone():
    a = _side("riscv64", {("sys_read", "memset"): 100, ("sys_write", "x"): 100}, 200)
    b = _side("aarch64", {("sys_read", "memset"): 10, ("sys_mmap", "clear_page"): 90,
                          ("sys_write", "x"): 100}, 200)
    res = _result(a, b)
    row = next(r for r in res.rows if r.group.anchor == ("sys_read", "memset"))
    res.ranked = [row]
    row.rank = 1
    s = summary.to_dict(res, 25)
    assert samework.annotate(s, res) == 0       # clear_page is below sys_mmap, not sys_read
    assert "same_work" not in s["ranking"][0] and samework.lines(s) == []


def test_lab_suite_page_faults(tmp_path):
    """The bundled lab suite: mmap's memset (x10.6 by name) is riscv64's page clearing against
    arm64's clear_page; with it counted, exact call-path counts of the same runs agree with the
    sampled ratio within 3 %."""
    import json
    import sys
    from conftest import run
    out = tmp_path / "c.json"
    r = run([sys.executable, "-m", "hpmkit.cli", "compare", str(ROOT / "examples/lab-suite/riscv64"), "--vs",
             str(ROOT / "examples/lab-suite/aarch64"), "-q", "--json", str(out)])
    assert r.returncode == 0, r.stderr
    rows = {(d["function"], d["workload"], d["kind"]): d for d in json.loads(out.read_text())["ranking"]}
    sw = rows[("memset", "mmap", "exact")]["same_work"]
    assert sw["b"]["names"] == ["memset", "clear_page"] and sw["b"]["other_name_samples"] > 0
    assert 1.2 < sw["exact_ratio"] < 2.0
    assert abs(sw["ratio"] / sw["exact_ratio"] - 1) < 0.03
