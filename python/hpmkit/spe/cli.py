"""`hpmkit spe ...`: decode Arm SPE traces (perf.data AUXTRACE or raw buffers), tables, analyses."""
from __future__ import annotations

import argparse
import sys

from ..errors import UsageError

EPILOG = """\
examples:
  hpmkit spe info perf.data                         metadata, buffers, records, anything skipped
  hpmkit spe dump perf.data | less                  packets, like 'perf report -D'
  hpmkit spe decode perf.data -o out/run            out/run-ldst.csv, -branch.csv, -other.csv
  hpmkit spe decode perf.data -o run --format parquet --symbols ./app
  hpmkit spe decode --raw buf.spe.bin -o buf        a raw SPE buffer (bytes as the CPU wrote them)
  hpmkit spe hotspots perf.data --symbols ./app --annotate --html hot.html
  hpmkit spe latency perf.data --op ld --symbol benchmark_loads --symbols ./lat_mem_rd
  hpmkit spe sources perf.data --op ld
  hpmkit spe events perf.data --op ld --min-latency 100
  hpmkit spe interval --period 1024 --min-interval 256 --jitter 1 --ernd 0
  hpmkit spe estimate perf.data --op ld --pc-range 0x1fbc:0x23b4 --period 1024 --jitter 1 \\
        --cntfrq 25000000 --bytes-per-load 4
  hpmkit spe quality --counts SAMPLE_POP=1e9,SAMPLE_FEED=976562,SAMPLE_FILTRATE=500000,SAMPLE_COLLISION=12 perf.data
  hpmkit spe quality --stat stat.json      (hpm stat --json -e SAMPLE_POP,SAMPLE_FEED,SAMPLE_FILTRATE,SAMPLE_COLLISION)
  hpmkit spe c2c perf.data --symbols ./false_sharing --source-lines
  hpmkit spe synth big.data --records 1000000 --cpus 4       a synthetic SPE perf.data

Filters (analyses and decode): --op ld|st|ldst|branch|other, --el N, --pc-range LO:HI,
--symbol NAME (needs --symbols), --min-latency CYCLES, --cpu N.
Every byte skipped while resynchronising, every dropped record and every missing byte of a
cut-short file is reported on stderr. Latency counters at the saturation value (--sat) are
counted apart, never averaged.
"""


def _int(s: str) -> int:
    try:
        return int(float(s)) if "e" in s.lower() and not s.lower().startswith("0x") else int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a number") from None


def _common(p: argparse.ArgumentParser, filters: bool = True) -> None:
    p.add_argument("file", metavar="FILE", help="perf.data with SPE AUX data, or a raw buffer with --raw")
    p.add_argument("--raw", action="store_true", help="FILE is a raw SPE buffer, not perf.data")
    p.add_argument("--raw-cpu", type=int, default=0, metavar="N",
                   help="CPU number recorded for a raw buffer's records (default 0, as spe-parser)")
    p.add_argument("--truncated-ok", action="store_true",
                   help="decode the complete part of a cut-short file (missing bytes are reported)")
    p.add_argument("--progress", action="store_true", default=None, help="progress bar on stderr even if not a tty")
    p.add_argument("--symbols", metavar="ELF|KALLSYMS", help="symbol names from an ELF or a kallsyms copy")
    p.add_argument("--bias", type=_int, default=None, metavar="ADDR",
                   help="load address added to the ELF's addresses (PIE executables, shared libraries); "
                   "default: from the perf.data MMAP record of a file with the ELF's name, else 0")
    if filters:
        g = p.add_argument_group("filters")
        g.add_argument("--op", choices=["ld", "st", "ldst", "branch", "other"])
        g.add_argument("--el", type=int, choices=[0, 1, 2, 3], help="exception level of the PC")
        g.add_argument("--pc-range", metavar="LO:HI", help="PCs in [LO, HI) (hex or decimal)")
        g.add_argument("--symbol", metavar="NAME", help="PCs inside this function (needs --symbols)")
        g.add_argument("--min-latency", type=int, metavar="CYCLES", help="total latency at least this")
        g.add_argument("--cpu", type=int, metavar="N", help="records of this CPU only")


def _html_arg(p) -> None:
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")


def add_parser(sub, raw_formatter) -> None:
    import os
    # numpy's BLAS threads would spin on the second core, which decode uses; SPE commands do no
    # linear algebra (no effect when numpy is already loaded)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    spe = sub.add_parser("spe", help="Arm SPE: decode AUX traces, tables, hotspots, latency, c2c",
                         description="Decode Arm Statistical Profiling Extension traces from perf.data "
                         "(AUXTRACE) or raw buffers; write spe-parser tables; run the SPE analyses.",
                         epilog=EPILOG, formatter_class=raw_formatter)
    ss = spe.add_subparsers(dest="spe_command", metavar="ACTION", required=True)

    def add(name, help_, fn, filters=True, common=True):
        p = ss.add_parser(name, help=help_, description=help_, epilog=EPILOG, formatter_class=raw_formatter)
        if common:
            _common(p, filters)
        p.set_defaults(run=fn)
        return p

    add("info", "what the file holds: metadata, AUX buffers, CPUs, records, skipped bytes", _info, filters=False)
    p = add("dump", "list every packet like 'perf report -D' (perf 6.1 text)", _dump, filters=False)
    p = add("decode", "write spe-parser tables (load/store, branch, other) as CSV or Parquet", _decode)
    p.add_argument("-o", "--output", required=True, metavar="PREFIX", help="writes PREFIX-ldst.EXT, -branch, -other")
    p.add_argument("--format", choices=["csv", "parquet"], default="csv")
    p.add_argument("--perf-time", action="store_true",
                   help="add a `time` column: timestamps in perf-clock ns (from the TIME_CONV record)")
    p = add("hotspots", "samples per PC and per symbol (precise: no skid), optional disassembly", _hotspots)
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--annotate", action="store_true", help="disassemble the hottest function with objdump")
    _html_arg(p)
    p = add("latency", "total / issue / translation / execution latency per data source", _latency)
    p.add_argument("--sat", type=int, default=4095, metavar="N",
                   help="saturation value of the latency counters (4095: 12-bit, Neoverse N1; 65535: 16-bit)")
    _html_arg(p)
    p = add("sources", "data-source breakdown of loads", _sources)
    _html_arg(p)
    p = add("events", "event-combination counts per operation type", _events)
    p.add_argument("--top", type=int, default=30)
    _html_arg(p)
    p = add("interval", "the actual SPE sampling interval from -c, min_interval, jitter and ERnd",
            _interval, common=False)
    _interval_args(p)
    p = add("estimate", "derived load latency (seed 4.2.4) and bandwidth (4.4.2) from sampled loads", _estimate)
    _interval_args(p)
    p.add_argument("--interval", type=int, metavar="N", help="the actual interval, instead of computing it")
    p.add_argument("--cntfrq", type=float, metavar="HZ", help="generic timer frequency (default: from TIME_CONV)")
    p.add_argument("--bytes-per-load", type=int, default=4, metavar="N", help="bytes each load reads (default 4)")
    p = add("quality", "SPE sampling-quality ratios from the SAMPLE_* PMU counts", _quality, filters=False,
            common=False)
    p.add_argument("--counts", metavar="NAME=VALUE,...",
                   help="SAMPLE_POP, SAMPLE_FEED, SAMPLE_FILTRATE, SAMPLE_COLLISION counts")
    p.add_argument("--stat", metavar="FILE.json",
                   help="take the counts from 'hpm stat --json -e SAMPLE_POP,SAMPLE_FEED,SAMPLE_FILTRATE,"
                   "SAMPLE_COLLISION' (names may carry a PMU prefix or modifiers)")
    p.add_argument("file", nargs="?", metavar="FILE", help="perf.data: also compare the decoded record count")
    p.add_argument("--raw", action="store_true")
    p = add("c2c", "false sharing: contended cache lines from peer-snoop loads and stores", _c2c)
    p.add_argument("--line-size", type=int, default=64)
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--source-lines", action="store_true", help="DWARF source lines of the code addresses")
    _html_arg(p)
    p = add("synth", "write a synthetic SPE perf.data (realistic records; for demos and benchmarks)",
            _synth, common=False)
    p.add_argument("output", metavar="OUT")
    p.add_argument("--records", type=int, default=100000)
    p.add_argument("--cpus", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)


def _interval_args(p) -> None:
    p.add_argument("--period", type=_int, metavar="N", help="the -c value given to perf record (absent: min interval)")
    p.add_argument("--min-interval", type=_int, default=256, metavar="N",
                   help="/sys/devices/arm_spe_0/caps/min_interval (default 256)")
    p.add_argument("--jitter", type=int, choices=[0, 1], default=0, help="jitter=1 was given to the arm_spe event")
    p.add_argument("--ernd", type=int, choices=[0, 1], default=0, help="/sys/devices/arm_spe_0/caps/ernd")


# ---- shared loading ---------------------------------------------------------------------------

def _symbols(args):
    if not getattr(args, "symbols", None):
        return None
    from ..profile import symbols
    syms = symbols.load(args.symbols, args.bias or 0)
    if args.bias is None:
        if syms.is_elf and not args.raw:
            from ..perfdata import PerfData
            from . import perfmeta
            if perfmeta.is_perf_data(args.file):
                with PerfData(args.file) as pd:
                    found = symbols.map_bias(syms.image, perfmeta.mmaps(pd))
                if found is not None:
                    syms.bias = found
                    print(f"hpmkit: spe: note: {args.symbols} loaded at bias {found:#x} (perf.data MMAP record)",
                          file=sys.stderr)
        args.bias = syms.bias
    return syms


def _filter(args, syms):
    from .analyses import Filter
    f = Filter(op=getattr(args, "op", None), el=getattr(args, "el", None),
               min_latency=getattr(args, "min_latency", None), cpu=getattr(args, "cpu", None))
    rng = getattr(args, "pc_range", None)
    if rng:
        lo, sep, hi = rng.partition(":")
        try:
            f.pc_lo, f.pc_hi = int(lo, 0), int(hi, 0)
        except ValueError:
            raise UsageError(f"--pc-range wants LO:HI with numbers, got {rng!r}") from None
        if not sep or f.pc_hi <= f.pc_lo:
            raise UsageError(f"--pc-range wants LO:HI with LO < HI, got {rng!r}")
    if getattr(args, "symbol", None):
        if syms is None:
            raise UsageError("--symbol needs --symbols ELF|KALLSYMS to find the function")
        f.pc_lo, f.pc_hi = syms.find(args.symbol)
    return f


def _warn(src) -> None:
    for line in src.problems():
        print(f"hpmkit: spe: warning: {src.path}: {line}", file=sys.stderr)


def _check_html(args) -> None:
    """An --html page that cannot be written fails before the analysis, not after it."""
    if getattr(args, "html", None):
        from .outfiles import check
        check(args.html, "give another --html FILE")


def _stream(args):
    """Filtered record batches of the input (bounded memory), the Source that collects the
    statistics (complete once the batches are consumed), the symbols and the filter."""
    from .decode import Source, batches
    _check_html(args)
    syms = _symbols(args)
    flt = _filter(args, syms)
    src = Source(args.file, "")
    gen = (flt.apply(b) for b in batches(args.file, raw=args.raw or None, cpu=args.raw_cpu,
                                         truncated_ok=args.truncated_ok, progress=args.progress, src=src))
    return gen, src, syms, flt


def _feed(gen, *accs) -> int:
    n = 0
    for b in gen:
        n += len(b)
        for a in accs:
            a.add(b)
    return n


def _header(src, n, flt) -> str:
    return f"{src.path}: {n} records selected (filters: {flt.describe()})\n"


# ---- commands -----------------------------------------------------------------------------

def _info(args) -> int:
    from .analyses import op_mask
    from .decode import Source, batches
    src = Source(args.file, "")
    ops = {"ld": 0, "st": 0, "branch": 0, "other": 0}
    n = no_op = 0
    for b in batches(args.file, raw=args.raw or None, cpu=args.raw_cpu, truncated_ok=args.truncated_ok,
                     progress=args.progress, src=src):
        n += len(b)
        no_op += int((b["op_class"] == 0xFF).sum())
        for op in ops:
            ops[op] += int(op_mask(b, op).sum())
    w = sys.stdout.write
    w(f"file          {src.path} ({src.kind})\n")
    if src.info:
        i = src.info
        w(f"metadata      AUXTRACE_INFO v{i.version}, PMU type {i.pmu_type}"
          + (f", per-CPU mmaps {i.per_cpu_mmaps}" if i.per_cpu_mmaps is not None else "") + "\n")
        for c in i.cpus:
            midr = f"{c.midr:#x}" if c.midr is not None else "-"
            w(f"  cpu {c.cpu:<4} MIDR {midr}  PMU type {c.pmu_type}  min interval {c.min_interval}\n")
    if src.time_conv:
        t = src.time_conv
        w(f"time conv     shift {t.time_shift} mult {t.time_mult} zero {t.time_zero}\n")
    s = src.stats
    w(f"aux buffers   {src.aux_buffers} ({src.aux_bytes} bytes) on CPUs {sorted(src.cpus)}\n")
    w(f"packets       {s.packets} ({s.pad_bytes} padding bytes)\n")
    w(f"records       {n}: " + ", ".join(f"{op} {c}" for op, c in ops.items())
      + f", without operation type {no_op}\n")
    probs = src.problems()
    w("skipped       " + ("; ".join(probs) if probs else "nothing") + "\n")
    return 0


def _dump(args) -> int:
    from ..perfdata import PerfData
    from ..perfdata import format as PF
    from . import perfmeta
    from .decode import CUT_HINT, open_kind
    from .native import dump_lines
    out = sys.stdout
    kind = open_kind(args.file, args.raw or None)
    if kind == "raw":
        import os

        from ..errors import ReadError
        try:
            f = open(args.file, "rb")
        except OSError as e:
            raise ReadError(args.file, f"cannot read: {e.strerror or e}") from None
        with f:
            out.write(f". ... ARM SPE data: size {os.fstat(f.fileno()).st_size:#x} bytes\n")
            for text in dump_lines(iter(lambda: f.read(1 << 20), b"")):
                out.write(text)
        return 0
    from ..errors import FormatError
    with PerfData(args.file) as pd:
        declared = getattr(pd, "_declared_end", pd.data_end)
        if not pd.pipe and declared > pd.data_end and not args.truncated_ok:
            raise FormatError(args.file, f"data section ends at offset {declared:#x} but the file has "
                              f"{pd.size} bytes (truncated copy?)", CUT_HINT)
        for rec in pd.records():
            if rec.type != PF.REC["AUXTRACE"]:
                continue
            ab = perfmeta.aux_header(args.file, rec)
            avail = ab.size if pd.data_end is None else min(ab.size, pd.data_end - rec.aux_offset)
            out.write(f"\nPERF_RECORD_AUXTRACE at {rec.offset:#x} size: {ab.size:#x}  offset: {ab.aux_offset:#x}"
                      f"  idx: {ab.idx}  tid: {ab.tid}  cpu: {ab.cpu}\n")
            out.write(f". ... ARM SPE data: size {avail:#x} bytes\n")
            for text in dump_lines(pd.aux_chunks(rec)):
                out.write(text)
        cut = pd.truncation
        if cut is not None and cut.missing + cut.partial:
            print(f"hpmkit: spe: warning: {args.file}: {cut.missing + cut.partial} byte(s) of AUX data missing "
                  "from the cut-short file", file=sys.stderr)
    return 0


def _decode(args) -> int:
    from .decode import Source, batches
    from .tables import write_tables
    if args.perf_time and args.raw:
        raise UsageError("--perf-time needs a perf.data file (raw buffers have no TIME_CONV record)")
    syms = _symbols(args)
    # without filters, symbols or times the records go from the decoder to the table writer as
    # raw buffers: no numpy, which is much of the run time of a small file
    filtered = any(getattr(args, k) is not None for k in ("op", "el", "pc_range", "symbol", "min_latency", "cpu"))
    flt = _filter(args, syms) if filtered else None
    arrays = filtered or syms is not None or args.perf_time
    src = Source(args.file, "")
    gen = batches(args.file, raw=args.raw or None, cpu=args.raw_cpu, truncated_ok=args.truncated_ok,
                  progress=args.progress, src=src, arrays=arrays)
    if flt is not None and flt.active():
        gen = (flt.apply(b) for b in gen)
    res, no_op = write_tables(gen, args.output, args.format, symbols=syms,
                              time_conv=(lambda: src.time_conv) if args.perf_time else None)
    _warn(src)
    if no_op:
        print(f"hpmkit: spe: note: {args.file}: {no_op} record(s) without an operation type packet "
              "(e.g. a lone TIMESTAMP) are in no table", file=sys.stderr)
    for kind, (path, rows) in res.items():
        print(f"{path}: {rows} {kind} records")
    return 0


def _pct(x: float) -> str:
    return f"{x:6.2f}%"


def _hotspots(args) -> int:
    from . import analyses
    from . import html as H
    if args.annotate and not args.symbols:  # before the work, not after the table
        raise UsageError("--annotate needs --symbols with an ELF file (the function to disassemble)")
    gen, src, syms, flt = _stream(args)
    if args.annotate:
        if not syms.is_elf:
            raise UsageError(f"--annotate needs --symbols with an ELF file; {args.symbols} is a kallsyms list")
        from .disasm import tool
        tool("objdump")  # a missing objdump is said before the decoding, too
    acc = analyses.Hotspots()
    _feed(gen, acc)
    _warn(src)
    h = acc.result(syms, args.top)
    report: list[str] = []  # printed after the --html page is written: `| head` must not lose it
    w = report.append
    w(_header(src, h["total"], flt))
    w(f"\n{'samples':>9} {'%':>7}  {'pc':<18} symbol\n")
    for pc, c, p, s in h["by_pc"]:
        w(f"{c:>9} {_pct(p)}  {pc:#018x} {s}\n")
    if syms is not None:
        w(f"\n{'samples':>9} {'%':>7}  symbol\n")
        for s, c, p in h["by_symbol"]:
            w(f"{c:>9} {_pct(p)}  {s}\n")
    ann = []
    if args.annotate:
        from .disasm import disassemble
        top = next((s for s, _c, _p in h["by_symbol"] if s != "[unknown]"), None)
        if top:
            lo, hi = syms.find(top)
            counts = h["pc_counts"]
            n = sum(counts.get(pc, 0) for pc in range(lo, hi, 4)) or 1
            w(f"\nannotated {top} ({lo:#x}-{hi:#x}), % of the function's samples:\n")
            for a, text in disassemble(syms.path, lo, hi, syms.bias):
                c = counts.get(a, 0)
                ann.append((f"{100.0 * c / n:.2f}", f"{a:#x}", text))
                w(f"{100.0 * c / n:7.2f} : {a:x}:  {text}\n")
    if args.html:
        secs = [f"<p>{H.esc(_header(src, h['total'], flt))}</p>",
                H.bars([f"{pc:#x} {s}" for pc, _c, _p, s in h["by_pc"]], [c for _pc, c, _p, _s in h["by_pc"]],
                       "samples per PC"),
                H.table(["samples", "%", "pc", "symbol"], [[c, f"{p:.2f}", f"{pc:#x}", s] for pc, c, p, s in h["by_pc"]])]
        if syms is not None:
            secs += ["<h2>by symbol</h2>", H.bars([s for s, _c, _p in h["by_symbol"]], [c for _s, c, _p in h["by_symbol"]],
                                                 "samples per symbol")]
        if ann:
            secs += ["<h2>annotated disassembly</h2>", H.table(["%", "address", "instruction"], ann, left=0)]
        H.write(args.html, H.page("SPE hotspots", secs))
    sys.stdout.write("".join(report))
    return 0


def _latency(args) -> int:
    from . import analyses
    from . import html as H
    gen, src, syms, flt = _stream(args)
    acc = analyses.Latency(args.sat)
    n = _feed(gen, acc)
    _warn(src)
    res = acc.result()
    report: list[str] = []  # printed after the --html page is written: `| head` must not lose it
    w = report.append
    w(_header(src, n, flt))
    w(f"latencies in cycles; values >= {args.sat} are saturated counters: counted in 'sat', left out of the statistics;\n"
      "exec = total - issue - xlat (derived; 'neg' counts records where it would be negative)\n")
    rows = []
    for name, d in res.items():
        w(f"\n{name}: {d['records']} records\n")
        w(f"  {'':8}{'n':>9}{'sat':>7}{'neg':>6}{'mean':>10}{'p50':>8}{'p90':>8}{'p99':>8}{'min':>7}{'max':>7}\n")
        for k in ("total", "issue", "xlat", "exec"):
            s = d[k]
            w(f"  {k:8}{s.n:>9}{s.saturated:>7}{s.negative:>6}{s.mean:>10.2f}{s.p50:>8.0f}{s.p90:>8.0f}"
              f"{s.p99:>8.0f}{s.lo:>7}{s.hi:>7}\n")
            rows.append([name, k, s.n, s.saturated, s.negative, f"{s.mean:.2f}", f"{s.p50:.0f}", f"{s.p90:.0f}",
                         f"{s.p99:.0f}", s.lo, s.hi])
    if args.html:
        secs = [H.table(["source", "latency", "n", "sat", "neg", "mean", "p50", "p90", "p99", "min", "max"], rows, left=2)]
        for name, d in res.items():
            hist = d["exec_hist"]
            vals = hist.values()
            secs.append(H.histogram(vals, f"{name}: execution latency (total - issue - xlat)",
                                    weights=hist.counts[vals + hist.offset]))
        H.write(args.html, H.page("SPE latency per data source", secs))
    sys.stdout.write("".join(report))
    return 0


def _sources(args) -> int:
    from . import analyses
    from . import html as H
    gen, src, syms, flt = _stream(args)
    acc = analyses.Sources()
    n = _feed(gen, acc)
    _warn(src)
    rows = acc.result()
    report: list[str] = []  # printed after the --html page is written: `| head` must not lose it
    w = report.append
    w(_header(src, n, flt))
    w(f"\n{'source':<24}{'loads':>10}{'%':>9}{'mean total lat':>16}\n")
    for name, n, p, m in rows:
        w(f"{name:<24}{n:>10}{_pct(p):>9}{m:>16.1f}\n")
    if args.html:
        H.write(args.html, H.page("SPE data sources of loads", [
            H.bars([r[0] for r in rows], [r[1] for r in rows], "loads per data source"),
            H.table(["source", "loads", "%", "mean total latency"], [[a, b, f"{c:.2f}", f"{d:.1f}"] for a, b, c, d in rows],
                    left=1)]))
    sys.stdout.write("".join(report))
    return 0


def _events(args) -> int:
    from . import analyses
    from . import html as H
    gen, src, syms, flt = _stream(args)
    acc = analyses.Events()
    n = _feed(gen, acc)
    _warn(src)
    rows = acc.result(args.top)
    report: list[str] = []  # printed after the --html page is written: `| head` must not lose it
    w = report.append
    w(_header(src, n, flt))
    w(f"\n{'op':<7}{'count':>10}{'% of op':>9}  events\n")
    for op, ev, c, p in rows:
        w(f"{op:<7}{c:>10}{_pct(p):>9}  {ev}\n")
    if args.html:
        H.write(args.html, H.page("SPE event combinations", [
            H.bars([f"{op} {ev}" for op, ev, _c, _p in rows], [c for _o, _e, c, _p in rows], "records per combination"),
            H.table(["op", "events", "count", "% of op"], [[o, e, c, f"{p:.2f}"] for o, e, c, p in rows], left=2)]))
    sys.stdout.write("".join(report))
    return 0


def _interval(args) -> int:
    from .analyses import sampling_interval
    r = sampling_interval(args.period, args.min_interval, bool(args.jitter), args.ernd)
    print(f"base interval   {r['base']}  ({'-c ' + str(r['period']) + ' rounded down to a multiple of 256' if r['period'] is not None else 'min_interval'}"
          f", at least min_interval {r['min_interval']})")
    print(f"actual interval {r['interval']}  (jitter={int(r['jitter'])}, ernd={r['ernd']}: base + {r['interval'] - r['base']})")
    return 0


def _estimate(args) -> int:
    from . import analyses
    gen, src, syms, flt = _stream(args)
    span = analyses.LoadSpan()
    n = _feed(gen, span)
    _warn(src)
    if not span.loads:
        raise UsageError("no load records selected: the estimates need sampled loads")
    if span.first is None:
        raise UsageError("the selected loads carry no timestamps (record with ts_enable=1)")
    if args.interval:
        interval = args.interval
        how = "given"
    else:
        r = analyses.sampling_interval(args.period, args.min_interval, bool(args.jitter), args.ernd)
        interval, how = r["interval"], f"base {r['base']} + {r['interval'] - r['base']}"
    nspt = analyses.ns_per_tick(args.cntfrq, src.time_conv)
    t0, t1 = span.first, span.last
    lat = analyses.derived_load_latency(span.loads, t0, t1, interval, nspt)
    bw = analyses.bandwidth(span.loads, t0, t1, interval, args.bytes_per_load, nspt)
    w = sys.stdout.write
    w(_header(src, n, flt))
    w(f"sampled loads          {span.loads}\n")
    w(f"sampling interval      {interval} ({how})\n")
    w(f"timestamp span         {lat['span_ticks']} ticks x {nspt:g} ns = {lat['span_ns']:.0f} ns\n")
    w(f"loads executed (est.)  {lat['loads_executed']}\n")
    w(f"derived load latency   {lat['latency_ns']:.3f} ns   (seed 4.2.4: span / (loads x interval))\n")
    w(f"bytes read (est.)      {bw['bytes']}  ({args.bytes_per_load} bytes per load)\n")
    w(f"bandwidth (est.)       {bw['mb_per_s']:.2f} MB/s   (seed 4.4.2: bytes / span, MB = 1e6 bytes)\n")
    return 0


def _stat_counts(path: str) -> dict[str, int]:
    from .. import formats
    from .analyses import QUALITY_EVENTS
    from ..errors import FormatError
    rep = formats.load_stat(path)
    counts = {}
    for ev in rep.events:
        name = ev.name.split("::")[-1].split(":")[0].split("/")[-1].upper()
        if name in QUALITY_EVENTS:
            if not ev.counted:
                raise FormatError(path, f"event {ev.name} was never counted (no free counter)",
                                  "count the four SAMPLE_* events in their own run")
            counts[name] = int(round(ev.value))
    return counts


def _quality(args) -> int:
    from .analyses import quality
    if not args.counts and not args.stat:
        raise UsageError("quality needs --counts NAME=VALUE,... or --stat FILE.json")
    counts = _stat_counts(args.stat) if args.stat else {}
    for item in args.counts.split(",") if args.counts else []:
        k, sep, v = item.partition("=")
        if not sep:
            raise UsageError(f"--counts wants NAME=VALUE items, got {item!r}")
        try:
            counts[k.strip().upper()] = int(float(v)) if "e" in v.lower() else int(v, 0)
        except ValueError:
            raise UsageError(f"--counts: {v!r} is not a number") from None
    records = None
    if args.file:
        from .decode import Source, batches
        src = Source(args.file, "")
        records = sum(len(b) for b in batches(args.file, raw=args.raw or None, src=src))
        _warn(src)
    for name, val, formula in quality(counts, records):
        print(f"{name:<22}{val:>12.6f}   {formula}")
    return 0


def _c2c(args) -> int:
    from . import c2c
    from . import html as H
    if args.line_size <= 0 or args.line_size & (args.line_size - 1):
        raise UsageError(f"--line-size must be a power of two, not {args.line_size}")
    # pass 1: lines with peer-snoop loads and with stores; pass 2: only their records are kept
    gen, src, syms, flt = _stream(args)
    cand = c2c.Candidates(args.line_size)
    n = _feed(gen, cand)
    _warn(src)
    keep = cand.lines()
    parts = []
    if keep:
        gen, _src, _syms, _flt = _stream(args)
        parts = [b for b in (c2c.on_lines(b, keep, args.line_size) for b in gen) if len(b)]
    import numpy as np
    from .native import RECORD_DTYPE
    recs = np.concatenate(parts) if parts else np.zeros(0, RECORD_DTYPE)
    lines = c2c.analyse(recs, args.line_size)[: args.top]
    if args.source_lines and (syms is None or not syms.is_elf or not syms.image.has_dwarf):
        raise UsageError("--source-lines needs --symbols with an ELF file that has DWARF line info")
    c2c.annotate(lines, syms, args.source_lines)
    report: list[str] = []  # printed after the --html page is written: `| head` must not lose it
    w = report.append
    w(_header(src, n, flt))
    w("peer snoop = load served by another core's cache: lcl (PEER-CPU, PEER-CLUSTER) or rmt (REMOTE);\n"
      "per line, the (offset, code address) pairs with peer loads or stores, as perf c2c's Pareto table\n")
    w(f"\n{'#':>3} {'cacheline':<18}{'peer':>7}{'rmt':>6}{'lcl':>6}{'loads':>7}{'stores':>7}{'L1hit':>7}"
      f"{'thr':>5}{'cpu':>5}  false-sharing\n")
    for i, L in enumerate(lines):
        w(f"{i:>3} {L.addr:#018x}{L.peer:>7}{L.rmt_peer:>6}{L.lcl_peer:>6}{L.loads:>7}{L.stores:>7}{L.l1_hit:>7}"
          f"{len(L.threads):>5}{len(L.cpus):>5}  {'yes' if L.false_sharing else 'no'}\n")
    if lines:
        w(f"\n{c2c.verdict(lines)}\n")
    rows, offsets = [], []
    for i, L in enumerate(lines):
        w(f"\n--- line {i}: {L.addr:#x}\n")
        w(f"  {'offset':>7}{'loads':>7}{'stores':>7}{'threads':>8}\n")
        for off in sorted(L.offsets):
            ld, st, th = L.offsets[off]
            w(f"  {off:#7x}{ld:>7}{st:>7}{len(th):>8}\n")
            offsets.append([i, f"{L.addr:#x}", f"{off:#x}", ld, st, len(th)])
        w(f"  {'offset':>7} {'code address':<20}{'rmt':>5}{'lcl':>5}{'stores':>7}{'records':>8}{'cpus':>5}"
          f"{'cyc rmt':>8}{'cyc lcl':>8}{'cyc load':>9}  symbol  source\n")
        ents = [e for e in L.entries.values() if e.lcl_peer + e.rmt_peer + e.stores]
        for e in sorted(ents, key=lambda e: (e.offset, -(e.rmt_peer + e.lcl_peer), e.pc)):
            ca = L.code[e.pc]
            other = e.loads - e.lcl_peer - e.rmt_peer
            cyc = [round(s / n) if n else 0 for s, n in ((e.lat_rmt, e.rmt_peer), (e.lat_lcl, e.lcl_peer),
                                                           (e.lat_load, other))]
            w(f"  {e.offset:#7x} {e.pc:#020x}{e.rmt_peer:>5}{e.lcl_peer:>5}{e.stores:>7}{e.records:>8}"
              f"{len(e.cpus):>5}{cyc[0]:>8}{cyc[1]:>8}{cyc[2]:>9}  {ca.symbol}  {ca.source}\n")
            rows.append([f"{L.addr:#x}", f"{e.offset:#x}", f"{e.pc:#x}", e.rmt_peer, e.lcl_peer, e.stores,
                         e.records, len(e.cpus), *cyc, ca.symbol, ca.source])
    if not lines:
        w(f"\n{c2c.verdict(lines)}\n")
    if args.html:
        # the terminal's sections in the same order: verdict, per-line summary, offsets, code rows
        summary = [[i, f"{L.addr:#x}", L.peer, L.rmt_peer, L.lcl_peer, L.loads, L.stores, L.l1_hit,
                    len(L.threads), len(L.cpus), "yes" if L.false_sharing else "no"] for i, L in enumerate(lines)]
        secs = [f"<p>{H.esc(_header(src, n, flt))}</p>",
                f'<p class="verdict"><b>{H.esc(c2c.verdict(lines))}</b></p>']
        if lines:
            secs += [H.bars([f"{L.addr:#x}" for L in lines], [L.peer for L in lines], "peer-snoop loads per cache line"),
                     "<h2>cache lines</h2>",
                     H.table(["#", "cache line", "peer", "rmt", "lcl", "loads", "stores", "L1 hit", "threads",
                              "cpus", "false sharing"], summary, left=2),
                     "<h2>offsets per line</h2>",
                     H.table(["#", "cache line", "offset", "loads", "stores", "threads"], offsets, left=2),
                     "<h2>code addresses per line (perf c2c's Pareto table)</h2>",
                     H.table(["line", "offset", "code address", "rmt peer", "lcl peer", "stores", "records", "cpus",
                              "cycles rmt", "cycles lcl", "cycles load", "symbol", "source"], rows, left=3)]
        H.write(args.html, H.page("SPE false sharing (c2c)", secs))
    sys.stdout.write("".join(report))
    return 0


def _synth(args) -> int:
    from . import perfwrite, synth
    from .outfiles import Outputs
    if args.records < 1 or args.cpus < 1:
        raise UsageError("--records and --cpus must be at least 1")
    with Outputs([args.output], "give another OUT") as out:  # checked before the records are made
        bufs = []
        per = max(args.records // args.cpus, 1)
        block = 4096
        for cpu in range(args.cpus):
            g = synth.RecordGen(args.seed * 1000 + cpu)
            left = per
            while left > 0:
                n = min(block, left)
                bufs.append((cpu, -1, g.stream(n)))
                left -= n
        try:
            perfwrite.write_perf_data(out.tmp[args.output], bufs)
        except OSError as e:
            raise out.fail(e, args.output) from None
        out.publish()
    print(f"{args.output}: {per * args.cpus} records on {args.cpus} CPU(s), {len(bufs)} AUX buffers")
    return 0
