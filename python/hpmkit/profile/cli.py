"""`hpmkit profile import|show|export`: recordings (perf.data, perf script text, folded stacks)
into the profile model, a summary, and exports (folded, flame graph SVG, speedscope)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import UsageError

EPILOG = """\
examples:
  hpmkit profile import perf.data                      -> perf.hpmprof/ (Parquet + meta.json)
  hpmkit profile import perf.data -o run1.hpmprof --kallsyms board-kallsyms.txt --symfs ./rootfs
  hpmkit profile import out.perf-script.txt            perf script text (any events, -g or not)
  hpmkit profile show run1.hpmprof                     events, totals, hottest functions, commands
  hpmkit profile show perf.data --by instructions      (a recording is imported on the fly)
  hpmkit profile export run1.hpmprof --format svg -o flame.svg
  hpmkit profile export run1.hpmprof --format folded > stacks.folded
  hpmkit profile export run1.hpmprof --format speedscope -o run1.speedscope.json
      (open it at https://www.speedscope.app)
  hpmkit profile export run1.hpmprof --format html -o flame.html
      interactive: search, click to zoom, kernel and user colours (one file, no network)
  hpmkit profile export rv.hpmprof --vs arm.hpmprof --format html -o diff.html
      differential: red where the second profile spends a larger share, blue a smaller

Kernel frames are named from the kallsyms recorded by 'hpm record', else --kallsyms FILE, else
this machine's /proc/kallsyms when the recording came from its running kernel. User frames are
named from the ELF files the recording mapped (--symfs DIR: a copy of the target's files);
frames nothing names stay as addresses and are counted in the profile's meta.
"""


# what each stage of a read is called in the progress line
STAGES = {"scan": "reading records", "parse": "parsing text", "symbols": "naming frames"}


def add_parser(sub, raw_formatter) -> None:
    p = sub.add_parser("profile", help="import perf.data / perf script recordings; show, export",
                       description="Sampling profiles in one columnar model (samples, stacks, "
                       "frames; Parquet): import, summarise, export flame graphs.",
                       epilog=EPILOG, formatter_class=raw_formatter)
    ps = p.add_subparsers(dest="profile_command", metavar="ACTION", required=True)

    def sym_opts(q):
        q.add_argument("--kallsyms", metavar="FILE", help="kallsyms text of the recording's kernel")
        q.add_argument("--symfs", metavar="DIR", help="look for the recording's ELF files under DIR")
        q.add_argument("--srcline", choices=["own", "all", "none"], default="own",
                       help="source lines from DWARF: of files with their own debug info (own, "
                       "default), also from separate debug files such as libc's (all: slower)")

    def quiet(q):
        q.add_argument("-q", "--quiet", action="store_true",
                       help="no progress on stderr (notes and warnings are still printed)")

    i = ps.add_parser("import", help="read a recording into NAME.hpmprof/",
                      epilog=EPILOG, formatter_class=raw_formatter)
    i.add_argument("file", metavar="RECORDING", help="perf.data, perf script text, or folded stacks")
    i.add_argument("-o", "--output", metavar="DIR.hpmprof",
                   help="profile directory (default: RECORDING's name with .hpmprof)")
    i.add_argument("--workload", help="a name for what was recorded (stored in meta)")
    sym_opts(i)
    quiet(i)
    i.set_defaults(run=_import)

    s = ps.add_parser("show", help="summary: source, events, totals, skipped, top functions and commands",
                      epilog=EPILOG, formatter_class=raw_formatter)
    s.add_argument("file", metavar="PROFILE", help="a .hpmprof directory or a recording")
    s.add_argument("--by", default="samples", metavar="EVENT",
                   help="weight: samples (default), a sampling event, or a group member")
    s.add_argument("--top", type=int, default=15, metavar="N", help="functions listed (default 15)")
    s.add_argument("--comms", type=int, default=10, metavar="N",
                   help="commands listed per event in the 'by command' table (default 10; 0: no "
                   "table); its figures are perf report --sort comm -n's Samples and Overhead")
    sym_opts(s)
    quiet(s)
    s.set_defaults(run=_show)

    e = ps.add_parser("export", help="folded stacks, flame graph SVG or HTML, speedscope JSON",
                      epilog=EPILOG, formatter_class=raw_formatter)
    e.add_argument("file", metavar="PROFILE", help="a .hpmprof directory or a recording")
    e.add_argument("--format", required=True, choices=["folded", "svg", "html", "speedscope"])
    e.add_argument("--vs", metavar="PROFILE2",
                   help="with --format html: a differential flame graph of PROFILE -> PROFILE2")
    e.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    e.add_argument("--by", default="samples", metavar="EVENT", help="weight, as in 'show'")
    e.add_argument("--no-comm", action="store_true",
                   help="do not put the thread name at the root of each stack")
    e.add_argument("--title", help="flame graph title")
    sym_opts(e)
    quiet(e)
    e.set_defaults(run=_export)

    k = ps.add_parser("kallsyms", help="print the kernel symbols hpm record stored in a perf.data",
                      description="Print the recording machine's kernel symbols that hpm record "
                      "stored in the file (feature section 250), in /proc/kallsyms format, so "
                      "that Linux perf can name kernel frames of a file from another machine.",
                      epilog="examples:\n  hpmkit profile kallsyms board.data > board.kallsyms\n"
                      "  perf script -i board.data --kallsyms board.kallsyms\n",
                      formatter_class=raw_formatter)
    k.add_argument("file", metavar="PERF.DATA")
    k.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    k.set_defaults(run=_kallsyms)


def _load(args):
    from ..progress import Progress
    from . import ingest
    from .model import Profile
    if os.path.isdir(args.file):
        return Profile.load(args.file)
    prog = Progress(f"profile {args.profile_command}", quiet=getattr(args, "quiet", False))
    try:
        return ingest(args.file, kallsyms=args.kallsyms, symfs=args.symfs, srcline=args.srcline,
                      progress=lambda stage, done, total: prog(
                          STAGES.get(stage, stage), args.file, done, total or None,
                          unit="B" if stage in ("scan", "parse") else ""))
    finally:
        prog.close()


def _check_output(path: str | None) -> None:
    from ..outputs import check
    check(path)


def _write(path: str | None, text: str) -> None:
    if not path:
        sys.stdout.write(text)
        return
    from ..outputs import write_text
    write_text(path, text, "-o")


def _kallsyms(args) -> int:
    from ..errors import FormatError
    from ..perfdata.reader import PerfData
    _check_output(args.output)
    with PerfData(args.file) as pd:
        text = pd.kallsyms_text()
    if not text:
        raise FormatError(args.file, "has no kernel symbol section (bit 250)",
                          "record with 'hpm record' as root (kernel.kptr_restrict hides addresses "
                          "otherwise), without --kallsyms none")
    _write(args.output, text)
    return 0


def _import(args) -> int:
    if args.file == "-" and not args.output:
        raise UsageError("profile import -: give -o DIR.hpmprof for a recording read from "
                         "standard input")
    out = args.output or str(Path(args.file).with_suffix("").name + ".hpmprof")
    if os.path.abspath(out) == os.path.abspath(args.file):
        raise UsageError(f"profile import: output {out} would replace the recording; give -o")
    p = Path(out)
    if p.exists() and not (p / "meta.json").is_file():
        raise UsageError(f"profile import: {out} exists and is not a profile folder; give another -o")
    _check_output(str(p / "meta.json"))
    prof = _load(args)
    if args.workload:
        prof.meta["workload"] = args.workload
    dest = prof.save(out, "-o DIR.hpmprof")
    m = prof.meta
    sym = m.get("symbolisation", {})
    print(f"{dest}: {prof.samples.num_rows} samples, {prof.stacks.num_rows} stacks, "
          f"{prof.frames.num_rows} frames ({sym.get('unresolved_frames', 0)} unresolved); "
          f"events: {', '.join(prof.event_names())}")
    _warnings(m)
    return 0


def _warnings(m: dict) -> None:
    for note in m.get("notes") or ():
        print(f"  note: {note}", file=sys.stderr)
    if m.get("lost"):
        print(f"  lost samples: {m['lost']}", file=sys.stderr)
    for why, n in (m.get("skipped") or {}).items():
        print(f"  skipped: {n} {why}", file=sys.stderr)
    k = (m.get("symbolisation") or {}).get("kernel", "")
    if k.startswith("none"):
        print(f"  kernel symbols: {k}", file=sys.stderr)


def _show(args) -> int:
    from collections import Counter

    import pyarrow.compute as pc
    prof = _load(args)
    m = prof.meta
    w = prof.weights(args.by)
    syms = prof.all_stack_symbols()
    self_w, total_w = Counter(), Counter()
    for sid, v in zip(w["stack_id"].to_pylist(), w["weight"].to_pylist()):
        names = syms[sid]
        if names:
            self_w[names[0]] += v
        for n in set(names):
            total_w[n] += v
    allw = sum(w["weight"].to_pylist()) or 1
    src = m["source"]
    size = f"{src['bytes']} bytes" if src.get("bytes") is not None else "standard input"
    print(f"source:   {src['path']} ({src['format']}, {size})")
    for k in ("isa", "kernel", "hostname", "nrcpus", "workload", "cmdline"):
        if m.get(k) is not None:
            print(f"{k + ':':9} {m[k]}")
    # folded stacks keep one row per line when the counts are large: the samples are the counts
    nsamples = pc.sum(prof.sample_counts()).as_py() or 0
    rows = prof.samples.num_rows
    print(f"samples:  {nsamples}" + (f" (in {rows} rows)" if nsamples != rows else "") +
          f"   stacks: {prof.stacks.num_rows}   frames: {prof.frames.num_rows}   lost: {m.get('lost', 0)}")
    for e in m["events"]:
        per = f"period {e['period']}" if "period" in e else f"freq {e.get('freq')} Hz"
        tot = (m.get("totals") or {}).get(e["name"])
        print(f"event:    {e['name']} ({per}, unit {e['unit']})" +
              (f", total {tot}" if tot is not None else ""))
    for why, n in (m.get("skipped") or {}).items():
        print(f"skipped:  {n} {why}")
    for note in m.get("notes") or ():
        print(f"note:     {note}")
    sym = m.get("symbolisation") or {}
    if sym:
        print(f"symbols:  kernel {sym.get('kernel')}; {sym.get('unresolved_frames', 0)} "
              f"unresolved frames")
    print(f"\ntop {args.top} by self {args.by} (of {allw}):")
    print(f"{'self%':>7} {'total%':>7}  function")
    for name, v in self_w.most_common(args.top):
        print(f"{100 * v / allw:7.2f} {100 * total_w[name] / allw:7.2f}  {name}")
    if args.comms > 0:
        for line in comm_table(prof, args.comms):
            print(line)
    return 0


def comm_table(prof, top: int) -> list[str]:
    """The 'by command' table of `profile show`: per event, the commands with the most samples,
    each with its samples and its share of the event's period, as `perf report --sort comm -n`
    prints them (Samples, Overhead). Folded stacks count each line's count as samples."""
    import pyarrow as pa
    import pyarrow.compute as pc
    s = prof.samples
    if not s.num_rows:
        return []
    counts = prof.sample_counts()
    period = pc.fill_null(s.column("period"), 0)
    comm = pc.fill_null(s.column("comm"), "[unknown]")
    out = []
    for ev in prof.event_names():
        mask = pc.equal(s.column("event"), ev)
        t = pa.table({"comm": comm, "n": counts, "p": period.cast(pa.float64())}).filter(mask)
        if not t.num_rows:
            continue
        g = t.group_by("comm").aggregate([("n", "sum"), ("p", "sum")])
        rows = sorted(zip(g["comm"].to_pylist(), g["n_sum"].to_pylist(), g["p_sum"].to_pylist()),
                      key=lambda r: (-r[2], -r[1], r[0]))
        n_all, p_all = sum(r[1] for r in rows), sum(r[2] for r in rows)
        shown = rows[:top]
        out.append(f"\nby command, {ev} ({n_all} samples, {len(rows)} command{'s' * (len(rows) != 1)}"
                   + (f", top {len(shown)}" if len(shown) < len(rows) else "") + "):")
        width = max(7, len(str(shown[0][1])))
        out.append(f"{'samples':>{width}}  {'overhead':>8}  command")
        for name, n, p in shown:
            share = p / p_all if p_all > 0 else n / n_all
            out.append(f"{n:>{width}}  {100 * share:7.2f}%  {name}")
    return out


def _export(args) -> int:
    from . import export
    if args.vs and args.format != "html":
        raise UsageError("profile export: --vs makes a differential flame graph; use it with "
                         "--format html")
    _check_output(args.output)
    prof = _load(args)
    if args.format == "html":
        from . import flamehtml
        if args.vs:
            import argparse
            other = _load(argparse.Namespace(**{**vars(args), "file": args.vs}))
            # the shortest ends of the two paths that tell them apart
            pa, pb = Path(args.file).parts, Path(args.vs).parts
            k = 1
            while k < max(len(pa), len(pb)) and pa[-k:] == pb[-k:]:
                k += 1
            labels = (str(Path(*pa[-k:])), str(Path(*pb[-k:])))
            text = flamehtml.diff_page(prof, other, args.by, comm=not args.no_comm,
                                       labels=labels, title=args.title)
        else:
            text = flamehtml.flame_page(prof, args.by, comm=not args.no_comm, title=args.title)
    elif args.format == "folded":
        text = export.folded(prof, args.by, comm=not args.no_comm)
    elif args.format == "svg":
        text = export.flamegraph_svg(prof, args.by, comm=not args.no_comm, title=args.title)
    else:
        text = export.speedscope(prof, args.by)
    _write(args.output, text)
    return 0
