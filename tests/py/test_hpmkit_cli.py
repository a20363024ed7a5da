"""The hpmkit command line, run as a subprocess the way users run it."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_hpmkit_formats import REGIONS, REGIONS_FAILED, STAT_HW, STAT_SW, edited

REPO = Path(__file__).resolve().parents[2]
HPM = REPO / "build" / "bin" / "hpm"
REGIONS_DEMO = REPO / "build" / "tests" / "regions_demo"


def hpmkit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # the source tree first, so the tests check this checkout even without an install
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def built(path: Path) -> Path:
    """A binary from `make`; its absence is a failure, never a skip."""
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{path} is missing: run 'make' in {REPO} before these tests", pytrace=False)
    return path


@pytest.fixture
def files(tmp_path):
    # a second machine running the same workload: slower, more faults
    board = edited(STAT_SW, lambda o: (
        o.update(pmu="armv8_cortex_a53", cpu_id="arm midr=0x41:0xd03", elapsed_s=0.001378152),
        o["events"][0].update(value=910411.4), o["events"][1].update(value=96.6),
        o["events"][2].update(value=0.0, stddev_pct=0.0)))
    for name, text in {"sw.json": STAT_SW, "board.json": board, "hw.json": STAT_HW,
                       "r.json": REGIONS, "rfail.json": REGIONS_FAILED}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_stat_report_single_golden(files):
    r = hpmkit("stat-report", "hw.json", cwd=files)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == """\
hw.json: ./app --size 'big one'  (5 runs, exit status 0, 1.250000 s per run)
pmu armv8_cortex_a72, cpu arm midr=0x41:0xd08

event                            value  ±stddev  scaled  read path
cycles                   2,000,000,000   ±0.50%       -  mmap
instructions             3,000,000,000   ±0.25%       -  mmap
L1-dcache-load-misses      1,234,567.8   ±3.10%  50.00%  read
LLC-load-misses            not counted        -   0.00%  none
stalled-cycles-frontend  not supported

metric    value  unit
ipc         1.5  -
llc_mpki    n/a  MPKI
"""


def test_stat_report_compare_golden(files):
    r = hpmkit("stat-report", "sw.json", "board.json", cwd=files)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == """\
A: sw.json: true  (3 runs, exit status 0, 0.000689 s per run)
   pmu x86_generic, cpu x86 vendor=AuthenticAMD family=25 model=0x11
B: board.json: true  (3 runs, exit status 0, 0.001378 s per run)
   pmu armv8_cortex_a53, cpu arm midr=0x41:0xd03

event                            A                 B    B/A
elapsed_s                 0.000689          0.001378  2.000
task-clock        455,205.7 ±6.35%  910,411.4 ±6.35%  2.000
page-faults            48.3 ±1.38%       96.6 ±1.38%  2.000
context-switches       0.7 ±50.00%          0 ±0.00%  0.000
"""


def test_stat_report_compare_csv_has_exact_values_and_ratios(files):
    r = hpmkit("stat-report", "--csv", "sw.json", "board.json", "hw.json", cwd=files)
    assert r.returncode == 0
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["kind", "name", "sw.json", "board.json", "hw.json",
                       "board.json/sw.json", "hw.json/sw.json"]
    by_name = {row[1]: row for row in rows[1:]}
    assert by_name["page-faults"] == ["event", "page-faults", "48.3", "96.6", "", "2.0", ""]
    assert by_name["cycles"][2:] == ["", "", "2000000000.0", "", ""]
    assert by_name["stalled-cycles-frontend"][0] == "not_supported"
    assert by_name["llc_mpki"][0] == "metric"


def test_stat_report_single_csv(files):
    r = hpmkit("stat-report", "--csv", "hw.json", cwd=files)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    l1 = next(x for x in rows if x["name"] == "L1-dcache-load-misses")
    assert (l1["value"], l1["running_pct"], l1["scaled"], l1["read_path"]) == ("1234567.8", "50.0", "true", "read")
    assert [x["kind"] for x in rows].count("metric") == 2


def test_regions_golden_sorted(files):
    r = hpmkit("regions", "r.json", "--sort", "page-faults", cwd=files)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == """\
r.json: regions of pid 8243

region  calls  task-clock  task-clock/call  page-faults  page-faults/call
touch       2     182,551         91,275.5          128                64
idle        1       1,081            1,081            0                 0
"""


def test_regions_sort_reorders(files):
    (files / "r2.json").write_text(edited(REGIONS, lambda o: o["regions"].reverse()))
    plain = hpmkit("regions", "r2.json", cwd=files).stdout.splitlines()
    assert [line.split()[0] for line in plain[3:]] == ["idle", "touch"]
    ordered = hpmkit("regions", "r2.json", "--sort", "task-clock", cwd=files).stdout.splitlines()
    assert [line.split()[0] for line in ordered[3:]] == ["touch", "idle"]


def test_regions_problems_are_always_printed(files):
    (files / "bad.json").write_text(edited(REGIONS, lambda o: o.update(unmatched_markers=3, dropped_regions=2)))
    out = hpmkit("regions", "bad.json", cwd=files).stdout
    assert "unmatched markers: 3 " in out and "dropped regions: 2 " in out
    failed = hpmkit("regions", "rfail.json", cwd=files)
    assert failed.returncode == 0
    assert "(no regions recorded)" in failed.stdout
    assert "error: event 'cycles' cannot be counted" in failed.stdout


def one_line_error(r: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert r.returncode == code, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hpmkit: "), r.stderr
    for n in needles:
        assert n in lines[0]


@pytest.mark.parametrize("change, needle", [
    (lambda o: o.update(format="hpm-stats"), '"format" is the string "hpm-stats"'),
    (lambda o: o.update(version=99), "version 99 is not supported"),
    (lambda o: o["events"][0].pop("raw"), 'missing field "events[0].raw"'),
], ids=["wrong_format", "version_99", "missing_field"])
def test_bad_stat_file_exits_1(files, change, needle):
    (files / "bad.json").write_text(edited(STAT_SW, change))
    # the good file first: nothing may be printed before the bad one is found
    one_line_error(hpmkit("stat-report", "sw.json", "bad.json", cwd=files), 1, "bad.json: ", needle)


def test_truncated_file_exits_1_with_position(files):
    (files / "cut.json").write_text(STAT_SW[: len(STAT_SW) // 2])
    one_line_error(hpmkit("stat-report", "cut.json", cwd=files), 1, "cut.json: invalid JSON at line ", "truncated")
    (files / "rcut.json").write_text(REGIONS[:-10])
    one_line_error(hpmkit("regions", "rcut.json", cwd=files), 1, "rcut.json: invalid JSON at line 11, column 80")


def test_a_file_that_is_not_json_is_named_so_not_truncated(files):
    (files / "notes.txt").write_text("hello world\n")
    (files / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x00" * 20)
    for cmd in ("stat-report", "regions"):
        r = hpmkit(cmd, "notes.txt", cwd=files)
        one_line_error(r, 1, "notes.txt: not JSON (text)", "hpm stat --json")
        assert "truncated" not in r.stderr
        one_line_error(hpmkit(cmd, "blob.bin", cwd=files), 1, "blob.bin: not JSON (a binary file)")


def test_wrong_kind_of_file_and_missing_file_exit_1(files):
    one_line_error(hpmkit("regions", "sw.json", cwd=files), 1, "sw.json: ", "hpmkit stat-report")
    one_line_error(hpmkit("stat-report", "nope.json", cwd=files), 1, "nope.json: cannot read")


@pytest.mark.parametrize("args, needle", [
    ([], "required: COMMAND"),
    (["stat-report"], "stat-report: the following arguments are required"),
    (["regions", "r.json", "--bogus"], "unrecognized arguments: --bogus"),
    (["regions", "r.json", "--sort", "cycles"], "--sort cycles: r.json has no such event (it has: task-clock, page-faults)"),
    (["frobnicate"], "invalid choice"),
], ids=["no_command", "no_file", "bad_option", "sort_unknown_event", "unknown_command"])
def test_usage_errors_exit_2(files, args, needle):
    one_line_error(hpmkit(*args, cwd=files), 2, needle)


def test_version_and_help(files):
    from hpmkit import __version__

    assert hpmkit("--version", cwd=files).stdout == f"hpmkit {__version__}\n"
    for sub in ["stat-report", "regions"]:
        r = hpmkit(sub, "--help", cwd=files)
        assert r.returncode == 0 and "examples:" in r.stdout and f"hpmkit {sub}" in r.stdout


# A workload with a known page-fault count: it writes one byte to each of N fresh pages of
# a private anonymous mapping, so each write takes exactly one minor fault.
TOUCH_PAGES = """\
import mmap, sys
pages = int(sys.argv[1])
m = mmap.mmap(-1, max(pages, 1) * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
if hasattr(mmap, "MADV_NOHUGEPAGE"):
    m.madvise(mmap.MADV_NOHUGEPAGE)  # one fault per base page, not one per huge page
for off in range(0, pages * mmap.PAGESIZE, mmap.PAGESIZE):
    m[off] = 1
"""


def hpm_stat(tmp_path: Path, pages: int) -> Path:
    script = tmp_path / "touch_pages.py"
    script.write_text(TOUCH_PAGES)
    cmd = [str(built(HPM)), "stat", "--json", "-e", "page-faults,task-clock", "--",
           sys.executable, "-I", "-S", str(script), str(pages)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(cmd)} failed: {r.stderr}"
    out = tmp_path / f"touch{pages}.json"
    out.write_text(r.stdout)  # the workload prints nothing, so stdout is the JSON alone
    return out


def test_end_to_end_real_hpm_stat(tmp_path):
    pages = 8192
    base, touched = hpm_stat(tmp_path, 0), hpm_stat(tmp_path, pages)
    faults = [json.loads(p.read_text())["events"][0]["value"] for p in (base, touched)]
    # the interpreter's own start-up faults cancel out; they vary by a few dozen per run
    assert abs(faults[1] - faults[0] - pages) <= max(128, pages * 0.03), faults

    single = hpmkit("stat-report", touched.name, cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    pf_line = next(x for x in single.stdout.splitlines() if x.startswith("page-faults"))
    assert pf_line.split()[1:] == [f"{int(faults[1]):,}", "-", "-", "read"]

    cmp = hpmkit("stat-report", "--csv", base.name, touched.name, cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr
    row = next(r for r in csv.reader(io.StringIO(cmp.stdout)) if r[1] == "page-faults")
    assert [float(x) for x in row[2:]] == pytest.approx([faults[0], faults[1], faults[1] / faults[0]])


def test_end_to_end_real_region_markers(tmp_path):
    out = tmp_path / "regions.json"
    env = dict(os.environ, HPM_REGION_OUT=str(out), HPM_REGION_EVENTS="task-clock,page-faults")
    r = subprocess.run([str(built(REGIONS_DEMO)), "64"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and out.exists(), r.stderr
    rep = hpmkit("regions", out.name, "--sort", "page-faults", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    touch = rep.stdout.splitlines()[3].split()
    # regions_demo touches 64 fresh pages in each of 2 calls of "touch"
    assert touch[0] == "touch" and touch[1] == "2"
    assert 128 <= int(touch[4].replace(",", "")) <= 136, rep.stdout
