"""`hpmkit report`: perf report's --stdio view of a recording or profile (also `hpm report`)."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import ReadError, UsageError

EPILOG = """\
examples:
  perf record -e task-clock -g -- ./app      (or: hpm record -g -- ./app)
  hpmkit report                              perf.data here: Children, Self, call graphs
  hpmkit report -i run.hpmprof --no-children --sort dso,sym
  hpmkit report -g callee --percent-limit 2  who calls the hottest functions
  hpmkit report -g none --sort comm,pid -n   one line per thread, with sample counts
  hpmkit report --comm ksuite --dso '[kernel.kallsyms]'   only those samples
  hpmkit report -F overhead,sample,sym       chosen columns
  hpmkit report -i out.perf-script.txt       perf script text works too
  hpm report ...                             the same, from the hpm command

Numbers, order and layout are perf report 6.1's on the same file (docs/report.md):
Children counts a sample once for every entry in its call chain, Self for its own address;
filters judge a sample by its own address and percentages are of all samples unless
--percentage relative. -g takes perf's list: graph|fractal|flat|folded|none, a threshold in
percent, a print limit, caller|callee, percent|period|count (default graph,0.5,caller with
--children, callee without).
"""


def add_parser(sub, raw_formatter) -> None:
    r = sub.add_parser("report", help="perf report's table and call graphs (Children/Self)",
                       description="The perf report --stdio view of a perf.data, a profile "
                       "(.hpmprof) or perf script text: per sort key, the share of samples "
                       "in the key (Self) and under it (Children), with call graphs.",
                       epilog=EPILOG, formatter_class=raw_formatter)
    r.add_argument("-i", "--input", default=None, metavar="FILE",
                   help="perf.data (default: ./perf.data), a .hpmprof folder, perf script "
                   "text, or - for a pipe-mode recording on stdin")
    r.add_argument("--stdio", action="store_true", help="text output (the only one; accepted "
                   "for perf's command lines)")
    r.add_argument("-s", "--sort", default=None, metavar="KEYS",
                   help="comma-separated: comm, dso, sym, pid, tid, tgid, cpu "
                   "(default comm,dso,sym)")
    r.add_argument("-F", "--fields", default=None, metavar="FIELDS",
                   help="columns: overhead, overhead_children, sample, period and sort keys")
    r.add_argument("-g", "--call-graph", nargs="?", const="graph,0.5,caller", default=None, metavar="OPTS",
                   help="graph|fractal|flat|folded|none, threshold, limit, caller|callee, "
                   "percent|period|count (comma-separated); -g alone: graph,0.5,caller")
    r.add_argument("-G", "--inverted", action="store_true", help="caller order (as -g caller)")
    ch = r.add_mutually_exclusive_group()
    ch.add_argument("--children", dest="children", action="store_true", default=None,
                    help="Children column: samples under each entry (default with call chains)")
    ch.add_argument("--no-children", dest="children", action="store_false",
                    help="Self only, call graphs from the sample's own address")
    r.add_argument("--percent-limit", type=float, default=0.0, metavar="PCT",
                   help="hide entries under PCT percent (and call-graph branches, as perf)")
    r.add_argument("--percentage", choices=["absolute", "relative"], default="absolute",
                   help="of all samples (absolute, default) or of those the filters keep")
    r.add_argument("-n", "--show-nr-samples", action="store_true", help="a Samples column")
    r.add_argument("--show-total-period", action="store_true", help="a Period column")
    r.add_argument("-c", "--comms", "--comm", dest="comms", metavar="COMMS",
                   help="only samples of these thread names (comma-separated)")
    r.add_argument("-d", "--dsos", "--dso", dest="dsos", metavar="DSOS",
                   help="only samples whose own address is in these DSOs (file names or paths)")
    r.add_argument("-S", "--symbols", dest="symbols", metavar="SYMS",
                   help="only samples whose own address is in these functions")
    r.add_argument("--pids", "--pid", dest="pids", metavar="PIDS", help="only these processes")
    r.add_argument("--tids", "--tid", dest="tids", metavar="TIDS", help="only these threads")
    r.add_argument("-C", "--cpu", dest="cpus", metavar="CPUS",
                   help="only samples on these CPUs (0,2-3); the others are not counted at all")
    r.add_argument("--max-stack", type=int, default=127, metavar="N",
                   help="call-chain entries used per sample (default 127, as perf)")
    r.add_argument("--kallsyms", metavar="FILE", help="kallsyms text of the recording's kernel")
    r.add_argument("--symfs", metavar="DIR", help="look for the recording's ELF files under DIR")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    r.set_defaults(run=run)


def _list(text: str | None, what: str, conv=str):
    if text is None:
        return None
    out = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if conv is int:
            if "-" in part and what == "cpu":
                lo, _, hi = part.partition("-")
                if not (lo.isdigit() and hi.isdigit()) or int(lo) > int(hi):
                    raise UsageError(f"report: bad {what} range '{part}'; write e.g. 0,2-3")
                out.update(range(int(lo), int(hi) + 1))
                continue
            try:
                out.add(int(part))
            except ValueError:
                raise UsageError(f"report: bad {what} '{part}'; give numbers separated by commas") from None
        else:
            out.add(part)
    if not out:
        raise UsageError(f"report: empty {what} list")
    return out


def parse_graph(text: str | None, inverted: bool):
    """perf's -g list -> (GraphOptions, order or None, threshold or None, callchain on)."""
    from .callgraph import MODES, VALUES, GraphOptions
    g = GraphOptions()
    order = "caller" if inverted else None
    threshold = None
    if text is None:
        return g, order, threshold
    numbers = 0
    for tok in (t.strip().lower() for t in text.split(",")):
        if not tok:
            continue
        if tok in MODES:
            g.mode = tok
        elif tok in ("caller", "callee"):
            order = tok
        elif tok in VALUES:
            g.value = tok
        elif tok == "function":
            pass
        elif tok in ("address", "srcline", "branch"):
            raise UsageError(f"report: -g {tok} is not supported; call graphs are by function")
        else:
            try:
                v = float(tok)
            except ValueError:
                raise UsageError(f"report: -g: unknown '{tok}'; use graph|fractal|flat|folded|"
                                 "none, a threshold, caller|callee, percent|period|count") from None
            if numbers == 0:
                threshold = v
            elif numbers == 1:
                g.limit = int(v)
            else:
                raise UsageError(f"report: -g: too many numbers in '{text}' (threshold, limit)")
            numbers += 1
    return g, order, threshold


def _load(args):
    from ..progress import Progress
    from . import ingest
    from .model import Profile
    path = args.input
    if path is None:
        if not sys.stdin.isatty() and _stdin_is_pipe():
            path = "-"
        else:
            path = "perf.data"
    if path != "-" and not os.path.exists(path):
        raise UsageError(f"report: {path}: no such file; give the recording with -i FILE "
                         "(perf.data, a .hpmprof folder or perf script text)")
    if os.path.isdir(path):
        return path, Profile.load(path)
    stages = {"scan": "reading records", "parse": "parsing text", "symbols": "naming frames"}
    prog = Progress("report", quiet=args.quiet)
    try:
        return path, ingest(path, kallsyms=args.kallsyms, symfs=args.symfs, srcline="none",
                            progress=lambda stage, done, total: prog(
                                stages.get(stage, stage), path, done, total or None,
                                unit="B" if stage in ("scan", "parse") else ""))
    finally:
        prog.close()


def _stdin_is_pipe() -> bool:
    import stat
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError):
        return False


def run(args: argparse.Namespace) -> int:
    from . import hist, report_text
    keys = hist.parse_sort(args.sort) if args.sort else None
    fields = report_text.parse_fields(args.fields) if args.fields else None
    # the entries' identity: every key of perf's sort list (children do not change it)
    order, _ = report_text.columns(keys, fields, False, args.show_nr_samples,
                                   args.show_total_period)
    sort = [k for k in order if k in hist.KEYS]
    if args.max_stack < 1:
        raise UsageError("report: --max-stack must be at least 1")
    if args.percent_limit < 0:
        raise UsageError("report: --percent-limit must not be negative")
    gopts, chain_order, threshold = parse_graph(args.call_graph, args.inverted)
    filters = hist.Filters(comms=_list(args.comms, "comm"), dsos=_list(args.dsos, "dso"),
                           pids=_list(args.pids, "pid", int), tids=_list(args.tids, "tid", int),
                           symbols=_list(args.symbols, "symbol"),
                           cpus=_list(args.cpus, "cpu", int))
    opts = hist.Options(sort=sort, children=args.children, callchain=gopts.mode != "none",
                        order=chain_order, max_stack=args.max_stack, filters=filters,
                        relative=args.percentage == "relative")
    source, prof = _load(args)
    cut = prof.meta.get("truncated")
    if cut and not cut.get("pipe") and not os.path.isdir(source):
        # perf report stops at the first bad record ("failed to process sample"): a table of
        # part of a recording would read as the whole of it
        raise ReadError(source, cut["problem"],
                        "record again, or 'hpmkit profile import' it to keep the complete records "
                        "(with a note of what was lost)")
    if filters.cpus is not None and prof.samples.num_rows and \
            prof.samples["cpu"].null_count == prof.samples.num_rows:
        raise UsageError(f"report: {source} has no CPU in its samples (record with -a or "
                         "--sample-cpu); remove -C")
    rep = hist.Report(prof, opts)
    order, fields = report_text.columns(keys, fields, rep.children, args.show_nr_samples,
                                        args.show_total_period)
    # perf: a filter of one value hides its column (unless that hides every key) and names
    # the value in the header; the hidden key is left out of the sort
    elide = {}
    for key, vals in (("comm", filters.comms), ("dso", filters.dsos), ("sym", filters.symbols)):
        if vals is not None and len(vals) == 1 and key in fields:
            elide[key] = next(iter(vals))
    shown = [f for f in fields if f in hist.KEYS and f not in elide]
    hidden = set(elide) if shown else set()
    rep.sort(order, hidden)
    # perf does not repeat the entry as the first frame of its one chain when sorting by sym
    gopts.skip_first = bool(args.sort) and args.sort.strip().lower().startswith("sym") \
        and not args.fields
    if threshold is None:
        threshold = args.percent_limit if args.percent_limit else 0.5
    notes = [n for n in prof.meta.get("notes") or ()
             if not n.startswith(("records compressed", "the recording holds no samples"))]
    if rep.null_periods:
        notes.append(f"{rep.null_periods} samples without a period are counted as 1")
    for why, n in (prof.meta.get("skipped") or {}).items():
        notes.append(f"skipped {n} {why}")
    view = report_text.View(fields=fields, percent_limit=args.percent_limit, graph=gopts,
                            threshold=threshold, elide=elide, hidden=hidden,
                            strict=bool(args.fields))
    if args.call_graph is not None and gopts.mode != "none" and not rep.callchains:
        raise UsageError(f"report: {source} has no call chains (record with -g); leave out -g "
                         "or give -g none")
    src = prof.meta.get("source") or {}
    what = (f"profile of {src.get('path')}, {src.get('format')}" if os.path.isdir(source)
            else src.get("format", "?"))
    for n in notes:   # on stderr, as perf's own warnings: stdout stays perf report's lines
        print(f"hpmkit report: note: {n}", file=sys.stderr)
    if not prof.samples.num_rows:
        print(f"hpmkit report: {source} has no samples", file=sys.stderr)   # perf: "...has no samples!"
    sys.stdout.write(report_text.render(rep, view, f"{source} ({what})"))
    return 0
