"""A writer of perf.data files with Arm SPE AUX data that perf 6.1 accepts (tests, benchmarks,
`hpmkit spe synth`): one SPE event attribute, TIME_CONV, AUXTRACE_INFO, optional MMAP2 records,
and one AUXTRACE record (+ data) per buffer."""
from __future__ import annotations

import os
import struct

from ..perfdata import format as PF
from .perfmeta import AUX_HEADER, AUXTRACE_ARM_SPE, V2_CPU_MAGIC, TimeConv

MAGIC = PF.MAGIC
REC_MMAP2 = PF.REC["MMAP2"]
REC_HEADER_ATTR = PF.REC["HEADER_ATTR"]
REC_FINISHED_ROUND = PF.REC["FINISHED_ROUND"]
REC_AUXTRACE_INFO = PF.REC["AUXTRACE_INFO"]
REC_AUXTRACE = PF.REC["AUXTRACE"]
REC_TIME_CONV = PF.REC["TIME_CONV"]


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
