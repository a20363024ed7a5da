"""hpmkit.formats: loading and validating hpm-stat / hpm-regions v1 files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import hpmkit
from hpmkit import formats
from hpmkit.errors import FormatError, HpmkitError, ReadError

REPO = Path(__file__).resolve().parents[2]

# Written by a real `hpm stat --json -r 3 -e task-clock,page-faults,context-switches -- true`.
STAT_SW = """{
  "format": "hpm-stat",
  "version": 1,
  "command": ["true"],
  "pid": 0,
  "all_cpus": false,
  "pmu": "x86_generic",
  "cpu_id": "x86 vendor=AuthenticAMD family=25 model=0x11",
  "runs": 3,
  "exit_status": 0,
  "elapsed_s": 0.000689076,
  "events": [
    {"name": "task-clock", "value": 455205.7, "stddev_pct": 6.3501, "raw": 421218, "enabled_ns": 421218, "running_ns": 421218, "scaled": false, "group": 0, "read_path": "read", "read_path_reason": "software event: the kernel keeps the count, read(2) is the only way", "counted": true},
    {"name": "page-faults", "value": 48.3, "stddev_pct": 1.3793, "raw": 48, "enabled_ns": 421218, "running_ns": 421218, "scaled": false, "group": 0, "read_path": "read", "read_path_reason": "software event: the kernel keeps the count, read(2) is the only way", "counted": true},
    {"name": "context-switches", "value": 0.7, "stddev_pct": 50.0000, "raw": 0, "enabled_ns": 421218, "running_ns": 421218, "scaled": false, "group": 0, "read_path": "read", "read_path_reason": "software event: the kernel keeps the count, read(2) is the only way", "counted": true}
  ],
  "not_supported": [],
  "metrics": []
}
"""

# Same layout as report_json writes, filled by hand with what the CI machine (no hardware
# PMU) cannot produce: metrics (one null), a multiplexed event, one never counted,
# and a default event the PMU lacks.
STAT_HW = """{
  "format": "hpm-stat",
  "version": 1,
  "command": ["./app", "--size", "big one"],
  "pid": 0,
  "all_cpus": false,
  "pmu": "armv8_cortex_a72",
  "cpu_id": "arm midr=0x41:0xd08",
  "runs": 5,
  "exit_status": 0,
  "elapsed_s": 1.250000000,
  "events": [
    {"name": "cycles", "value": 2000000000.0, "stddev_pct": 0.5000, "raw": 2000000000, "enabled_ns": 1000, "running_ns": 1000, "scaled": false, "group": 0, "read_path": "mmap", "read_path_reason": "user-space counter read", "counted": true},
    {"name": "instructions", "value": 3000000000.0, "stddev_pct": 0.2500, "raw": 3000000000, "enabled_ns": 1000, "running_ns": 1000, "scaled": false, "group": 0, "read_path": "mmap", "read_path_reason": "user-space counter read", "counted": true},
    {"name": "L1-dcache-load-misses", "value": 1234567.8, "stddev_pct": 3.1000, "raw": 600000, "enabled_ns": 1000, "running_ns": 500, "scaled": true, "group": 1, "read_path": "read", "read_path_reason": "multiplexed", "counted": true},
    {"name": "LLC-load-misses", "value": 0.0, "stddev_pct": 0.0000, "raw": 0, "enabled_ns": 1000, "running_ns": 0, "scaled": true, "group": 2, "read_path": "none", "read_path_reason": "never scheduled", "counted": false}
  ],
  "not_supported": ["stalled-cycles-frontend"],
  "metrics": [
    {"name": "ipc", "unit": "-", "value": 1.5},
    {"name": "llc_mpki", "unit": "MPKI", "value": null}
  ]
}
"""

# Written by a real `HPM_REGION_OUT=... build/tests/regions_demo 64`.
REGIONS = """{
  "format": "hpm-regions",
  "version": 1,
  "pid": 8243,
  "events": ["task-clock", "page-faults"],
  "unmatched_markers": 0,
  "dropped_regions": 0,
  "error": null,
  "regions": [
    {"name": "touch", "calls": 2, "values": {"task-clock": 182551, "page-faults": 128}},
    {"name": "idle", "calls": 1, "values": {"task-clock": 1081, "page-faults": 0}}
  ]
}
"""

# Written by a real regions_demo run with HPM_REGION_EVENTS=cycles on a machine without a PMU.
REGIONS_FAILED = """{
  "format": "hpm-regions",
  "version": 1,
  "pid": 8245,
  "events": [],
  "unmatched_markers": 0,
  "dropped_regions": 0,
  "error": "event 'cycles' cannot be counted: this machine exposes no hardware PMU to Linux",
  "regions": []
}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def edited(text: str, change) -> str:
    """The JSON text after change(obj) edited the parsed object in place."""
    obj = json.loads(text)
    change(obj)
    return json.dumps(obj, indent=2)


def test_stat_real_run_fields(tmp_path):
    r = formats.load_stat(write(tmp_path, "sw.json", STAT_SW))
    assert (r.command, r.pid, r.all_cpus, r.pmu, r.runs, r.exit_status) == (("true",), 0, False, "x86_generic", 3, 0)
    assert r.elapsed_s == pytest.approx(0.000689076)
    assert [e.name for e in r.events] == ["task-clock", "page-faults", "context-switches"]
    pf = r.events[1]
    assert (pf.value, pf.stddev_pct, pf.raw, pf.read_path, pf.counted) == (48.3, 1.3793, 48, "read", True)
    assert pf.running_pct == 100.0
    assert r.not_supported == () and r.metrics == ()


def test_stat_metrics_scaling_and_not_counted(tmp_path):
    r = formats.load_stat(write(tmp_path, "hw.json", STAT_HW))
    l1, llc = r.events[2], r.events[3]
    assert l1.scaled and l1.running_pct == 50.0 and l1.group == 1
    assert not llc.counted and llc.running_pct == 0.0
    assert r.not_supported == ("stalled-cycles-frontend",)
    assert [(m.name, m.unit, m.value) for m in r.metrics] == [("ipc", "-", 1.5), ("llc_mpki", "MPKI", None)]


def test_regions_real_run(tmp_path):
    r = formats.load_regions(write(tmp_path, "r.json", REGIONS))
    assert (r.pid, r.events, r.unmatched_markers, r.dropped_regions, r.error) == (
        8243, ("task-clock", "page-faults"), 0, 0, None)
    touch = r.regions[0]
    assert (touch.name, touch.calls, touch.values["page-faults"]) == ("touch", 2, 128)
    assert touch.per_call("page-faults") == 64.0


def test_regions_setup_error_is_kept(tmp_path):
    r = formats.load_regions(write(tmp_path, "r.json", REGIONS_FAILED))
    assert r.events == () and r.regions == () and "cannot be counted" in r.error


def test_load_dispatches_on_format(tmp_path):
    assert isinstance(formats.load(write(tmp_path, "a.json", STAT_SW)), formats.StatReport)
    assert isinstance(formats.load(write(tmp_path, "b.json", REGIONS)), formats.RegionReport)


def test_extra_fields_are_ignored(tmp_path):
    text = edited(STAT_SW, lambda o: o.update(future_field={"x": 1}))
    assert formats.load_stat(write(tmp_path, "s.json", text)).runs == 3


def test_non_utf8_command_bytes_do_not_make_the_file_unreadable(tmp_path):
    p = tmp_path / "s.json"
    p.write_bytes(STAT_SW.encode().replace(b'["true"]', b'["caf\xe9"]'))
    assert formats.load_stat(p).command == ("caf\ufffd",)


def _swap_values(o):
    o["regions"][0]["values"] = {"task-clock": 1, "cycles": 2}


BAD = {
    # name: (source text, edit or None, loader, substrings the message must contain)
    "wrong_format": (STAT_SW, lambda o: o.update(format="perf-stat"), formats.load_stat,
                     ['"format" is the string "perf-stat"', 'expected "hpm-stat"', "hpm stat --json"]),
    "missing_format": (STAT_SW, lambda o: o.pop("format"), formats.load, ['"format" is missing']),
    "version_99": (STAT_SW, lambda o: o.update(version=99), formats.load_stat,
                   ["hpm-stat version 99 is not supported", "reads version 1"]),
    "version_string": (REGIONS, lambda o: o.update(version="1"), formats.load_regions,
                       ['field "version" must be an integer']),
    "missing_event_value": (STAT_SW, lambda o: o["events"][1].pop("value"), formats.load_stat,
                            ['missing field "events[1].value"']),
    "missing_regions": (REGIONS, lambda o: o.pop("regions"), formats.load_regions,
                        ['missing field "regions"']),
    "bool_as_int": (STAT_SW, lambda o: o.update(runs=True), formats.load_stat,
                    ['field "runs" must be an integer, got true']),
    "zero_runs": (STAT_SW, lambda o: o.update(runs=0), formats.load_stat, ['"runs" must be >= 1']),
    "region_values_mismatch": (REGIONS, _swap_values, formats.load_regions,
                               ['"regions[0].values" has events']),
    "regions_file_as_stat": (REGIONS, None, formats.load_stat,
                             ["hpm-regions file, not hpm-stat", "hpmkit regions"]),
    "truncated": (STAT_SW[:400], None, formats.load_stat,
                  ["invalid JSON at line 13, column", "truncated"]),
    "syntax_error": (STAT_SW.replace('"runs": 3,', '"runs": 3'), None, formats.load_stat,
                     ["invalid JSON at line 10, column 3", "Expecting ',' delimiter"]),
    "empty": ("", None, formats.load, ["the file is empty"]),
    "not_an_object": ("[1, 2]\n", None, formats.load, ["must be a JSON object, got a list"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_naming_the_file(tmp_path, case):
    source, change, loader, expected = BAD[case]
    p = write(tmp_path, f"{case}.json", edited(source, change) if change else source)
    with pytest.raises(FormatError) as err:
        loader(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}: ") and "\n" not in msg
    assert err.value.path == str(p) and isinstance(err.value, HpmkitError)
    for s in expected:
        assert s in msg


def test_quoted_values_cannot_break_the_line(tmp_path):
    p = write(tmp_path, "s.json", edited(STAT_SW, lambda o: o.update(format="a\nb" * 30)))
    with pytest.raises(FormatError) as err:
        formats.load(p)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_missing_file_is_a_read_error(tmp_path):
    with pytest.raises(ReadError) as err:
        formats.load(tmp_path / "nope.json")
    assert "nope.json: cannot read" in str(err.value)


def test_version_matches_pyproject():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert meta["version"] == hpmkit.__version__
    assert meta["scripts"]["hpmkit"] == "hpmkit.cli:main"
