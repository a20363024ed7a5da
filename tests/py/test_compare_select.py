"""hpmkit compare --comm / --pid: choosing the processes of the recordings on both sides.

The left-out counts are checked against the profiles' own comm/pid columns read with pyarrow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "examples" / "lab-suite"
WLS = ("exec", "posix-spawn", "vfork")     # ksuite and the programs it starts ("exe")


def hpmkit(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def side(arch):
    return [SUITE / arch / f"{w}.hpmprof" for w in WLS]


def samples(arch, keep):
    n = 0
    for p in side(arch):
        t = pq.read_table(p / "samples.parquet", columns=["comm", "pid"])
        n += int(pc.sum(pc.cast(keep(t), "int64")).as_py() or 0)
    return n


def test_comm_keeps_that_command_and_counts_the_rest(tmp_path):
    out = tmp_path / "c.json"
    r = hpmkit("compare", *side("riscv64"), "--vs", *side("aarch64"), "--comm", "exe", "--json", out, "-q")
    assert r.returncode == 0, r.stderr
    s = json.loads(out.read_text())
    for arch in ("riscv64", "aarch64"):
        other = samples(arch, lambda t: pc.not_equal(t["comm"], "exe"))
        assert other > 0
        assert f"{arch}: --comm/--pid left out {other} samples not of command exe in 3 profile(s)" in s["warnings"]
    assert any("exact counts not shown" in w for w in s["warnings"])
    assert s["ranking"] and all("exact" not in d or d["exact"].get("ratio") is None for d in s["ranking"])
    # only exe's samples are in the comparison: the coverage table's sample totals are theirs
    total_a = sum(v["samples"][0] for v in s["coverage"]["workloads"].values()) \
        if "samples" in next(iter(s["coverage"]["workloads"].values())) else None
    if total_a is not None:
        assert total_a == samples("riscv64", lambda t: pc.equal(t["comm"], "exe"))


def test_pid_and_comm_together_must_both_hold(tmp_path):
    t = pq.read_table(side("riscv64")[0] / "samples.parquet", columns=["comm", "pid"])
    pid = int(pc.min(t["pid"]).as_py())
    r = hpmkit("compare", side("riscv64")[0], "--vs", side("aarch64")[0], "--comm", "exe",
               "--pid", f"{pid}", "-q", "--json", tmp_path / "x.json")
    # the lowest pid of exec's riscv64 run is ksuite itself, not exe: nothing of A is left
    assert r.returncode != 0
    assert "no sample of command exe and pid" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, msg", [
    (["--comm", "nosuch"], "--comm/--pid: no sample of command nosuch in 3 profile(s) of this side "
                           "(its commands: "),
    (["--pid", "12x"], "--pid: '12x' is not a comma-separated list of process ids"),
    (["--comm", ","], "--comm: give at least one command name"),
])
def test_bad_selections_are_one_line(args, msg):
    r = hpmkit("compare", *side("riscv64"), "--vs", *side("aarch64"), *args)
    assert r.returncode != 0 and msg in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_context_tables_cannot_be_chosen_in(tmp_path):
    r = hpmkit("compare", *side("riscv64"), "--vs", *side("aarch64"), "--export-contexts", tmp_path, "-q")
    assert r.returncode == 0, r.stderr
    a, b = sorted(tmp_path.glob("*.ctx.tsv"))
    r = hpmkit("compare", a, "--vs", b, "--comm", "exe")
    assert r.returncode != 0 and "a context table keeps no commands or process ids" in r.stderr
