"""hpm bench on this machine: the JSON format, bad input, the comparison mode, the latency
curve against the caches in sysfs, and the false-sharing pair on two cores."""
import json
import math
import os
from pathlib import Path

import pytest

from cache_steps import cache_steps, failures, report
from conftest import hpm

CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


def bench_json(tmp_path, *args, name="r.json"):
    out = tmp_path / name
    p = hpm("bench", "run", "--no-table", "--json", out, *args, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(out.read_text()), p


def test_list_and_help():
    p = hpm("bench", "list", check_rc=0)
    names = [l.split()[0] for l in p.stdout.splitlines()]
    assert names == ["memcpy", "memmove", "memset", "io", "bitsearch", "mul", "mem", "falseshare"]
    h = hpm("bench", "--help", check_rc=0).stdout
    assert "examples:" in h and "hpm bench compare" in h and "--align" in h


def test_reference_copies_are_correct():
    p = hpm("bench", "selftest", check_rc=0)
    assert p.stdout.strip().endswith(", 0 wrong")


def test_clocks_name_the_settings():
    out = hpm("bench", "clocks", check_rc=0).stdout
    lines = out.splitlines()
    assert [l.split()[0] for l in lines[::2]] == ["pmu-direct", "pmu-mmap", "timestamp",
                                                  "perf-read", "clock"]
    assert "<- used by hpm bench" in out
    if not Path("/sys/bus/event_source/devices/cpu").exists():
        # this host: no PMU, so only the timestamp and the clock
        assert "yes" in lines[4] and "yes" in lines[8]
        assert "no PMU" in out or "no hardware PMU" in out


def test_json_format_v1(tmp_path):
    d, p = bench_json(tmp_path, "-b", "memcpy", "-b", "mul", "--sizes", "64,1500",
                      "--align", "0:0,1:0", "--epochs", "6")
    assert d["format"] == "hpm-bench" and d["version"] == 1
    assert {"arch", "kernel", "cpu", "ncpus", "caches"} <= set(d["machine"])
    assert d["clock"]["hz"] > 0 and d["clock"]["source"] in ("timestamp", "pmu-mmap",
                                                             "pmu-direct", "clock")
    assert d["settings"]["epochs"] == 6
    cases = [r["case"] for r in d["results"]]
    assert len(cases) == 5 * 2 * 2 + 9 and len(set(cases)) == len(cases)
    assert "memcpy/shift/n=1500/s1-d0" in cases and "mul/64x64to128hi/y=large" in cases
    for r in d["results"]:
        assert r["epochs"] == 6 and r["iters"] >= 1
        ns = r["ns"]
        assert 0 < ns["min"] <= ns["median"] and ns["mad"] >= 0
        if r["bench"] == "memcpy":
            assert r["bytes"] == r["params"]["size"]
            assert math.isclose(r["gbps"], r["bytes"] / ns["median"], rel_tol=1e-4)
    # no PMU here: the counters are named as missing, never silently absent
    if not d["counters"]["events"]:
        assert "cycles:u" in d["counters"]["missing"]
    assert {s["name"] for s in d["summary"]} == {"constant_time/32x32", "constant_time/64x64",
                                                 "constant_time/64x64to128hi"}
    # an aligned word copy moves more bytes per ns than a byte loop (any machine)
    by = {r["case"]: r for r in d["results"]}
    assert by["memcpy/words/n=1500/s0-d0"]["gbps"] > 2 * by["memcpy/bytes/n=1500/s0-d0"]["gbps"]
    assert "hpm bench: 29 cases measured, 0 skipped" in p.stderr


@pytest.mark.parametrize("args,msg", [
    (["-b", "nosuch"], "no benchmark named 'nosuch'"),
    (["--sizes", "12x"], "--sizes '12x'"),
    (["--align", "8:0"], "--align '8:0'"),
    (["--epochs", "0"], "--epochs '0'"),
    (["--max-ws", "1K"], "--max-ws '1K'"),
    (["extra"], "unexpected argument 'extra'"),
])
def test_bad_run_options(tmp_path, args, msg):
    out = tmp_path / "x.json"
    p = hpm("bench", "run", "--json", out, *args)
    assert p.returncode == 2
    assert msg in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.iterdir())


def test_unwritable_json_leaves_nothing(tmp_path):
    p = hpm("bench", "run", "-b", "mul", "--json", tmp_path / "no" / "dir" / "x.json")
    assert p.returncode == 1 and "cannot write" in p.stderr


def test_missing_json_folder_fails_before_measuring(tmp_path):
    """The output is opened first: one line at once, no measurement run or printed (the
    whole default suite takes minutes; the timeout says it was not run)."""
    out = tmp_path / "no" / "r.json"
    p = hpm("bench", "run", "--json", out, timeout=20)
    assert p.returncode == 1
    assert p.stderr.splitlines() == [f"hpm bench: cannot write {out}: No such file or directory"]
    assert p.stdout == "" and not list(tmp_path.iterdir())


def test_compare_ratios_exact(tmp_path):
    a, _ = bench_json(tmp_path, "-b", "mul", "--epochs", "4", name="a.json")
    # a second file: same cases, ns scaled by 2.5 (as another machine would differ)
    b = json.loads(json.dumps(a))
    b["machine"]["arch"] = "other"
    for r in b["results"]:
        for k in ("median", "min", "mad"):
            r["ns"][k] *= 2.5
    b["results"] = b["results"][:-1]  # one case missing: counted, not dropped silently
    (tmp_path / "b.json").write_text(json.dumps(b))
    p = hpm("bench", "compare", tmp_path / "a.json", tmp_path / "b.json", check_rc=0)
    rows = [l.split() for l in p.stdout.splitlines() if l.startswith("mul/")]
    assert len(rows) == 8
    for row in rows:
        assert row[-1] == "2.50"
        assert math.isclose(float(row[2]) / float(row[1]), 2.5, rel_tol=1e-3)
    assert "skipped 1 cases missing from some files" in p.stderr
    md = hpm("bench", "--compare", "--markdown", tmp_path / "a.json", tmp_path / "b.json",
             check_rc=0).stdout
    assert md.startswith("| case | ") and "| other/" in md
    assert "| mul | 2.50 |" in md


def test_compare_bad_files(tmp_path):
    good, _ = bench_json(tmp_path, "-b", "mul", "--epochs", "2", name="g.json")
    cut = tmp_path / "cut.json"
    text = (tmp_path / "g.json").read_text()
    cut.write_text(text[: len(text) // 2])
    p = hpm("bench", "compare", tmp_path / "g.json", cut)
    assert p.returncode == 1 and "cut.json: byte" in p.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "hpm-stat", "version": 1}))
    p = hpm("bench", "compare", tmp_path / "g.json", other)
    assert p.returncode == 1 and "not an hpm-bench file" in p.stderr
    v2 = tmp_path / "v2.json"
    v2.write_text(json.dumps({**good, "version": 2}))
    p = hpm("bench", "compare", tmp_path / "g.json", v2)
    assert p.returncode == 1 and "version 2" in p.stderr
    p = hpm("bench", "compare", tmp_path / "g.json")
    assert p.returncode == 2 and "at least two" in p.stderr
    p = hpm("bench", "compare", tmp_path / "g.json", tmp_path / "missing.json")
    assert p.returncode == 1 and "missing.json: No such file" in p.stderr


def cache_levels():
    """(level, size in bytes) of the data/unified caches of cpu0"""
    out = []
    for idx in sorted(CACHE.glob("index*")):
        if (idx / "type").read_text().strip() == "Instruction":
            continue
        size = (idx / "size").read_text().strip()
        n = int(size.rstrip("KM")) * (1024 if size.endswith("K") else 1 << 20)
        out.append((int((idx / "level").read_text()), n))
    return sorted(out)


def test_latency_steps_line_up_with_caches(tmp_path):
    """Random pointer chasing steps up at the cache sizes sysfs reports: asserted for L1 and
    L2, reported for the shared levels above (the rule and why: cache_steps.py; made-up
    curves, flat ones included, in test_cache_steps.py). hpm's own summary applies the same
    rule in C: both must read the same curve the same way, run by run.

    The host is shared with other guests, and their traffic only ever adds time to a load
    (one CI run: 15 ns at 512 KiB, inside a 1 MiB L2, against 5.7 ns here). The curve
    asserted is the fastest of three runs for each working set."""
    levels = cache_levels()
    assert levels, "no caches in sysfs"
    max_ws = 4 * levels[-1][1]
    best = {}
    for run in range(3):
        d, _ = bench_json(tmp_path, "-b", "mem", "--max-ws", str(max_ws), "--epochs", "7",
                          name=f"r{run}.json")
        lat = {r["params"]["ws"]: r["ns"]["median"] for r in d["results"]
               if r["params"]["kind"] == "chase/random"}
        findings = cache_steps(levels, lat)
        print(f"\nrun {run + 1}:\n" + report(findings))
        summary = {(s["level"], s["size"]): s for s in d["summary"] if s["bench"] == "mem"}
        assert len(summary) == len(findings)
        for f in findings:
            s = summary[(f["level"], f["size"])]
            assert (s["ok"], s["step_ws"], s["lo_ws"], s["hi_ws"]) == \
                (f["ok"], f["step_ws"], f["lo_ws"], f["hi_ws"]), (s, f)
            assert (s["value"] is None) == (f["ratio"] is None), (s, f)
            if f["ratio"] is not None:
                assert math.isclose(s["value"], f["ratio"], rel_tol=1e-4), (s, f)
        for ws, ns in lat.items():
            best[ws] = min(best.get(ws, ns), ns)
    findings = cache_steps(levels, best)
    print("fastest of the three:\n" + report(findings))
    assert not failures(findings), report(failures(findings))


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs two CPUs")
def test_false_sharing_slows_down():
    """Two threads on two CPUs: a shared cache line costs more per increment than two
    lines 128 bytes apart. The host is shared with other jobs, which preempt one thread now
    and then: the ratio of the fastest epochs, best of three runs."""
    best = {}
    for _ in range(3):
        p = hpm("bench", "run", "-b", "falseshare", "--json", "-", check_rc=0)
        for s in json.loads(p.stdout)["summary"]:
            best[s["name"]] = max(best.get(s["name"], 0), s["value_min"])
            assert s["cpus"] >= 2
    print(best)
    assert best["slowdown/atomic"] >= 1.5, best
    assert best["slowdown/store"] >= 1.2, best


def test_missing_counters_are_named_with_their_reason(tmp_path):
    # issue 24: no literal '<event>' placeholder; events refused for one reason share it
    d, p = bench_json(tmp_path, "-b", "mul", "-e", "nosuch1,nosuch2,task-clock", "--epochs", "3")
    missing = d["counters"]["missing"]
    assert "<event>" not in missing + p.stderr
    assert missing == ("nosuch1: unknown event 'nosuch1' (hpm list shows the events of this CPU); "
                       "nosuch2: unknown event 'nosuch2' (hpm list shows the events of this CPU)")
    assert d["counters"]["events"] == ["task-clock"]
    d, p = bench_json(tmp_path, "-b", "mul", "--epochs", "3", name="default.json")
    missing = d["counters"]["missing"]
    assert "<event>" not in missing + p.stderr
    from conftest import probe_ok
    if not probe_ok("cycles"):
        # every default event refused for the same reason: named once, after the three names
        head, reason = missing.split(": ", 1)
        assert head.startswith("cycles:u") and "instructions:u" in head and "branch-misses:u" in head
        assert "cannot be counted" not in reason and ("no hardware PMU" in reason or "not supported" in reason
                                                      or "permission" in reason)
