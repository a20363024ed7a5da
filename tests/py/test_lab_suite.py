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


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_a_bundled_recording_is_reproduced_exactly(tmp_path, arch):
    """-icount makes the guest deterministic: recording a workload again gives the same
    samples and the same closing counts (if this fails after a kernel or ksuite change,
    re-record with `hpmkit lab suite --arch both --out examples/lab-suite`)."""
    raw = suite.record(arch, "syscalls", tmp_path / "raw")
    new = Profile.load(suite.to_profile(raw, arch, "syscalls", tmp_path / "p"))
    old = Profile.load(SUITE / arch / "syscalls.hpmprof")
    assert new.meta["totals"] == old.meta["totals"]
    assert new.meta["skipped"] == old.meta["skipped"]
    assert new.samples.num_rows == old.samples.num_rows > 1000
    names = lambda p: {tuple(p.stack_symbols(s)) for s in set(p.samples.column("stack_id").to_pylist())}
    assert names(new) == names(old)


def test_compare_on_the_bundled_suite_is_stable_and_finds_known_issues(tmp_path):
    out = tmp_path / "c.json"
    p = run([HPMKIT, "compare", SUITE / "riscv64", "--vs", SUITE / "aarch64", "-q",
             "--truth", ROOT / "data" / "compare" / "known-riscv64-slower.tsv", "--json", out,
             "--html", tmp_path / "c.html"], timeout=600)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    top = [(r["function"], r["workload"]) for r in d["ranking"]]
    # golden: the scheduler path of sched_yield (finish_task_switch's fences), fd
    # allocation's bit search (generic C find_next_zero_bit), misaligned kernel memcpy
    assert top[:3] == [("schedule", "ctxswitch"), ("alloc_fd", "fd-alloc"),
                       ("generic_perform_write", "sendfile")]
    at = {row["k"]: row for row in d["truth"]["at_k"]}
    assert at[5]["hits"] == 4 and at[5]["precision"] == 0.8
    assert at[10]["hits"] == 6
    assert len(d["truth"]["found"]) == 5
    assert (tmp_path / "c.html").stat().st_size > 10000
