"""`hpm stat -M` on a machine that cannot count every event of the group: like `perf stat`
with an event list, each event the kernel refuses is <not supported>, the metrics that need
it are n/a with the reason, and the others are computed from what counted.

This VM exposes no hardware PMU (perf stat shows `cycles` as <not supported> here), so a
group over `cycles` and two software events shows both cases; it is added to a copy of
data/ (HPM_DATA_DIR). The lab guests show it on QEMU's Arm PMU, whose PMCEID lacks the
cache and branch events (tests/py/test_pmceid.py).
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ROOT, hpm, hpm_json

GROUP = ("\ngroup   missingtest  one metric over a hardware event, one over software ones\n"
         "metric  cycles_per_ms  -  cycles / (task-clock / 1000000)\n"
         "metric  faults_per_ms  -  page-faults / (task-clock / 1000000)\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if subprocess.run(["perf", "stat", "-e", "cycles", "--", "true"], capture_output=True,
                      text=True).stderr.find("<not supported>") < 0:
        pytest.skip("this machine counts cycles (the test needs a PMU-less VM like CI's)")
    d = tmp_path_factory.mktemp("m") / "data"
    shutil.copytree(ROOT / "data", d)
    with open(d / "metrics" / "generic.mg", "a") as f:
        f.write(GROUP)
    return {"HPM_DATA_DIR": str(d)}


def test_json_keeps_what_counted(data):
    p, doc = hpm_json("stat", "-M", "missingtest", "--json", "--", "true", env=data, check_rc=0)
    ev = {e["name"]: e["value"] for e in doc["events"]}
    assert set(ev) == {"task-clock", "page-faults"} and ev["task-clock"] > 0
    assert doc["not_supported"] == ["cycles"]
    met = {m["name"]: m["value"] for m in doc["metrics"]}
    assert met["cycles_per_ms"] is None
    want = ev["page-faults"] / (ev["task-clock"] / 1e6)
    assert met["faults_per_ms"] == pytest.approx(want, rel=1e-8)


def test_text_and_csv_say_not_supported_as_perf_does(data):
    p = hpm("stat", "-M", "missingtest", "--", "true", env=data, check_rc=0)
    rows = p.stderr.splitlines()
    assert any(l.split() == ["<not", "supported>", "cycles"] for l in rows), p.stderr
    (na,) = [l for l in rows if "cycles_per_ms" in l]
    assert na.split()[:2] == ["n/a", "cycles_per_ms"]
    assert na.endswith("(needs cycles, which this machine cannot count)")
    (ok,) = [l for l in rows if "faults_per_ms" in l]
    float(ok.split()[0])
    perf = subprocess.run(["perf", "stat", "-x,", "-e", "cycles,task-clock,page-faults", "--",
                           "true"], capture_output=True, text=True).stderr.splitlines()
    ours = hpm("stat", "-M", "missingtest", "-x,", "--", "true", env=data, check_rc=0)
    theirs = {l.split(",")[2]: l.split(",")[0] for l in perf if l.count(",") >= 3}
    mine = {l.split(",")[2]: l.split(",")[0] for l in ours.stderr.splitlines()
            if l.count(",") >= 3 and l.split(",")[2]}
    assert theirs["cycles"] == mine["cycles"] == "<not supported>"
    assert ",,,,,n/a,cycles_per_ms," in ours.stderr.splitlines()


def test_a_group_of_nothing_countable_runs_and_says_why(tmp_path):
    d = tmp_path / "data"
    shutil.copytree(ROOT / "data", d)
    with open(d / "metrics" / "generic.mg", "a") as f:
        f.write("\ngroup   hwonly  hardware only\nmetric  ipc2  -  instructions / cycles\n")
    if subprocess.run(["perf", "stat", "-e", "cycles", "--", "true"], capture_output=True,
                      text=True).stderr.find("<not supported>") < 0:
        pytest.skip("this machine counts cycles")
    # as perf stat -M does when the kernel refuses every event: the command runs, each
    # event is <not supported>, the metric n/a with the reason
    p = hpm("stat", "-M", "hwonly", "--", "sh", "-c", "exit 4", env={"HPM_DATA_DIR": str(d)})
    assert p.returncode == 4 and "Traceback" not in p.stderr
    rows = [l.split() for l in p.stderr.splitlines()]
    assert ["<not", "supported>", "instructions"] in rows and ["<not", "supported>", "cycles"] in rows
    assert "n/a ipc2 (needs cycles, which this machine cannot count)" in " ".join(
        " ".join(r) for r in rows)
