"""Parse what lab/init.c prints on the guest console into a result (status, stdout, files).

Every file travels base64 between markers with its size and CRC-32; a kernel message
interleaved on the console or a guest that died mid-transfer is an error naming the file,
never a silently shortened result.
"""
from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass, field

from ..errors import HpmkitError

_MARK = re.compile(r"@@HPMLAB (\w+)(?: (.*?))?@@")


class LabError(HpmkitError):
    """The guest did not produce a usable result (panic, hang, lost output, bad command)."""


@dataclass
class GuestResult:
    status: int | None = None
    exec_errno: int | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    done: bool = False

    @property
    def stdout(self) -> bytes:
        return self.files.get("stdout", b"")

    @property
    def stderr(self) -> bytes:
        return self.files.get("stderr", b"")


def _console_tail(console: str, n: int = 6) -> str:
    lines = [l.strip() for l in console.splitlines() if l.strip()]
    return " | ".join(lines[-n:]) or "(nothing)"


def parse(console: str, arch: str) -> GuestResult:
    res = GuestResult()
    lines = console.replace("\r", "").split("\n")
    i, begun = 0, False
    while i < len(lines):
        m = _MARK.search(lines[i])
        i += 1
        if not m:
            continue
        kind, arg = m.group(1), m.group(2) or ""
        begun = begun or kind == "BEGIN"
        try:
            i = _marker(res, kind, arg, lines, i, arch, console)
        except ValueError:
            # console noise inside a marker line (a status that is no number, a FILE line
            # without its size or CRC): a damaged result, said as one, never a traceback
            raise LabError(f"{arch} guest: a damaged result line ({lines[i - 1].strip()[:80]!r}): "
                           "console noise during the report; rerun") from None
    if not begun:
        panic = next((l.strip() for l in lines if "Kernel panic" in l), None)
        if panic:
            raise LabError(f"{arch} guest: {panic}")
        raise LabError(f"{arch} guest never started the command (console: {_console_tail(console)})")
    if not res.done:
        raise LabError(f"{arch} guest stopped before reporting its result "
                       f"(console: {_console_tail(console)})")
    return res


def _marker(res: GuestResult, kind: str, arg: str, lines: list[str], i: int, arch: str,
            console: str) -> int:
    """One marker line into res; returns the index of the next line to read."""
    if kind == "STATUS":
        res.status = int(arg)
    elif kind == "EXECFAIL":
        res.exec_errno = int(arg)
    elif kind == "WARN":
        res.warnings.append(arg)
    elif kind == "FILE":
        name, size, crc = arg.rsplit(" ", 2)
        chunks = []
        while i < len(lines) and "@@HPMLAB END@@" not in lines[i]:
            chunks.append(lines[i].strip())
            i += 1
        if i == len(lines):
            raise LabError(f"{arch} guest: transfer of '{name}' was cut off "
                           f"(console ended: {_console_tail(console)})")
        i += 1
        try:
            data = base64.b64decode("".join(chunks), validate=True)
        except (binascii.Error, ValueError):
            data = b""
        if len(data) != int(size) or zlib.crc32(data) != int(crc, 16):
            raise LabError(f"{arch} guest: '{name}' arrived damaged ({len(data)} of {size} "
                           "bytes or a CRC mismatch: console noise during the transfer); rerun")
        res.files[name] = data
    elif kind == "DONE":
        res.done = True
    return i
