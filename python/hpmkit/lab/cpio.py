"""Write a newc cpio archive (the initramfs format Linux unpacks), deterministically.

No external cpio: the format is a fixed ASCII header per entry (man 5 cpio, "New ASCII
Format"), names and data padded to 4 bytes, and a TRAILER!!! entry at the end.
"""
from __future__ import annotations

import io

_DIR, _FILE = 0o040755, 0o100755


def _entry(out: io.BytesIO, ino: int, name: str, mode: int, data: bytes = b"") -> None:
    nm = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, 2 if mode == _DIR else 1, 0, len(data), 0, 0, 0, 0, len(nm), 0]
    out.write(b"070701" + b"".join(b"%08X" % f for f in fields))
    out.write(nm)
    out.write(b"\0" * (-(110 + len(nm)) % 4))
    out.write(data)
    out.write(b"\0" * (-len(data) % 4))


def build(files: dict[str, bytes], dirs: list[str]) -> bytes:
    """files: archive path -> content (all executable); dirs: folders to create first."""
    out = io.BytesIO()
    ino = 1
    seen = set()
    for d in dirs:
        parts = d.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p not in seen:
                seen.add(p)
                _entry(out, ino, p, _DIR)
                ino += 1
    for name, data in sorted(files.items()):
        _entry(out, ino, name.strip("/"), _FILE, data)
        ino += 1
    _entry(out, 0, "TRAILER!!!", 0)
    out.write(b"\0" * (-out.tell() % 512))
    return out.getvalue()
