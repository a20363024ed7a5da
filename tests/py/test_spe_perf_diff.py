"""Differential tests: hpmkit's SPE decoder against Debian's perf 6.1 on the same perf.data.

Seeded random packet streams (every packet kind, unknown indexes, alignment packets, and
corrupted variants) are wrapped in perf.data files with AUXTRACE_INFO / AUXTRACE / TIME_CONV
records (hpmkit.spe.perfwrite.write_perf_data); `perf report -D` must list exactly the packets
hpmkit lists (text equal, line by line, which covers every field of every packet and every
skipped byte), and `perf script --itrace=i1i` must give the same records (PC, data VA and PA,
CPU, thread from CONTEXT) as hpmkit's record assembly.
"""
import re
import shutil
import subprocess

import pytest

from hpmkit.spe import decode, native, perfmeta, perfwrite, synth
from hpmkit.spe.native import HAS

PERF = shutil.which("perf")


@pytest.fixture(scope="module")
def perf():
    if not PERF:
        pytest.fail("perf is missing: scripts/setup.sh installs linux-perf (the reference decoder)")
    return PERF


def perf_dump(perf, path):
    out = subprocess.run([perf, "report", "-D", "-i", str(path)], capture_output=True, text=True,
                         timeout=120).stdout
    bufs, cur = [], None
    for line in out.splitlines():
        if line.startswith(". ... ARM SPE data:"):
            cur = []
            bufs.append(cur)
        elif cur is not None and re.match(r"^\.  [0-9a-f]{8}:", line):
            cur.append(line)
        elif cur is not None and not line.strip():
            cur = None
    return bufs


def _buffers(seed, corrupt):
    """Several AUX buffers on two CPUs; sizes multiple of 16 (kept aligned in the file)."""
    bufs = []
    for i in range(4):
        data = synth.any_stream(seed * 10 + i, 150, corrupt=corrupt)
        data += bytes((-len(data)) % 16)
        bufs.append((i % 2, -1, data))
    return bufs


@pytest.mark.parametrize("corrupt", [0.0, 0.15], ids=["valid", "corrupted"])
@pytest.mark.parametrize("seed", range(12))
def test_packets_equal_perf_report_D(perf, tmp_path, seed, corrupt):
    bufs = _buffers(seed, corrupt)
    path = tmp_path / "spe.data"
    perfwrite.write_perf_data(path, bufs)
    theirs = perf_dump(perf, path)
    assert len(theirs) == len(bufs), "perf did not dump every AUX buffer"
    for (_cpu, _tid, data), lines in zip(bufs, theirs):
        mine = native.dump(data).splitlines()
        assert len(mine) == len(lines)
        for a, b in zip(mine, lines):
            assert a == b


def test_hpmkit_dump_command_equals_perf(perf, tmp_path):
    bufs = _buffers(99, 0.1)
    path = tmp_path / "spe.data"
    perfwrite.write_perf_data(path, bufs)
    from hpmkit.cli import main
    import io
    import contextlib
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["spe", "dump", str(path)]) == 0
    mine = [ln for ln in out.getvalue().splitlines() if re.match(r"^\.  [0-9a-f]{8}:", ln)]
    assert mine == [ln for b in perf_dump(perf, path) for ln in b]


@pytest.mark.parametrize("seed", range(4))
def test_records_equal_perf_script(perf, tmp_path, seed):
    bufs = []
    for cpu in range(2):
        g = synth.RecordGen(seed * 7 + cpu)  # with previous-branch-target packets: perf keeps them too
        bufs += [(cpu, -1, g.stream(40)), (cpu, -1, g.stream(25))]
    path = tmp_path / "rec.data"
    tc = perfmeta.TimeConv(time_shift=10, time_mult=40 << 10, time_zero=10**9 * (seed + 1))  # 25 MHz timer
    perfwrite.write_perf_data(path, bufs, time_conv=tc)
    p = subprocess.run([perf, "script", "-i", str(path), "--ns", "--itrace=i1i",
                        "-F", "tid,cpu,time,event,addr,ip,phys_addr"], capture_output=True, text=True, timeout=120)
    theirs = []
    for line in p.stdout.splitlines():
        f = line.split()
        sec, ns = f[2].rstrip(":").split(".")
        theirs.append((int(f[1].strip("[]")), int(f[5], 16), int(f[4], 16), int(f[6], 16),
                       int(sec) * 10**9 + int(ns), int(f[0])))
    recs, src = decode.decode_all(path)
    assert src.problems() == []
    times = src.time_conv.to_perf_time(recs["ts"])
    mine = []
    for r, t in zip(recs, times.tolist()):
        mine.append((int(r["cpu"]), int(r["pc"]), int(r["vaddr"]), int(r["paddr"]), t,
                     int(r["context"]) if r["present"] & HAS["ctx"] else None))
    assert len(mine) == len(theirs) == 130
    # perf orders samples across CPUs by time: compare per CPU, in stream order
    for cpu in (0, 1):
        a = [m for m in mine if m[0] == cpu]
        b = [t for t in theirs if t[0] == cpu]
        # CPU, PC, data VA, data PA, and the timestamp through TIME_CONV in perf time (ns)
        assert [m[:5] for m in a] == [t[:5] for t in b]
        # the thread is the CONTEXT packet's PID when the record has one
        assert all(m[5] == t[5] for m, t in zip(a, b) if m[5] is not None)
        assert sum(m[5] is not None for m in a) > 10
