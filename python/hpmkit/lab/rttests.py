"""rt-tests (seed 001's workloads) for the lab guests, from Debian's binary packages.

`root(arch)` is a folder laid out like the guest's root: bin/ (hackbench, ptsematest, ...,
the packaged programs), lib/<loader> and lib/<triplet>/ (glibc, libnuma, libgcc_s: what they
are linked against). It is unpacked once into .cache/lab/rt-tests/<arch>/ and goes into the
guest beside hpmkit's own files (hpmkit.lab.guest.root_files). The workloads and their
arguments are data: data/lab/rt-tests.tsv.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from . import debian, guest
from .protocol import LabError

PACKAGES = ("rt-tests", "libc6", "libnuma1", "libgcc-s1")
TRIPLET = {"riscv64": "riscv64-linux-gnu", "aarch64": "aarch64-linux-gnu"}
LOADER = {"riscv64": "ld-linux-riscv64-lp64d.so.1", "aarch64": "ld-linux-aarch64.so.1"}
TABLE = guest.ROOT / "data" / "lab" / "rt-tests.tsv"
STAMP = debian.STAMP


def workloads(table: Path = TABLE) -> dict[str, list[str]]:
    """Workload name -> command (argv), in the table's order."""
    from .suite import read_table
    return read_table(table)


def _is_elf(p: Path) -> bool:
    with open(p, "rb") as f:
        return f.read(4) == b"\x7fELF"


def root(arch: str) -> Path:
    """The unpacked root for arch (downloaded and verified the first time)."""
    guest.check_arch(arch)
    return debian.made_root(guest.CACHE / "rt-tests" / arch, debian.DEB_ARCH[arch],
                            list(PACKAGES), guest.CACHE / "debian" / debian.DEB_ARCH[arch],
                            lambda deb, out: _lay_out(arch, deb, out))


def _lay_out(arch: str, deb: Path, root: Path) -> None:
    """Programs to bin/, the loader to lib/ (their PT_INTERP), libraries to lib/<triplet>/
    (on the loader's default search path); symlinks become copies (the guest's cpio has
    files only)."""
    libdir = deb / "usr" / "lib" / TRIPLET[arch]
    (root / "bin").mkdir(parents=True)
    (root / "lib" / TRIPLET[arch]).mkdir(parents=True)
    progs = [p for p in sorted((deb / "usr" / "bin").iterdir()) if p.is_file() and _is_elf(p)]
    if not progs:
        raise LabError(f"rt-tests for {arch}: the package holds no programs")
    for p in progs:
        shutil.copyfile(p, root / "bin" / p.name)
    loader = libdir / LOADER[arch]
    if not loader.is_file():
        raise LabError(f"libc6 for {arch} has no {LOADER[arch]}")
    shutil.copyfile(loader, root / "lib" / LOADER[arch])
    for lib in sorted(libdir.iterdir()):
        if ".so" in lib.name and lib.is_file() and lib.name != LOADER[arch] and _is_elf(lib):
            shutil.copyfile(lib, root / "lib" / TRIPLET[arch] / lib.name)
    for f in (root / "bin").iterdir():
        f.chmod(0o755)


def packages(arch: str) -> list[str]:
    """'name version release file' of what root(arch) was unpacked from."""
    return (root(arch) / STAMP).read_text().splitlines()
