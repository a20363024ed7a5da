"""`hpmkit lab run/record --shell` (issue 24): COMMAND under Debian's busybox sh in the guest,
opt-in (the guest of every other run stays without a shell)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, run
from hpmkit.lab import shell
from hpmkit.profile import Profile

HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"
pytestmark = pytest.mark.skipif(not (shutil.which("qemu-system-riscv64") and
                                     shutil.which("qemu-system-aarch64")),
                                reason="QEMU system emulators missing (scripts/setup.sh)")


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_the_shell_is_debians_busybox(arch):
    d = shell.root(arch)
    assert (d / "bin" / "sh").read_bytes() == (d / "bin" / "busybox").read_bytes()
    assert (d / "bin" / "sh").read_bytes()[:4] == b"\x7fELF"
    name, version, release, deb = (d / shell.STAMP).read_text().split()
    assert name == "busybox-static" and release == "trixie" and deb.endswith(".deb")


def test_pipes_redirections_loops_and_the_scripts_status(tmp_path):
    script = ("ksuite list | head -3; for i in 1 2; do echo $i; done > f.txt; "
              "cat f.txt | wc -l; exit 3")
    p = run([HPMKIT, "lab", "run", "--arch", "both", "--shell", "--out", tmp_path / "o", "--",
             script], timeout=600)
    assert p.returncode == 3, p.stderr
    # the same pipeline on this machine, through its own shell and the native ksuite
    want = subprocess.run(f"{BUILD / 'bin' / 'ksuite'} list | head -3", shell=True,
                          capture_output=True, text=True, check=True).stdout
    for arch in ("riscv64", "aarch64"):
        block = p.stdout.split(f"== {arch} ==\n", 1)[1].split("== ", 1)[0]
        assert block == want + "2\n", block
        assert (tmp_path / "o" / arch / "f.txt").read_text() == "1\n2\n"


def test_without_shell_the_guest_has_none(tmp_path):
    p = run([HPMKIT, "lab", "run", "--arch", "riscv64", "--out", tmp_path / "o", "--", "sh",
             "-c", "true"], timeout=300)
    assert p.returncode == 127 and "cannot run 'sh'" in p.stderr and "Traceback" not in p.stderr


def test_record_a_script_profiles_every_command_of_it(tmp_path):
    out = tmp_path / "r"
    p = run([HPMKIT, "lab", "record", "--arch", "aarch64", "--shell", "-c", "2000", "-o", out,
             "--", "hpm-truth getppid 300; hpm-truth getppid 300"], timeout=600)
    assert p.returncode == 0, p.stderr
    prof = Profile.load(out / "aarch64.hpmprof")
    comms = prof.samples.column("comm").to_pylist()
    pids = {pid for pid, c in zip(prof.samples.column("pid").to_pylist(), comms)
            if c == "hpm-truth"}
    assert len(pids) == 2, set(zip(prof.samples.column("pid").to_pylist(), comms))
    assert "sh" in comms
    assert prof.meta["workload"] == "sh -c hpm-truth getppid 300; hpm-truth getppid 300"
