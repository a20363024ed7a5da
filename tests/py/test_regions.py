"""Region markers: exact counts per region, JSON at exit, compiled out when disabled."""
import json

from conftest import BUILD, require, run

DEMO = BUILD / "tests" / "regions_demo"


def test_region_counts_are_exact(tmp_path):
    out = tmp_path / "r.json"
    run([require(DEMO), 64], check_rc=0, env={"HPM_REGION_OUT": str(out)})
    d = json.loads(out.read_text())
    assert d["format"] == "hpm-regions" and d["version"] == 1 and d["error"] is None
    assert d["events"] == ["task-clock", "page-faults"]
    r = {x["name"]: x for x in d["regions"]}
    assert r["touch"]["calls"] == 2
    assert r["touch"]["values"]["page-faults"] == 128  # 64 pages, twice
    assert r["idle"]["calls"] == 1 and r["idle"]["values"]["page-faults"] == 0
    assert d["unmatched_markers"] == 0
    assert not list(tmp_path.glob("*.tmp.*"))


def test_disabled_markers_write_nothing(tmp_path):
    out = tmp_path / "r.json"
    run([require(BUILD / "tests" / "regions_demo-off"), 8], check_rc=0,
        env={"HPM_REGION_OUT": str(out)})
    assert not out.exists()


def test_bad_region_events_are_reported_not_hidden(tmp_path):
    out = tmp_path / "r.json"
    p = run([require(DEMO), 8], check_rc=0,
            env={"HPM_REGION_OUT": str(out), "HPM_REGION_EVENTS": "task-clock,bogus"})
    assert "hpm regions: disabled: unknown event 'bogus'" in p.stderr
    d = json.loads(out.read_text())
    assert "bogus" in d["error"] and d["regions"] == []
