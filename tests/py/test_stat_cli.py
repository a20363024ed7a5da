"""hpm stat end to end on the host's software events, checked against perf stat."""
import json
import os
import shutil

import pytest

from conftest import BUILD, hpm, hpm_json, probe_ok, require, run

TOUCH = BUILD / "bin" / "touch-pages"


def perf_count(event, *cmd):
    # perf is part of the test setup (linux-perf); no perf means a broken setup, not a skip
    perf = shutil.which("perf")
    assert perf, "perf is not installed: scripts/setup.sh installs linux-perf"
    p = run(["setarch", "-R", perf, "stat", "-x,", "-e", event, "--", *cmd], check_rc=0)
    line = [l for l in p.stderr.splitlines() if event in l][0]
    return int(line.split(",")[0])


def hpm_count(event, *cmd):
    p = run(["setarch", "-R", require(BUILD / "bin" / "hpm"), "stat", "-x,", "-e", event, "--",
             *cmd], check_rc=0)
    line = [l for l in p.stderr.splitlines() if event in l][0]
    fields = line.split(",")
    assert len(fields) == 8, line  # perf's 7 fields + the read path
    assert fields[7] == "read"
    return int(fields[0])


def test_page_faults_equal_perf_stat():
    require(TOUCH)
    for n in (0, 1000, 5000):
        ours = hpm_count("page-faults", TOUCH, n)
        theirs = perf_count("page-faults", TOUCH, n)
        assert ours == theirs, (n, ours, theirs)
    # and the difference is exactly the pages touched
    assert hpm_count("page-faults", TOUCH, 3000) - hpm_count("page-faults", TOUCH, 0) == 3000


def test_repeat_reports_mean_and_zero_variance_for_a_deterministic_event():
    p = run(["setarch", "-R", require(BUILD / "bin" / "hpm"), "stat", "--json", "-r", "5",
             "-e", "page-faults,task-clock", "--", TOUCH, 700], check_rc=0)
    d = json.loads(p.stdout)
    assert d["format"] == "hpm-stat" and d["version"] == 1 and d["runs"] == 5
    pf = d["events"][0]
    assert pf["name"] == "page-faults" and pf["stddev_pct"] == 0.0
    assert pf["value"] == pf["raw"] >= 700
    assert d["events"][1]["name"] == "task-clock" and d["events"][1]["value"] > 0
    assert pf["read_path"] == "read" and "software event" in pf["read_path_reason"]
    assert pf["scaled"] is False and pf["running_ns"] == pf["enabled_ns"]


def test_text_report_and_exit_status_of_the_command():
    p = hpm("stat", "-e", "page-faults", "--", "sh", "-c", "exit 3")
    assert p.returncode == 3
    assert "Performance counter stats for 'sh -c exit 3'" in p.stderr
    assert "page-faults" in p.stderr and "[read]" in p.stderr
    assert "seconds time elapsed" in p.stderr


def test_metric_group_values_follow_from_the_counts():
    p, d = hpm_json("stat", "--json", "-M", "software", "--", TOUCH, 2000, check_rc=0)
    ev = {e["name"]: e["value"] for e in d["events"]}
    m = {x["name"]: x["value"] for x in d["metrics"]}
    assert set(m) == {"page_faults_per_sec", "context_switches_per_sec", "cpu_migrations_per_sec"}
    assert ev["page-faults"] >= 2000
    assert m["page_faults_per_sec"] == pytest.approx(1e9 * ev["page-faults"] / ev["task-clock"],
                                                     rel=1e-6)


def test_group_max_splits_groups():
    p, d = hpm_json("stat", "--json", "--group-max", "2", "-e",
                    "task-clock,page-faults,cs,minor-faults", "--", "true", check_rc=0)
    assert [e["group"] for e in d["events"]] == [0, 0, 1, 1]


def test_braces_keep_one_group():
    p, d = hpm_json("stat", "--json", "-e", "{task-clock,page-faults,cs},minor-faults", "--",
                    "true", check_rc=0)
    assert [e["group"] for e in d["events"]] == [0, 0, 0, 1]


def test_attach_to_pid_counts_its_faults(tmp_path):
    import subprocess
    go, done = tmp_path / "go", tmp_path / "done"
    os.mkfifo(go)
    os.mkfifo(done)
    # the attached shell waits for hpm, runs touch-pages (a child: inherited), then says so
    child = subprocess.Popen(["sh", "-c", f"read x < {go}; {require(TOUCH)} 4000; echo 1 > {done}"])
    try:
        trigger = f"echo go > {go}; read y < {done}"
        p, d = hpm_json("stat", "--json", "-e", "page-faults", "-p", child.pid, "--", "sh", "-c",
                        trigger, timeout=60)
        assert p.returncode == 0, p.stderr
        assert d["pid"] == child.pid
        # touch-pages faults 4000 pages plus its own start-up, and the shell a few
        assert 4000 <= d["events"][0]["value"] < 4000 + 400
    finally:
        child.wait(timeout=30)


def test_system_wide_cpu_clock():
    p, d = hpm_json("stat", "--json", "-a", "-e", "cpu-clock", "--", "sleep", "0.3", check_rc=0)
    ncpu = os.cpu_count()
    ns = d["events"][0]["value"]
    # every CPU's clock runs for the whole 0.3 s
    assert 0.28e9 * ncpu < ns < 0.6e9 * ncpu, ns


def test_default_events_mark_what_this_machine_cannot_count():
    p = hpm("stat", "--", "true")
    assert p.returncode == 0, p.stderr
    if probe_ok("cycles"):
        assert "<not supported>" not in p.stderr.split("cycles")[0][-40:]
    else:
        assert "<not supported>      cycles" in p.stderr
    assert "task-clock" in p.stderr and "page-faults" in p.stderr


# ---- bad input: one line, nonzero exit, nothing half-written ----

def one_line(p):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_unknown_event_suggests(tmp_path):
    out = tmp_path / "out.json"
    p = hpm("stat", "-o", out, "--json", "-e", "instructons", "--", "true")
    assert p.returncode == 1
    assert one_line(p) == ("hpm stat: unknown event 'instructons'; did you mean: instructions? "
                           "(hpm list)")
    assert list(tmp_path.iterdir()) == []  # no output file, no temp file


def test_event_this_machine_cannot_count():
    if probe_ok("cycles"):
        pytest.fail("this test expects a host without a hardware PMU (the CI machine); "
                    "on a machine with one, the lab tests cover hardware counting")
    # like perf stat: the command runs, the event is <not supported>, the exit status is
    # the command's; the reason is under the table
    for cmd in (["true"], ["sh", "-c", "exit 3"]):
        ours = hpm("stat", "-e", "cycles", "--", *cmd)
        theirs = run(["perf", "stat", "-e", "cycles", "--", *cmd])
        assert ours.returncode == theirs.returncode == (3 if cmd[0] == "sh" else 0)
        row = [l for l in ours.stderr.splitlines() if "cycles" in l][0]
        assert row.split() == ["<not", "supported>", "cycles"] and row.startswith("   <not")
        assert [l for l in theirs.stderr.splitlines() if "cycles" in l][0].startswith("   <not")
        assert "not supported: event 'cycles' cannot be counted: this machine exposes no hardware PMU" \
            in ours.stderr


def test_event_of_another_pmu():
    p = hpm("stat", "-e", "sifive_u74::DCACHE_MISS_MMIO", "--", "true")
    assert p.returncode == 1
    assert "is for PMU 'sifive_u74' but this CPU is" in one_line(p)


def test_command_that_does_not_exist():
    p = hpm("stat", "-e", "task-clock", "--", "/no/such/program")
    assert p.returncode == 127
    assert one_line(p) == "hpm stat: cannot run '/no/such/program': No such file or directory"


@pytest.mark.parametrize("args,msg", [
    (["-r", "0", "--", "true"], "-r must be a number from 1"),
    (["-e", "task-clock"], "nothing to count"),
    (["-r", "3", "-p", "1"], "-r needs a command"),
    (["-e", "{task-clock,page-faults", "--", "true"], "missing '}'"),
])
def test_usage_errors(args, msg):
    p = hpm("stat", *args)
    assert p.returncode in (1, 2)
    assert msg in one_line(p)


def test_unknown_subcommand():
    p = hpm("frobnicate")
    assert p.returncode == 2
    assert one_line(p) == "hpm: 'frobnicate' is not an hpm command; run 'hpm --help' for the list"


def test_help_has_examples():
    p = hpm("stat", "--help", check_rc=0)
    assert "examples:" in p.stdout and "hpm stat -M ipc" in p.stdout


def paranoid():
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return int(f.read())


def test_permission_denied_is_explained_and_nothing_is_changed():
    assert os.geteuid() == 0, "this test runs hpm as 'nobody' and needs root to do so"
    before = paranoid()
    p = run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
             require(BUILD / "bin" / "hpm"), "stat", "-a", "-e", "task-clock", "--", "true"])
    if before >= 1:
        assert p.returncode == 1
        line = one_line(p)
        assert "permission denied for 'task-clock': counting whole CPUs" in line
        assert f"kernel.perf_event_paranoid={before}" in line
        assert "CAP_PERFMON" in line and "never changes" in line
    else:
        assert p.returncode == 0, p.stderr
    assert paranoid() == before
