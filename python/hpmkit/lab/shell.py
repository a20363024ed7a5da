"""A shell for the lab guests: Debian's busybox-static, for `hpmkit lab run --shell`.

The guest runs one command and has no shell of its own (its /bin holds hpmkit's programs).
Pipes, redirections and loops need one: `root(arch)` is a folder laid out like the guest's
root with bin/busybox and bin/sh (the same static program; busybox picks the applet by the
name it was run as), unpacked once into .cache/lab/busybox/<arch>/ from Debian's package,
checked against Debian's signed index like rt-tests (hpmkit.lab.debian). It is added to the
guest only when asked for, so the guest of every other run stays as it was.
"""
from __future__ import annotations

import fcntl
import shutil
from pathlib import Path

from . import debian, guest
from .protocol import LabError

PACKAGE = "busybox-static"
STAMP = ".packages"


def base() -> Path:
    """The folder with one root per arch (what --root takes)."""
    return guest.CACHE / "busybox"


def root(arch: str) -> Path:
    """The unpacked root for arch (downloaded and verified the first time)."""
    guest.check_arch(arch)
    d = base() / arch
    if (d / STAMP).is_file():
        return d
    base().mkdir(parents=True, exist_ok=True)
    with open(base() / f".{arch}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # two runs at once unpack once
        if (d / STAMP).is_file():
            return d
        got = debian.fetch(debian.DEB_ARCH[arch], [PACKAGE],
                           guest.CACHE / "debian" / debian.DEB_ARCH[arch])
        work = debian.staging(base())
        try:
            debian.unpack([deb for _, _, deb in got], work / "deb")
            found = [p for p in (work / "deb" / "usr" / "bin" / "busybox",
                                 work / "deb" / "bin" / "busybox") if p.is_file()]
            if not found:
                raise LabError(f"{PACKAGE} for {arch} holds no busybox program")
            prog = found[0]
            (work / "root" / "bin").mkdir(parents=True)
            for name in ("busybox", "sh"):
                shutil.copyfile(prog, work / "root" / "bin" / name)
                (work / "root" / "bin" / name).chmod(0o755)
            (work / "root" / STAMP).write_text(
                "".join(f"{name} {ver} {debian.RELEASE} {deb.name}\n" for name, ver, deb in got))
            if d.exists():
                shutil.rmtree(d)
            (work / "root").rename(d)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return d


def wrap(argv: list[str]) -> list[str]:
    """The command for `sh -c`: one argument is the script as typed; several are joined
    with spaces, as a shell would see them on one line."""
    return ["sh", "-c", argv[0] if len(argv) == 1 else " ".join(argv)]
