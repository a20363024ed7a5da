"""`hpm record` stopped in every way a recording gets stopped (issue 18): SIGINT, SIGTERM and
SIGHUP to hpm, the recorded command killed, hpm itself killed, the disk filling up. Each time
the output is either complete (Linux perf reads it, with every sample hpm counted) or absent
with a one-line message, and nothing else is left in the folder: no half file under the final
name, no temporary file.

No test waits for a time to pass: the command writes a file when it runs, the test waits for
that file, then acts. Full disks are real: a small tmpfs in a private mount namespace, as in
test_spe_output_errors.py."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BUILD, HPM, require, wait_for

TOUCH = BUILD / "bin" / "touch-pages"


def perf() -> str:
    p = shutil.which("perf")
    if not p:
        pytest.fail("Linux perf is missing: scripts/setup.sh installs linux-perf")
    return p


def start(d: Path, out: str = "rec.data"):
    """hpm record over a command that says it runs (READY holds its pid) and then spins."""
    ready = d / "READY"
    cmd = [str(require(HPM)), "record", "-e", "cpu-clock", "-c", "100000", "-g", "-o", str(d / out), "--",
           "sh", "-c", f'echo $$ > "{ready}.tmp" && mv "{ready}.tmp" "{ready}" && while :; do :; done']
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(ready, p)
    return p, int(ready.read_text())


def finish(p: subprocess.Popen) -> tuple[int, str]:
    _out, err = p.communicate(timeout=120)
    return p.returncode, err


def perf_reads_it(path: Path, err: str) -> None:
    """perf script reads the whole file without complaint and finds as many samples as hpm
    said it wrote."""
    m = re.search(r"hpm record: (\d+) samples in [\d.]+ MB written to", err)
    assert m, err
    r = subprocess.run([perf(), "script", "-i", str(path), "-F", "comm,tid,period"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "corrupt" not in r.stderr.lower() and "warning" not in r.stderr.lower(), r.stderr
    assert len(r.stdout.splitlines()) == int(m.group(1))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_stop_signal_writes_a_complete_file(tmp_path, sig):
    p, _pid = start(tmp_path)
    p.send_signal(sig)
    rc, err = finish(p)
    # the command was stopped with SIGTERM and hpm, the file written, ends by that signal as
    # perf record does (a shell sees 143)
    assert rc == -signal.SIGTERM, err
    perf_reads_it(tmp_path / "rec.data", err)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["READY", "rec.data"]


def test_the_command_killed_leaves_a_complete_file(tmp_path):
    p, pid = start(tmp_path)
    os.kill(pid, signal.SIGKILL)
    rc, err = finish(p)
    assert rc == 128 + signal.SIGKILL, err
    perf_reads_it(tmp_path / "rec.data", err)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["READY", "rec.data"]


def test_an_existing_file_is_replaced_whole(tmp_path):
    (tmp_path / "rec.data").write_bytes(b"old")
    p, _pid = start(tmp_path)
    p.send_signal(signal.SIGINT)
    rc, err = finish(p)
    perf_reads_it(tmp_path / "rec.data", err)
    # as perf record, the earlier file is kept as rec.data.old (test_record_perfcompat2.py)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["READY", "rec.data", "rec.data.old"]
    assert (tmp_path / "rec.data.old").read_bytes() == b"old"


def test_hpm_killed_leaves_nothing(tmp_path):
    """SIGKILL cannot be caught: the file is built without a name (O_TMPFILE), so nothing is
    left, neither under the final name nor under a temporary one."""
    p, pid = start(tmp_path)
    p.kill()
    p.wait(timeout=60)
    os.kill(pid, signal.SIGKILL)   # the orphaned command holds hpm's stdout and stderr open
    p.communicate(timeout=60)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["READY"]


def in_small_tmpfs(tmp_path: Path, size: str, args: list[str]) -> tuple[int, str, list[str]]:
    """Run hpm record with its output on a fresh tmpfs of `size` (private mount namespace).
    Returns (exit status, stderr, names left on the tmpfs)."""
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.fail("unshare (util-linux) is missing: it makes the full file system")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = ('mount -t tmpfs -o "size=$S" none "$M" || exit 99\n'
              '"$@" >/dev/null; rc=$?\n'
              'echo "rc=$rc"; ls -A "$M"')
    ns = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-rm"]
    full = [a.replace("{out}", str(mnt)) for a in args]
    p = subprocess.run([*ns, "sh", "-c", script, "sh", str(require(HPM)), "record", *full], capture_output=True,
                       text=True, env={**os.environ, "M": str(mnt), "S": size}, timeout=300)
    lines = p.stdout.splitlines()
    if p.returncode == 99 or not lines or not lines[0].startswith("rc="):
        pytest.fail(f"could not mount a tmpfs in a private mount namespace: {p.stderr.strip()}")
    return int(lines[0][3:]), p.stderr, lines[1:]


def test_disk_full_while_recording(tmp_path):
    """20,000 page-fault samples with stacks (megabytes) on a 64 KiB file system: the data
    section itself does not fit."""
    rc, err, left = in_small_tmpfs(tmp_path, "64k", ["-e", "page-faults", "-c", "1", "-g", "--kallsyms", "none",
                                                     "-o", "{out}/rec.data", "--", str(require(TOUCH)), "20000"])
    assert rc == 1, err
    assert err.count("\n") == 1 and "No space left on device" in err and "nothing was written" in err, err
    assert left == []


def test_disk_full_at_the_end(tmp_path):
    """Few samples, but the whole kernel symbol table (--kallsyms all) in the feature sections
    written last: the failure comes while the file is finished."""
    rc, err, left = in_small_tmpfs(tmp_path, "256k", ["-e", "cpu-clock", "--kallsyms", "all", "-o", "{out}/rec.data",
                                                      "--", "true"])
    if "kernel symbol addresses are hidden" in err:
        pytest.fail("this test needs /proc/kallsyms addresses (run as root)")
    assert rc == 1, err
    assert err.count("\n") == 1 and "No space left on device" in err and "nothing was written" in err, err
    assert left == []


def test_the_same_commands_succeed_with_room(tmp_path):
    """The failures above are the file system's: with room the same recordings work."""
    rc, err, left = in_small_tmpfs(tmp_path, "64m", ["-e", "page-faults", "-c", "1", "-g", "--kallsyms", "none",
                                                     "-o", "{out}/rec.data", "--", str(require(TOUCH)), "20000"])
    assert rc == 0 and left == ["rec.data"], err
