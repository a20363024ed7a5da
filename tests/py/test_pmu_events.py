"""Issue 16: event tables generated from Linux perf's pmu-events lists (tools/pmuevents).

The kernel's lists (Linux 6.12.95, reduced to names, codes and formulas in
tests/data/pmu-events/, see its README) are read here with this file's own small reader,
independently of the converter, and compared with what `hpm list --json` reports for the
table each core is detected as (tests/data/spotchecks/detect.tsv; the C unit test
detect_every_mapfile_core checks the detection itself):
  - every event of every core's list, with its code: an event or an alias of the table;
  - no event of Arm's common list that the core's list leaves out (the table 'lacks' it);
  - every PAPI preset of the table stands for an event the core's list has;
  - the hand-written tables (U74, C910, Cortex-A72, Neoverse N1) agree on every shared
    event and take the kernel's spellings (and the RISC-V PAPI fork's) as aliases;
  - the committed tables are exactly what the converter makes of the lists.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT, hpm, hpm_json

LISTS = ROOT / "tests" / "data" / "pmu-events" / "linux-6.12.95"
ARCH = LISTS / "arch"
CONVERTER = ROOT / "tools" / "pmuevents"
ISA_DIRS = ("arm64", "riscv")
# CHAIN links two counters into one; Linux's lists never name it, hpm keeps it visible
NEVER_LISTED = {"CHAIN"}


# ---- the kernel's lists, read here --------------------------------------------------------
def mapfile(isa_dir: str) -> list[tuple[str, str]]:
    rows = []
    for line in (ARCH / isa_dir / "mapfile.csv").read_text().splitlines():
        cols = line.split(",")
        if len(cols) == 4 and cols[3] == "core":
            rows.append((cols[0], cols[2]))
    return rows


@lru_cache(maxsize=None)
def std_events(isa_dir: str) -> dict[str, dict]:
    out = {}
    for f in sorted((ARCH / isa_dir).glob("*.json")):
        for e in json.loads(f.read_text()):
            if "EventName" in e:
                out[e["EventName"]] = e
    return out


@lru_cache(maxsize=None)
def core_events(isa_dir: str, core_dir: str) -> tuple[dict[str, int], int]:
    """{EventName: code} of a core's list (ArchStdEvent resolved), and how many entries
    belong to other PMUs (a Unit that is not the CPU)."""
    events, uncore = {}, 0
    for f in sorted((ARCH / isa_dir / core_dir).glob("*.json")):
        for raw in json.loads(f.read_text()):
            if "MetricExpr" in raw or "MetricName" in raw:
                continue
            e = dict(raw)
            if "ArchStdEvent" in raw:
                if raw["ArchStdEvent"] not in std_events(isa_dir):
                    continue          # a standard metric, not an event
                e = {**std_events(isa_dir)[raw["ArchStdEvent"]], **raw}
            if e.get("Unit", "cpu").lower() != "cpu":
                uncore += 1
                continue
            events[e["EventName"]] = int(e.get("EventCode", e.get("ConfigCode")), 16)
    return events, uncore


@lru_cache(maxsize=None)
def detected_table() -> dict[str, str]:
    """mapfile row -> the table hpm detects for it (tests/data/spotchecks/detect.tsv)."""
    out = {}
    for line in (ROOT / "tests" / "data" / "spotchecks" / "detect.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        isa, values, table, row = line.split("\t")
        assert out.setdefault(row, table) == table, row
    return out


def cores():
    for isa_dir in ISA_DIRS:
        for ident, core_dir in mapfile(isa_dir):
            yield isa_dir, ident, core_dir


CORES = list(cores())


@lru_cache(maxsize=None)
def listed(table: str) -> dict[str, dict]:
    p, events = hpm_json("list", "--pmu", table, "--json", check_rc=0)
    out = {}
    for e in events:
        assert e["name"].lower() not in out, (table, e["name"])   # no name twice
        out[e["name"].lower()] = e
    return out


# ---- the tests ----------------------------------------------------------------------------
def test_every_mapfile_row_has_a_detection_case():
    rows = {ident for _, ident, _ in CORES}
    cases = detected_table()
    assert rows == set(cases), rows ^ set(cases)
    assert len(rows) == 35       # 31 arm64 cores, 4 riscv
    # each riscv value set matches its row's regular expression (POSIX class spelled out)
    for line in (ROOT / "tests" / "data" / "spotchecks" / "detect.tsv").read_text().splitlines():
        if line.startswith("riscv64"):
            _, values, _, row = line.split("\t")
            rx = row.replace("[[:xdigit:]]", "[0-9a-fA-F]")
            ident = "-".join(values.split())
            assert re.fullmatch(rx, ident), (ident, row)


@pytest.mark.parametrize("isa_dir,ident,core_dir", CORES, ids=[f"{c}-{i}" for _, i, c in CORES])
def test_every_kernel_event_has_its_code(isa_dir, ident, core_dir):
    table = detected_table()[ident]
    have = listed(table)
    events, _ = core_events(isa_dir, core_dir)
    assert events, core_dir
    for name, code in events.items():
        e = have.get(name.lower())
        assert e is not None, f"{table}: {name} ({code:#x}) missing"
        assert int(e["code"], 16) == code and e["type"] == 4, (table, name, e)


@pytest.mark.parametrize("isa_dir,ident,core_dir", [c for c in CORES if c[0] == "arm64"],
                         ids=[f"{c}-{i}" for d, i, c in CORES if d == "arm64"])
def test_common_events_the_core_lacks_are_not_offered(isa_dir, ident, core_dir):
    table = detected_table()[ident]
    events, _ = core_events(isa_dir, core_dir)
    common = {n for n, e in std_events("arm64").items() if int(e["EventCode"], 16) < 0x40}
    offered = {n for n in common if n.lower() in listed(table)}
    if not common & set(events):
        # Linux's list names none of them (A53, ThunderX2, Hip08): all stay, as for any core
        assert offered == common, table
        return
    # by name: eMAG counts other things at 0x34/0x35 (its own L2D/L2I_TLB_ACCESS)
    assert offered == common & set(events), table
    assert "chain" in listed(table)      # not in Linux's lists at all; hpm keeps it


@pytest.mark.parametrize("isa_dir,ident,core_dir", CORES, ids=[f"{c}-{i}" for _, i, c in CORES])
def test_presets_stand_for_events_the_core_has(isa_dir, ident, core_dir):
    table = detected_table()[ident]
    events, _ = core_events(isa_dir, core_dir)
    codes = set(events.values())
    if isa_dir == "arm64" and not codes & set(range(0x40)):
        codes |= set(range(0x40))        # a list silent on the common events: all allowed
    # and the table's own events (the U74's hand-written combined masks): never an
    # included table's event the core lacks
    codes |= {int(e["code"], 16) for e in listed(table).values()
              if e["pmu"] == table and not e["alias_of"]}
    presets = [e for e in listed(table).values() if e["name"].startswith("PAPI_")]
    assert presets, table
    for e in presets:
        if e["type"] != 4:               # a generic perf event (cycles, instructions)
            continue
        assert int(e["code"], 16) in codes, (table, e["name"], e["alias_of"], e["code"])


def test_named_presets_of_the_issue_are_unavailable():
    # "Cortex-A72 PAPI_RES_STL -> STALL_BACKEND, PAPI_STL_ICY -> STALL; Neoverse N1 PAPI_STL_ICY"
    for table, preset, target in [("cortex_a72", "PAPI_RES_STL", "STALL_BACKEND"),
                                  ("cortex_a72", "PAPI_STL_ICY", "STALL"),
                                  ("neoverse_n1", "PAPI_STL_ICY", "STALL")]:
        assert preset.lower() not in listed(table)
        p = hpm("stat", "-e", preset, "--", "true", env={"HPM_PMU": table})
        assert p.returncode != 0 and p.stdout == ""
        assert p.stderr.strip().splitlines() == [
            f"hpm stat: '{preset}' is not available on {table}: it stands for {target}, which "
            f"this core does not implement (table {table} lacks it; hpm list --pmu {table})"]


@pytest.mark.parametrize("table,core_dir,differ,same", [
    ("sifive_u74", "sifive/u74", 25, 10),          # the issue: 25 of 35 names differ
    ("thead_c910", "thead/c900-legacy", 30, 12),   # and 30 of 42
])
def test_hand_written_riscv_tables_take_the_kernels_names(table, core_dir, differ, same):
    events, _ = core_events("riscv", core_dir)
    core = {n: c for n, c in events.items() if not n.startswith("FW_")}
    have = listed(table)
    aliases = [n for n in core if have[n.lower()]["alias_of"]]
    assert (len(aliases), len(core) - len(aliases)) == (differ, same)
    for n in aliases:     # an alias of the hand-written event with the same code
        target = have[n.lower()]["alias_of"].lower()
        assert have[target]["alias_of"] is None and int(have[target]["code"], 16) == core[n]


def test_papi_fork_names_are_accepted():
    rows = [l.split("\t") for l in (CONVERTER / "papi_fork_names.tsv").read_text().splitlines()
            if l and not l.startswith("#")]
    assert len(rows) == 35 + 42
    for table, name, code in rows:
        e = listed(table)[name.lower()]
        assert int(e["code"], 16) == int(code, 16), (table, name)


def test_uncore_events_are_left_out_and_said():
    events, uncore = core_events("arm64", "hisilicon/hip08")
    assert uncore == 47
    text = (ROOT / "data" / "events" / "hisilicon_hip08.evt").read_text()
    assert "# Left out: 47 uncore events of this folder" in text


def test_neoverse_topdown_metrics_come_from_the_kernel():
    p, mets = hpm_json("list", "--metrics", "--pmu", "neoverse_v1", "--json", check_rc=0)
    by = {m["name"]: m for m in mets}
    # V1 writes its slot count (8) into two formulas; the other two are sbsa.json's, #slots
    assert by["frontend_bound"]["group"] == "topdownl1" and by["frontend_bound"]["unit"] == "%"
    assert by["frontend_bound"]["expr"] == (
        "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - ((BR_MIS_PRED * 4) / CPU_CYCLES)))")
    assert by["backend_bound"]["expr"] == "100 * (STALL_SLOT_BACKEND / (#slots * CPU_CYCLES))"
    assert by["ipc"]["expr"] == "(INST_RETIRED / CPU_CYCLES)"
    p, mets = hpm_json("list", "--metrics", "--pmu", "neoverse_n2_v2", "--json", check_rc=0)
    by = {m["name"]: m for m in mets}
    assert by["backend_bound"]["expr"] == (
        "(100 * ((STALL_SLOT_BACKEND / (CPU_CYCLES * #slots)) - ((BR_MIS_PRED * 3) / CPU_CYCLES)))")
    # N2/V2's other three pick STALL_SLOT by CPU revision (strcmp_cpuid_str): left out
    assert "frontend_bound" not in by
    text = (ROOT / "data" / "metrics" / "neoverse_n2_v2.mg").read_text()
    assert "#   frontend_bound (uses if/else)" in text


def test_committed_tables_are_what_the_converter_makes():
    p = subprocess.run([sys.executable, str(CONVERTER), str(LISTS), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    generated = [f for f in (ROOT / "data").rglob("*") if f.is_file() and
                 f.read_text().startswith("# Generated by tools/pmuevents from Linux 6.12.95 ")]
    assert len(generated) == 25 + 5          # tables and metric files
    for f in generated:                      # the source version in each file
        assert "Linux 6.12.95 tools/perf/pmu-events/arch/" in f.read_text().split("\n", 1)[0]


def test_the_reduced_lists_equal_the_kernels(tmp_path):
    """Only where a kernel tree is at hand (.cache/pmu-events, made by the converter from
    /usr/src/linux-source-6.12.tar.xz): the copy in tests/data keeps every name and code."""
    src = ROOT / ".cache" / "pmu-events" / "linux-source-6.12"
    if not (src / "tools/perf/pmu-events/arch").is_dir():
        pytest.skip("no Linux 6.12 tree in .cache/pmu-events (python3 tools/pmuevents "
                    "/usr/src/linux-source-6.12.tar.xz extracts one)")
    sys.path.insert(0, str(CONVERTER))
    try:
        from tree import Tree
        Tree(src).write_facts(tmp_path / "facts")
    finally:
        sys.path.remove(str(CONVERTER))
    for f in (tmp_path / "facts").rglob("*"):
        if f.is_file():
            assert f.read_bytes() == (LISTS / f.relative_to(tmp_path / "facts")).read_bytes(), f


# ---- the converter's errors ---------------------------------------------------------------
def converter(*args):
    return subprocess.run([sys.executable, str(CONVERTER), *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_converter_bad_input_is_one_line_and_writes_nothing(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    before = {f: f.read_bytes() for f in data.rglob("*") if f.is_file()}
    p = converter(tmp_path / "nosuch", "--data", data)
    assert p.returncode == 2 and p.stderr == f"pmuevents: {tmp_path / 'nosuch'}: no such file or folder\n"
    # a hand-written table that disagrees with the kernel on a shared name stops the run
    u74 = data / "events" / "sifive_u74.evt"
    u74.write_text(re.sub(r"(?m)^(event UTLB_MISS +)0x2002", r"\g<1>0x4002", u74.read_text()))
    before[u74] = u74.read_bytes()
    p = converter(LISTS, "--data", data)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == ("pmuevents: sifive_u74.evt vs tools/perf/pmu-events/arch/riscv/sifive/u74: "
                        "UTLB_MISS is 0x4002 here but 0x2002 in Linux's list\n")
    # a broken list names its file
    lists = tmp_path / "lists"
    shutil.copytree(LISTS, lists)
    (lists / "arch/arm64/arm/neoverse-v1/spe.json").write_text("[{\"EventName\": \"X\"")
    p = converter(lists, "--data", data)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith("pmuevents: ") and "neoverse-v1/spe.json: not a pmu-events JSON list" in p.stderr
    after = {f: f.read_bytes() for f in data.rglob("*") if f.is_file()}
    assert after == before


def test_converter_check_names_stale_files(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    (data / "events" / "cortex_a76.evt").unlink()
    (data / "metrics" / "old.mg").write_text("# Generated by tools/pmuevents from Linux 6.1\n")
    p = converter(LISTS, "--data", data, "--check")
    assert p.returncode == 1
    assert p.stderr.splitlines() == [
        "pmuevents: events/cortex_a76.evt is not what Linux 6.12.95 gives (missing); run without --check",
        "pmuevents: metrics/old.mg is not what Linux 6.12.95 gives (stale); run without --check"]
    p = converter(LISTS, "--data", data, "-q")
    assert p.returncode == 0 and not (data / "metrics" / "old.mg").exists()
    assert (data / "events" / "cortex_a76.evt").read_text() == \
        (ROOT / "data" / "events" / "cortex_a76.evt").read_text()


# ---- hpm list: search --------------------------------------------------------------------
def test_list_pattern_and_grep_search_the_cpus_table():
    env = {"HPM_PMU": "neoverse_v1"}
    p = hpm("list", "cache", env=env, check_rc=0)
    assert "PMU table: neoverse_v1 (HPM_PMU; detected: " in p.stdout
    names = [l.split()[0] for l in p.stdout.splitlines() if l.startswith("    ")]
    assert {"L1-dcache-load-misses", "L1D_CACHE_RD", "L2D_CACHE", "LL_CACHE_MISS_RD"} <= set(names)
    assert all("cache" in n.lower() for n in names)
    # --grep: names and descriptions; the V1 has STALL, the A72 lacks it
    p = hpm("list", "--grep", "STALL", "--json", env=env, check_rc=0)
    got = {e["name"] for e in json.loads(p.stdout)}
    assert {"STALL", "STALL_BACKEND", "STALL_BACKEND_MEM", "PAPI_RES_STL", "stalled-cycles-frontend"} <= got
    p = hpm("list", "--grep", "backend could not", "--json", env=env, check_rc=0)
    assert {e["name"] for e in json.loads(p.stdout)} == {"STALL_BACKEND", "PAPI_RES_STL"}
    p = hpm("list", "--grep", "stall", "--json", env={"HPM_PMU": "cortex_a72"}, check_rc=0)
    got = {e["name"] for e in json.loads(p.stdout)}
    assert "STALL" not in got and "PAPI_RES_STL" not in got
    p = hpm("list", "--pmu", "thead_c910", "--grep", "tied to zero", check_rc=0)
    names = {l.split()[0] for l in p.stdout.splitlines() if l.startswith("    ")}
    assert names - {"PAPI_L2_TCR", "PAPI_L2_TCW", "PAPI_L2_LDM", "PAPI_L2_STM"} == {
        f"{p}_CACHE_{op}" for p in ("L2", "LL")    # the events and Linux's names for them
        for op in ("READ_ACCESS", "READ_MISS", "WRITE_ACCESS", "WRITE_MISS")}
    p = hpm("list", "--grep", "zzzznothing", env=env, check_rc=0)
    assert p.stdout.rstrip().endswith("no event matches 'zzzznothing'")


def test_c910_l2_metrics_say_they_may_read_zero():
    p = hpm("list", "--metrics", "--pmu", "thead_c910", check_rc=0)
    assert "l2_cache (thead_c910) — L2 misses (may read 0 or n/a: openc910-derived parts tie " \
           "the L2 event sources 0x10-0x13 to zero)" in p.stdout
    text = (ROOT / "data" / "events" / "thead_c910.evt").read_text()
    assert re.search(r"^counters 16$", text, re.M)


def test_stat_report_names_read_kernel_spellings():
    sys.path.insert(0, str(ROOT / "python"))
    from hpmkit.eventnames import common_name
    assert common_name("INTEGER_LOAD_RETIRED", "sifive_u74") == "INT_LOAD_RETIRED"
    assert common_name("INST_TLB_MISS:u", "sifive_u74") == "iTLB-load-misses:u"
    assert common_name("INST_RETIRED", "neoverse_v1") == "instructions"
    assert common_name("LD_SPEC", "neoverse_v1") == "PAPI_LD_INS"
    assert common_name("STALL_BACKEND", "neoverse_n1") == "PAPI_RES_STL"
    assert common_name("STALL_BACKEND", "cortex_a72") == "STALL_BACKEND"   # lacked: no preset
