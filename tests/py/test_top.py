"""hpm top (issue 15 item 2): live hottest functions without the perf tool. Exact answers
come from page-fault sampling with period 1 on a workload of our own (tests/data/top/hot.c):
every row must equal perf record + perf report on the same run; cpu-clock hot spots, group
member columns, filters, batch and terminal modes, and errors are checked on this host."""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import termios
import time

import pytest

from conftest import HPM, ROOT, hpm, require, run


def perf():
    p = shutil.which("perf")
    assert p, "perf is not installed: scripts/setup.sh installs linux-perf"
    return p


@pytest.fixture(scope="module")
def hot(tmp_path_factory):
    d = tmp_path_factory.mktemp("top")
    exe = d / "hot"
    run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", exe,
         ROOT / "tests" / "data" / "top" / "hot.c"], check_rc=0)
    os.chmod(d, 0o755)
    return exe


ROW = re.compile(r"^\s+([\d.]+)%\s+(\d+)\s+(.*)$")


def rows(text, ncols=2):
    """(samples, columns..., mark, symbol) of each table row"""
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            parts = m.group(3).split()
            out.append((int(m.group(2)), *parts))
    return out


def perf_report_rows(data, sort="dso,sym"):
    p = run([perf(), "report", "-i", data, "--stdio", "-n", "--sort", sort], check_rc=0)
    out = []
    for line in p.stdout.splitlines():
        m = ROW.match(line)
        if m:
            parts = [("[kernel]" if x == "[kernel.kallsyms]" else x) for x in m.group(3).split()]
            out.append((int(m.group(2)), *parts))
    return out


def test_page_fault_rows_equal_perf_report(hot, tmp_path):
    cmd = [hot, "3000", "2000", "1000"]
    ours = run(["setarch", "-R", require(HPM), "top", "-b", "-e", "page-faults", "-c", "1",
                "-E", "0", "--", *cmd], check_rc=0)
    data = tmp_path / "pf.data"
    run(["setarch", "-R", perf(), "record", "-q", "-e", "page-faults", "-c", "1", "-o", data,
         "--", *cmd], check_rc=0)
    theirs = perf_report_rows(data)
    mine = rows(ours.stdout)
    # the workload's own faults and the kernel's copy routine: the same rows, exactly
    pick = lambda rs: sorted(r for r in rs if r[1] in ("hot", "[kernel]"))
    assert pick(mine) == pick(theirs)
    assert (3000, "hot", "[.]", "fault_user") in mine
    assert any(r[0] == 2000 and r[1] == "[kernel]" and r[2] == "[k]" for r in mine), mine[:3]
    # and nothing lost or left out: the same total (give or take the one start-up fault
    # that depends on how the tool started the command)
    assert abs(sum(r[0] for r in mine) - sum(r[0] for r in theirs)) <= 2
    head = ours.stdout.splitlines()[0]
    assert re.match(r"hpm top: [\d,]+ samples of page-faults \(every 1\) on '.*hot', ", head)


def test_cpu_clock_hot_spot_like_perf(hot, tmp_path):
    cmd = [hot, "0", "0", "150000000"]
    ours = rows(run([require(HPM), "top", "-b", "-e", "cpu-clock", "--", *cmd],
                    check_rc=0).stdout)
    data = tmp_path / "cc.data"
    run([perf(), "record", "-q", "-e", "cpu-clock", "-o", data, "--", *cmd], check_rc=0)
    theirs = perf_report_rows(data)
    assert ours[0][1:] == theirs[0][1:] == ("hot", "[.]", "spin")
    total = sum(r[0] for r in ours)
    assert ours[0][0] > 0.8 * total


def test_group_members_sort_and_columns(hot):
    p = run([require(HPM), "top", "-b", "-E", "0", "-e", "{cpu-clock,page-faults}", "-S",
             "page-faults", "--", hot, "3000", "0", "50000000"], check_rc=0)
    lines = p.stdout.splitlines()
    assert lines[1].split()[:3] == ["Overhead", "Samples", "page-faults"]
    faults = [int(l.split()[2].replace(",", "")) for l in lines[2:] if ROW.match(l)]
    assert faults == sorted(faults, reverse=True) and faults[0] > 0
    # every fault between two samples is attributed to the second: the column adds up to
    # at most the process's page faults (perf stat's count, exact under setarch -R)
    assert sum(faults) <= 3000 + 200
    p = run([require(HPM), "top", "-b", "-e", "{cpu-clock,page-faults}", "--group-sort-idx", "1",
             "--", hot, "100", "0", "1000"], check_rc=0)
    assert "page-faults" in p.stdout.splitlines()[1]


def test_keys_and_filters(hot):
    cmd = ["--", hot, "2000", "1000", "1000"]
    base = [require(HPM), "top", "-b", "-e", "page-faults", "-c", "1", "-E", "0"]
    out = run([*base, "-s", "comm,pid,dso,sym", *cmd], check_rc=0).stdout
    assert out.splitlines()[1].split() == ["Overhead", "Samples", "Command", "Pid", "Shared",
                                          "Object", "Symbol"]
    r = rows(out)
    assert {x[1] for x in r} == {"hot"} and all(x[2].isdigit() for x in r)
    user = rows(run([*base, "-K", *cmd], check_rc=0).stdout)
    kernel = rows(run([*base, "-U", *cmd], check_rc=0).stdout)
    assert user and all(x[2] == "[.]" for x in user)
    assert kernel and all(x[2] == "[k]" for x in kernel)
    dso = rows(run([*base, "--dsos", "hot", *cmd], check_rc=0).stdout)
    assert dso[0] == (2000, "hot", "[.]", "fault_user") and {r[1] for r in dso} == {"hot"}
    assert rows(run([*base, "--comms", "nosuch", *cmd], check_rc=0).stdout) == []
    # overhead stays a share of everything sampled, shown or not (period 1: of samples)
    out = run([*base, "-K", *cmd], check_rc=0).stdout
    total = int(re.match(r"hpm top: ([\d,]+) samples", out).group(1).replace(",", ""))
    line = [l for l in out.splitlines() if "fault_user" in l][0]
    assert line.split()[0] == f"{100 * 2000 / total:.2f}%"


def test_batch_tables_system_wide():
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        p = run([require(HPM), "top", "-b", "-n", "2", "-d", "0.3", "-E", "0", "-s",
                 "comm,dso,sym"], check_rc=0)
    finally:
        busy.kill()
        busy.wait()
    heads = [l for l in p.stdout.splitlines() if l.startswith("hpm top: ")]
    assert len(heads) == 2
    assert re.match(r"hpm top: [\d,]+ samples of \S+ \(4000 Hz\) on all \d+ CPUs?, ", heads[0])
    comms = [r[1] for r in rows(p.stdout)]
    assert "sh" in comms  # the busy loop was sampled (other jobs may be busier)


def test_attached_pid_for_a_duration():
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        p = run([require(HPM), "top", "-b", "-p", busy.pid, "-s", "pid,dso", "--", "sleep",
                 "0.5"], check_rc=0)
    finally:
        busy.kill()
        busy.wait()
    assert {r[1] for r in rows(p.stdout)} == {str(busy.pid)}
    assert "final" in p.stdout.splitlines()[0]


def test_command_exit_status_and_final_table(hot):
    p = run([require(HPM), "top", "-b", "--", "sh", "-c", "exit 7"])
    assert p.returncode == 7
    assert "; final" in p.stdout.splitlines()[0]
    p = run([require(HPM), "top", "-b", "--", "/no/such/program"])
    assert p.returncode == 127
    assert p.stderr.strip() == "hpm top: cannot run '/no/such/program': No such file or directory"


def test_terminal_mode_refreshes_keys_and_restores_the_terminal():
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(str(require(HPM)), [str(HPM), "top", "-d", "0.2", "-e", "cpu-clock", "--", "sh",
                                     "-c", "while :; do :; done"])
    out = b""
    deadline = time.monotonic() + 20
    try:
        while out.count(b"\033[H\033[2J") < 3 and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                out += os.read(fd, 65536)
        assert out.count(b"\033[H\033[2J") >= 3, out[-500:]
        assert b"q quit  K kernel on  U user on" in out
        os.write(fd, b"K")
        while b"K kernel off" not in out and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                out += os.read(fd, 65536)
        assert b"K kernel off" in out
        os.write(fd, b"q")
        _, status = os.waitpid(pid, 0)
        pid = 0
        try:
            while select.select([fd], [], [], 0.2)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass  # the other side is closed
        # q ends the command we started: top itself succeeded
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        attrs = termios.tcgetattr(fd)
        assert attrs[3] & termios.ICANON and attrs[3] & termios.ECHO
        assert b"\033[?25h" in out[-50:]  # the cursor is back
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def test_unprivileged_user_sees_user_functions_and_is_told_why(hot):
    import tempfile
    assert os.geteuid() == 0, "this test runs hpm as 'nobody' and needs root to do so"
    d = tempfile.mkdtemp(prefix="hpm-top-")  # pytest's own directories are root-only
    os.chmod(d, 0o755)
    hot = shutil.copy(hot, os.path.join(d, "hot"))
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    p = run([*nobody, require(HPM), "top", "-b", "-e", "page-faults", "-c", "1", "--", hot, "500",
             "500", "0"])
    assert p.returncode == 0, p.stderr
    if paranoid >= 2:
        assert "showing user functions only" in p.stderr and "never changes" in p.stderr
        assert all(r[2] == "[.]" for r in rows(p.stdout))
    assert (500, "hot", "[.]", "fault_user") in rows(p.stdout)
    if paranoid >= 1:
        p = run([*nobody, require(HPM), "top", "-b"])
        assert p.returncode == 1
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and "permission denied" in lines[0]
        assert "hpm top -p PID, hpm top -- CMD" in lines[0]
    shutil.rmtree(d)


@pytest.mark.parametrize("args,msg", [
    (["-e", "cpu-clock,page-faults"], "samples one event or one {group}"),
    (["-s", "foo"], "unknown sort key 'foo'"),
    (["-S", "foo"], "-S foo: sort by period, samples"),
    (["--group-sort-idx", "2"], "--group-sort-idx 2: the group has 1 event"),
    (["-d", "0"], "-d must be a number of seconds"),
    (["-K", "-U"], "-K and -U together hide everything"),
    (["-p", "1", "-a"], "choose one target"),
    (["-e", "nosuch-event"], "unknown event 'nosuch-event'"),
    (["-m", "3"], "-m must be a power of 2"),
])
def test_errors_are_one_line(args, msg):
    p = hpm("top", "-b", *args, "--", "true")
    assert p.returncode in (1, 2)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and msg in lines[0], p.stderr
    assert p.stdout == ""


def test_help_has_examples():
    h = hpm("top", "--help", check_rc=0).stdout
    for s in ("hpm top --batch -d 5", "-S page-faults", "-K, --hide-kernel-symbols",
              "--comms LIST", "-n, --iterations N", "examples:"):
        assert s in h
    assert "top" in hpm("--help", check_rc=0).stdout
