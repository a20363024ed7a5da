"""Boot a lab guest: kernel (cached), initramfs with our static binaries, QEMU with exact
instruction counting; return the command's result.

Deterministic settings (same instruction counts on every boot): -icount shift=0,sleep=off
(one instruction = one ns of virtual time, no real-time sleeps), -rtc clock=vm, fixed
memory, one CPU, no KASLR.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import cpio
from .protocol import GuestResult, LabError, parse

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "lab"
ARCHES = ("riscv64", "aarch64")

# `make cross-<arch>` builds CROSS_BINS (Makefile, mk/*.mk); everything it leaves in
# build/<arch>/bin goes on the guest's PATH (/bin), plus these extra files
GUEST_EXTRA = {"hpm-unit": "tests/unit"}


@dataclass(frozen=True)
class Machine:
    qemu: str
    args: tuple[str, ...]
    console: str


# Same memory on both (the kernels are built with matched configs, lab/common.config: memory
# size sets zone watermarks, hash-table and per-CPU list sizes)
MACHINES = {
    "riscv64": Machine("qemu-system-riscv64",
                       ("-M", "virt", "-cpu", "rv64,sscofpmf=true", "-m", "512M", "-bios", "default"),
                       "console=hvc0 earlycon=sbi norandmaps"),
    # pauth=off: QEMU's emulated pointer authentication is slow (the kernel is built without
    # it); -nic none: no NIC ROM to load; norandmaps: user-space layout (and counts) fixed
    "aarch64": Machine("qemu-system-aarch64",
                       ("-M", "virt", "-cpu", "max,pauth=off", "-m", "512M", "-nic", "none"),
                       "console=ttyAMA0 nokaslr norandmaps"),
}
COMMON = ("-smp", "1", "-nographic", "-monitor", "none", "-no-reboot",
          "-icount", "shift=0,sleep=off", "-rtc", "base=2024-01-01,clock=vm")


def _progress(msg: str) -> None:
    print(f"lab: {msg}", file=sys.stderr, flush=True)


def kernel(arch: str) -> Path:
    """Path of the cached kernel for arch, preparing it first if needed (lab/kernel-<arch>.sh)."""
    script = ROOT / "lab" / f"kernel-{arch}.sh"
    if not script.exists():
        raise LabError(f"{script} is missing: this checkout has no kernel recipe for {arch}")
    p = subprocess.run(["bash", str(script)], stdout=subprocess.PIPE, text=True)
    lines = p.stdout.strip().splitlines()
    if p.returncode or not lines or not Path(lines[-1]).is_file():
        raise LabError(f"preparing the {arch} kernel failed (lab/kernel-{arch}.sh exit "
                       f"{p.returncode}); its message is above")
    return Path(lines[-1])


def bin_names(arch: str) -> list[str]:
    """Names on the guest's PATH (as of the last cross build)."""
    d = ROOT / "build" / arch / "bin"
    names = [f.name for f in d.iterdir() if f.is_file() and f.name != "hpmlab-init"] if d.is_dir() else []
    return sorted([*names, *GUEST_EXTRA])


def guest_binaries(arch: str) -> dict[str, bytes]:
    build = ROOT / "build" / arch
    CACHE.mkdir(parents=True, exist_ok=True)
    # one build-and-read at a time: a concurrent `make cross` relinking a binary while it is
    # read would put a missing or half-written file into the guest
    with open(CACHE / f".build-{arch}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run(["make", "-s", "-C", str(ROOT), f"cross-{arch}"], capture_output=True,
                           text=True)
        if p.returncode:
            tail = " | ".join(p.stderr.strip().splitlines()[-3:])
            raise LabError(f"building the {arch} guest binaries failed: {tail}")
        return _read_binaries(build)


def _read_binaries(build: Path) -> dict[str, bytes]:
    files = {"init": (build / "bin" / "hpmlab-init").read_bytes()}
    for f in sorted((build / "bin").iterdir()):
        if f.is_file() and f.name != "hpmlab-init":
            files[f"bin/{f.name}"] = f.read_bytes()
    for name, rel in GUEST_EXTRA.items():
        files[f"bin/{name}"] = (build / rel).read_bytes()
    # data the C unit tests read (hpm-unit looks in /tests/data/spotchecks)
    for f in sorted((ROOT / "tests" / "data" / "spotchecks").rglob("*")):
        if f.is_file():
            files[str(f.relative_to(ROOT))] = f.read_bytes()
    return files


def initramfs(arch: str, argv: list[str], sysctls: dict[str, str] | None = None,
              env: dict[str, str] | None = None) -> bytes:
    files = guest_binaries(arch)
    files["lab/argv"] = b"".join(a.encode() + b"\0" for a in argv)
    if env:
        files["lab/env"] = "".join(f"{k}={v}\n" for k, v in env.items()).encode()
    if sysctls:
        files["lab/sysctl"] = "".join(f"{k} {v}\n" for k, v in sysctls.items()).encode()
    dirs = {str(Path(n).parent) for n in files if "/" in n}
    return cpio.build(files, ["proc", "sys", "dev", "tmp", "out", *sorted(dirs)])


def run(arch: str, argv: list[str], timeout: float = 300, sysctls: dict[str, str] | None = None,
        console_log: Path | None = None, env: dict[str, str] | None = None) -> GuestResult:
    if arch not in MACHINES:
        raise LabError(f"unknown lab arch '{arch}' (choose {', '.join(ARCHES)} or both)")
    if not argv:
        raise LabError("no command to run in the guest")
    m = MACHINES[arch]
    if not shutil.which(m.qemu):
        raise LabError(f"{m.qemu} is not installed: run scripts/setup.sh (it installs QEMU)")
    k = kernel(arch)
    CACHE.mkdir(parents=True, exist_ok=True)
    rd = CACHE / f"initramfs-{arch}-{os.getpid()}.cpio"
    rd.write_bytes(initramfs(arch, argv, sysctls, env))
    cmd = [m.qemu, *m.args, *COMMON, "-kernel", str(k), "-initrd", str(rd),
           "-append", f"{m.console} panic=-1 quiet loglevel=1 rdinit=/init"]
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            console = out.decode(errors="replace")
            if console_log:
                console_log.write_text(console)
            tail = " | ".join([l for l in console.splitlines() if l.strip()][-3:])
            raise LabError(f"{arch} guest timed out after {timeout:g} s (console: {tail or 'nothing'})")
    finally:
        rd.unlink(missing_ok=True)
    console = out.decode(errors="replace")
    if console_log:
        console_log.write_text(console)
    res = parse(console, arch)
    res.seconds = time.monotonic() - t0  # type: ignore[attr-defined]
    return res
