"""`hpmkit stat-report` of two machines lines up one event under its tables' two names
(issue 24): rows meet on the generic perf name or PAPI preset, each file's own name beside.
Fixtures: real lab files (tests/data/stat/README.md)."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpmkit.eventnames import common_name

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "stat"


def stat_report(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", "stat-report", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("name,table,meets", [
    ("instructions", "riscv_sbi", "instructions"),
    ("INST_RETIRED", "armv8_pmuv3", "instructions"),
    ("inst_retired:u", "neoverse_n1", "instructions:u"),   # case as hpm reads it, modifier kept
    ("PAPI_TOT_INS", "armv8_pmuv3", "instructions"),
    ("PAPI_TOT_CYC", None, "cycles"),
    ("CPU_CYCLES", "cortex_a72", "cycles"),                # through the included armv8_pmuv3
    ("cpu-cycles", "riscv_sbi", "cycles"),                 # perf's synonym
    ("BR_MIS_PRED", "armv8_pmuv3", "branch-misses"),
    ("armv8_pmuv3::INST_RETIRED:k", None, "instructions:k"),
    ("LD_SPEC", "neoverse_n1", "PAPI_LD_INS"),            # no generic name: the preset
    ("LD_RETIRED", "armv8_pmuv3", "PAPI_LD_INS"),
    ("task-clock", "armv8_pmuv3", "task-clock"),
    ("r11", "armv8_pmuv3", "r11"),                         # nothing known: as written
])
def test_meeting_names_from_the_event_tables(name, table, meets):
    assert common_name(name, table) == meets


def test_riscv64_and_aarch64_rows_line_up():
    p = stat_report(DATA / "lab-riscv64.json", DATA / "lab-aarch64.json")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    rows = {line.split("  ")[0].strip(): line.split() for line in p.stdout.splitlines()
            if line and not line.startswith((" ", "A:", "B:", "event"))}
    assert rows["cycles (B: CPU_CYCLES)"][-3:] == ["406,425", "376,036", "0.925"]
    assert rows["instructions (B: INST_RETIRED)"][-3:] == ["406,325", "376,036", "0.925"]
    assert rows["instructions:u (B: INST_RETIRED:u)"][-3:] == ["0", "210,087", "-"]
    assert rows["task-clock"][-3:] == ["853,700", "380,254", "0.445"]
    assert "absent" not in p.stdout   # every event of one file met its twin in the other


def test_csv_rows_line_up_with_the_file_names_beside():
    p = stat_report("--csv", DATA / "lab-riscv64.json", DATA / "lab-aarch64.json")
    assert p.returncode == 0, p.stderr
    rows = list(csv.reader(io.StringIO(p.stdout)))
    names = [r[1] for r in rows if r[0] == "event"]
    b = str(DATA / "lab-aarch64.json").replace(str(DATA) + "/", "")
    assert names == [f"cycles ({b}: CPU_CYCLES)", f"instructions ({b}: INST_RETIRED)",
                     f"instructions:u ({b}: INST_RETIRED:u)", "task-clock"]
    ins = next(r for r in rows if r[1].startswith("instructions ("))
    assert float(ins[2]) == 406325 and float(ins[3]) == 376036
