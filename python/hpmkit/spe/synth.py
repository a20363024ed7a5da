"""Seeded generators of Arm SPE packet streams: realistic records, every packet kind, corruption.

Used by the differential tests against perf, the fuzz seed corpus, the benchmark and
`hpmkit spe synth`. Same seed, same bytes.
"""
from __future__ import annotations

import random
import struct

# data sources with Neoverse N1 meaning (spe-parser's map); c2c needs PEER-CPU/-CLUSTER/REMOTE
N1_SOURCES = [0, 8, 9, 10, 11, 12, 13, 14]


def addr(index: int, value: int, el: int = 0, ns: int = 1, ext: bool = False) -> bytes:
    """Address packet; PC/TGT/PBT carry EL and NS in the top bits."""
    if index in (0, 1, 4):
        value = (value & 0x00FFFFFFFFFFFFFF) | (el << 61) | (ns << 63)
    if ext or index > 7:
        return bytes([0x20 | (index >> 3), 0xB0 | (index & 7)]) + struct.pack("<Q", value)
    return bytes([0xB0 | index]) + struct.pack("<Q", value)


def counter(index: int, value: int, ext: bool = False) -> bytes:
    if ext or index > 7:
        return bytes([0x20 | (index >> 3), 0x98 | (index & 7)]) + struct.pack("<H", value)
    return bytes([0x98 | index]) + struct.pack("<H", value)


def _sized(base: int, value: int, size: int) -> bytes:
    code = {1: 0, 2: 1, 4: 2, 8: 3}[size]
    return bytes([base | (code << 4)]) + value.to_bytes(size, "little")


def events(value: int, size: int = 2) -> bytes:
    return _sized(0x42, value & ((1 << (8 * size)) - 1), size)


def data_source(value: int, size: int = 2) -> bytes:
    return _sized(0x43, value & ((1 << (8 * size)) - 1), size)


def context(value: int, index: int = 0) -> bytes:
    return bytes([0x64 | index]) + struct.pack("<I", value)


def op(cls: int, payload: int) -> bytes:
    return bytes([0x48 | cls, payload])


def timestamp(value: int) -> bytes:
    return b"\x71" + struct.pack("<Q", value)


END = b"\x01"


class RecordGen:
    """Realistic SPE records like a Neoverse N1 writes them (64-byte aligned with PAD)."""

    def __init__(self, seed: int = 1, pcs: int = 64, lines: int = 32, kernel: bool = True, pbt: bool = True):
        self.r = random.Random(seed)
        r = self.r
        self.user_pcs = [0xAAAAD0001000 + 4 * r.randrange(4096) for _ in range(pcs)]
        self.kern_pcs = [0xFFFF800008010000 + 4 * r.randrange(1 << 16) for _ in range(pcs // 4 or 1)]
        self.lines = [0xFFFFE0000000 + 64 * r.randrange(1 << 20) for _ in range(lines)]
        self.kernel = kernel
        self.pbt = pbt  # perf 6.1 keeps such records but prints an error line per packet
        self.ts = 1_000_000
        self.align = 64

    def record(self) -> bytes:
        r = self.r
        kern = self.kernel and r.random() < 0.1
        pc = r.choice(self.kern_pcs if kern else self.user_pcs)
        el = 1 if kern else 0
        kind = r.random()
        b = bytearray(addr(0, pc, el=el))
        if r.random() < 0.5:
            b += context(r.randrange(1, 5000), index=r.choice((0, 1)))
        issue = r.randrange(1, 40)
        if kind < 0.45:  # load
            src = r.choice(N1_SOURCES)
            ev = 0x16 | (0x8 if src else 0) | (0x300 if src >= 11 else 0) | (0x20 if r.random() < 0.05 else 0)
            lat = {0: 4, 8: 12, 9: 60, 10: 40, 11: 50, 12: 120, 13: 300, 14: 250}[src] + r.randrange(8)
            b += op(1, r.choice((0x00, 0x00, 0x00, 0x04, 0x16, 0x02)))
            b += events(ev, 2)
            b += counter(1, issue) + counter(0, min(issue + lat, 4095))
            va = r.choice(self.lines) + 8 * r.randrange(8)
            b += addr(2, va) + counter(2, r.randrange(1, 6))
            b += addr(3, 0x80000000000 | (va & 0xFFFFFFFFF), ns=1)
            b += data_source(src, 1)
        elif kind < 0.70:  # store
            b += op(1, r.choice((0x01, 0x01, 0x05, 0x03)))
            b += events(0x16 | (0x8 if r.random() < 0.2 else 0), 2)
            b += counter(1, issue) + counter(0, issue + r.randrange(2, 30))
            va = r.choice(self.lines) + 8 * r.randrange(8)
            b += addr(2, va) + counter(2, r.randrange(1, 6))
            b += addr(3, 0x80000000000 | (va & 0xFFFFFFFFF), ns=1)
        elif kind < 0.92:  # branch
            b += op(2, r.choice((0x00, 0x01, 0x02)))
            b += events(0x2 | (0x40 if r.random() < 0.3 else 0) | (0x80 if r.random() < 0.1 else 0), 2)
            b += counter(1, issue) + counter(0, issue + 1)
            b += addr(1, pc + 4 * r.randrange(-64, 64), el=el)
            if self.pbt and r.random() < 0.3:
                b += addr(4, pc - 4 * r.randrange(1, 64), el=el)
        else:  # other
            b += op(0, r.choice((0x00, 0x01, 0x08, 0x0A, 0x3E)))
            b += events(0x2, 2)
            b += counter(1, issue) + counter(0, issue + 1)
        self.ts += r.randrange(50, 500)
        pad = (-(len(b) + 9)) % self.align
        b += bytes(pad)
        b += timestamp(self.ts)
        return bytes(b)

    def stream(self, n: int) -> bytes:
        return b"".join(self.record() for _ in range(n))


def any_packet(r: random.Random) -> bytes:
    """One packet of any kind and index, including rare and unknown encodings."""
    k = r.randrange(12)
    if k == 0:
        return bytes(r.randrange(1, 20))
    if k == 1:
        return END
    if k == 2:
        return timestamp(r.getrandbits(64))
    if k == 3:
        return addr(r.choice((0, 1, 2, 3, 4, 5, 7, 9, 31)), r.getrandbits(64) if r.random() < 0.3 else
                    r.getrandbits(56), el=r.randrange(4), ns=r.randrange(2), ext=r.random() < 0.2)
    if k == 4:
        return counter(r.choice((0, 1, 2, 3, 6, 13)), r.getrandbits(16), ext=r.random() < 0.2)
    if k == 5:
        return context(r.getrandbits(32), r.randrange(4))
    if k == 6:
        return op(r.randrange(4), r.getrandbits(8))
    if k == 7:
        return events(r.getrandbits(64), r.choice((1, 2, 4, 8)))
    if k == 8:
        return data_source(r.getrandbits(64), r.choice((1, 2, 4, 8)))
    if k == 9:  # alignment packet (extended header, second byte 0)
        return bytes([0x20 | r.randrange(4), 0])
    if k == 10:
        return bytes([r.getrandbits(8)])  # a random header byte, often not a packet
    return addr(0, r.getrandbits(56), el=r.randrange(4), ns=r.randrange(2))


def any_stream(seed: int, npackets: int, corrupt: float = 0.0) -> bytes:
    """Random packets; with corrupt > 0, that fraction of packets gets bytes flipped, cut or inserted."""
    r = random.Random(seed)
    out = bytearray()
    for _ in range(npackets):
        p = bytearray(any_packet(r))
        if corrupt and r.random() < corrupt:
            how = r.randrange(3)
            if how == 0:
                i = r.randrange(len(p))
                p[i] ^= 1 << r.randrange(8)
            elif how == 1 and len(p) > 1:
                del p[r.randrange(1, len(p)):]
            else:
                p.insert(r.randrange(len(p) + 1), r.getrandbits(8))
        out += p
    return bytes(out)
