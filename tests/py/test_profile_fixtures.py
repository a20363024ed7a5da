"""The public fixtures in tests/data/profile/fixtures (origin and licence in its README): perf
script text of arm64 and x86_64 recordings, folded stacks, and an aarch64 perf.data."""
from collections import Counter
from pathlib import Path

import pytest

from hpmkit.errors import FormatError
from hpmkit.profile import export, ingest

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "profile"
FIX = GOLDEN / "fixtures"
GRAV = FIX / "arm64_graviton3_aperf"
X86 = FIX / "x86_64_flamegraph"
SYSCALL = ["el0t_64_sync_handler", "el0_svc", "do_el0_svc", "el0_svc_common.constprop.0",
           "invoke_syscall"]


def test_graviton_perf_script():
    p = ingest(GRAV / "perf_script_cpuclock.txt")
    assert p.samples.num_rows == 4752
    assert p.event_names() == ["cpu-clock:pppH"]
    assert set(p.samples["period"].to_pylist()) == {10101010}
    comms = Counter(p.samples["comm"].to_pylist())
    assert comms["java"] == 1188 and comms["swapper"] == 3555
    syms = p.all_stack_symbols()
    sc = [syms[s] for s in p.samples["stack_id"].to_pylist()]
    with_sys = [s for s in sc if all(x in s for x in SYSCALL)]
    assert len(with_sys) == 5
    assert sum("__cmpxchg_double" in s for s in with_sys) == 1
    first = p.stack_symbols(p.samples["stack_id"][0].as_py())
    assert first == ["arch_cpu_idle", "default_idle_call", "cpuidle_idle_call", "do_idle",
                     "cpu_startup_entry", "rest_init", "arch_post_acpi_subsys_init", "start_kernel"]
    nk = p.nkernel()
    assert nk[p.samples["stack_id"][0].as_py()] == 8
    java = [s for s, c in zip(p.samples["stack_id"].to_pylist(), p.samples["comm"].to_pylist())
            if c == "java"]
    assert all(nk[s] == 0 for s in java[:5])          # JIT frames are user frames
    assert p.samples["time"][0].as_py() == 648_243_318_000


def test_graviton_perf_data_matches_its_script_text(tmp_path):
    """perf.data.jit is the recording the text fixture was printed from: same samples, and
    with kernel symbols rebuilt from the text as a kallsyms file, the same kernel names."""
    text = ingest(GRAV / "perf_script_cpuclock.txt")
    ks = {}
    for f in text.frames.to_pylist():
        if f["kernel"] and f["symbol"] is not None:
            ks[f["addr"] - f["offset"]] = f["symbol"]
    kall = tmp_path / "kallsyms"
    kall.write_text("".join(f"{a:016x} T {n}\n" for a, n in sorted(ks.items())))
    data = ingest(GRAV / "perf.data.jit", kallsyms=str(kall))
    assert data.meta["isa"] == "aarch64" and data.meta["kernel"].startswith("6.1.172")
    assert data.samples.num_rows == text.samples.num_rows == 4752
    assert [t // 1000 for t in data.samples["time"].to_pylist()] == \
        [t // 1000 for t in text.samples["time"].to_pylist()]
    assert data.samples["tid"].to_pylist() == text.samples["tid"].to_pylist()
    assert data.samples["cpu"].to_pylist() == text.samples["cpu"].to_pylist()
    assert data.samples["comm"].to_pylist() == text.samples["comm"].to_pylist()
    dk, tk = data.nkernel(), text.nkernel()
    for sd, st in zip(data.samples["stack_id"].to_pylist(), text.samples["stack_id"].to_pylist()):
        assert dk[sd] == tk[st]
        assert data.stack_symbols(sd)[:dk[sd]] == text.stack_symbols(st)[:tk[st]]


def test_x86_two_events_in_one_file():
    p = ingest(X86 / "perf-cycles-instructions-01.txt")
    ev = Counter(p.samples["event"].to_pylist())
    assert ev == {"instructions": 333, "cycles": 111}
    assert p.meta["isa"] == "x86_64" and p.meta["kernel"] == "4.13.0-rc1"
    assert p.meta["hostname"] == "bgregg-lgud2" and p.meta["nrcpus"] == 8
    assert {e["name"]: e["period"] for e in p.meta["events"]} == \
        {"instructions": 100000000, "cycles": 100000000}
    w = p.weights("cycles")
    assert sum(w["weight"].to_pylist()) == 111 * 100000000
    assert p.stack_symbols(p.samples["stack_id"][0].as_py()) == ["main"]


def test_x86_kernel_stacks_pid_tid():
    p = ingest(X86 / "perf-iperf-stacks-pidtid-01.txt")
    assert p.samples.num_rows == 201
    r0 = p.samples.slice(0, 1).to_pylist()[0]
    assert (r0["comm"], r0["pid"], r0["tid"], r0["cpu"]) == ("iperf", 27409, 28744, 0)
    s0 = p.stack_symbols(r0["stack_id"])
    assert s0[0] == "copy_user_enhanced_fast_string" and s0[-1] == "__libc_recv"
    assert p.nkernel()[r0["stack_id"]] == 11               # vmlinux frames, then libpthread
    # FlameGraph's own collapse of the kernel part of the same file: same total per leaf
    ref = ingest(X86 / "perf-iperf-stacks-pidtid-01-collapsed-kernel.txt")
    assert ref.samples.num_rows == 200


def test_folded_fixture():
    p = ingest(GRAV / "collapsed.folded")
    assert p.meta["source"]["format"] == "folded"
    assert p.samples.num_rows == 4752
    c = Counter(p.samples["comm"].to_pylist())
    assert c["java"] == 1188 and c["swapper"] == 2366 + 1 + 1187 + 1
    top = Counter(";".join(reversed(p.stack_symbols(s))) for s in p.samples["stack_id"].to_pylist())
    assert top["secondary_start_kernel;cpu_startup_entry;do_idle;cpuidle_idle_call;"
               "default_idle_call;arch_cpu_idle"] == 2366


def test_golden_folded_export():
    """Folded export of the Apache-2.0 graviton text, against the golden file we keep."""
    p = ingest(GRAV / "perf_script_cpuclock.txt")
    out = export.folded(p)
    assert out == (GOLDEN / "graviton-cpuclock.folded").read_text()
    # and it is exactly what FlameGraph's stackcollapse-perf made of the same recording
    assert sorted(out.splitlines()) == sorted((GRAV / "collapsed.folded").read_text().splitlines())


def test_exports_are_consistent(tmp_path):
    import json
    p = ingest(GRAV / "perf_script_cpuclock.txt")
    doc = json.loads(export.speedscope(p))
    prof = doc["profiles"][0]
    assert prof["type"] == "sampled" and len(prof["samples"]) == 4752
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert names[prof["samples"][0][-1]] == "arch_cpu_idle"     # root first, leaf last
    svg = export.flamegraph_svg(p)
    assert svg.startswith("<?xml") and svg.rstrip().endswith("</svg>")
    assert "arch_cpu_idle" in svg and "(4752 samples, 100.00%)" in svg


@pytest.mark.parametrize("name", ["perf_report_children.txt", "system_info.txt"])
def test_unparsable_dialect_names_line(name):
    with pytest.raises(FormatError) as e:
        ingest(GRAV / name)
    assert f"{name}: line " in str(e.value)
