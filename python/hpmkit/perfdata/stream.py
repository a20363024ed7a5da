"""The bytes of a perf.data data section, read forward in bounded pieces.

A file is read with positioned reads (it can be walked again, and AUX payloads are skipped
without reading them); a pipe (`perf record -o -`, stdin) is read once, in order. Either way
at most a few MB sit in memory, however long the file: the buffer holds the records not yet
consumed plus one read (it grows only for a record longer than that).
"""
from __future__ import annotations

import ctypes
import os

CHUNK = 4 << 20


class Source:
    """Forward reader over [start, end) of a file or stream (end None: to EOF)."""

    def __init__(self, f=None, start: int = 0, end: int | None = None, data: bytes | None = None,
                 chunk: int = CHUNK):
        self.f = f
        self.fd = None
        if f is not None:
            try:
                self.fd = f.fileno()
                os.fstat(self.fd)
                self.seekable = f.seekable() and os.path.isfile(f"/proc/self/fd/{self.fd}")
            except (OSError, ValueError, AttributeError):
                self.seekable = False
        else:
            self.seekable = False
        self.chunk = chunk
        self.end = end
        self.eof = False
        if data is not None:             # an in-memory piece (decompressed records)
            self._alloc(max(len(data), 64))
            self.mv[:len(data)] = data
            self.lo, self.hi = 0, len(data)
            self.base = start
            self.pos = start + len(data)
            self.eof = True
        else:
            self._alloc(chunk + 65536)
            self.lo = self.hi = 0
            self.base = self.pos = start     # file offset of buffer index 0 / next unread byte

    def _alloc(self, cap: int) -> None:
        self.cbuf = (ctypes.c_char * cap)()
        self.mv = memoryview(self.cbuf).cast("B")
        self.addr = ctypes.addressof(self.cbuf)

    @property
    def avail(self) -> int:
        return self.hi - self.lo

    @property
    def offset(self) -> int:
        """File offset of the first unconsumed byte."""
        return self.base + self.lo

    def _read(self, n: int) -> int:
        """Read up to n bytes into the buffer at hi; returns how many."""
        if self.end is not None:
            n = min(n, self.end - self.pos)
        if n <= 0:
            return 0
        view = self.mv[self.hi:self.hi + n]
        if self.seekable:
            got = os.preadv(self.fd, [view], self.pos)
        else:
            got = self.f.readinto(view) or 0
        self.hi += got
        self.pos += got
        return got

    def fill(self, need: int) -> int:
        """Make at least `need` bytes available unless the data ends first; returns avail."""
        while self.avail < need and not self.eof:
            cap = len(self.mv)
            if self.lo and (self.hi + self.chunk > cap or self.avail + need > cap - self.lo):
                n = self.avail
                self.mv[:n] = self.mv[self.lo:self.hi]
                self.base += self.lo
                self.lo, self.hi = 0, n
            if need > len(self.mv) - self.lo:
                old = bytes(self.mv[self.lo:self.hi])
                self._alloc(need + self.chunk)
                self.mv[:len(old)] = old
                self.base += self.lo
                self.lo, self.hi = 0, len(old)
            want = max(min(self.chunk, len(self.mv) - self.hi), need - self.avail)
            if not self._read(want):
                self.eof = True
        return self.avail

    def consume(self, n: int) -> None:
        self.lo += n

    def skip(self, n: int) -> int:
        """Pass over n bytes (read or not); returns how many there were."""
        if n <= self.avail:
            self.lo += n
            return n
        done = self.avail
        self.lo = self.hi
        left = n - done
        if self.seekable:
            limit = self.end if self.end is not None else os.fstat(self.fd).st_size
            step = max(0, min(left, limit - self.pos))
            self.pos += step
            self.base = self.pos
            self.lo = self.hi = 0
            if step < left:
                self.eof = True
            return done + step
        while left:
            self.base += self.hi
            self.lo = self.hi = 0
            got = self._read(min(left, len(self.mv)))
            if not got:
                self.eof = True
                break
            left -= got
            done += got
            self.lo = got
        return done

    def chunks(self, n: int, chunk: int):
        """The next n bytes (fewer if the data ends) in pieces of at most `chunk`."""
        left = n
        while left:
            if not self.avail and not self.fill(1):
                return
            k = min(left, self.avail, chunk)
            yield self.mv[self.lo:self.lo + k]
            self.lo += k
            left -= k
