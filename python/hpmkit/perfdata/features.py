"""perf_event_attr and the header feature sections of perf.data (tools/perf/util/header.c
layouts), decoded from bytes. The same decoders serve file mode (sections after the data) and
pipe mode (PERF_RECORD_HEADER_FEATURE records).

A feature that does not decode raises FeatureError; the reader turns that into a note and goes
on without it, as perf does (perf ignores a feature it cannot read)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import format as F


class FeatureError(ValueError):
    pass


@dataclass
class Attr:
    """One perf_event_attr of the file with the sample ids the kernel gave its instances."""
    index: int
    type: int
    config: int
    sample_period: int          # the period, or the frequency when freq is set
    freq: bool
    sample_type: int
    read_format: int
    flags: int
    size: int = 0               # attr.size as written (0 in the oldest files)
    branch_sample_type: int = 0
    sample_regs_user: int = 0
    sample_regs_intr: int = 0
    config1: int = 0
    config2: int = 0
    ids: list[int] = field(default_factory=list)
    name: str | None = None     # from EVENT_DESC / EVENT_UPDATE when present

    def flag(self, name: str) -> bool:
        return bool(self.flags >> F.ATTR_FLAG_BITS[name] & 1)

    @property
    def sample_id_all(self) -> bool:
        return self.flag("sample_id_all")


def parse_attr(buf, off: int, size: int, index: int) -> Attr:
    """A perf_event_attr of `size` bytes at buf[off:]. Raises FeatureError."""
    if size < F.ATTR_SIZE_VER0 or off + size > len(buf):
        raise FeatureError(f"perf_event_attr of {size} bytes does not fit "
                           f"(at least {F.ATTR_SIZE_VER0} expected)")
    typ, asize, config, period, stype, rfmt, flags = struct.unpack_from("<IIQQQQQ", buf, off)

    def get(o: int) -> int:
        return struct.unpack_from("<Q", buf, off + o)[0] if size >= o + 8 else 0
    if stype & ~F.SAMPLE_KNOWN:
        raise FeatureError(f"sample_type {stype:#x} has bits this reader does not know "
                           f"({stype & ~F.SAMPLE_KNOWN:#x})")
    return Attr(index=index, type=typ, config=config, sample_period=period,
                freq=bool(flags >> F.ATTR_FLAG_BITS["freq"] & 1), sample_type=stype,
                read_format=rfmt, flags=flags, size=asize, config1=get(56), config2=get(64),
                branch_sample_type=get(72), sample_regs_user=get(80), sample_regs_intr=get(96))


def cstr(b) -> str:
    return bytes(b).split(b"\0", 1)[0].decode("utf-8", "replace")


class Cursor:
    """Sequential reads inside one feature's bytes."""

    def __init__(self, b: bytes):
        self.b, self.p = b, 0

    def u32(self) -> int:
        if self.p + 4 > len(self.b):
            raise FeatureError("ends inside a number")
        (v,) = struct.unpack_from("<I", self.b, self.p)
        self.p += 4
        return v

    def u64s(self, n: int) -> tuple[int, ...]:
        if self.p + 8 * n > len(self.b):
            raise FeatureError("ends inside a list")
        v = struct.unpack_from(f"<{n}Q", self.b, self.p)
        self.p += 8 * n
        return v

    def take(self, n: int) -> bytes:
        if self.p + n > len(self.b):
            raise FeatureError(f"a {n}-byte field runs past its end")
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def string(self) -> str:
        """A perf_header_string: u32 length, then that many bytes, NUL padded."""
        return cstr(self.take(self.u32()))


def string(b: bytes) -> str | None:
    """A string feature (HOSTNAME, OSRELEASE, ARCH, CPUDESC, CPUID...); an empty section,
    as perf 3.x wrote for a CPU it could not describe, is no string."""
    if not b:
        return None
    return Cursor(b).string() or None


def cmdline(b: bytes) -> list[str]:
    c = Cursor(b)
    return [c.string() for _ in range(c.u32())]


def nrcpus(b: bytes) -> tuple[int, int]:
    """(available, online)."""
    c = Cursor(b)
    return c.u32(), c.u32()


def event_desc(b: bytes) -> list[tuple[Attr, str, list[int]]]:
    """(attr, event name, ids) per event."""
    c = Cursor(b)
    nre, sz = c.u32(), c.u32()
    out = []
    for i in range(nre):
        raw = c.take(sz)
        a = parse_attr(raw, 0, sz, i)
        nids = c.u32()
        name = c.string()
        ids = list(c.u64s(nids)) if nids else []
        out.append((a, name, ids))
    return out


def build_ids(b: bytes) -> list[tuple[int, bytes, str]]:
    """(pid, build-id bytes, file name) per DSO perf saw samples in."""
    p, out = 0, []
    while p + 8 <= len(b):
        _typ, misc, rsize = struct.unpack_from("<IHH", b, p)
        if rsize < 36 or p + rsize > len(b):
            raise FeatureError(f"an entry of {rsize} bytes does not fit")
        (pid,) = struct.unpack_from("<i", b, p + 8)
        raw = bytes(b[p + 12:p + 36])
        n = raw[20] if misc & F.MISC_BUILD_ID_SIZE and 0 < raw[20] <= 20 else 20
        bid = raw[:n]
        if not misc & F.MISC_BUILD_ID_SIZE:
            bid = bid.rstrip(b"\0") or bid   # old files: zero padded 20 bytes
        out.append((pid, bid, cstr(b[p + 36:p + rsize])))
        p += rsize
    return out


def compressed(b: bytes) -> dict:
    """HEADER_COMPRESSED: how `perf record -z` compressed the data."""
    c = Cursor(b)
    version, typ, level, ratio, mmap_len = (c.u32() for _ in range(5))
    return {"version": version, "type": "zstd" if typ == 1 else f"type {typ}", "level": level,
            "ratio": ratio, "mmap_len": mmap_len}


def kallsyms_text(b: bytes) -> str:
    """The hpmkit kallsyms section (bit 250): /proc/kallsyms text, stored raw or as a
    perf_header_string."""
    if len(b) >= 4:
        (n,) = struct.unpack_from("<I", b, 0)
        # kallsyms text starts with hex digits, which read as a u32 far above the size
        if 0 < n <= len(b) - 4:
            return cstr(b[4:4 + n])
    return cstr(b)
