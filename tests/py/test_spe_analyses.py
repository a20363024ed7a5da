"""SPE analyses: interval, seed estimates (4.2.4, 4.4.2), latency, sources, events, filters, hotspots."""

import pytest

from conftest import build_aarch64_elf

from hpmkit.errors import UsageError
from hpmkit.profile import symbols
from hpmkit.spe import analyses, synth
from hpmkit.spe.disasm import disassemble
from hpmkit.spe.analyses import Filter
from hpmkit.spe.native import decode_bytes


def rec(pc=0x1000, cls=1, op=0, tot=10, iss=4, xlat=1, ds=None, ev=0x16, ts=0, el=0, va=0x5000):
    b = synth.addr(0, pc, el=el) + synth.op(cls, op) + synth.events(ev, 2)
    b += synth.counter(1, iss) + synth.counter(0, tot)
    if cls == 1:
        b += synth.addr(2, va) + synth.counter(2, xlat)
    if ds is not None:
        b += synth.data_source(ds, 1)
    return b + (synth.timestamp(ts) if ts else synth.END)


def recs_of(*parts):
    r, st = decode_bytes(b"".join(parts))
    assert st.bad_bytes == 0
    return r


@pytest.mark.parametrize("period,minint,jitter,ernd,base,actual", [
    (1024, 256, True, 0, 1024, 1152),    # the seed's platform: 1024 + 128
    (1024, 256, True, 1, 1024, 1025),
    (1000, 256, False, 0, 768, 769),     # -c rounded down to a multiple of 256, + 1 without jitter
    (100, 256, False, 0, 256, 257),      # never below min_interval
    (None, 1024, True, 0, 1024, 1152),   # no -c: min_interval
])
def test_sampling_interval(period, minint, jitter, ernd, base, actual):
    r = analyses.sampling_interval(period, minint, jitter, ernd)
    assert (r["base"], r["interval"]) == (base, actual)


def test_bandwidth_reproduces_seed_4_4_2():
    # 377965 samples, interval 1152, 4-byte loads, tsc delta 4583527 at 40 ns per tick -> 9499.58 MB/s
    bw = analyses.bandwidth(377965, 27685587232500, 27685591816027, 1152, 4, 40.0)
    assert bw["bytes"] == 1_741_662_720
    assert bw["span_ns"] == 183_341_080
    assert round(bw["mb_per_s"], 2) == 9499.58


def test_derived_latency_4_2_4():
    lat = analyses.derived_load_latency(nloads=1000, ts_first=0, ts_last=28800, interval=1152, nspt=40.0)
    assert lat["loads_executed"] == 1_152_000
    assert lat["latency_ns"] == pytest.approx(28800 * 40 / 1_152_000)  # = 1.0 ns


def test_ns_per_tick_from_cntfrq_or_time_conv():
    from hpmkit.spe.perfmeta import TimeConv
    assert analyses.ns_per_tick(25e6) == 40.0
    assert analyses.ns_per_tick(None, TimeConv(10, 40 << 10, 0)) == 40.0
    with pytest.raises(UsageError, match="--cntfrq"):
        analyses.ns_per_tick(None, None)


def test_latency_flags_saturation_and_derives_exec():
    r = recs_of(rec(tot=10, iss=4, xlat=1, ds=0), rec(tot=20, iss=4, xlat=2, ds=0),
                rec(tot=4095, iss=4000, xlat=1, ds=14), rec(tot=300, iss=50, xlat=10, ds=14),
                rec(tot=3, iss=4, xlat=1, ds=0))  # exec would be negative
    res = analyses.latency(r, sat_value=4095)
    l1, dram = res["L1D"], res["DRAM"]
    assert l1["exec"].n == 3 and l1["exec"].negative == 1 and l1["exec"].mean == pytest.approx((5 + 14) / 2)
    assert dram["total"].saturated == 1 and dram["total"].mean == 300.0
    assert dram["exec"].saturated == 1 and dram["exec"].mean == 240.0
    assert res["all"]["total"].n == 5 and res["all"]["total"].saturated == 1


def test_data_sources_and_event_combinations():
    r = recs_of(rec(ds=0), rec(ds=0), rec(ds=8, ev=0x1E), rec(ds=14, ev=0x31E, tot=300),
                rec(op=1), rec(cls=2, op=1, ev=0x42), rec(cls=2, op=0, ev=0x2))
    rows = analyses.data_sources(r)
    assert [(n, c) for n, c, _p, _m in rows] == [("L1D", 2), ("DRAM", 1), ("L2D", 1)]
    assert rows[1][3] == 300.0
    ev = analyses.event_combinations(r)
    assert ("LD", "RETIRED:L1D-ACCESS:TLB-ACCESS", 2, 50.0) in ev
    assert ("LD", "RETIRED:L1D-ACCESS:L1D-REFILL:TLB-ACCESS:LLC-ACCESS:LLC-REFILL", 1, 25.0) in ev
    assert ("BRANCH", "RETIRED:NOT-TAKEN", 1, 50.0) in ev


def test_filters():
    r = recs_of(rec(pc=0x1000, tot=10), rec(pc=0x2000, tot=200), rec(pc=0x3000, op=1, tot=50),
                rec(pc=0xFFFF800000001000, el=1, tot=5), rec(pc=0x2004, cls=2))
    assert len(Filter(op="ld").apply(r)) == 3
    assert len(Filter(op="st").apply(r)) == 1
    assert len(Filter(op="branch").apply(r)) == 1
    assert len(Filter(el=1).apply(r)) == 1
    assert Filter(pc_lo=0x2000, pc_hi=0x3000).apply(r)["pc"].tolist() == [0x2000, 0x2004]
    assert len(Filter(min_latency=50).apply(r)) == 2
    with pytest.raises(UsageError):
        Filter(op="bogus").apply(r)


def test_quality_ratios():
    rows = dict((n, v) for n, v, _f in analyses.quality(
        {"SAMPLE_POP": 1000000, "SAMPLE_FEED": 1000, "SAMPLE_FILTRATE": 500, "SAMPLE_COLLISION": 10}, records=450))
    assert rows == {"spe_sampling_ratio": 0.001, "spe_filter_ratio": 0.5, "spe_collision_ratio": 1e-5,
                    "records_per_filtrate": 0.9}
    with pytest.raises(UsageError, match="SAMPLE_COLLISION"):
        analyses.quality({"SAMPLE_POP": 1, "SAMPLE_FEED": 1, "SAMPLE_FILTRATE": 1})


HOT_C = r"""
long sink;
__attribute__((noinline)) long hot(long *p, long n) { long s = 0; for (long i = 0; i < n; i++) s += p[i]; return s; }
__attribute__((noinline)) void cold(long *p) { p[1] = 3; }
void _start(void) { long a[8] = {0}; cold(a); sink = hot(a, 8); for (;;) ; }
"""


@pytest.fixture(scope="session")
def aarch64_elf(tmp_path_factory):
    return build_aarch64_elf(tmp_path_factory.mktemp("elf"), "hot", HOT_C, "-O1")


def test_hotspots_by_symbol_and_annotation(aarch64_elf):
    syms = symbols.load(str(aarch64_elf))
    hot_lo, hot_hi = syms.find("hot")
    cold_lo, _ = syms.find("cold")
    dis = disassemble(str(aarch64_elf), hot_lo, hot_hi)
    assert dis and all(hot_lo <= a < hot_hi for a, _t in dis)
    ldr = next(a for a, t in dis if t.startswith("ldr"))
    r = recs_of(*([rec(pc=ldr)] * 6 + [rec(pc=hot_lo)] * 2 + [rec(pc=cold_lo, op=1)] * 2))
    h = analyses.hotspots(r, syms)
    assert h["by_pc"][0][:3] == (ldr, 6, 60.0) and h["by_pc"][0][3] == "hot"
    assert h["by_symbol"] == [("hot", 8, 80.0), ("cold", 2, 20.0)]
    # a load bias (PIE) moves every address
    moved = symbols.load(str(aarch64_elf), bias=0x10000)
    assert moved.name(ldr + 0x10000) == "hot" and moved.name(ldr) != "hot"


def test_kallsyms(tmp_path):
    k = tmp_path / "kallsyms"
    k.write_text("ffff800008010000 T _text\nffff800008010100 t do_thing\nffff800008010200 T other [mod]\n")
    s = symbols.load(str(k))
    assert s.name(0xFFFF800008010104) == "do_thing" and s.name(0xFFFF800008010000) == "_text"
    from hpmkit.errors import FormatError
    k.write_text("zzzz T x\n")
    with pytest.raises(FormatError, match="line 1"):
        symbols.load(str(k))
    k.write_text("ffff800008010000 T _text\nnot-hex t y\n")
    with pytest.raises(FormatError, match="line 2: 'not-hex' is not a hex address"):
        symbols.load(str(k))
    k.write_text("0000000000000000 T _text\n0000000000000000 t do_thing\n")
    with pytest.raises(FormatError, match="all 2 addresses are 0 .kptr_restrict"):
        symbols.load(str(k))


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_kallsyms_names_as_profiles_give_them(arch):
    """SPE names kernel PCs with the profiles' symboliser: perf's alias choice and the marker,
    syscall and memcpy rules (riscv64's __sched_text_start address is __schedule), so a PC
    gets one name in every report. Checked at every code address of the lab kallsyms."""
    import numpy as np
    from conftest import ROOT
    path = ROOT / "tests" / "data" / "kallsyms" / f"{arch}-6.1.192.kallsyms"
    spe = symbols.load(str(path))
    prof = symbols.read_kallsyms(path)
    idx, _ = prof.lookup(prof.addrs)
    assert len(prof) >= 50 and prof.overridden       # lab excerpts, with aliases a rule decides
    assert [spe.name(int(a)) for a in prof.addrs] == [prof.names[i] for i in idx.tolist()]
    assert all(not symbols.is_marker(spe.name(int(a))) for a in prof.overridden)
    if arch == "riscv64":
        sched = next(a for a, (perf, _ours, _r) in prof.overridden.items() if perf == "__sched_text_start")
        assert spe.name(sched + 4) == "__schedule"
    assert np.all(prof.addrs[1:] > prof.addrs[:-1])


def test_bias_from_perf_data_mmap(aarch64_elf, tmp_path, capsys):
    """PIE-style load: the ELF is mapped 0x10000000 higher; the MMAP2 record gives the bias."""
    from hpmkit.cli import main
    from hpmkit.spe import perfmeta, perfwrite
    syms = symbols.load(str(aarch64_elf))
    hot_lo, _ = syms.find("hot")
    bias = 0x10000000
    data = b"".join(rec(pc=hot_lo + bias + 4 * (i % 3)) for i in range(9))
    p = tmp_path / "m.data"
    perfwrite.write_perf_data(p, [(0, -1, data)], mmaps=[(42, 0x400000 + bias, 0x10000, 0, "/opt/bin/" + aarch64_elf.name)])
    from hpmkit.perfdata import PerfData
    with PerfData(p) as pd:
        assert symbols.map_bias(syms.image, perfmeta.mmaps(pd)) == bias
    assert main(["spe", "hotspots", str(p), "--symbols", str(aarch64_elf)]) == 0
    out, err = capsys.readouterr()
    assert "loaded at bias 0x10000000" in err
    assert "        9 100.00%  hot\n" in out


def test_histogram_stats_equal_numpy():
    import numpy as np
    r = np.random.default_rng(5)
    v = r.integers(-300, 5000, 20001)
    h = analyses.Hist(65536 + analyses.EXEC_OFFSET + 1, analyses.EXEC_OFFSET)
    h.add(v[:7000])
    h.add(v[7000:])
    st = h.stats(0)
    assert st.mean == pytest.approx(v.mean())
    assert [st.p50, st.p90, st.p99] == pytest.approx(list(np.percentile(v, [50, 90, 99])))
    assert (st.lo, st.hi) == (v.min(), v.max())


def test_accumulators_over_batches_equal_one_array():
    from hpmkit.spe import perfwrite, decode
    import tempfile
    from pathlib import Path
    d = Path(tempfile.mkdtemp())
    perfwrite.write_perf_data(d / "a.data", [(c, -1, synth.RecordGen(c).stream(3000)) for c in range(3)])
    whole, _ = decode.decode_all(d / "a.data")
    acc = [analyses.Hotspots(), analyses.Latency(), analyses.Sources(), analyses.Events()]
    for b in decode.batches(d / "a.data", chunk=5000):
        for a in acc:
            a.add(b)
    assert acc[0].result() == analyses.hotspots(whole)
    lat_a, lat_b = acc[1].result(), analyses.latency(whole)
    assert lat_a.keys() == lat_b.keys()
    for k in lat_a:
        for kind in ("total", "issue", "xlat", "exec"):
            assert lat_a[k][kind] == lat_b[k][kind]
    assert acc[2].result() == analyses.data_sources(whole)
    assert acc[3].result() == analyses.event_combinations(whole)


def test_hotspots_annotate_cli(aarch64_elf, tmp_path, capsys):
    from hpmkit.cli import main
    syms = symbols.load(str(aarch64_elf))
    lo, hi = syms.find("hot")
    ldr = next(a for a, t in disassemble(str(aarch64_elf), lo, hi) if t.startswith("ldr"))
    f = tmp_path / "h.bin"
    f.write_bytes(b"".join([rec(pc=ldr)] * 3 + [rec(pc=lo)]))
    html = tmp_path / "h.html"
    assert main(["spe", "hotspots", "--raw", str(f), "--symbols", str(aarch64_elf), "--annotate",
                 "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"annotated hot ({lo:#x}-{hi:#x})" in out
    assert f"  75.00 : {ldr:x}:  ldr" in out and f"  25.00 : {lo:x}:  " in out
    assert "annotated disassembly" in html.read_text()
