"""hpm record with perf users' habits (issue 23): -p/-t with a command that only sets the
duration, CPU lists, tracepoints perf can read, and SIGINT stopping the workload at once;
each next to Debian's perf 6.1, which also reads every file we write."""
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import HPM, require, run


def perf():
    p = shutil.which("perf")
    assert p, "perf is not installed: scripts/setup.sh installs linux-perf"
    return p


def script(path, *fields):
    p = run([perf(), "script", "-i", path, *(["-F", ",".join(fields)] if fields else [])])
    assert p.returncode == 0, p.stderr
    return p.stdout


def one_line(p):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


def busy():
    return subprocess.Popen(["sh", "-c", "while :; do :; done"])


def test_pid_for_the_duration_of_a_command_like_perf(tmp_path):
    target = busy()
    try:
        for tool in ("hpm", "perf"):
            out = tmp_path / f"{tool}.data"
            cmd = [require(HPM), "record", "-q"] if tool == "hpm" else [perf(), "record", "-q"]
            p = run([*cmd, "-o", out, "-p", target.pid, "--", "sleep", "0.5"], cwd=tmp_path)
            assert p.returncode == 0, (tool, p.stderr)
            pids = set(script(out, "pid").split())
            # every sample is the attached process; the duration command is not recorded
            assert pids == {str(target.pid)}, (tool, pids)
    finally:
        target.kill()
        target.wait()


def test_tid_and_pid_lists(tmp_path):
    a, b = busy(), busy()
    try:
        out = tmp_path / "two.data"
        p = run([require(HPM), "record", "-q", "-o", out, "-p", f"{a.pid},{b.pid}", "--", "sleep",
                 "0.5"], cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert set(script(out, "pid").split()) == {str(a.pid), str(b.pid)}
        out = tmp_path / "tid.data"
        p = run([require(HPM), "record", "-q", "-o", out, "-t", b.pid, "--", "sleep", "0.3"],
                cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert set(script(out, "tid").split()) == {str(b.pid)}
    finally:
        for t in (a, b):
            t.kill()
            t.wait()


def test_attached_process_exit_ends_the_recording(tmp_path):
    target = subprocess.Popen(["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
    out = tmp_path / "exit.data"
    p = run([require(HPM), "record", "-q", "-o", out, "-p", target.pid], cwd=tmp_path, timeout=60)
    target.wait()
    assert p.returncode == 0, p.stderr
    assert script(out, "pid").split()[0] == str(target.pid)


def test_sigint_stops_the_workload_and_writes_the_file_at_once(tmp_path):
    codes = {}
    for tool in ("hpm", "perf"):
        out = tmp_path / f"{tool}.data"
        cmd = [str(require(HPM)), "record", "-q"] if tool == "hpm" else [perf(), "record", "-q"]
        proc = subprocess.Popen([*cmd, "-o", str(out), "--", "sleep", "30"], cwd=tmp_path,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=10)  # sleep 30 was stopped, not waited for
        codes[tool] = proc.returncode
        script(out)  # perf reads the file
    # the workload ended by SIGTERM in both, and each tool by the workload's signal (a
    # shell sees 143)
    assert codes == {"hpm": -signal.SIGTERM, "perf": -signal.SIGTERM}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_system_wide_recording_ends_by_the_stop_signal_like_perf(tmp_path, sig):
    """No command to stop: after writing the file, hpm ends by the signal it got, as perf
    record does (a shell sees 130 for SIGINT, 143 for SIGTERM), not with status 0."""
    codes = {}
    for tool in ("hpm", "perf"):
        out = tmp_path / f"{tool}.data"
        cmd = [str(require(HPM)), "record", "-q"] if tool == "hpm" else [perf(), "record", "-q"]
        proc = subprocess.Popen([*cmd, "-a", "-e", "cpu-clock", "-o", str(out)], cwd=tmp_path,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        proc.send_signal(sig)
        proc.communicate(timeout=30)
        codes[tool] = proc.returncode
        script(out, "comm")  # perf reads the file
    assert codes == {"hpm": -sig, "perf": -sig}


def test_tracepoint_samples_perf_reads_like_its_own(tmp_path):
    ev = "sched:sched_process_exec"
    cmd = ["sh", "-c", "/bin/true; exec /bin/true"]
    ours, theirs = tmp_path / "hpm.data", tmp_path / "perf.data"
    run([require(HPM), "record", "-q", "-e", ev, "-o", ours, "--", *cmd], check_rc=0)
    run([perf(), "record", "-q", "-e", ev, "-o", theirs, "--", *cmd], check_rc=0)
    # every hit (period 1), with the tracepoint's fields decoded from our tracing data
    def rows(path):
        return [re.sub(r"pid=\d+ old_pid=\d+", "", l.split(": ", 2)[-1]).strip()
                for l in script(path, "event,trace").splitlines() if l.strip()]
    assert rows(ours) == rows(theirs)
    assert len(rows(ours)) == 3 and all(r.startswith("filename=") for r in rows(ours))


def test_tracepoint_samples_from_the_kernel_are_no_lost_user_samples(tmp_path):
    """A tracepoint fires in the kernel: samples without a user-space one are what it gives,
    not a PMU losing user-mode overflow samples (only core-PMU events get that warning)."""
    out = tmp_path / "t.data"
    p = run([require(HPM), "record", "-e", "sched:sched_switch", "-o", out, "--",
             "sh", "-c", "for i in $(seq 30); do sleep 0.001; done"], check_rc=0)
    assert int(re.search(r"(\d+) samples in", p.stderr).group(1)) >= 30
    assert "warning" not in p.stderr, p.stderr


def test_cpu_list(tmp_path):
    out = tmp_path / "c.data"
    p = run([require(HPM), "record", "-q", "-C", "0", "-o", out, "--", "sleep", "0.2"],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert set(script(out, "cpu").split()) == {"[000]"}
    p = run([require(HPM), "record", "-C", "0-x", "--", "true"], cwd=tmp_path)
    assert p.returncode == 2 and "-C takes a CPU list" in one_line(p)


def test_target_errors(tmp_path):
    p = run([require(HPM), "record", "-p", "1", "-a", "--", "true"], cwd=tmp_path)
    assert p.returncode == 2 and "choose one target" in one_line(p)
    p = run([require(HPM), "record", "-p", "999999999", "--", "true"], cwd=tmp_path)
    assert p.returncode == 2 and "no process or thread 999999999" in one_line(p)
    assert list(tmp_path.iterdir()) == []


def test_help_examples():
    h = run([require(HPM), "record", "--help"], check_rc=0).stdout
    assert "hpm record -g -p 1234 -- sleep 5" in h and "-t, --tid TIDS" in h
    assert "sched:sched_switch" in h and "SIGINT" in h
