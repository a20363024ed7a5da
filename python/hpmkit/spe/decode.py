"""Decode an SPE input (perf.data with AUXTRACE, or a raw SPE buffer) into record batches.

Streaming: AUX data is read in chunks and decoded by one C decoder per AUX queue, and records
come out in numpy batches (or raw ones, for the table writer, which needs no numpy), so a
multi-GB file never sits in memory. Progress goes to stderr when asked.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import FormatError, ReadError
from ..perfdata import PerfData
from ..perfdata import format as PF
from . import perfmeta
from .native import Decoder, Stats


@dataclass
class Source:
    """What was decoded and how it went."""
    path: str
    kind: str  # "perf.data" or "raw"
    stats: Stats = field(default_factory=Stats)
    info: perfmeta.SpeInfo | None = None
    time_conv: perfmeta.TimeConv | None = None
    aux_buffers: int = 0
    aux_bytes: int = 0
    truncated_bytes: int = 0
    cpus: set = field(default_factory=set)

    def problems(self) -> list[str]:
        out = self.stats.problems()
        if self.truncated_bytes:
            out.append(f"{self.truncated_bytes} byte(s) of AUX data missing from the cut-short file")
        return out


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal, or when forced)."""

    def __init__(self, total: int, enabled: bool | None = None, label: str = "decoding"):
        self.total = max(total, 1)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.label = label
        self.last = 0.0
        self.t0 = time.monotonic()

    def update(self, done: int, records: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.2 and done < self.total:
            return
        self.last = now
        frac = min(done / self.total, 1.0)
        bar = "#" * int(30 * frac)
        rate = records / max(now - self.t0, 1e-9)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}% {records} records ({rate / 1e6:.1f} M/s)")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def open_kind(path: str, raw: bool | None) -> str:
    if raw:
        return "raw"
    if path == "-":
        return "perf.data"      # standard input: `perf record -o - | hpmkit spe ...`
    if not os.path.exists(path):
        raise ReadError(path, "no such file")
    if os.path.isdir(path):
        raise ReadError(path, "is a directory", "give a perf.data file or a raw SPE buffer")
    if perfmeta.is_perf_data(path):
        return "perf.data"
    if raw is None:
        raise FormatError(path, "is not a perf.data file (no PERFILE2 magic)",
                          "pass --raw to decode it as a raw SPE buffer (bytes as the CPU wrote them)")
    return "raw"


def batches(path: str | os.PathLike, raw: bool | None = None, cpu: int = -1, truncated_ok: bool = False,
            progress: bool | None = False, chunk: int = perfmeta.CHUNK,
            src: Source | None = None, arrays: bool = True) -> Iterator:
    """Record arrays (native.RECORD_DTYPE; native.RawBatch with arrays=False) in stream order
    per queue; `src` collects the statistics."""
    path = os.fspath(path)
    kind = open_kind(path, raw)
    if src is None:
        src = Source(path, kind)
    src.kind = kind
    if kind == "raw":
        yield from _raw(path, cpu, chunk, src, progress, arrays)
    else:
        yield from _perf(path, truncated_ok, chunk, src, progress, arrays)


def _raw(path, cpu, chunk, src, progress, arrays=True):
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    with f:
        size = os.fstat(f.fileno()).st_size
        bar = Progress(size, progress)
        d = Decoder(arrays=arrays)
        d.set_origin(cpu, -1, 0)
        buf = bytearray(min(chunk, max(size, 1)))
        mv = memoryview(buf)
        done = nrec = 0
        while True:
            n = f.readinto(mv)
            if not n:
                break
            done += n
            for b in d.feed(mv[:n], last=done >= size):
                nrec += len(b)
                yield b
            bar.update(done, nrec)
        d.flush()
        bar.done()
        src.stats = d.stats()
        src.aux_buffers, src.aux_bytes = 1, size
        src.cpus.add(cpu)


CUT_HINT = "copy the file again, or pass --truncated-ok to decode the complete part"


def _perf(path, truncated_ok, chunk, src, progress, arrays=True):
    with PerfData(path) as pd:
        declared = getattr(pd, "_declared_end", pd.data_end)
        if not pd.pipe and declared > pd.data_end and not truncated_ok:
            raise FormatError(path, f"data section ends at offset {declared:#x} but the file has "
                              f"{pd.size} bytes (truncated copy?)", CUT_HINT)
        total = (pd.data_end or 0) - pd.data_offset
        bar = Progress(total, progress)
        decoders: dict[int, Decoder] = {}
        nrec = 0
        for rec in pd.records():
            if rec.type == PF.REC["AUXTRACE_INFO"]:
                src.info = perfmeta.parse_auxtrace_info(path, rec.offset, rec.payload)
                continue
            if rec.type == PF.REC["TIME_CONV"]:
                src.time_conv = perfmeta.time_conv(path, rec)
                continue
            if rec.type != PF.REC["AUXTRACE"]:
                continue
            ab = perfmeta.aux_header(path, rec)
            if src.info is None:
                raise FormatError(path, f"AUXTRACE data at offset {rec.offset:#x} comes before any "
                                  "AUXTRACE_INFO record: not an SPE recording perf wrote",
                                  "record with 'perf record -e arm_spe_0//'")
            d = decoders.get(ab.idx)
            if d is None:
                d = decoders[ab.idx] = Decoder(arrays=arrays)
            d.set_origin(ab.cpu, ab.tid, 0)
            src.aux_buffers += 1
            src.cpus.add(ab.cpu)
            # the decoder is told which piece is the last: a file says how much is there
            expect = ab.size if pd.data_end is None else min(ab.size, pd.data_end - rec.aux_offset)
            got, ended = 0, False
            for piece in pd.aux_chunks(rec, chunk):
                got += len(piece)
                ended = got >= expect
                for b in d.feed(piece, last=ended):
                    nrec += len(b)
                    yield b
                bar.update(rec.aux_offset - pd.data_offset + got, nrec)
            if not ended:
                for b in d.feed(b"", last=True):
                    nrec += len(b)
                    yield b
            src.aux_bytes += got
            if got < ab.size and not truncated_ok:
                raise FormatError(path, f"AUXTRACE record at offset {rec.offset:#x} announces {ab.size} "
                                  f"bytes of SPE data but only {got} remain in the file (truncated, or a "
                                  "wrong AUX size)", CUT_HINT)
        if src.info is None:
            raise FormatError(path, "has no AUXTRACE_INFO record: it holds no SPE trace",
                              "record with 'perf record -e arm_spe_0//' (perf report -D shows what is inside)")
        bar.done()
        for d in decoders.values():
            d.flush()
            src.stats.add(d.stats())
        cut = pd.truncation
        if cut is not None:
            src.truncated_bytes = cut.missing + cut.partial
            if not truncated_ok and cut.missing + cut.partial:
                raise FormatError(path, f"{cut.describe()} (truncated copy?)", CUT_HINT)


def decode_all(path, **kw) -> tuple:
    """Every record of a file in one array (for analyses of files that fit in memory)."""
    src = Source(os.fspath(path), "")
    parts = list(batches(path, src=src, **kw))
    import numpy as np
    from .native import RECORD_DTYPE
    recs = np.concatenate(parts) if parts else np.zeros(0, dtype=RECORD_DTYPE)
    return recs, src
