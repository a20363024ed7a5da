"""An Arm core's PMU decides which common events it has (src/lib/pmceid.c).

PMCEID0/1_EL0 say which common events (0x00-0x3f) a core implements, and Linux lists
exactly those under /sys/bus/event_source/devices/armv8_*/events/. The kernel refuses a
generic perf event the core lacks but opens a raw number it lacks, which counts 0 for ever;
so a table name or a PAPI preset that maps to such a number must be unavailable, not a
counter that reads 0. The natively run tests imitate QEMU's `-cpu max` (implementer 0, the
five events its PMU has) with HPM_SYSROOT; the lab test holds libhpm's list against the
guest kernel's own sysfs, and every preset left available counts.
"""
from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import ROOT, hpm, run

# what QEMU 10's aarch64 `-cpu max` PMU lists in the lab guest (Linux 6.1)
QEMU_EVENTS = {"cpu_cycles": 0x11, "inst_retired": 0x08, "stall": 0x3c,
               "stall_backend": 0x24, "stall_frontend": 0x23}


NEVER_IN_SYSFS = {"SW_INCR": 0x00, "CHAIN": 0x1e}


def machine(tmp_path, events: dict[str, int] | None, pmu: str = "armv8_pmuv3") -> dict:
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "isa").write_text("aarch64\n")
    (root / "proc" / "cpuinfo").write_text("processor\t: 0\nCPU implementer\t: 0x00\n"
                                           "CPU part\t: 0x051\n")
    ident = root / "sys/devices/system/cpu/cpu0/regs/identification"
    ident.mkdir(parents=True)
    (ident / "midr_el1").write_text("0x00000000000f0510\n")
    dev = root / "sys/bus/event_source/devices" / pmu
    dev.mkdir(parents=True)
    (dev / "type").write_text("8\n")
    if events is not None:
        (dev / "events").mkdir()
        for name, code in events.items():
            (dev / "events" / name).write_text(f"event=0x{code:04x}\n")
    return {"HPM_SYSROOT": str(root)}


def listed(env, *args) -> dict[str, dict]:
    p = hpm("list", "--json", *args, env=env, check_rc=0)
    return {e["name"]: e for e in json.loads(p.stdout)}


def test_the_table_offers_only_what_the_pmu_lists(tmp_path):
    env = machine(tmp_path, QEMU_EVENTS)
    assert "armv8_pmuv3" in hpm("list", "--pmus", env=env, check_rc=0).stdout.split("*", 1)[1]
    ev = listed(env, "--pmu", "armv8_pmuv3")
    raw = {n: int(e["code"], 16) for n, e in ev.items() if not e.get("alias_of")}
    # and SW_INCR, CHAIN: Linux never lists those two, so its silence says nothing
    assert raw == {**{n.upper(): c for n, c in QEMU_EVENTS.items()}, **NEVER_IN_SYSFS}
    aliases = {n for n, e in ev.items() if e.get("alias_of")}
    assert {"PAPI_TOT_INS", "PAPI_TOT_CYC"} <= aliases
    assert not aliases & {"PAPI_BR_INS", "PAPI_L1_DCM", "PAPI_LD_INS", "PAPI_TLB_DM"}
    # another core's table is a listing of that core, not of this machine
    a72 = listed(env, "--pmu", "cortex_a72")
    assert "L1D_CACHE" in a72 and "PAPI_L1_DCM" in a72


@pytest.mark.parametrize("name, event, code", [
    ("BR_RETIRED", "BR_RETIRED", 0x21),
    ("PAPI_BR_INS", "BR_RETIRED", 0x21),           # a preset through the table's alias
    ("PAPI_L1_DCM", "L1D_CACHE_REFILL", 0x03),
    ("armv8_pmuv3::L1D_CACHE", "L1D_CACHE", 0x04),  # pmu::EVENT spelling
])
def test_an_event_the_pmu_lacks_is_refused_in_one_line(tmp_path, name, event, code):
    env = machine(tmp_path, QEMU_EVENTS)
    p = hpm("stat", "-e", name, "--", "true", env=env)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert f"'{name}' is not implemented by this CPU" in line
    assert f"{event} (0x{code:02x})" in line and "PMCEID" in line and f"raw r{code:x}" in line


def test_without_an_events_folder_the_table_decides(tmp_path):
    """No sysfs events listing (an older kernel, a container without sysfs): nothing is
    hidden on a guess."""
    ev = listed(machine(tmp_path, None), "--pmu", "armv8_pmuv3")
    assert {"BR_RETIRED", "L1D_CACHE", "PAPI_BR_INS"} <= set(ev)


def test_big_little_takes_the_union_and_implementation_defined_codes_stay(tmp_path):
    env = machine(tmp_path, {"cpu_cycles": 0x11, "inst_retired": 0x08}, pmu="armv8_cortex_a53")
    extra = tmp_path / "root/sys/bus/event_source/devices/armv8_cortex_a72/events"
    extra.mkdir(parents=True)
    (extra / "br_retired").write_text("event=0x0021\n")
    ev = listed(env, "--pmu", "armv8_pmuv3")
    assert {"CPU_CYCLES", "INST_RETIRED", "BR_RETIRED"} <= set(ev)
    assert "L1D_CACHE" not in ev


def test_the_check_is_for_arm_tables_only(tmp_path):
    """A RISC-V or x86 table's codes are not Arm common events, whatever sysfs holds."""
    env = machine(tmp_path, QEMU_EVENTS)
    env["HPM_PMU"] = "thead_c910"                 # its codes are small numbers too
    ev = listed(env, "--pmu", "thead_c910")
    assert len([e for e in ev.values() if not e.get("alias_of") and int(e["code"], 16) < 0x40]) > 30
    assert set(ev) == set(listed({}, "--pmu", "thead_c910"))


HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"


@pytest.mark.skipif(not shutil.which("qemu-system-aarch64"),
                    reason="QEMU system emulator missing (scripts/setup.sh)")
def test_lab_list_matches_the_guest_kernels_sysfs_and_presets_count(tmp_path):
    script = ("for f in /sys/bus/event_source/devices/armv8*/events/*; do echo sysfs $(cat $f); "
              "done; hpm list --json --pmu armv8_pmuv3; "
              "hpm papi-avail -a; hpm stat -M mpki,ipc --json -- hpm-loop 1000; "
              "for e in $(hpm papi-avail -a | grep -o '^PAPI_[A-Z0-9_]*'); do "
              "echo preset $e $(hpm stat -x, -e $e:u -- hpm-loop 1000 2>&1); done")
    p = run([HPMKIT, "lab", "run", "--arch", "aarch64", "--shell", "--out", tmp_path / "o", "--",
             script], timeout=600)
    assert p.returncode == 0, p.stderr
    kernel = {int(c, 16) for c in re.findall(r"^sysfs event=(0x[0-9a-f]+)$", p.stdout, re.M)}
    assert kernel == set(QEMU_EVENTS.values())  # the guest kernel's view of PMCEID
    doc = json.loads(re.search(r"^\[.*?^\]$", p.stdout, re.M | re.S).group(0))
    ours = {int(e["code"], 16) for e in doc if not e.get("alias_of") and int(e["code"], 16) < 0x40}
    assert ours == kernel | set(NEVER_IN_SYSFS.values())
    # a metric group whose every metric needs an event the PMU lacks gives way to the
    # generic group (perf's events, <not supported> here); the others keep the table's
    st = json.loads(re.search(r"^\{.*?^\}$", p.stdout, re.M | re.S).group(0))
    assert {e["name"] for e in st["events"]} == {"instructions", "INST_RETIRED", "CPU_CYCLES"}
    assert set(st["not_supported"]) == {"branch-misses", "L1-dcache-load-misses",
                                        "L1-icache-load-misses", "LLC-load-misses",
                                        "dTLB-load-misses", "iTLB-load-misses"}
    met = {m["name"]: m["value"] for m in st["metrics"]}
    assert met["ipc"] == met["cpi"] == 1 and met["branch_mpki"] is None  # -icount: IPC 1
    presets = re.findall(r"^(PAPI_\w+)\s+0x8", p.stdout, re.M)
    assert {"PAPI_TOT_INS", "PAPI_TOT_CYC"} <= set(presets)
    counts = {ev: (int(n), name) for ev, n, name in
              re.findall(r"^preset (PAPI_\w+) (\d+),[^,]*,(\w+):u,", p.stdout, re.M)}
    assert set(counts) == set(presets), (p.stdout, presets)
    # each preset opens its table event and counts; QEMU implements the stall events
    # (PMCEID says so, the kernel lists them) as counters that never move: its model
    # has no pipeline, so they read 0 and are the only ones that may
    for ev, (n, name) in counts.items():
        assert n > 0 or name.startswith("STALL"), (ev, n, name)
    assert counts["PAPI_TOT_INS"][0] > 1000 and counts["PAPI_TOT_CYC"][0] > 1000
