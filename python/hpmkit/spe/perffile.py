"""The parts of perf.data an Arm SPE decode needs, read in a stream, and a writer for tests.

Read: the file header, the event attributes (file or pipe mode), and from the data section the
records PERF_RECORD_AUXTRACE_INFO (70: SPE metadata, v1 or v2), PERF_RECORD_AUXTRACE (71:
announces `size` bytes of AUX trace that follow it in the file) and PERF_RECORD_TIME_CONV (79:
timer ticks -> perf time). Other records are skipped by their header size. AUX data is handed
out in chunks, so memory stays bounded whatever the file size.

Minimal on purpose: python/hpmkit/perfdata/ (a general perf.data reader) is being written in
parallel; this module can be folded into it.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from ..errors import FormatError, ReadError

MAGIC = b"PERFILE2"
MAGIC_BE = b"2ELIFREP"
REC_MMAP = 1
REC_MMAP2 = 10
REC_HEADER_ATTR = 64
REC_FINISHED_ROUND = 68
REC_AUXTRACE_INFO = 70
REC_AUXTRACE = 71
REC_TIME_CONV = 79
AUXTRACE_ARM_SPE = 4
AUXTRACE_NAMES = {1: "Intel PT", 2: "Intel BTS", 3: "CoreSight ETM", 4: "Arm SPE", 5: "s390 CPU-MF",
                  6: "HiSilicon PTT"}
V2_CPU_MAGIC = 0x1010101010101010
AUX_HEADER = struct.Struct("<QQQIII4x")  # size, offset, reference, idx, tid, cpu
_WANTED = {71, 70, 79, 64, 1, 10}  # records whose body is read; the others are skipped by size
CHUNK = 16 << 20

HINT = "record it with 'perf record -e arm_spe_0//' on an Arm machine with SPE, or check the copy"


@dataclass
class SpeCpu:
    cpu: int
    midr: int | None = None
    pmu_type: int | None = None
    min_interval: int | None = None


@dataclass
class SpeInfo:
    """AUXTRACE_INFO of an Arm SPE recording."""
    version: int
    pmu_type: int
    per_cpu_mmaps: int | None = None
    cpus: list[SpeCpu] = field(default_factory=list)


@dataclass
class TimeConv:
    time_shift: int
    time_mult: int
    time_zero: int
    time_cycles: int = 0
    time_mask: int = 0
    cap_user_time_zero: bool = True
    cap_user_time_short: bool = False

    def to_perf_time(self, ticks):
        """Timer ticks (SPE timestamps) -> perf clock nanoseconds; works on numpy uint64 arrays."""
        import numpy as np
        cyc = np.asarray(ticks, dtype=np.uint64)
        if self.cap_user_time_short:
            cyc = np.uint64(self.time_cycles) + ((cyc - np.uint64(self.time_cycles)) & np.uint64(self.time_mask))
        shift = np.uint64(self.time_shift)
        mult = np.uint64(self.time_mult)
        quot = cyc >> shift
        rem = cyc & np.uint64((1 << self.time_shift) - 1)
        return np.uint64(self.time_zero) + quot * mult + ((rem * mult) >> shift)


@dataclass
class Attr:
    type: int
    config: int
    sample_type: int
    flags: int


@dataclass
class Mmap:
    """An executable mapping from a PERF_RECORD_MMAP/MMAP2: where a file was loaded."""
    pid: int
    start: int
    length: int
    pgoff: int
    filename: str


@dataclass
class AuxBuffer:
    """One PERF_RECORD_AUXTRACE: where its data lies in the file."""
    file_offset: int  # of the record
    data_offset: int  # of the AUX bytes in the file
    size: int         # bytes announced
    available: int    # bytes present (less than size when the file is cut short)
    aux_offset: int   # position in the AUX ring
    idx: int
    tid: int
    cpu: int


def _signed32(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


def parse_auxtrace_info(path: str, off: int, body: bytes) -> SpeInfo:
    """body = the record after its 8-byte header: u32 type, u32 reserved, u64 priv[]."""
    if len(body) < 8:
        raise FormatError(path, f"AUXTRACE_INFO record at offset {off:#x} is {len(body) + 8} bytes, too short", HINT)
    kind = struct.unpack_from("<I", body, 0)[0]
    if kind != AUXTRACE_ARM_SPE:
        name = AUXTRACE_NAMES.get(kind, f"unknown type {kind}")
        raise FormatError(path, f"holds a {name} trace, not Arm SPE (AUXTRACE_INFO at offset {off:#x})",
                          "use 'perf script' for other trace kinds")
    priv = struct.unpack_from(f"<{(len(body) - 8) // 8}Q", body, 8)
    if len(priv) == 2:  # v1: PMU type, per-CPU mmaps
        return SpeInfo(1, priv[0], per_cpu_mmaps=priv[1])
    if len(priv) < 4 or priv[0] < 2:
        raise FormatError(path, f"Arm SPE AUXTRACE_INFO at offset {off:#x} has {len(priv)} metadata words, "
                          "neither version 1 (2 words) nor version 2 (a 4-word header first)", HINT)
    version, hdr_words, pmu_type, ncpus = priv[0], priv[1], priv[2], priv[3]
    pos = hdr_words
    info = SpeInfo(version, pmu_type)
    for i in range(ncpus):
        if pos + 3 > len(priv) or priv[pos] != V2_CPU_MAGIC:
            raise FormatError(path, f"Arm SPE AUXTRACE_INFO at offset {off:#x}: per-CPU block {i} of {ncpus} "
                              "is missing or lacks its magic", HINT)
        nparams = priv[pos + 2]
        params = priv[pos + 3: pos + 3 + nparams]
        if len(params) < nparams:
            raise FormatError(path, f"Arm SPE AUXTRACE_INFO at offset {off:#x}: per-CPU block {i} is cut short", HINT)
        c = SpeCpu(priv[pos + 1])
        if nparams > 0:
            c.midr = params[0]
        if nparams > 1:
            c.pmu_type = params[1] - (1 << 64) if params[1] >> 63 else params[1]
        if nparams > 2:
            c.min_interval = params[2]
        info.cpus.append(c)
        pos += 3 + nparams
    return info


class PerfFile:
    """Stream over a perf.data file's SPE-relevant content."""

    def __init__(self, path: str | os.PathLike, truncated_ok: bool = False):
        self.path = os.fspath(path)
        self.truncated_ok = truncated_ok
        self.attrs: list[Attr] = []
        self.info: SpeInfo | None = None
        self.time_conv: TimeConv | None = None
        self.section_missing = 0  # bytes the header's data section claims beyond the end of the file
        self.aux_missing = 0      # AUX bytes announced by AUXTRACE records but absent
        self.other_records = 0
        self.mmaps: list[Mmap] = []
        try:
            self.f: BinaryIO = open(self.path, "rb", buffering=1 << 20)
        except OSError as e:
            raise ReadError(self.path, e.strerror or str(e)) from e
        self.file_size = os.fstat(self.f.fileno()).st_size
        self._mm = None
        self._read_header()

    def close(self) -> None:
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a caller still holds a view; the GC unmaps it later
                pass
            self._mm = None
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def _fail(self, detail: str, hint: str = HINT):
        raise FormatError(self.path, detail, hint)

    def _read_header(self) -> None:
        head = self.f.read(104)
        if len(head) < 16:
            self._fail(f"is {len(head)} bytes long, too short for a perf.data header")
        if head[:8] == MAGIC_BE:
            self._fail("is a big-endian perf.data file; only little-endian (arm64) files are read",
                       "convert it on the recording machine")
        if head[:8] != MAGIC:
            self._fail(f"does not start with the perf.data magic PERFILE2 (found {head[:8]!r})",
                       "give a perf.data file, or use --raw for a raw SPE buffer")
        hdr_size = struct.unpack_from("<Q", head, 8)[0]
        if hdr_size == 16:  # pipe mode: attributes come as HEADER_ATTR records
            self.pipe = True
            self.data_start, self.data_end = 16, self.file_size
            return
        self.pipe = False
        if len(head) < 104 or hdr_size < 104:
            self._fail(f"perf.data header is {len(head)} bytes (header size field {hdr_size}), expected 104")
        attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQQ", head, 16)
        if d_off > self.file_size:
            self._fail(f"data section at offset {d_off:#x} lies beyond the end of the file ({self.file_size} bytes)")
        if d_size == 0:  # perf was killed before it rewrote the header: data runs to EOF
            d_size = self.file_size - d_off
        self.data_start, self.data_end = d_off, d_off + d_size
        if self.data_end > self.file_size:
            if not self.truncated_ok:
                self._fail(f"data section ends at offset {self.data_end:#x} but the file has {self.file_size} bytes "
                           "(truncated copy?)", "copy the file again, or pass --truncated-ok to decode the complete part")
            self.section_missing = self.data_end - self.file_size
            self.data_end = self.file_size
        if attr_size >= 24 and a_size:
            if a_off + a_size > self.file_size:
                self._fail(f"attribute section at {a_off:#x}+{a_size} runs past the end of the file")
            self.f.seek(a_off)
            raw = self.f.read(a_size)
            for i in range(a_size // attr_size):
                self.attrs.append(self._attr(raw[i * attr_size:(i + 1) * attr_size]))

    @staticmethod
    def _attr(raw: bytes) -> Attr:
        typ, _size, config = struct.unpack_from("<IIQ", raw, 0)
        sample_type = struct.unpack_from("<Q", raw, 24)[0] if len(raw) >= 32 else 0
        flags = struct.unpack_from("<Q", raw, 40)[0] if len(raw) >= 48 else 0
        return Attr(typ, config, sample_type, flags)

    def aux_buffers(self) -> Iterator[AuxBuffer]:
        """Every AUXTRACE record in file order; AUXTRACE_INFO and TIME_CONV are kept on self."""
        pos = self.data_start
        end = self.data_end
        fd = self.f.fileno()
        # small positioned reads: a buffered file would refill 1 MB after every seek
        while pos + 8 <= end:
            hdr = os.pread(fd, 8, pos)
            if len(hdr) < 8:
                break
            typ, _misc, size = struct.unpack("<IHH", hdr)
            if size < 8:
                self._fail(f"record at offset {pos:#x} (type {typ}) has size {size} < 8: the data section is damaged")
            if pos + size > end:
                if self.truncated_ok:
                    self.aux_missing += pos + size - end  # a cut record: its missing tail
                    return
                self._fail(f"record at offset {pos:#x} (type {typ}, {size} bytes) runs past the end of the data "
                           f"at {end:#x}", "copy the file again, or pass --truncated-ok to decode the complete part")
            body = os.pread(fd, size - 8, pos + 8) if typ in _WANTED else b""
            if typ == REC_AUXTRACE:
                if size < 48:
                    self._fail(f"AUXTRACE record at offset {pos:#x} is {size} bytes, expected 48")
                asz, aoff, _ref, idx, tid, cpu = AUX_HEADER.unpack_from(body, 0)
                data_off = pos + size
                avail = min(asz, max(0, end - data_off))
                if avail < asz:
                    if not self.truncated_ok:
                        self._fail(f"AUXTRACE record at offset {pos:#x} announces {asz} bytes of SPE data but only "
                                   f"{avail} remain in the file (truncated, or a wrong AUX size)",
                                   "copy the file again, or pass --truncated-ok to decode the complete part")
                    self.aux_missing += asz - avail
                yield AuxBuffer(pos, data_off, asz, avail, aoff, idx, _signed32(tid), _signed32(cpu))
                pos = data_off + asz
                continue
            if typ == REC_AUXTRACE_INFO:
                self.info = parse_auxtrace_info(self.path, pos, body)
            elif typ == REC_TIME_CONV:
                self.time_conv = self._time_conv(pos, body)
            elif typ == REC_HEADER_ATTR and self.pipe:
                if len(body) < 16:
                    self._fail(f"HEADER_ATTR record at offset {pos:#x} is {size} bytes, too short")
                self.attrs.append(self._attr(body))
            elif typ in (REC_MMAP, REC_MMAP2) and len(body) >= 32:
                self._mmap(typ, body)
            else:
                self.other_records += 1
            pos += size

    def _mmap(self, typ: int, body: bytes) -> None:
        pid, _tid, start, length, pgoff = struct.unpack_from("<IIQQQ", body, 0)
        name_at = 32 if typ == REC_MMAP else 64
        name = body[name_at:].split(b"\0", 1)[0].decode("utf-8", "replace")
        self.mmaps.append(Mmap(pid, start, length, pgoff, name))

    def scan(self) -> None:
        """Read the metadata records (AUXTRACE_INFO, TIME_CONV, MMAP) without touching AUX data."""
        for _ in self.aux_buffers():
            pass

    @property
    def truncated_bytes(self) -> int:
        """Bytes missing from a cut-short file (the same bytes can be seen both ways)."""
        return max(self.section_missing, self.aux_missing)

    def _time_conv(self, pos: int, body: bytes) -> TimeConv:
        if len(body) < 24:
            self._fail(f"TIME_CONV record at offset {pos:#x} is {len(body) + 8} bytes, expected at least 32")
        shift, mult, zero = struct.unpack_from("<QQQ", body, 0)
        if len(body) >= 42:
            cycles, mask = struct.unpack_from("<QQ", body, 24)
            tz, ts = body[40], body[41]
            return TimeConv(shift, mult, zero, cycles, mask, bool(tz), bool(ts))
        return TimeConv(shift, mult, zero)

    def read_chunks(self, buf: AuxBuffer, chunk: int = CHUNK) -> Iterator[memoryview]:
        """The available bytes of one AUX buffer, in pieces of at most `chunk` bytes.
        Views of a read-only mapping of the file: no copy, and the kernel can drop
        the pages again, so memory stays bounded for multi-GB files."""
        if self._mm is None and self.file_size:
            import mmap
            try:
                self._mm = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
                self._mm.madvise(mmap.MADV_SEQUENTIAL)
            except (OSError, ValueError, AttributeError):
                self._mm = None
        if self._mm is not None:
            import mmap
            mv = memoryview(self._mm)
            end = buf.data_offset + buf.available
            for off in range(buf.data_offset, end, chunk):
                stop = min(off + chunk, end)
                yield mv[off:stop]
                # decoded: let the kernel drop these pages (they fault back in from the file if
                # touched again), so the resident size stays bounded on multi-GB files
                lo = off - off % mmap.PAGESIZE
                hi = stop - stop % mmap.PAGESIZE
                if hi > lo:
                    try:
                        self._mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
                    except (OSError, AttributeError):
                        pass
            mv.release()
            return
        scratch = bytearray(min(chunk, max(buf.available, 1)))
        mv = memoryview(scratch)
        left = buf.available
        self.f.seek(buf.data_offset)
        while left > 0:
            n = self.f.readinto(mv[:min(left, len(scratch))])
            if not n:
                self._fail(f"read error in the AUX data at offset {buf.data_offset:#x}")
            left -= n
            yield mv[:n]


def is_perf_data(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) in (MAGIC, MAGIC_BE)
    except OSError as e:
        raise ReadError(os.fspath(path), e.strerror or str(e)) from e


# ---------------------------------------------------------------------------------------------
# writer: perf.data files that perf 6.1 accepts (tests, benchmarks, `hpmkit spe synth`)

def _info_record(pmu_type: int, version: int, cpus: list[int]) -> bytes:
    if version == 1:
        priv = [pmu_type, 1]
    else:
        priv = [2, 4, pmu_type, len(cpus)]
        for c in cpus:
            priv += [V2_CPU_MAGIC, c, 3, 0x410FD0C0, pmu_type, 1024]  # Neoverse N1 MIDR
    body = struct.pack("<II", AUXTRACE_ARM_SPE, 0) + struct.pack(f"<{len(priv)}Q", *priv)
    return struct.pack("<IHH", REC_AUXTRACE_INFO, 0, 8 + len(body)) + body


def _mmap2_record(pid: int, start: int, length: int, pgoff: int, filename: str) -> bytes:
    name = filename.encode() + b"\0"
    name += bytes((-len(name)) % 8)
    body = struct.pack("<IIQQQIIQQII", pid, pid, start, length, pgoff, 0, 0, 0, 0, 5, 2) + name
    body += struct.pack("<IIQII", pid, pid, 0, 0, 0)  # sample_id_all trailer: TID, TIME, CPU
    return struct.pack("<IHH", REC_MMAP2, 2, 8 + len(body)) + body


def write_perf_data(path: str | os.PathLike, buffers: list[tuple[int, int, bytes]], pmu_type: int = 8,
                    info_version: int = 1, time_conv: TimeConv | None = None, pad_aux: bool = True,
                    mmaps: list[tuple[int, int, int, int, str]] = (), cpuid: str | None = None) -> None:
    """A perf.data with one SPE event attribute, AUXTRACE_INFO, TIME_CONV and one AUXTRACE
    record (+ data) per (cpu, tid, bytes) buffer. AUX data is padded with zeros (PAD packets) to 16
    bytes (perf record pads to 8) so that each buffer starts 16-byte aligned in the file (so alignment packets decode the same in perf)."""
    attr_size = 128
    attr = bytearray(attr_size)
    # IP TID TIME ADDR CPU PERIOD DATA_SRC PHYS_ADDR: lets `perf script` print record fields
    sample_type = 0x1 | 0x2 | 0x4 | 0x8 | 0x80 | 0x100 | 0x8000 | 0x80000
    struct.pack_into("<IIQQQQQ", attr, 0, pmu_type, attr_size, 0, 1, sample_type, 0, 1 << 18)  # sample_id_all
    cpus = sorted({c for c, _t, _b in buffers if c >= 0}) or [0]
    ev = bytearray()
    tc = time_conv or TimeConv(10, 1 << 10, 0)
    ev += struct.pack("<IHHQQQQQBB6x", REC_TIME_CONV, 0, 56, tc.time_shift, tc.time_mult, tc.time_zero,
                      tc.time_cycles, tc.time_mask, int(tc.cap_user_time_zero), int(tc.cap_user_time_short))
    # after TIME_CONV, as perf record writes them: perf's SPE setup copies the time conversion
    # when it meets AUXTRACE_INFO
    ev += _info_record(pmu_type, info_version, cpus)
    for m in mmaps:  # (pid, start, length, pgoff, filename)
        ev += _mmap2_record(*m)
    hdr_size = 104
    attrs_off = hdr_size
    ids_off = attrs_off + attr_size + 16
    data_off = ids_off + 8
    data_off += (-data_off) % 16
    if (data_off + len(ev)) % 16:
        ev += struct.pack("<IHH", REC_FINISHED_ROUND, 0, 8)
    aux_off = {}
    with open(path, "wb") as f:
        f.write(bytes(data_off))
        f.write(ev)
        size = len(ev)
        for i, (cpu, tid, data) in enumerate(buffers):
            pad = (-len(data)) % 16 if pad_aux else 0
            q = cpus.index(cpu) if cpu in cpus else i
            off = aux_off.get(q, 0)
            f.write(struct.pack("<IHH", REC_AUXTRACE, 0, 48))
            f.write(AUX_HEADER.pack(len(data) + pad, off, 0, q, tid & 0xffffffff, cpu & 0xffffffff))
            f.write(data)
            f.write(bytes(pad))
            aux_off[q] = off + len(data) + pad
            size += 48 + len(data) + pad
        features = bytearray(32)
        if cpuid is not None:
            # The header features `perf c2c` needs for an SPE file: NRCPUS (7), CPUID (9, the
            # MIDR perf uses to name Neoverse data sources) and NUMA_TOPOLOGY (14, one node).
            # Their sections follow the data: a table of (offset, size), one per set bit, then blobs.
            def hstr(text):
                b = text.encode() + b"\0"
                b += bytes((-len(b)) % 64)
                return struct.pack("<I", len(b)) + b
            ncpu = max(cpus) + 1
            blobs = {7: struct.pack("<II", ncpu, ncpu), 9: hstr(cpuid),
                     14: struct.pack("<IIQQ", 1, 0, 1 << 30, 1 << 29) + hstr(f"0-{ncpu - 1}")}
            feat_off = data_off + size
            pos = feat_off + 16 * len(blobs)
            f.seek(feat_off)
            for bit in sorted(blobs):
                f.write(struct.pack("<QQ", pos, len(blobs[bit])))
                pos += len(blobs[bit])
                features[bit // 8] |= 1 << (bit % 8)
            for bit in sorted(blobs):
                f.write(blobs[bit])
        f.seek(0)
        head = struct.pack("<8sQQ", MAGIC, hdr_size, attr_size + 16)
        head += struct.pack("<QQQQQQ", attrs_off, attr_size + 16, data_off, size, 0, 0)
        head += bytes(features)
        f.write(head)
        f.seek(attrs_off)
        f.write(bytes(attr))
        f.write(struct.pack("<QQ", ids_off, 8))
        f.write(struct.pack("<Q", 1))
