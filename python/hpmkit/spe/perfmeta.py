"""What an Arm SPE decode takes from a perf.data besides the AUX data: the AUXTRACE_INFO
metadata (v1 or v2), TIME_CONV (timer ticks -> perf time), and the mappings (hpmkit.perfdata.records.Mmap).
The file itself is read by the one perf.data reader, hpmkit.perfdata.PerfData."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from ..errors import FormatError, ReadError
from ..perfdata import format as PF
from ..perfdata import records as PR

AUXTRACE_ARM_SPE = 4
AUXTRACE_NAMES = {1: "Intel PT", 2: "Intel BTS", 3: "CoreSight ETM", 4: "Arm SPE", 5: "s390 CPU-MF",
                  6: "HiSilicon PTT"}
V2_CPU_MAGIC = 0x1010101010101010
AUX_HEADER = struct.Struct("<QQQIII4x")  # size, offset, reference, idx, tid, cpu
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


@dataclass
class AuxHeader:
    """The fields of one PERF_RECORD_AUXTRACE."""
    size: int         # bytes announced
    aux_offset: int   # position in the AUX ring
    idx: int
    tid: int
    cpu: int


def aux_header(path: str, rec) -> AuxHeader:
    if len(rec.payload) < AUX_HEADER.size:
        raise FormatError(path, f"AUXTRACE record at offset {rec.offset:#x} is {rec.size} bytes, expected 48",
                          HINT)
    asz, aoff, _ref, idx, tid, cpu = AUX_HEADER.unpack_from(rec.payload, 0)
    return AuxHeader(asz, aoff, idx, _signed32(tid), _signed32(cpu))


def time_conv(path: str, rec) -> TimeConv:
    body = rec.payload
    if len(body) < 24:
        raise FormatError(path, f"TIME_CONV record at offset {rec.offset:#x} is {len(body) + 8} bytes, "
                          "expected at least 32", HINT)
    shift, mult, zero = struct.unpack_from("<QQQ", body, 0)
    if len(body) >= 42:
        cycles, mask = struct.unpack_from("<QQ", body, 24)
        tz, ts = body[40], body[41]
        return TimeConv(shift, mult, zero, cycles, mask, bool(tz), bool(ts))
    return TimeConv(shift, mult, zero)


def mmaps(pd) -> list[PR.Mmap]:
    """Every mapping of an open PerfData (records read in a stream; AUX data skipped), decoded
    by the reader's one MMAP decoder; a record too short for its fields is left out."""
    out = []
    for rec in pd.records():
        if rec.type in (PF.REC["MMAP"], PF.REC["MMAP2"]):
            try:
                out.append(PR.mmap(rec))
            except struct.error:
                continue
    return out


def is_perf_data(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) in PF.MAGICS
    except OSError as e:
        raise ReadError(os.fspath(path), e.strerror or str(e)) from e
