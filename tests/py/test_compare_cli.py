"""`hpmkit compare` as users run it: inputs, outputs, errors (one line, nonzero, nothing half-written)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hpmkit.compare.inputs import read_ctx, write_ctx
from test_compare_support import tables

REPO = Path(__file__).resolve().parents[2]


def hpmkit(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    d = tmp_path_factory.mktemp("sides")
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0, "finish_task_switch.isra.0": 1.8})
    (d / "rv").mkdir()
    (d / "arm").mkdir()
    write_ctx(a, d / "rv" / "all.ctx.tsv")
    write_ctx(b, d / "arm" / "all.ctx.tsv")
    (d / "truth.tsv").write_text("# known\nfunction\tworkload\treason\tevidence\n"
                                 "raw_copy_to_user\t*\tbyte copy when misaligned\tarch/riscv/lib/uaccess.S\n"
                                 "__memset\t*\tno Zbb\tx\n")
    return d


def test_ctx_roundtrip(sides):
    t = read_ctx(sides / "rv" / "all.ctx.tsv")
    a, _ = tables(seed=1, slow={"__asm_copy_to_user": 3.0, "finish_task_switch.isra.0": 1.8})
    assert t.isa == "riscv64" and t.kernel == "6.1.192"
    assert sorted(zip(t.workload, t.stack, t.nkernel)) == sorted(zip(a.workload, a.stack, a.nkernel))
    assert t.has == {"futex": {"cycles", "instructions"}, "mprotect": {"cycles", "instructions"},
                     "pipe": {"cycles", "instructions"}}


def test_report_files_and_ranking(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--html", tmp_path / "r.html",
               "--json", tmp_path / "r.json", "--top", "5", "--truth", sides / "truth.tsv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "A = riscv64 (kernel 6.1.192)   vs   B = aarch64" in out
    assert "Kernel contexts (table 3)" in out and "(table 4" in out and "(table 5)" in out
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert "raw_copy_to_user" in first and "pipe" in first and first.rstrip().endswith("yes")
    s = json.loads((tmp_path / "r.json").read_text())
    assert s["format"] == "hpmkit-compare" and s["ranking"][0]["function"] == "raw_copy_to_user"
    assert s["ranking"][0]["stacks_a"][0]["path"][-1] == "raw_copy_to_user"
    assert s["truth"]["entries"][1]["function"] == "memset"  # normalised like the stacks
    n = min(5, s["ranked"])  # 4 anomalous contexts in this data
    assert n == 4
    # memset is in no kernel context of this data: not reached, so recall over reached is 1/1
    assert s["truth"]["reached"] == [0]
    assert s["truth"]["at_k"][0] == {"k": 5, "ranked": n, "hits": 1, "precision": 1 / n, "recall": 0.5,
                                     "recall_reached": 1.0}
    assert any("truth: 1 of 2 entries are in no kernel context of riscv64" in w and "memset" in w
               for w in s["warnings"])
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert oct((tmp_path / "r.html").stat().st_mode & 0o777) != "0o600"


def test_same_output_twice(sides, tmp_path):
    runs = [hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--json", tmp_path / f"{i}.json", "-q",
                   cwd=tmp_path) for i in (1, 2)]
    assert all(r.returncode == 0 and r.stdout == "" for r in runs)
    assert (tmp_path / "1.json").read_text() == (tmp_path / "2.json").read_text()


def test_help_has_examples(tmp_path):
    p = hpmkit("compare", "--help", cwd=tmp_path)
    assert p.returncode == 0 and "examples:" in p.stdout and "--vs" in p.stdout and "--truth" in p.stdout


@pytest.mark.parametrize("args,msg,code", [
    (["rv", "--vs", "nope"], "hpmkit: nope: no such file or directory", 1),
    (["rv", "--vs", "rv"], "warning: both sides are riscv64", None),
    (["rv", "--vs", "arm", "--metrics", "cycles,bogus"], "--metrics: unknown bogus", 2),
    (["rv", "--vs", "arm", "--detectors", "lof,magic"], "--detectors: unknown magic", 2),
    (["rv", "--vs", "arm", "--truth", "bad-truth.tsv"], "bad-truth.tsv: line 1: header must be function", 1),
    (["rv", "--vs", "bad.ctx.tsv"], "bad.ctx.tsv: line 6: nkernel/samples/cycles/instructions must be numbers", 1),
    (["rv", "--vs", "empty"], "empty: directory holds no profiles", 1),
    (["rv", "--vs", "arm", "--min-samples", "100000"], "not enough samples: 0 matched context(s)", 1),
    (["rv", "--vs", "arm", "--quote-within", "-0.1"], "--quote-within must be in [0, 10)", 2),
    (["rv", "--vs", "arm", "--html", "bad.ctx.tsv/r.html"], "--html bad.ctx.tsv/r.html: ", 2),
    (["rv", "--vs", "arm", "--explain", "empty"], "--explain empty: is a folder; give a file name", 2),
])
def test_bad_input_one_line_nonzero_no_output(sides, tmp_path, args, msg, code):
    for n in ("rv", "arm"):
        (tmp_path / n).symlink_to(sides / n)
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad-truth.tsv").write_text("fn\twl\nx\t*\n")
    lines = (sides / "arm" / "all.ctx.tsv").read_text().splitlines()
    cells = lines[5].split("\t")
    cells[2] = "many"
    (tmp_path / "bad.ctx.tsv").write_text("\n".join(lines[:5] + ["\t".join(cells)] + lines[6:]) + "\n")
    p = hpmkit("compare", *args, "--json", "out.json", cwd=tmp_path)
    if code is None:  # a warning, then whatever the data gives
        assert msg in p.stderr
        return
    assert p.returncode == code, (p.returncode, p.stderr)
    err = [line for line in p.stderr.splitlines() if not line.startswith("compare: ")]
    assert len(err) == 1 and msg in err[0], p.stderr
    assert not (tmp_path / "out.json").exists()


def test_missing_output_folders_are_made(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--html", "new/a/r.html", "--json", "new/b/r.json",
               "--explain", "new/c/all.tsv", "-q", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (0, "")
    assert (tmp_path / "new/a/r.html").read_text().endswith("</html>")
    assert json.loads((tmp_path / "new/b/r.json").read_text())["format"] == "hpmkit-compare"
    assert (tmp_path / "new/c/all.tsv").stat().st_size > 0
    assert sorted(f.name for f in (tmp_path / "new").rglob("*")) == ["a", "all.tsv", "b", "c", "r.html", "r.json"]


def test_duplicate_workload_on_one_side(sides, tmp_path):
    p = hpmkit("compare", sides / "rv" / "all.ctx.tsv", sides / "rv" / "all.ctx.tsv", "--vs", sides / "arm",
               cwd=tmp_path)
    assert p.returncode == 2 and "workload 'futex' is also in" in p.stderr


def test_export_contexts(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--export-contexts", tmp_path, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "A-riscv64.ctx.tsv").read_text() == (sides / "rv" / "all.ctx.tsv").read_text()
    assert (tmp_path / "B-aarch64.ctx.tsv").read_text() == (sides / "arm" / "all.ctx.tsv").read_text()


def test_export_contexts_makes_its_folder_and_refuses_a_file(sides, tmp_path):
    d = tmp_path / "new" / "bundle"
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--export-contexts", d, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in d.iterdir()) == ["A-riscv64.ctx.tsv", "B-aarch64.ctx.tsv"]
    (tmp_path / "file").write_text("x")
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--export-contexts", tmp_path / "file", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().endswith("exists and is not a folder"), p.stderr


def test_progress_one_line_per_stage_and_nothing_with_q():
    import io
    from hpmkit.progress import Progress
    for quiet, want in ((True, ""), (False, "compare: matching contexts (10.0 s)\n"
                                           "compare: outlier detection (cpi, 9 contexts) (10.0 s)\n")):
        err = io.StringIO()
        prog = Progress("compare", quiet=quiet, stream=err, tty=False)
        prog.t0 -= 10  # as if the run had taken ten seconds already
        for wl in ("pipe", "futex", "mmap"):
            prog("matching contexts", wl)
        for det in ("LOF", "ECOD"):
            prog("outlier detection (cpi, 9 contexts)", det)
        import re
        assert re.sub(r"\(\d+\.\d s\)", "(10.0 s)", err.getvalue()) == want


def test_progress_is_a_bar_on_a_terminal():
    import io
    from hpmkit.progress import Progress
    err = io.StringIO()
    prog = Progress("compare", stream=err, tty=True, delay=0)
    for i, wl in enumerate(("pipe", "futex", "mmap")):
        prog("reading side A", wl, i, 3)
    prog.close()
    out = err.getvalue()
    # drawn in place on one line (carriage returns, no newline), wiped when the stage ends
    assert out.startswith("\rcompare: reading side A:") and "/3 [" in out and "\n" not in out
    assert out.endswith("\r") and out.rsplit("\r", 2)[1].strip() == ""


def test_a_bar_names_its_unit_or_shows_no_count():
    import io
    from hpmkit.compare.contexts import contexts
    from hpmkit.progress import Progress
    err = io.StringIO()
    prog = Progress("compare", stream=err, tty=True, delay=0)
    prog("writing the HTML report")   # one step: what and how long, not "0it"
    prog.bar.refresh()
    a, _ = tables(seed=1)
    seen = []
    contexts(a, progress=lambda done, total: (seen.append((done, total)),
                                              prog("reducing stacks to contexts", "A", done, total,
                                                   unit=" stacks")))
    prog.bar.refresh()
    prog.close()
    out = err.getvalue()
    assert "compare: writing the HTML report [00:00]" in out
    assert "it]" not in out and "it/s" not in out and "0it" not in out, out
    n = len(a.workload)
    assert seen[0] == (0, n) and seen[-1] == (n, n)
    assert f"{n}/{n} [" in out and " stacks/s" in out


def test_quiet_run_prints_nothing_on_stderr(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--json", tmp_path / "r.json", "-q", cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def _explain(path):
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# hpmkit compare --explain: A = riscv64")
    head = lines[2].split("\t")
    return head, [dict(zip(head, line.split("\t"))) for line in lines[3:]]


def test_explain_lists_every_context_and_why(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--json", tmp_path / "r.json",
               "--explain", tmp_path / "all.tsv", "-q", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr
    s = json.loads((tmp_path / "r.json").read_text())
    head, rows = _explain(tmp_path / "all.tsv")
    assert head[:8] == ["status", "rank", "workload", "space", "function", "match", "samples_a", "samples_b"]
    assert {"ratio_cycles", "ci95_lo_cpi", "votes_instructions", "why", "path"} <= set(head)
    unmatched = sum(a + b for a, b in s["unmatched"].values())
    assert len(rows) == s["matched_contexts"] + unmatched
    ranked = [r for r in rows if r["status"] == "ranked"]
    assert [(r["function"], r["workload"]) for r in ranked] == \
        [(r["function"], r["workload"]) for r in s["ranking"]]
    assert [r["rank"] for r in ranked] == [str(i) for i in range(1, len(ranked) + 1)]
    for r, j in zip(ranked, s["ranking"]):
        assert float(r["ratio_cycles"]) == pytest.approx(j["ratio"]["cycles"], rel=1e-3)
        assert float(r["ci95_lo_cycles"]) == pytest.approx(j["ci95"]["cycles"][0], rel=1e-3)
        assert r["votes_cycles"] == (",".join(j["votes"]["cycles"]) or "-")
    statuses = Counter(r["status"] for r in rows)
    assert statuses["thin"] == s["too_thin"]
    assert statuses["unmatched-A"] + statuses["unmatched-B"] == unmatched
    for r in rows:
        assert r["why"], r
        if r["status"] == "thin":
            assert r["why"].startswith(("too thin", "no ratio")), r
        if r["status"] == "not-ranked":
            assert all(m in r["why"] for m in s["metrics"]), r
    # the ranking's first metric orders the unranked rows, largest ratio first
    nr = [float(r["ratio_cycles"]) for r in rows if r["status"] == "not-ranked"]
    assert nr == sorted(nr, reverse=True)


def test_explain_is_written_when_nothing_can_be_ranked(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--min-samples", "100000",
               "--explain", tmp_path / "all.tsv", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert p.returncode == 1 and "not enough samples" in p.stderr
    assert not (tmp_path / "r.json").exists()
    _, rows = _explain(tmp_path / "all.tsv")
    matched = [r for r in rows if not r["status"].startswith("unmatched")]
    assert matched and all(r["status"] == "thin" and "--min-samples 100000" in r["why"] for r in matched)


def test_explain_to_stdout(sides, tmp_path):
    p = hpmkit("compare", sides / "rv", "--vs", sides / "arm", "--explain", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# hpmkit compare --explain") and "Kernel contexts (table 3)" not in p.stdout


EXACT_WORKLOADS = ("sendfile", "mmap", "copy-file", "pagefault", "signals")


@pytest.fixture(scope="module")
def lab_subset(tmp_path_factory):
    """Five workloads of the bundled lab suite, with their exact tables beside them."""
    import shutil
    d = tmp_path_factory.mktemp("lab")
    for arch in ("riscv64", "aarch64"):
        (d / arch).mkdir()
        for wl in EXACT_WORKLOADS:
            src = REPO / "examples" / "lab-suite" / arch
            shutil.copytree(src / f"{wl}.hpmprof", d / arch / f"{wl}.hpmprof")
            for suffix in (".exact.tsv", ".exact-paths.tsv.gz"):
                shutil.copyfile(src / f"{wl}{suffix}", d / arch / f"{wl}{suffix}")
    return d


def test_exact_ratios_by_call_path(lab_subset, tmp_path):
    """Every ranked kernel context of lab recordings gets the exact instruction ratio of its
    call paths (the sampler counted every kernel instruction per path); the sampled ratio
    of the top context (sendfile's byte-wise memcpy) is within 15 % of it."""
    out = tmp_path / "c.json"
    p = hpmkit("compare", lab_subset / "riscv64", "--vs", lab_subset / "aarch64", "-q",
               "--json", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    kern = [r for r in d["ranking"] if r["space"] == "kernel"]
    assert kern and d["exact"]["by_path"] == len(kern) == d["exact"]["with_exact"] - \
        sum(1 for r in d["ranking"] if r["space"] != "kernel" and (r.get("exact") or {}).get("ratio"))
    for r in kern:
        assert r["exact"]["ratio"] and r["exact"]["note"].endswith("call paths"), r
    top = kern[0]
    assert (top["function"], top["workload"]) == ("memcpy", "sendfile")
    assert abs(top["exact"]["error"]) < 0.15, top["exact"]


def test_thin_ratios_are_given_as_at_least_their_lower_bound(lab_subset, tmp_path):
    """A ranked ratio whose 95 % interval is wider than --quote-within (0.15) is printed as
    '>=' its lower bound; the exact counts of the same runs check both kinds of claim."""
    p = hpmkit("compare", lab_subset / "riscv64", "--vs", lab_subset / "aarch64", "--top", "200",
               "--json", "c.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads((tmp_path / "c.json").read_text())
    thin = [r for r in d["ranking"] if not r["quoted"]]
    assert thin and len(thin) < len(d["ranking"])
    for r in d["ranking"]:
        lo, hi = r["ci95"]["instructions"]
        assert r["quoted"] == (hi / r["ratio"]["instructions"] <= 1.15 + 1e-9), r
        cell = f">={lo:.1f} [{lo:.1f}-{hi:.1f}]" if not r["quoted"] else \
            f"{r['ratio']['instructions']:.2f} [{lo:.1f}-{hi:.1f}]"
        assert f"ins {cell}" in p.stdout, cell
    e = d["exact"]
    assert e["quoted"] + e["bounds"] == e["with_exact"] == len(d["ranking"])
    assert e["bounds_held"] == sum(r["exact"]["ratio"] >= r["ci95"]["instructions"][0] for r in thin)
    assert f"given as 'at least' (thin): {e['bounds']}, the exact ratio at or above the bound " \
        f"for {e['bounds_held']}" in p.stdout
    # --quote-within 0 quotes every ratio (the report before this option)
    p = hpmkit("compare", lab_subset / "riscv64", "--vs", lab_subset / "aarch64", "--top", "200",
               "--quote-within", "0", "--json", "c0.json", cwd=tmp_path)
    d0 = json.loads((tmp_path / "c0.json").read_text())
    assert all(r["quoted"] for r in d0["ranking"]) and ">=" not in p.stdout
    assert d0["exact"]["bounds"] == 0 and d0["exact"]["quoted"] == len(d0["ranking"])


def test_fcr_widens_the_ranked_rows_intervals_for_their_selection(lab_subset, tmp_path):
    """--fcr: the ranked rows' intervals at level 1 - 0.05 R/m (R ranked of m rankable
    contexts); the quoted/bound split and the bound check use them."""
    from statistics import NormalDist
    p = hpmkit("compare", lab_subset / "riscv64", "--vs", lab_subset / "aarch64", "--top", "200",
               "--fcr", "--json", "c.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads((tmp_path / "c.json").read_text())
    m = d["matched_contexts"] - d["too_thin"]
    z = NormalDist().inv_cdf(1 - 0.05 * d["ranked"] / m / 2)
    assert d["options"]["fcr"] and abs(d["selection_z"] - z) < 1e-9 and z > 1.96
    assert "ratio A/B [FCR 95 %]" in p.stdout and "quoted ratios (FCR-adjusted 95 % interval" in p.stdout
    for r in d["ranking"]:
        (lo, hi), (lo95, hi95) = r["ci_fcr"]["instructions"], r["ci95"]["instructions"]
        assert lo < lo95 and hi > hi95
        assert abs(math.log(hi / lo) / math.log(hi95 / lo95) - z / 1.96) < 1e-6
        assert r["quoted"] == (hi / r["ratio"]["instructions"] <= 1.15 + 1e-9)
    thin = [r for r in d["ranking"] if not r["quoted"]]
    assert d["exact"]["bounds_held"] == sum(r["exact"]["ratio"] >= r["ci_fcr"]["instructions"][0]
                                            for r in thin)


def test_selection_z():
    from hpmkit.compare.analyse import CI_Z, selection_z
    assert selection_z(0, 100) == CI_Z and abs(selection_z(100, 100) - CI_Z) < 1e-3
    assert abs(selection_z(152, 6076) - 3.228) < 1e-3     # ksuite: 152 ranked of 6,076


@pytest.mark.parametrize("damage", ["count", "cut"])
def test_broken_exact_path_table_is_one_line(lab_subset, tmp_path, damage):
    """A bad count, or the gzip stream cut short: one line naming the file and where."""
    import shutil
    bad = tmp_path / "lab"
    shutil.copytree(lab_subset, bad)
    f = bad / "riscv64" / "mmap.exact-paths.tsv.gz"
    if damage == "count":
        f.write_text("insns\tstack\n12x\tsys_mmap;memset\n")
    else:
        f.write_bytes(f.read_bytes()[:3000])
    p = hpmkit("compare", bad / "riscv64", "--vs", bad / "aarch64", "-q", "--json", tmp_path / "c.json",
               cwd=tmp_path)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "mmap.exact-paths.tsv.gz" in p.stderr, p.stderr
    assert ("line 2" if damage == "count" else "damaged compressed data after line") in p.stderr
    assert not (tmp_path / "c.json").exists()


def test_a_side_from_relative_and_absolute_folders_is_named_after_both(tmp_path, monkeypatch):
    """`hpmkit compare rel/ /abs/ --vs ...`: the side's label is the folders' common path
    (it ended in a ValueError traceback when one was relative and one absolute)."""
    from hpmkit.compare.contexts import ContextTable
    monkeypatch.chdir(tmp_path)
    a = ContextTable("riscv64", label="examples/lab-suite/riscv64/pipe.hpmprof")
    a.add("pipe", ["schedule"], 0)
    b = ContextTable("riscv64", label=str(tmp_path / "rt" / "riscv64" / "cyclictest.hpmprof"))
    b.add("cyclictest", ["schedule"], 0)
    a.extend(b)
    assert a.label == f"{tmp_path} (2 workloads)"
