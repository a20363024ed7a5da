"""Record semantics under damage and odd packets, against Debian's perf 6.1 (`perf script`).

Hand-assembled records for each case of issue 19, then seeded random damaged streams: every
sample `perf script --itrace=i1i` makes must be a record hpmkit makes, field by field (PC, data
VA and PA, time through TIME_CONV, CPU, thread from CONTEXT, and the operation / events flags
through perf's data_src), in stream order per CPU. perf additionally makes an empty sample for
each decode error between records; hpmkit makes no record of those and counts them
(Stats.empty_cuts), so the sample count is checked as records + empty_cuts.
"""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hpmkit.spe import decode, synth, tables
from hpmkit.spe.native import HAS, OPF
from hpmkit.spe.perfmeta import TimeConv
from hpmkit.spe.perfwrite import write_perf_data
from hpmkit.spe.synth import END, addr, context, events, op, timestamp

DATA = Path(__file__).resolve().parents[1] / "data" / "spe"
TC = TimeConv(time_shift=10, time_mult=40 << 10, time_zero=10**9)  # 25 MHz timer


@pytest.fixture(scope="module")
def perf():
    p = shutil.which("perf")
    if not p:
        pytest.fail("perf is missing: scripts/setup.sh installs linux-perf (the reference decoder)")
    return p


def perf_data_src(r) -> int:
    """The data_src perf 6.1 gives an SPE record (arm_spe__synth_data_source, generic path: the
    files have no CPUID, so no Neoverse data-source table), from hpmkit's record. perf 6.1's
    operation flags overlap: an SVE "other" operation sets the bit that means load."""
    f, ev = int(r["op_flags"]), int(r["events"])
    if f & (OPF["ld"] | OPF["sve_other"]):
        v = 0x2  # PERF_MEM_OP_LOAD
    elif f & OPF["st"]:
        v = 0x4  # PERF_MEM_OP_STORE
    else:
        return 0
    if ev & (1 << 8 | 1 << 9):  # LLC access / miss -> L3 hit / miss
        v |= (0x40 | (0x4 if ev & (1 << 9) else 0x2)) << 5
    elif ev & (1 << 2 | 1 << 3):  # L1D access / refill -> L1 hit / miss
        v |= (0x08 | (0x4 if ev & (1 << 3) else 0x2)) << 5
    if ev & (1 << 10):  # remote access
        v |= 1 << 37
    if ev & (1 << 4 | 1 << 5):  # TLB access / walk -> walker hit / miss
        v |= (0x20 | (0x4 if ev & (1 << 5) else 0x2)) << 26
    return v


def perf_samples(perf, path) -> list[tuple]:
    """(cpu, ip, addr, phys_addr, time ns, data_src, tid) per instruction sample, in perf's order."""
    p = subprocess.run([perf, "script", "-i", str(path), "--ns", "--itrace=i1i",
                        "-F", "tid,cpu,time,ip,addr,phys_addr,data_src"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        # tid [cpu] time: addr data_src |OP ...| ip phys_addr
        sec, ns = f[2].rstrip(":").split(".")
        out.append((int(f[1].strip("[]")), int(f[-2], 16), int(f[3], 16), int(f[-1], 16),
                    int(sec) * 10**9 + int(ns), int(f[4], 16), int(f[0])))
    return out


def hpmkit_samples(path):
    recs, src = decode.decode_all(path)
    times = src.time_conv.to_perf_time(recs["ts"]).tolist()
    # perf keeps the thread as a pid_t: CONTEXT values of 2^31 and more print negative
    out = [(int(r["cpu"]), int(r["pc"]), int(r["vaddr"]), int(r["paddr"]), t, perf_data_src(r),
            int(np.int32(np.uint32(r["context"]).view(np.int32))) if r["present"] & HAS["ctx"] else None)
           for r, t in zip(recs, times)]
    return out, recs, src


def empty(s) -> bool:
    """A sample with nothing in it: perf's sample of an error between records, or an empty record."""
    return s[1:4] == (0, 0, 0) and s[4] == TC.to_perf_time(0) and s[5] == 0


def compare(perf, path):
    """hpmkit's records are perf's samples (empty ones apart), per CPU in stream order."""
    theirs = perf_samples(perf, path)
    mine, recs, src = hpmkit_samples(path)
    assert len(theirs) == len(mine) + src.stats.empty_cuts
    for cpu in sorted({s[0] for s in mine} | {s[0] for s in theirs}):
        a = [m for m in mine if m[0] == cpu and not empty(m)]
        b = [t for t in theirs if t[0] == cpu and not empty(t)]
        assert [m[:6] for m in a] == [t[:6] for t in b]
        # the thread is the CONTEXT packet's PID when the record has one
        assert all(m[6] == t[6] for m, t in zip(a, b) if m[6] is not None)
    return recs, src


def one_file(tmp_path, data, name="t.data"):
    path = tmp_path / name
    write_perf_data(path, [(0, -1, data)], time_conv=TC)
    return path


def first():
    """A complete record first: perf's queue set-up drops partial records before one."""
    return addr(0, 0x100) + op(2, 0) + timestamp(10)


# ---- 1: data virtual addresses with bits 55:52 set ----------------------------------------------

def test_va_top_byte_from_bits_55_52(perf, tmp_path):
    vas = {0x00F0000012345678: 0xFFF0000012345678,   # 52-bit kernel VA: perf fills the top byte
           0xAB0F000012345678: 0x000F000012345678,   # tag byte cleared; bits 55:52 = 0: no fill
           0x00FF000012345678: 0xFFFF000012345678,   # 48-bit kernel VA
           0x5AF8000012345678: 0xFFF8000012345678,   # 55:52 = 0xf, tag 0x5a: filled
           0x5A78000012345678: 0x0078000012345678}   # 55:52 = 0x7: not a kernel address
    data = first() + b"".join(addr(0, 0x1000 + 4 * i) + op(1, 0) + addr(2, v) + timestamp(100 + i)
                              for i, v in enumerate(vas))
    path = one_file(tmp_path, data)
    recs, _ = compare(perf, path)
    assert recs["vaddr"][1:].tolist() == list(vas.values())


# ---- 2: two EVENTS / two OPERATION TYPE packets, operation class 3 ------------------------------

def test_two_events_packets_are_ored(perf, tmp_path):
    data = first() + addr(0, 0x2000) + op(1, 0) + events(1 << 3) + events(1 << 5) + addr(2, 0x5000) + timestamp(200)
    path = one_file(tmp_path, data)
    recs, src = compare(perf, path)
    assert recs[1]["events"] == (1 << 3) | (1 << 5) and src.stats.extra_events == 1
    # perf's default samples: both an L1D miss and a TLB miss
    out = subprocess.run([perf, "script", "-i", str(path), "-F", "event"], capture_output=True, text=True).stdout
    assert {"l1d-miss:", "tlb-miss:"} <= set(out.split())


@pytest.mark.parametrize("order", ["ld-b", "b-ld", "ld-st"])
def test_two_operation_type_packets_are_ored(perf, tmp_path, order):
    ops = {"ld-b": op(1, 0x00) + op(2, 0x01), "b-ld": op(2, 0x01) + op(1, 0x00), "ld-st": op(1, 0x00) + op(1, 0x01)}
    data = first() + addr(0, 0x3000) + ops[order] + addr(2, 0x6000) + timestamp(300)
    path = one_file(tmp_path, data)
    recs, src = compare(perf, path)  # perf: a memory sample (LOAD), whatever the order
    r = recs[1]
    assert src.stats.extra_op == 1
    # a load stays in the load/store table, whichever packet came last
    assert r["op_class"] == 1 and tables.split(recs)["ldst"]["pc"].tolist() == [0x3000]
    want = {"ld-b": OPF["ldst"] | OPF["ld"] | OPF["branch"], "b-ld": OPF["ldst"] | OPF["ld"] | OPF["branch"],
            "ld-st": OPF["ldst"] | OPF["ld"] | OPF["st"]}[order]
    assert r["op_flags"] == want


def test_operation_class_3_ends_the_record_as_perf(perf, tmp_path):
    data = (first() + addr(0, 0x4000) + op(1, 0) + addr(2, 0x7000) + op(3, 0)   # cut here
            + addr(2, 0x7008) + timestamp(400)                                   # a record of its own
            + addr(0, 0x4004) + op(1, 0) + timestamp(410))
    path = one_file(tmp_path, data)
    p = subprocess.run([perf, "script", "-i", str(path), "--itrace=i1i"], capture_output=True, text=True)
    assert "Get packet error!" in p.stderr
    recs, src = compare(perf, path)
    assert recs["pc"].tolist() == [0x100, 0x4000, 0, 0x4004]
    cut, nxt = recs[1], recs[2]
    assert cut["present"] & HAS["cut"] and cut["vaddr"] == 0x7000 and cut["ts"] == 0
    assert nxt["vaddr"] == 0x7008 and nxt["op_class"] == 0xFF and not nxt["present"] & HAS["pc"]  # no leak
    assert (src.stats.unknown_op_class, src.stats.cut_records) == (1, 1)


def test_bad_byte_ends_the_record_as_perf(perf, tmp_path):
    data = (first() + addr(0, 0x5000) + op(1, 0) + context(77) + b"\xff" + b"\xff" + addr(2, 0x8000) + timestamp(500)
            + addr(0, 0x5004) + op(1, 0) + timestamp(510))
    path = one_file(tmp_path, data)
    recs, src = compare(perf, path)
    assert recs["pc"].tolist() == [0x100, 0x5000, 0, 0x5004]
    assert recs[1]["context"] == 77 and recs[1]["present"] & HAS["cut"]
    # the second bad byte: perf's empty sample, no record here
    assert (src.stats.bad_bytes, src.stats.cut_records, src.stats.empty_cuts) == (2, 1, 1)


def test_damage_before_the_first_record_is_dropped_as_perf(perf, tmp_path):
    data = addr(0, 0x6000) + op(1, 0) + b"\xff" + addr(2, 0x9000) + timestamp(600) + first()
    recs, src = compare(perf, one_file(tmp_path, data))
    assert recs["pc"].tolist() == [0, 0x100]
    assert (src.stats.dropped_records, src.stats.cut_records, src.stats.empty_cuts) == (1, 0, 0)


# ---- 4: previous-branch-target packets ----------------------------------------------------------

@pytest.mark.parametrize("seed", range(2))
def test_records_with_previous_branch_target_are_kept(perf, tmp_path, seed):
    """perf 6.1 prints 'unsupported address packet index: 0x4' and keeps the record."""
    g = synth.RecordGen(seed, pbt=True)
    data = g.stream(200)
    path = one_file(tmp_path, data)
    recs, src = compare(perf, path)
    assert len(recs) == 200 and (recs["present"] & HAS["pbt"] != 0).sum() > 5


# ---- damaged streams and captures, end to end ---------------------------------------------------

@pytest.mark.parametrize("seed", range(16))
def test_damaged_streams_equal_perf_script(perf, tmp_path, seed):
    """Random packets of every kind with flipped, cut and inserted bytes, on two CPUs, two AUX
    buffers each (records continue across buffers)."""
    bufs = []
    for i in range(4):
        data = synth.any_stream(seed * 10 + i, 250, corrupt=0.15)
        if i < 2:
            data = synth.RecordGen(seed + i).stream(20) + data  # contexts, timestamps, real records
        bufs.append((i % 2, -1, data))
    path = tmp_path / "d.data"
    write_perf_data(path, bufs, time_conv=TC)
    recs, src = compare(perf, path)
    st = src.stats
    assert st.bad_bytes and st.cut_records and st.empty_cuts
    assert len(recs) > 100


@pytest.mark.parametrize("name", ["hiperf_TestSpeDumpRawData1.spe.bin", "hiperf_TestSpeDumpRawData2.spe.bin",
                                  "hiperf_TestSpeDecoder.spe.bin", "quipper_arm_spe_decoder_test.spe.bin"])
def test_captures_equal_perf_script(perf, tmp_path, name):
    path = one_file(tmp_path, (DATA / name).read_bytes())
    compare(perf, path)


def test_cut_records_reach_the_tables_and_are_reported(tmp_path, capsys):
    from hpmkit.cli import main
    data = first() + addr(0, 0x5000) + op(1, 0) + addr(2, 0x8000) + b"\xff" + addr(0, 0x5004) + op(2, 0) + END
    path = one_file(tmp_path, data)
    assert main(["spe", "decode", str(path), "-o", str(tmp_path / "t")]) == 0
    err = capsys.readouterr().err
    assert "1 record(s) cut short by a bad byte" in err and "1 bad byte(s) skipped" in err
    rows = (tmp_path / "t-ldst.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].split(",")[2] == "0x5000" and rows[1].split(",")[11] == "0x8000"
    assert np.array_equal([len((tmp_path / f"t-{k}.csv").read_text().splitlines()) for k in ("branch", "other")],
                          [3, 1])
