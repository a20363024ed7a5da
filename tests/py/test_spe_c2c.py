"""False-sharing (c2c) from SPE records: ranking, offsets, code addresses, DWARF source lines."""
import shutil
import subprocess

import pytest

from conftest import build_aarch64_elf

from hpmkit.profile import symbols
from hpmkit.spe import c2c, synth
from hpmkit.spe.disasm import disassemble
from hpmkit.spe.native import decode_bytes

FS_C = """\
struct buf { long lock0; long lock1; long pad; long reader1; };
struct buf b1 __attribute__((aligned(64)));
__attribute__((noinline)) void locker(void) {
    b1.lock1 = b1.lock1 + 1;
}
__attribute__((noinline)) long reader(void) {
    return b1.reader1;
}
void _start(void) { for (;;) { locker(); reader(); } }
"""
LINE_VA = 0xAAAAB2632080


def access(pc, va, store, ctx, ds=None, el=0):
    b = synth.addr(0, pc, el=el) + synth.context(ctx) + synth.op(1, 1 if store else 0)
    b += synth.events(0x16, 2) + synth.counter(1, 5) + synth.counter(0, 60 if ds == 9 else 9)
    b += synth.addr(2, va) + synth.counter(2, 1)
    if ds is not None:
        b += synth.data_source(ds, 1)
    return b + synth.END


@pytest.fixture(scope="module")
def fs_elf(tmp_path_factory):
    # -O0: every access keeps its own source line (at -O1 gcc gives reader() its closing line)
    return build_aarch64_elf(tmp_path_factory.mktemp("fs"), "fs", FS_C, "-O0")


def pcs_of(elf, fn, mnemonic):
    syms = symbols.load(str(elf))
    lo, hi = syms.find(fn)
    return [a for a, t in disassemble(str(elf), lo, hi) if t.startswith(mnemonic)]


def test_false_sharing_line_is_found_with_sources(fs_elf):
    st_pc = pcs_of(fs_elf, "locker", "str")[0]
    ld_lock = pcs_of(fs_elf, "locker", "ldr")[0]
    ld_reader = pcs_of(fs_elf, "reader", "ldr")[0]
    parts = []
    # CPU 0 / thread 100 updates lock1 (offset 8); CPU 1 / thread 200 reads reader1 (offset 0x18)
    for _ in range(5):
        parts.append((0, access(ld_lock, LINE_VA + 8, False, 100, ds=0)))
        parts.append((0, access(st_pc, LINE_VA + 8, True, 100)))
        parts.append((1, access(ld_reader, LINE_VA + 0x18, False, 200, ds=9)))   # peer CPU snoop
    parts.append((1, access(ld_reader, LINE_VA + 0x18, False, 200, ds=13)))      # remote socket
    # true sharing on another line: both threads write and read offset 0
    other = LINE_VA + 0x1000
    for t, cpu in ((300, 0), (400, 1)):
        parts.append((cpu, access(st_pc, other, True, t)))
        parts.append((cpu, access(ld_lock, other, False, t, ds=9)))
    # a private line: only local loads, never reported
    parts.append((0, access(ld_lock, LINE_VA + 0x2000, False, 100, ds=0)))
    import numpy as np
    recs = np.concatenate([decode_bytes(b, cpu=cpu)[0] for cpu, b in parts])
    lines = c2c.analyse(recs)
    assert [L.addr for L in lines] == [LINE_VA, other]
    L = lines[0]
    assert (L.peer, L.lcl_peer, L.rmt_peer, L.loads, L.stores, L.l1_hit) == (6, 5, 1, 11, 5, 5)
    assert (len(L.threads), len(L.cpus), L.false_sharing) == (2, 2, True)
    assert {off: (v[0], v[1]) for off, v in L.offsets.items()} == {8: (5, 5), 0x18: (6, 0)}
    assert lines[1].false_sharing is False
    syms = symbols.load(str(fs_elf))
    c2c.annotate(lines, syms, source_lines=True)
    code = L.code
    assert code[ld_reader].symbol == "reader" and code[ld_reader].source == "fs.c:7"
    assert (code[ld_reader].lcl_peer, code[ld_reader].rmt_peer) == (5, 1)
    assert code[st_pc].symbol == "locker" and code[st_pc].source == "fs.c:4" and code[st_pc].stores == 5


def test_no_contention_no_lines():
    b = b"".join(access(0x1000, LINE_VA + 8 * i, i % 2 == 1, 100, ds=0 if i % 2 == 0 else None) for i in range(8))
    recs, _ = decode_bytes(b)
    assert c2c.analyse(recs) == []


def _perf_c2c(perf, path):
    """Line table and Pareto rows of `perf c2c report --stdio -d peer`."""
    import re
    out = subprocess.run([perf, "c2c", "report", "-i", str(path), "--stdio", "-d", "peer"],
                         capture_output=True, text=True, timeout=120).stdout
    table = out.split("Shared Data Cache Line Table")[1].split("Shared Cache Line Distribution Pareto")[0]
    lines = {}
    for row in table.splitlines():
        f = row.split()
        if len(f) > 10 and f[0].isdigit() and f[1].startswith("0x"):
            # peer total, local, remote, records, loads, stores
            lines[int(f[1], 16)] = tuple(int(x) for x in f[5:11])
    entries = {}
    line = None
    for row in out.split("Shared Cache Line Distribution Pareto")[1].splitlines():
        f = row.split()
        if len(f) == 7 and f[0].isdigit() and f[6].startswith("0x"):
            line = int(f[6], 16)
        elif len(f) > 14 and f[0].endswith("%") and f[5].startswith("0x"):
            off, pc = int(f[5], 16), int(f[8], 16)
            # mean cycles: rmt peer, lcl peer, other loads; records, cpu count
            entries[(line, off, pc)] = (int(f[9]), int(f[10]), int(f[11]), int(f[12]), int(f[13]))
    assert re.search(r"Load HIT Local Peer", out)
    return lines, entries


@pytest.mark.parametrize("seed", range(6))
def test_c2c_agrees_with_perf_c2c(tmp_path, seed):
    """perf 6.1's own c2c on the same perf.data: same lines, peer counts, records and code rows."""
    import random

    import numpy as np

    from hpmkit.spe import decode, perfwrite
    perf = shutil.which("perf")
    if not perf:
        pytest.fail("perf is missing: scripts/setup.sh installs linux-perf")
    r = random.Random(seed)
    per_cpu = {c: [] for c in range(4)}
    pcs = [0x400100 + 4 * k for k in range(12)]
    for li in range(5):
        base = LINE_VA + 0x40 * (3 * li + 1)
        for _ in range(r.randrange(10, 40)):
            cpu = r.randrange(4)
            tid = 1000 + cpu
            off = 8 * r.randrange(8)
            pc = r.choice(pcs)
            store = r.random() < 0.3
            ds = None if store else r.choice((0, 0, 8, 9, 12, 13, 14))
            b = synth.addr(0, pc) + synth.context(tid) + synth.op(1, 1 if store else 0)
            b += synth.events(0x16, 2) + synth.counter(1, 5) + synth.counter(0, r.randrange(6, 400))
            b += synth.addr(2, base + off) + synth.counter(2, 1)
            if ds is not None:
                b += synth.data_source(ds, 1)
            per_cpu[cpu].append(b + synth.END)
    bufs = [(c, -1, b"".join(v)) for c, v in per_cpu.items() if v]
    path = tmp_path / "c2c.data"
    perfwrite.write_perf_data(path, bufs, cpuid="0x00000000410fd0c0")
    theirs_lines, theirs_entries = _perf_c2c(perf, path)
    recs, _ = decode.decode_all(path)
    mine = c2c.analyse(recs)
    # perf lists every line with a peer snoop; ours also needs a store and two threads/CPUs
    mine_all = {L.addr: L for L in c2c.analyse(recs, min_peer=1)}
    assert set(mine_all) <= set(theirs_lines) and mine
    def mean(total, n):  # perf prints its running mean with %.0f: halves round to even
        return round(total / n) if n else 0

    for L in mine:
        assert theirs_lines[L.addr] == (L.peer, L.lcl_peer, L.rmt_peer, L.records, L.loads, L.stores), hex(L.addr)
        # perf's Pareto rows: the (offset, code address) pairs with peer-snoop loads or stores
        rows = {k: e for k, e in L.entries.items() if e.lcl_peer + e.rmt_peer + e.stores}
        assert {(off, pc) for (ln, off, pc) in theirs_entries if ln == L.addr} == set(rows)
        for (off, pc), e in rows.items():
            other = e.loads - e.lcl_peer - e.rmt_peer
            assert theirs_entries[(L.addr, off, pc)] == (
                mean(e.lat_rmt, e.rmt_peer), mean(e.lat_lcl, e.lcl_peer), mean(e.lat_load, other),
                e.records, len(e.cpus)), (hex(L.addr), off, hex(pc))
    assert np.count_nonzero(recs["op_class"] == 1) == len(recs)
    # the CLI's two passes over the file (candidate lines, then their records) give the same lines
    cand = c2c.Candidates()
    for b in decode.batches(path, chunk=300):
        cand.add(b)
    sub = np.concatenate([c2c.on_lines(b, cand.lines()) for b in decode.batches(path, chunk=300)])
    two = c2c.analyse(sub)
    assert [(L.addr, L.peer, L.records, L.loads, L.stores, len(L.entries)) for L in two] == \
        [(L.addr, L.peer, L.records, L.loads, L.stores, len(L.entries)) for L in mine]
