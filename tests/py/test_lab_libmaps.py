"""Shared libraries in lab recordings (issue 12, user symbols): the sampler writes an MMAP2
for every executable file mapping a recorded process makes after its exec (the loader's
libraries), so frames in libc are attributed to libc.so.6 and named from its symbols.

Checked against the guest kernel's own /proc/self/maps (printed by the program in the same
run) and against Linux perf reading the same perf.data."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run
from hpmkit.profile import Profile

HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"
RT = ROOT / ".cache" / "lab" / "rt-tests"      # Debian's glibc for the guests (rttests.root)
ARCHES = ["riscv64", "aarch64"]
pytestmark = pytest.mark.skipif(not (shutil.which("qemu-system-riscv64") and
                                     shutil.which("qemu-system-aarch64") and shutil.which("perf")),
                                reason="QEMU system emulators or perf missing (scripts/setup.sh)")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    from hpmkit.lab import rttests
    d = tmp_path_factory.mktemp("libmaps")
    for arch in ARCHES:
        cc = shutil.which(f"{arch}-linux-gnu-gcc")
        if not cc:
            pytest.skip(f"no {arch}-linux-gnu-gcc (scripts/setup.sh installs the cross compilers)")
        rttests.root(arch)
        (d / "root" / arch / "bin").mkdir(parents=True)
        subprocess.run([cc, "-O1", "-o", d / "root" / arch / "bin" / "maps",
                        ROOT / "tests" / "data" / "lab" / "maps.c"], check=True)
    p = run([HPMKIT, "lab", "record", "--arch", "both", "--root", RT, "--root", d / "root",
             "-c", "2000", "-o", d / "r", "--", "maps", "20000"], timeout=900)
    assert p.returncode == 0, p.stderr
    return d / "r", p.stdout


def guest_maps(stdout: str, arch: str) -> list[tuple[int, int, int, str]]:
    """The r-xp lines the program printed: (start, end, offset, path); one block per arch in
    --arch both's order (riscv64 first)."""
    blocks = re.split(r"^\d+\n", stdout, flags=re.M)
    text = blocks[ARCHES.index(arch)]
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == "r-xp":
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            out.append((lo, hi, int(f[2], 16), f[5]))
    return out


def mmap2_records(data) -> list[tuple[int, int, int, str]]:
    text = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events"],
                          capture_output=True, text=True, check=True).stdout
    out = []
    for m in re.finditer(r"PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ "
                         r"(0x[0-9a-f]+|\d+) [^\]]*\]: r-xp (\S+)", text):
        start, ln = int(m.group(1), 16), int(m.group(2), 16)
        out.append((start, start + ln, int(m.group(3), 0), m.group(4)))
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_library_mappings_equal_the_guests_own_maps(recorded, arch):
    out, stdout = recorded
    maps = guest_maps(stdout, arch)
    libs = [m for m in maps if m[3].startswith("/lib/")]
    assert {m[3].rsplit("/", 1)[1] for m in libs} == {
        "libc.so.6", {"riscv64": "ld-linux-riscv64-lp64d.so.1",
                      "aarch64": "ld-linux-aarch64.so.1"}[arch]}, maps
    recs = mmap2_records(out / f"{arch}.perf.data")
    for lo, hi, off, path in libs:
        # the loader maps a library's whole extent executable first, then maps its data over
        # the end: the record (the kernel's announcement at that first mmap, as perf's would
        # be) starts where maps' text starts and covers it
        match = [r for r in recs if r[3] == path and r[0] == lo and r[2] == off]
        assert match and match[0][1] >= hi, (path, hex(lo), recs)
    # no vdso or anonymous mapping, and the program itself once (from its exec)
    assert not [r for r in recs if r[3].startswith("[")]
    assert len([r for r in recs if r[3] == "/bin/maps"]) == 1


@pytest.mark.parametrize("arch", ARCHES)
def test_libc_frames_are_libc_as_perf_reads_them(recorded, arch):
    out, _ = recorded
    data = out / f"{arch}.perf.data"
    prof = Profile.load(out / f"{arch}.hpmprof")
    libc = prof.meta["symbolisation"]["dsos"]
    assert any(k.endswith("/libc.so.6") and v.startswith("ok") for k, v in libc.items()), libc
    # per-DSO shares of the leaf frames: hpmkit's report of the file equals perf's
    symfs = out / f"{arch}.symfs"

    def shares(cmd):
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return {m.group(2): m.group(1) for m in
                re.finditer(r"^\s+([\d.]+)%\s+(\S+)\s*$", text, re.M)}
    theirs = shares(["perf", "report", "-i", data, "--symfs", symfs, "--kallsyms",
                     out / f"{arch}.kallsyms", "--no-children", "--sort", "dso", "--stdio",
                     "-q", "-g", "none"])
    ours = shares([HPMKIT, "report", "-i", data, "--symfs", symfs, "--no-children", "--sort",
                   "dso", "-g", "none"])
    assert ours == theirs, (ours, theirs)
    assert float(theirs["libc.so.6"]) > 50, theirs     # the strlen loop
