"""A shell for the lab guests: Debian's busybox-static, for `hpmkit lab run --shell`.

The guest runs one command and has no shell of its own (its /bin holds hpmkit's programs).
Pipes, redirections and loops need one: `root(arch)` is a folder laid out like the guest's
root with bin/busybox and bin/sh (the same static program; busybox picks the applet by the
name it was run as), unpacked once into .cache/lab/busybox/<arch>/ from Debian's package,
checked against Debian's signed index like rt-tests (hpmkit.lab.debian). It is added to the
guest only when asked for, so the guest of every other run stays as it was.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from . import debian, guest
from .protocol import LabError

PACKAGE = "busybox-static"
STAMP = debian.STAMP


def base() -> Path:
    """The folder with one root per arch (what --root takes)."""
    return guest.CACHE / "busybox"


def root(arch: str) -> Path:
    """The unpacked root for arch (downloaded and verified the first time)."""
    guest.check_arch(arch)
    return debian.made_root(base() / arch, debian.DEB_ARCH[arch], [PACKAGE],
                            guest.CACHE / "debian" / debian.DEB_ARCH[arch], _lay_out)


def _lay_out(deb: Path, root: Path) -> None:
    """bin/busybox and bin/sh, the same program (busybox picks the applet by its name)."""
    found = [p for p in (deb / "usr" / "bin" / "busybox", deb / "bin" / "busybox") if p.is_file()]
    if not found:
        raise LabError(f"{PACKAGE} holds no busybox program")
    (root / "bin").mkdir(parents=True)
    for name in ("busybox", "sh"):
        shutil.copyfile(found[0], root / "bin" / name)
        (root / "bin" / name).chmod(0o755)


def wrap(argv: list[str]) -> list[str]:
    """The command for `sh -c`: one argument is the script as typed; several are joined
    with spaces, as a shell would see them on one line."""
    return ["sh", "-c", argv[0] if len(argv) == 1 else " ".join(argv)]
