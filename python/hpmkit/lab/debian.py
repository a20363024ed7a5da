"""Binary packages from Debian's archive, unpacked into a root folder for the lab guests.

Third-party programs (rt-tests, seed 001's workloads) are not built here: Debian's source
package for them is not served, its binary packages are, for riscv64 and arm64 alike (trixie,
the first release with riscv64). They are dynamically linked, so their loader and libraries
come along from the same release (libc6, libnuma1, libgcc-s1).

Trust: the release file (InRelease) is checked with gpgv against the archive keys Debian
installs (debian-archive-keyring), the package index against the release file's SHA-256,
and every .deb against the index's. Nothing unverified is unpacked.
"""
from __future__ import annotations

import fcntl
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from .protocol import LabError

MIRROR = os.environ.get("HPMKIT_DEBIAN_MIRROR", "http://deb.debian.org/debian").rstrip("/")
RELEASE = "trixie"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
DEB_ARCH = {"riscv64": "riscv64", "aarch64": "arm64"}


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.read()
    except (urllib.error.URLError, OSError) as e:
        raise LabError(f"cannot download {url}: {getattr(e, 'reason', e)} (set "
                       "HPMKIT_DEBIAN_MIRROR to a reachable Debian mirror)") from None


def _verified_release(cache: Path) -> str:
    """The release file's signed text, checked with gpgv (debian-archive-keyring)."""
    if not KEYRING.is_file() or not shutil.which("gpgv"):
        raise LabError(f"checking Debian's release signature needs gpgv and {KEYRING} "
                       "(apt-get install gpgv debian-archive-keyring)")
    raw = _get(f"{MIRROR}/dists/{RELEASE}/InRelease")
    cache.mkdir(parents=True, exist_ok=True)
    f = cache / f"{RELEASE}.InRelease"
    f.write_bytes(raw)
    p = subprocess.run(["gpgv", "--keyring", str(KEYRING), str(f)], capture_output=True, text=True)
    if p.returncode:
        tail = " | ".join(p.stderr.strip().splitlines()[-2:])
        raise LabError(f"{MIRROR}/dists/{RELEASE}/InRelease: bad or unknown signature ({tail})")
    text = raw.decode(errors="replace")
    # only the signed part counts
    m = re.search(r"-----BEGIN PGP SIGNED MESSAGE-----\n(?:Hash:.*\n)*\n(.*?)\n-----BEGIN PGP SIGNATURE",
                  text, re.S)
    if not m:
        raise LabError(f"{RELEASE} InRelease is not a clear-signed release file")
    return m.group(1)


def _stanzas(text: str):
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, val = line.partition(":")
                fields[key] = val.strip()
        if fields:
            yield fields


def package_index(deb_arch: str, cache: Path) -> dict[str, dict[str, str]]:
    """Package name -> its index fields (Version, Filename, SHA256, ...) for deb_arch."""
    release = _verified_release(cache)
    name = f"main/binary-{deb_arch}/Packages.xz"
    want = None
    in_sha256 = False
    for line in release.splitlines():
        if not line.startswith(" "):
            in_sha256 = line.startswith("SHA256:")
            continue
        parts = line.split()
        if in_sha256 and len(parts) == 3 and parts[2] == name:
            want = parts[0]
    if want is None:
        raise LabError(f"Debian {RELEASE} has no {name} (architecture {deb_arch})")
    raw = _get(f"{MIRROR}/dists/{RELEASE}/{name}")
    if hashlib.sha256(raw).hexdigest() != want:
        raise LabError(f"{name}: SHA-256 differs from the signed release file (mirror in the "
                       "middle of an update? try again)")
    return {s["Package"]: s for s in _stanzas(lzma.decompress(raw).decode(errors="replace"))
            if "Package" in s}


def fetch(deb_arch: str, packages: list[str], cache: Path) -> list[tuple[str, str, Path]]:
    """Download packages (checked against the signed index): [(name, version, .deb path)]."""
    index = package_index(deb_arch, cache)
    out = []
    for name in packages:
        if name not in index:
            raise LabError(f"Debian {RELEASE} has no package {name} for {deb_arch}")
        s = index[name]
        deb = cache / Path(s["Filename"]).name
        if not (deb.is_file() and hashlib.sha256(deb.read_bytes()).hexdigest() == s["SHA256"]):
            raw = _get(f"{MIRROR}/{s['Filename']}")
            if hashlib.sha256(raw).hexdigest() != s["SHA256"]:
                raise LabError(f"{s['Filename']}: SHA-256 differs from Debian's index")
            tmp = deb.with_name(f".{deb.name}.tmp")
            tmp.write_bytes(raw)
            tmp.replace(deb)
        out.append((name, s["Version"], deb))
    return out


def unpack(debs: list[Path], dest: Path) -> None:
    """dpkg-deb -x every package into dest (made fresh)."""
    if not shutil.which("dpkg-deb"):
        raise LabError("unpacking Debian packages needs dpkg-deb (Debian's dpkg)")
    dest.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        p = subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], capture_output=True, text=True)
        if p.returncode:
            raise LabError(f"dpkg-deb -x {deb.name} failed: {p.stderr.strip()}")


def staging(parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".unpack-", dir=parent))


STAMP = ".packages"     # in a made root: 'name version release file' per package


def made_root(d: Path, deb_arch: str, packages: list[str], cache: Path,
              lay_out: Callable[[Path, Path], None]) -> Path:
    """The folder d, made once from Debian's packages: fetched and verified into cache,
    unpacked, and laid out by lay_out(unpacked, root); STAMP names what it came from. Made
    beside d and renamed into place (whole or not at all); concurrent runs make it once."""
    if (d / STAMP).is_file():
        return d
    d.parent.mkdir(parents=True, exist_ok=True)
    with open(d.parent / f".{d.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (d / STAMP).is_file():
            return d
        got = fetch(deb_arch, packages, cache)
        work = staging(d.parent)
        try:
            unpack([deb for _, _, deb in got], work / "deb")
            lay_out(work / "deb", work / "root")
            (work / "root" / STAMP).write_text(
                "".join(f"{name} {ver} {RELEASE} {deb.name}\n" for name, ver, deb in got))
            if d.exists():
                shutil.rmtree(d)
            (work / "root").rename(d)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return d
