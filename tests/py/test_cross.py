"""Cross-built static binaries for riscv64 and aarch64 under qemu-user.

qemu-user has no perf_event_open (ENOSYS), so this runs the pure parts: table
parsing, name resolution, detection, expressions; hpm must say why it cannot
count, in one line."""
import shutil

import pytest

from conftest import BUILD, require, run

ARCHES = ["riscv64", "aarch64"]


def qemu(arch):
    q = shutil.which(f"qemu-{arch}-static") or shutil.which(f"qemu-{arch}")
    assert q, f"qemu-{arch}-static missing: scripts/setup.sh installs qemu-user-static"
    return q


@pytest.mark.parametrize("arch", ARCHES)
def test_unit_tests_pass_under_qemu_user(arch):
    unit = require(BUILD / arch / "tests" / "unit")
    listed = run([qemu(arch), unit, "--list"], check_rc=0).stdout.splitlines()
    pure = [l for l in listed if not l.endswith("[perf]")]
    p = run([qemu(arch), unit, "--no-perf"], check_rc=0)
    assert p.stdout.splitlines()[-1] == (
        f"{len(pure)} passed, 0 failed, {len(listed) - len(pure)} skipped")


@pytest.mark.parametrize("arch", ARCHES)
def test_static_hpm_runs(arch):
    hpm = require(BUILD / arch / "bin" / "hpm")
    out = run(["file", hpm], check_rc=0).stdout
    assert "statically linked" in out
    p = run([qemu(arch), hpm, "list", "--pmus"], check_rc=0)
    assert "sifive_u74" in p.stdout
    p = run([qemu(arch), hpm, "stat", "-e", "task-clock", "--", "/bin/true"])
    assert p.returncode == 1
    assert "perf_event_open is not available here" in p.stderr
    p = run([qemu(arch), require(BUILD / arch / "bin" / "hpm-loop"), "1000"], check_rc=0)
