"""`#slots` in metric expressions (issue 16 leftover): the core's issue slots per cycle,
read at run time from the core PMU's sysfs caps/slots as perf does
(tools/perf/arch/arm64/util/pmu.c: perf_pmu__cpu_slots_per_cycle); without it the metric
is n/a with the reason, never computed with a guessed width.

`hpm stat` is run on an imitated machine (HPM_SYSROOT: a core PMU "cpu", with or without
caps/slots) and a copy of data/ (HPM_DATA_DIR) whose generic.mg has one extra group over
task-clock, a software event this host always counts, so the metric's value can be checked
against the count in the same report. The C unit tests (tests/c/test_slots.c) check a
Neoverse V1's top-down level 1 from fixed counts.
"""
from __future__ import annotations

import shutil

import pytest

from conftest import ROOT, hpm, hpm_json

GROUP = ("\ngroup   slotstest  task-clock per issue slot (test)\n"
         "metric  clock_per_slot  -  task-clock / #slots\n"
         "metric  clock_ms        -  task-clock / 1000000\n")


@pytest.fixture
def machine(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    with open(data / "metrics" / "generic.mg", "a") as f:
        f.write(GROUP)
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "isa").write_text("x86_64\n")
    (root / "proc" / "cpuinfo").write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n")
    cpu = root / "sys/bus/event_source/devices/cpu"
    (cpu / "caps").mkdir(parents=True)
    (cpu / "type").write_text("4\n")
    env = {"HPM_DATA_DIR": str(data), "HPM_SYSROOT": str(root)}
    return env, cpu / "caps" / "slots"


def stat_json(env):
    p, doc = hpm_json("stat", "-M", "slotstest", "--json", "--", "true", env=env, check_rc=0)
    (clock,) = [e for e in doc["events"] if e["name"] == "task-clock"]
    return clock["value"], {m["name"]: m["value"] for m in doc["metrics"]}


def g9(x: float) -> float:
    """x as the JSON report prints a metric (%.9g)."""
    return float(f"{x:.9g}")


def test_slots_comes_from_caps_slots(machine):
    env, slots = machine
    slots.write_text("0x00000004\n")          # arm_pmuv3's spelling: "0x%08x"
    clock, met = stat_json(env)
    assert clock > 0
    assert met["clock_per_slot"] == g9(clock / 4)
    assert met["clock_ms"] == g9(clock / 1e6)
    slots.write_text("6\n")
    clock, met = stat_json(env)
    assert met["clock_per_slot"] == g9(clock / 6)


@pytest.mark.parametrize("content, why", [
    (None, "the core PMU cpu has no caps/slots in sysfs"),
    ("0x00000000\n", "the core PMU cpu's caps/slots is 0: the CPU does not say its width "
                     "(PMMIR_EL1.SLOTS, read by Linux from PMUv3.4 on)"),
])
def test_without_slots_the_metric_is_na_with_the_reason(machine, content, why):
    env, slots = machine
    if content is not None:
        slots.write_text(content)
    clock, met = stat_json(env)
    assert met["clock_per_slot"] is None and met["clock_ms"] == g9(clock / 1e6)
    p = hpm("stat", "-M", "slotstest", "--", "true", env=env, check_rc=0)
    (line,) = [l for l in p.stderr.splitlines() if "clock_per_slot" in l]
    assert line.split()[:2] == ["n/a", "clock_per_slot"]
    assert line.endswith(f"(needs #slots, the core's issue width: {why})")
    p = hpm("stat", "-M", "slotstest", "-x,", "--", "true", env=env, check_rc=0)
    assert ",,,,,n/a,clock_per_slot," in p.stderr.splitlines()


def test_forced_neoverse_v1_lists_its_topdown_level_1():
    """HPM_PMU picks the table metric groups come from, as it does for event names."""
    env = {"HPM_PMU": "neoverse_v1"}
    p = hpm("list", "--metrics", env=env, check_rc=0)
    assert "topdownl1 (neoverse_v1) — Top-down level 1: where the issue slots or cycles go" \
        in p.stdout.splitlines()
    p, mets = hpm_json("list", "--metrics", "--json", env=env, check_rc=0)
    l1 = {m["name"]: m["expr"] for m in mets if m["group"] == "topdownl1"}
    # the kernel's sbsa.json formulas for two, the V1's own (its width 8 written in) for two
    assert l1 == {
        "backend_bound": "100 * (STALL_SLOT_BACKEND / (#slots * CPU_CYCLES))",
        "retiring": "100 * ((OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (#slots * CPU_CYCLES)))",
        "frontend_bound": "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - "
                          "((BR_MIS_PRED * 4) / CPU_CYCLES)))",
        "bad_speculation": "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (STALL_SLOT / "
                           "(CPU_CYCLES * 8)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))"}


def test_no_generated_metric_is_left_out_for_slots():
    for f in sorted((ROOT / "data" / "metrics").glob("*.mg")):
        assert "#slots" not in "".join(l for l in f.read_text().splitlines(True)
                                       if l.startswith("#   ")), f
