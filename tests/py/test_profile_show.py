"""`hpmkit profile show`: the header counts samples, not rows, and the 'by command' table is
`perf report --stdio --sort comm -n` (Samples and Overhead per command, per event) on a
recording made here."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO / "python"))
CMD = [sys.executable, "-m", "hpmkit.cli"]
LOOP = "for i in $(seq 200); do /bin/true; done"


def hpmkit(*args, cwd):
    return subprocess.run([*CMD, *map(str, args)], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=300)


def by_command(out: str) -> dict[str, list[tuple[str, int, str]]]:
    """show's tables: event -> [(command, samples, overhead as printed)]."""
    tables, ev = {}, None
    for line in out.splitlines():
        m = re.match(r"by command, (\S+) \(", line)
        if m:
            ev = m.group(1)
            tables[ev] = []
            continue
        m = re.match(r"^\s*(\d+)\s+(\d+\.\d\d)%\s+(.+)$", line)
        if ev and m:
            tables[ev].append((m.group(3), int(m.group(1)), m.group(2)))
        elif ev and not line.strip():
            ev = None
    return tables


def perf_by_comm(perf: str, data: Path) -> dict[str, list[tuple[str, int, str]]]:
    p = subprocess.run([perf, "report", "-i", data, "--stdio", "--sort", "comm", "-n"],
                       capture_output=True, text=True, check=True)
    tables, ev = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"# Samples: \S+\s+of event '([^']+)'", line)
        if m:
            ev = m.group(1)
            tables[ev] = []
            continue
        m = re.match(r"^\s*(\d+\.\d\d)%\s+(\d+)\s+(.+?)\s*$", line)
        if ev and m:
            tables[ev].append((m.group(3), int(m.group(2)), m.group(1)))
    return tables


@pytest.fixture(scope="module")
def perf():
    path = shutil.which("perf")
    if not path:
        pytest.fail("Linux perf is not installed (apt-get install linux-perf)")
    return path


@pytest.mark.parametrize("events", [["task-clock"], ["task-clock", "page-faults"]])
def test_by_command_is_perf_reports_sort_comm(perf, tmp_path, events):
    data = tmp_path / "perf.data"
    subprocess.run([perf, "record", "-q", *[a for e in events for a in ("-e", e)], "-o", data, "--",
                    "sh", "-c", LOOP], check=True, capture_output=True)
    p = hpmkit("profile", "show", data, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ours, theirs = by_command(p.stdout), perf_by_comm(perf, data)
    assert list(ours) == events and list(theirs) == events
    for ev in events:
        # perf orders equal overheads its own way: compare as sets of rows, and the order of
        # the distinct overheads
        assert sorted(ours[ev]) == sorted(theirs[ev]), ev
        assert [float(o) for _, _, o in ours[ev]] == sorted((float(o) for _, _, o in ours[ev]), reverse=True)
    assert {c for c, _, _ in ours["task-clock"]} >= {"sh", "true"}
    total = sum(n for _, n, _ in ours["task-clock"])
    assert f"by command, task-clock ({total} samples, " in p.stdout
    # --comms N keeps the N largest; 0 drops the table
    p = hpmkit("profile", "show", data, "-q", "--comms", "1", cwd=tmp_path)
    assert [r[0] for r in by_command(p.stdout)["task-clock"]] == [ours["task-clock"][0][0]]
    assert ", top 1):" in p.stdout
    p = hpmkit("profile", "show", data, "-q", "--comms", "0", cwd=tmp_path)
    assert p.returncode == 0 and "by command" not in p.stdout


def test_folded_counts_are_samples_in_the_header_and_by_command(tmp_path):
    # counts beyond what rows can hold keep one row per line (script_ingest.MAX_FOLDED_ROWS)
    (tmp_path / "big.folded").write_text("ls;main;a 40000000\nsh;main;b 30000000\nls;main;c 10000000\n")
    p = hpmkit("profile", "show", "big.folded", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "samples:  80000000 (in 3 rows)   stacks: 3   frames: 4   lost: 0\n" in p.stdout
    assert by_command(p.stdout) == {"samples": [("ls", 50000000, "62.50"), ("sh", 30000000, "37.50")]}
    # small counts are one row per sample: no "rows" aside
    (tmp_path / "small.folded").write_text("ls;main;a 3\nsh;main;b 2\n")
    p = hpmkit("profile", "show", "small.folded", cwd=tmp_path)
    assert "samples:  5   stacks: 2" in p.stdout and "rows" not in p.stdout
