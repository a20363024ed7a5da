"""The bundled lab recordings (examples/lab-suite): they can be made again bit for bit, and
hpmkit compare ranks them the same way every time (golden result, checked against the
labelled list of known riscv64-slower kernel functions)."""
import json

import pytest

from conftest import ROOT, run
from hpmkit.lab import suite
from hpmkit.profile import Profile

SUITE = ROOT / "examples" / "lab-suite"
HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"


def top_functions(p, n=10):
    """The n kernel/user functions with the most samples (leaf frames)."""
    from collections import Counter
    leaf = Counter()
    for sid in p.samples.column("stack_id").to_pylist():
        names = p.stack_symbols(sid)
        leaf[names[0] if names else "?"] += 1
    return [f for f, _ in leaf.most_common(n)]


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_recordings_repeat_exactly_and_match_the_bundled_one(tmp_path, arch):
    """The suite is recorded with the precise in-emulator sampler (hpmkit lab record): the
    guest is deterministic (-icount, -seed) and the sampler perturbs nothing, so two
    recordings of a workload give the same samples, stacks and exact counts. The bundled
    recording was made the same way; if hpm-side binaries change (ksuite relinked), it
    agrees closely rather than exactly; re-record with
    `hpmkit lab suite --arch both --out examples/lab-suite`."""
    old = Profile.load(SUITE / arch / "syscalls.hpmprof")
    assert old.meta["lab"]["sampler"].startswith("lab/pes")
    runs = []
    for i in range(2):
        p = suite.record_precise(arch, "syscalls", tmp_path / f"raw{i}", tmp_path / f"p{i}",
                                 period=old.meta["lab"]["period"])
        runs.append(Profile.load(p))
    a, b = runs
    assert a.meta["skipped"] == b.meta["skipped"]
    assert a.samples.column("time").to_pylist() == b.samples.column("time").to_pylist()
    assert [a.stack_symbols(s) for s in a.samples.column("stack_id").to_pylist()] == \
        [b.stack_symbols(s) for s in b.samples.column("stack_id").to_pylist()]
    for name in ("syscalls.exact.tsv", "syscalls.exact-paths.tsv.gz"):
        ea = (tmp_path / "p0" / arch / name).read_bytes()
        assert ea == (tmp_path / "p1" / arch / name).read_bytes(), name
    # the per-path table re-aggregates the per-function one's kernel rows: same total
    from hpmkit.exacttables import read_exact, read_exact_paths
    paths = sum(n for n, _ in read_exact_paths(tmp_path / "p0" / arch / "syscalls.exact-paths.tsv.gz"))
    funcs = sum(r["insns"] for r in read_exact(tmp_path / "p0" / arch / "syscalls.exact.tsv")
                if r["priv"] == "kernel")
    assert paths == funcs > 0, (paths, funcs)
    assert abs(a.samples.num_rows - old.samples.num_rows) <= 0.02 * old.samples.num_rows
    assert len(set(top_functions(a)) & set(top_functions(old))) >= 8


def test_compare_on_the_bundled_suite_is_stable_and_finds_known_issues(tmp_path):
    out = tmp_path / "c.json"
    p = run([HPMKIT, "compare", SUITE / "riscv64", "--vs", SUITE / "aarch64", "-q",
             "--truth", ROOT / "data" / "compare" / "known-riscv64-slower.tsv", "--json", out,
             "--html", tmp_path / "c.html", "--explain", tmp_path / "all.tsv"], timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == "", "-q: no report, no progress"
    d = json.loads(out.read_text())
    top = [(r["function"], r["workload"]) for r in d["ranking"]]
    # golden (precise recordings, 23 workloads): the page-cache write of sendfile in memcpy
    # (byte-wise on riscv64 for mutually misaligned buffers), memset in anonymous page
    # faults, then copy-on-write and the user copies of copy-file
    assert top[:2] == [("memcpy", "sendfile"), ("memset", "mmap")]
    assert {("wp_page_copy", "pagefault"), ("raw_copy_to_user", "copy-file")} <= set(top[:5])
    # fd allocation's bit search is not ranked: by exact count the dup path costs x1.2, and
    # precise samples say so (the interrupt sampler made it x58)
    assert not any(f == "alloc_fd" for f, _ in top)
    rows = [line.split("\t") for line in (tmp_path / "all.tsv").read_text().splitlines()[2:]]
    col = {n: i for i, n in enumerate(rows[0])}
    fts = [r for r in rows[1:] if r[col["workload"]] == "ctxswitch" and r[col["function"]] == "finish_task_switch"
           and r[col["path"]] == "sys_sched_yield;do_sched_yield;schedule;__schedule;finish_task_switch"]
    # the scheduler path matches exactly on both ISAs (riscv64's __schedule was named
    # __sched_text_start) and is not ranked
    assert len(fts) == 1 and fts[0][col["match"]] == "exact 0" and fts[0][col["status"]] == "not-ranked", fts
    # the table carries the exact ratio of every matched kernel context (the lab's per-path
    # counts of the same runs). The scheduler path is counted under the task that returns
    # from the switch, as samples read it (before: under the task that switched away)
    ex_col = col["exact_ratio_instructions"]
    lo_col, hi_col = col["ci95_lo_instructions"], col["ci95_hi_instructions"]
    assert float(fts[0][lo_col]) <= float(fts[0][ex_col]) <= float(fts[0][hi_col]), fts
    # the sampled 95 % intervals are calibrated against exact counts: over every matched
    # kernel context with enough samples, the exact ratio lies inside about 95 % of them
    live = [r for r in rows[1:] if r[col["status"]] in ("ranked", "not-ranked") and r[ex_col] != "-"]
    inside = sum(float(r[lo_col]) <= float(r[ex_col]) <= float(r[hi_col]) for r in live)
    assert len(live) > 2000 and inside >= 0.9 * len(live), (inside, len(live))
    # every ranked kernel context is checked against the exact count of its call paths
    # (exact mode, the same runs): none is below x1.2 by exact count, and the sampled
    # ratios agree with the exact ones as sampling noise allows (recorded every 2,000
    # instructions): 22 of the 25 are within 15 % of the exact ratio, and the 3 that are
    # not have 15-35 samples on the arm64 side. The exact ratio is outside the sampled 95 %
    # interval for 2 of the 25, both thick (1,774 and 2,587 arm64 samples) and 4-6 % off:
    # at that density the intervals are narrower than what the sampler and the exact
    # count's path model disagree on (README, validation)
    ex = d["exact"]
    assert ex["rows"] == ex["with_exact"] == ex["by_path"] == 25 and ex["below_1_2"] == 0, ex
    by_anchor = {(r[col["workload"]], r[col["path"]]): r[ex_col] for r in rows[1:] if r[col["status"]] == "ranked"}
    for r in d["ranking"]:
        assert by_anchor[(r["workload"], ";".join(r["anchor"]))] == f"{r['exact']['ratio']:.4g}", r
    outside = [(r["function"], r["workload"], r["samples"]) for r in d["ranking"]
               if not r["ci95"]["instructions"][0] <= r["exact"]["ratio"] <= r["ci95"]["instructions"][1]]
    assert len(outside) <= 2 and all(abs(r["exact"]["error"]) < 0.1 for r in d["ranking"]
                                      if (r["function"], r["workload"], r["samples"]) in outside), outside
    off = [(r["function"], r["workload"], r["samples"]) for r in d["ranking"] if abs(r["exact"]["error"]) > 0.15]
    assert ex["within_15"] == 22 and len(off) == 3 and all(s[1] < 40 for _, _, s in off), off
    # a ratio is quoted as a number only when its 95 % interval is within 15 % of it; the
    # thin ones are given as "at least" their lower bound. Against the exact counts: every
    # quoted ratio of the 25 is within 15 %, and every bound holds
    quoted = [r for r in d["ranking"] if r["quoted"]]
    assert {(r["function"], r["workload"]) for r, in zip(d["ranking"]) if not r["quoted"]} >= \
        {("mark_page_accessed", "exec"), ("folio_mark_accessed", "exec"), ("clear_user", "vfork")}
    assert all(abs(r["exact"]["error"]) <= 0.15 for r in quoted) and len(quoted) == ex["quoted"] == 19
    assert ex["bounds"] == ex["bounds_held"] == 6 and ex["quoted_within_15"] == 19
    assert all(r["exact"]["ratio"] >= r["ci95"]["instructions"][0] for r in d["ranking"] if not r["quoted"])
    # riscv64 entry code is split off like arm64's: most riscv64 kernel samples match
    for wl, v in d["coverage"]["workloads"].items():
        assert v["coverage_pct"][0] > 90, (wl, v)
    at = {row["k"]: row for row in d["truth"]["at_k"]}
    assert at[5]["hits"] == 5 and at[5]["precision"] == 1.0
    # #10 is vm_area_dup when mprotect splits a mapping: x5.8 by exact count, not labelled
    assert at[10]["hits"] == 9 and d["ranking"][9]["function"] == "vm_area_dup"
    assert d["ranking"][9]["exact"]["ratio"] > 5
    # over all 152 ranked contexts: 9 of the 18 entries, of the 14 the workloads reach (12
    # by riscv64's frames; copy_page and raw_copy_from_user by hits through arm64's frames
    # and riscv64's one copy routine); an entry that is found is reached
    assert len(d["truth"]["found"]) == 9 and len(d["truth"]["reached"]) == 14
    assert set(d["truth"]["found"]) <= set(d["truth"]["reached"])
    assert at["all"]["ranked"] == 152 and at["all"]["recall_reached"] == 9 / 14
    # riscv64's slow get_user_pages (no HAVE_FAST_GUP in 6.1) is in no ratio: sem-posix's
    # page-table walk has no arm64 sample. The work only riscv64 does lists it, and the
    # exact per-function counts of the same runs agree: the sampled share within 10 % of the
    # exact one for every row of 0.5 % or more, and arm64 runs at most 1 % of each
    gup = [i for i, e in enumerate(d["truth"]["entries"]) if e["function"] == "get_user_pages_fast"]
    assert gup[0] in d["truth"]["missed"] and d["truth"]["one_sided"][str(gup[0])]["workload"] == "sem-posix"
    rows = [r for r in d["one_sided"]["rows"] if r["share"][0] >= 0.005]
    sem = {r["function"]: r for r in rows if r["workload"] == "sem-posix"}
    assert {"follow_page_mask", "mtree_load", "__get_user_pages", "get_user_pages_unlocked"} <= set(sem)
    assert sem["mtree_load"]["samples"][1] == 0 and sem["mtree_load"]["b_has_it"]
    assert len(rows) > 50 and all(abs(r["share"][0] / r["exact"]["share_a"] - 1) <= 0.1 for r in rows)
    assert all(r["exact"]["share_b"] <= 0.01 * r["exact"]["share_a"] for r in rows)
    assert not any(r["function"].startswith("[") for r in d["ranking"])
    # the functions riscv64 spends more of a workload in, by the sampled function: every
    # row is x1.2 or more by the lab's exact per-function counts of the same runs, and its
    # selection-adjusted interval holds the exact ratio. riscv64's finish_task_switch
    # (fence rw,w; x1.4-1.9, no outlier among contexts, so not ranked) is among them
    fn = d["by_function"]
    assert len(fn["rows"]) == 133 and fn["exact_check"]["with_exact"] == 133
    assert fn["exact_check"]["at_least_floor"] == fn["exact_check"]["inside_interval"] == 133
    assert all(r["exact"]["ratio"] >= 1.2 and r["ci"][0] <= r["exact"]["ratio"] <= r["ci"][1] for r in fn["rows"])
    fts = {r["workload"]: r for r in fn["rows"] if r["function"] == "finish_task_switch"}
    assert "ctxswitch" in fts and fts["ctxswitch"]["exact"]["ratio"] > 1.4
    fts_i = [i for i, e in enumerate(d["truth"]["entries"]) if e["function"] == "finish_task_switch"][0]
    assert d["truth"]["by_function"][str(fts_i)]["workload"] == "ctxswitch"
    assert (tmp_path / "c.html").stat().st_size > 10000
    page = (tmp_path / "c.html").read_text()
    assert "<h2>Functions riscv64 spends more of a workload in (133 rows)" in page
    # the truth table says where the report shows each entry
    assert "finish_task_switch</td><td>ctxswitch,futex,pipe,sem-posix,sem-sysv</td><td>yes</td>" \
           "<td>functions A spends more in</td>" in page
    assert "<td>work only A does; functions A spends more in</td>" in page   # get_user_pages_fast


def test_seed001_table6_rows_are_measured_on_the_suite():
    """tools/seed001_table6.py maps the paper's 25 contexts onto the bundled ksuite and
    rt-tests recordings: each row is reached or says it is not, preferably in the paper's own
    test, and where it is, the exact ratio of the same runs stands beside the sampled one
    (fd allocation's close path, the pipe's scheduler path, pi_stress's PI futex)."""
    rt = ROOT / "examples" / "rt-tests"
    p = run([ROOT / ".venv" / "bin" / "python", ROOT / "tools" / "seed001_table6.py", SUITE, rt],
            timeout=600)
    assert p.returncode == 0, p.stderr
    rows = [l.split(" | ") for l in p.stdout.splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert len(rows) == 25
    by = {(r[1].split("`")[1], r[1].split("(")[-1].rstrip(")")): r for r in rows}
    for key, wl in ((("pick_file", "syscall"), "fd-alloc"), (("finish_task_switch", "context1"), "pipe"),
                    (("rt_mutex_wait_proxy_lock", "pi_stress"), "pi_stress"),
                    (("hrtimer_start_range_ns", "cyclictest"), "cyclictest")):
        r = by[key]
        assert r[5].startswith(wl + ":"), r
        ratio, interval = r[7].split(" [")
        lo, hi = (float(x) for x in interval.rstrip("]").split(", "))
        assert lo <= float(r[8]) <= hi, r
    assert "not reached" not in p.stdout
    # ksuite alone has no PI futex: the row says so
    alone = run([ROOT / ".venv" / "bin" / "python", ROOT / "tools" / "seed001_table6.py", SUITE],
                timeout=600)
    assert alone.returncode == 0, alone.stderr
    assert "| `rt_mutex_wait_proxy_lock` (pi_stress) | IPC | yes / yes | none |" in alone.stdout
    if "| ? / ?" not in p.stdout:   # the lab kernels are at hand: docs/compare.md shows this run
        assert p.stdout in (ROOT / "docs" / "compare.md").read_text()


def test_a_period_below_one_is_refused_before_anything_runs(tmp_path):
    """-c 0 used to record at the default period (0 read as "not given"); -c -5 was refused
    only by the sampler's options."""
    for bad in ("0", "-5"):
        p = run([HPMKIT, "lab", "suite", "--arch", "aarch64", "--workload", "pipe", "-c", bad,
                 "--out", tmp_path / "o"], timeout=60)
        assert p.returncode == 1 and p.stderr.strip() == f"hpmkit: --period must be at least 1, got {bad}", p.stderr
        assert not (tmp_path / "o").exists()
