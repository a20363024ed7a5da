"""Boot a lab guest: kernel (cached), initramfs with our static binaries, QEMU with exact
instruction counting; return the command's result.

Deterministic settings (same instruction counts on every boot): -icount shift=0,sleep=off
(one instruction = one ns of virtual time, no real-time sleeps), -rtc clock=vm, fixed
memory, one CPU, no KASLR.
"""
from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import sys
import threading
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
# -seed: QEMU puts random bytes into the device tree (/chosen/rng-seed, kaslr-seed), which
# the kernel mixes into its RNG: without a fixed seed, riscv64 boots diverge (measured: the
# same instruction count, different code, 0.05 s into the boot)
COMMON = ("-smp", "1", "-nographic", "-monitor", "none", "-no-reboot",
          "-icount", "shift=0,sleep=off", "-rtc", "base=2024-01-01,clock=vm", "-seed", "1")


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


@dataclass(frozen=True)
class KernelFiles:
    """The cached kernel of one arch and what was saved beside it at build time (same tag)."""
    image: Path
    system_map: Path
    offsets: Path


def kernel_files(arch: str) -> KernelFiles:
    """Image, System.map and structure offsets (lab/kernel-source.sh: lab_offsets)."""
    img = kernel(arch)
    tag = img.name[len("Image-"):]
    files = KernelFiles(img, img.with_name(f"System.map-{tag}"), img.with_name(f"offsets-{tag}"))
    for f in (files.system_map, files.offsets):
        if not f.is_file():
            raise LabError(f"{f} is missing beside {img.name}: remove {img} and run "
                           f"'hpmkit lab prepare --arch {arch}' to rebuild it")
    return files


def root_of(folder: Path, arch: str) -> Path:
    """A --root folder for arch: its <arch>/ subfolder when it has one (one folder serves
    --arch both), else the folder itself."""
    folder = Path(folder)
    if not folder.is_dir():
        raise LabError(f"--root {folder}: not a folder")
    return folder / arch if (folder / arch).is_dir() else folder


def root_entries(root: Path) -> list[tuple[str, Path]]:
    """(path in the guest, host file) of every file under a --root folder; hidden ones (the
    folder's own notes, e.g. rt-tests' .packages) stay out."""
    root = Path(root)
    if not root.is_dir():
        raise LabError(f"--root {root}: not a folder")
    out = []
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root)
        if f.is_file() and not any(part.startswith(".") for part in rel.parts):
            out.append((str(rel), f))
    return out


def added_files(paths: list[Path], roots: list[Path] = ()) -> dict[str, bytes]:
    """A user's own files for the guest (--add): a file goes to /bin/NAME (on PATH), a folder
    to /NAME/ with its tree (its top-level files also on PATH through /bin). A root (--root)
    is laid out like the guest's /: its files keep their paths (bin/prog, lib/ld-linux...,
    lib/<triplet>/libc.so.6: what a dynamically linked program needs); symlinks are copied
    as files."""
    files: dict[str, bytes] = {}
    for r in roots:
        for rel, f in root_entries(r):
            files[rel] = f.read_bytes()
    for p in paths:
        p = Path(p)
        if p.is_file():
            files[f"bin/{p.name}"] = p.read_bytes()
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    files[f"{p.resolve().name}/{f.relative_to(p)}"] = f.read_bytes()
                    if f.parent == p and os.access(f, os.X_OK):
                        files[f"bin/{f.name}"] = files[f"{p.resolve().name}/{f.relative_to(p)}"]
        else:
            raise LabError(f"--add {p}: no such file or folder")
    for name in files:
        if name.split("/", 1)[0] in ("init", "lab", "proc", "sys", "dev", "tmp", "out"):
            raise LabError(f"--add/--root: '{name}' would replace the guest's own "
                           f"/{name.split('/')[0]}; rename the folder")
    return files


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
              env: dict[str, str] | None = None, add: dict[str, bytes] | None = None) -> bytes:
    return pack_initramfs(guest_binaries(arch), argv, sysctls, env, add)


def pack_initramfs(base: dict[str, bytes], argv: list[str], sysctls: dict[str, str] | None = None,
                   env: dict[str, str] | None = None, add: dict[str, bytes] | None = None) -> bytes:
    """The guest's root: base (guest_binaries), the user's files (add) and the command."""
    files = dict(base)
    for name, data in (add or {}).items():
        if name in files:
            raise LabError(f"--add: {name} is already in the guest (one of hpmkit's own); "
                           "rename yours")
        files[name] = data
    files["lab/argv"] = b"".join(a.encode() + b"\0" for a in argv)
    if env:
        files["lab/env"] = "".join(f"{k}={v}\n" for k, v in env.items()).encode()
    if sysctls:
        files["lab/sysctl"] = "".join(f"{k} {v}\n" for k, v in sysctls.items()).encode()
    dirs = {str(Path(n).parent) for n in files if "/" in n}
    return cpio.build(files, ["proc", "sys", "dev", "tmp", "out", *sorted(dirs)])


def run(arch: str, argv: list[str], timeout: float = 300, sysctls: dict[str, str] | None = None,
        console_log: Path | None = None, env: dict[str, str] | None = None,
        add: dict[str, bytes] | None = None, plugin: str | None = None) -> GuestResult:
    """Boot, run argv, return its result. add: extra guest files (added_files); plugin: a
    TCG plugin argument for QEMU's -plugin ("path.so,arg=val,...")."""
    check_arch(arch)
    if not argv:
        raise LabError("no command to run in the guest")
    check_qemu(arch)
    k = kernel(arch)
    return boot(arch, k, initramfs(arch, argv, sysctls, env, add), timeout, console_log, plugin)


def check_arch(arch: str) -> None:
    if arch not in MACHINES:
        raise LabError(f"unknown lab arch '{arch}' (choose {', '.join(ARCHES)} or both)")


def check_qemu(arch: str) -> None:
    m = MACHINES[arch]
    if not shutil.which(m.qemu):
        raise LabError(f"{m.qemu} is not installed: run scripts/setup.sh (it installs QEMU)")


@functools.lru_cache(maxsize=None)
def qemu_version(arch: str) -> str:
    """The first line of `qemu-system-<arch> --version` (the sampler plugin is built for one
    QEMU, and a worker with another one would not give the same recordings)."""
    check_qemu(arch)
    p = subprocess.run([MACHINES[arch].qemu, "--version"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    return (p.stdout.splitlines() or ["unknown"])[0].strip()


def boot(arch: str, kernel_image: Path, rd_bytes: bytes, timeout: float = 300,
         console_log: Path | None = None, plugin: str | None = None,
         scratch: Path | None = None) -> GuestResult:
    """Boot kernel_image with the initramfs rd_bytes under QEMU, wait for the guest to power
    off, return the command's result (the lower half of run(); hpmkit.lab.jobs calls it on
    workers that have no checkout, with the kernel of a shipped bundle)."""
    m = MACHINES[arch]
    scratch = scratch or CACHE
    scratch.mkdir(parents=True, exist_ok=True)
    # pid and thread: several guests of one process may boot at once (lab suite -j N)
    rd = scratch / f"initramfs-{arch}-{os.getpid()}-{threading.get_ident()}.cpio"
    rd.write_bytes(rd_bytes)
    cmd = [m.qemu, *m.args, *COMMON, "-kernel", str(kernel_image), "-initrd", str(rd),
           "-append", f"{m.console} panic=-1 quiet loglevel=1 rdinit=/init"]
    if plugin:
        cmd += ["-plugin", plugin]
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
