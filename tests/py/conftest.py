"""Shared helpers for the integration tests: paths to the built tools and a runner."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
HPM = BUILD / "bin" / "hpm"


def require(path: Path) -> Path:
    # A missing build is a failure with a reason, never a silent skip.
    if not path.exists():
        pytest.fail(f"{path} is missing: run 'make' (scripts/test.sh builds everything first)")
    return path


def run(args, check_rc=None, env=None, **kw):
    full_env = dict(os.environ)
    full_env.pop("HPM_PMU", None)
    if env:
        full_env.update(env)
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=full_env,
                       timeout=kw.pop("timeout", 120), **kw)
    if check_rc is not None:
        assert p.returncode == check_rc, (p.returncode, p.stdout, p.stderr)
    return p


def hpm(*args, **kw):
    return run([require(HPM), *args], **kw)


def hpm_json(*args, **kw):
    p = hpm(*args, **kw)
    return p, json.loads(p.stdout)


def probe_ok(event: str) -> bool:
    """Can this machine count `event`? (asked through hpm itself)"""
    p = hpm("list", "--json", event)
    for e in json.loads(p.stdout):
        if e["name"] == event:
            return bool(e["available"])
    raise AssertionError(f"{event} not listed")


def perf_record_calltree(d: Path, period: int, iterations: int, *, debug: bool = False):
    """Build tests/data/profile/calltree.c (frame pointers) in d and record it with Linux
    perf (`cpu-clock:u`, call graphs): the reference recording of the profile tests.
    Returns (executable, perf.data path)."""
    import shutil
    perf = shutil.which("perf")
    if not perf:
        pytest.fail("Linux perf is not installed (apt-get install linux-perf)")
    require(BUILD / "native" / "libhpmperf.so")
    exe = d / "calltree"
    run(["gcc", "-O0", *(["-g"] if debug else []), "-fno-omit-frame-pointer", "-o", exe,
         ROOT / "tests" / "data" / "profile" / "calltree.c"], check_rc=0)
    data = d / "calltree.data"
    run([perf, "record", "-q", "-e", "cpu-clock:u", "-c", str(period), "-g", "-o", data, "--",
         exe, str(iterations)], check_rc=0)
    return exe, data


def build_aarch64_elf(d: Path, name: str, source: str, opt: str) -> Path:
    """Compile a freestanding static aarch64 test program (for SPE symbolisation tests)."""
    import shutil
    cc = shutil.which("aarch64-linux-gnu-gcc")
    if not cc:
        pytest.fail("aarch64-linux-gnu-gcc is missing: scripts/setup.sh installs gcc-aarch64-linux-gnu")
    (d / f"{name}.c").write_text(source)
    subprocess.run([cc, "-g", opt, "-nostdlib", "-static", "-o", str(d / name), str(d / f"{name}.c")],
                   check=True)
    return d / name


def wait_for(path, proc) -> None:
    """Until a command under a recorder has started (it writes `path`), or the recorder ended."""
    import time
    deadline = time.monotonic() + 60   # a bound against hangs, not a timing assumption
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"the recorder ended before the command ran: {proc.communicate()}")
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.01)
