"""`hpmkit compare`: cross-ISA defect mining on profiles of the same workloads."""
from __future__ import annotations

import sys
from pathlib import Path

EPILOG = """\
examples:
  hpmkit compare rv/pipe.hpmprof rv/futex.hpmprof --vs arm/pipe.hpmprof arm/futex.hpmprof
  hpmkit compare examples/lab-suite/riscv64 --vs examples/lab-suite/aarch64 --html report.html
  hpmkit compare rv/ --vs arm/ --metrics cycles,cpi --min-samples 20 --json out.json
  hpmkit compare rv/ --vs arm/ --truth data/compare/known-riscv64-slower.tsv   (precision@k, recall@k)
  hpmkit compare rv.ctx.tsv --vs arm.ctx.tsv --detectors zscore,lof,ecod
  hpmkit compare rv/ --vs arm/ --export-contexts bundle/   (compact *.ctx.tsv of both sides)
  hpmkit compare rv/ --vs arm/ --explain all.tsv           (every context: ratio, interval, votes, why)
  hpmkit compare rv/perf.data --vs arm/perf.data --comm myserver   (one program of system-wide recordings)
  hpmkit compare rv/ --vs arm/ --quote-within 0.3   (quote ratios known within 30 %; thinner: ">=" bound)
  hpmkit compare rv/ --vs arm/ --fcr                 (intervals that hold for the ranked rows as a set)

Inputs: profiles (NAME.hpmprof/ from hpmkit, perf.data, perf script text) or context tables
(*.ctx.tsv); a directory stands for the profiles in it. One profile per workload per side;
profiles pair by meta.workload, else by file name (pipe.hpmprof <-> pipe.perf.data). All
A inputs must be one ISA, all B inputs another.

Method (Wu et al.): kernel stacks split at the ISA's entry frames (data/compare/
kernel-entry.tsv), names normalised (data/compare/normalise.tsv), contexts matched exact /
partial (depth +/-) / parent / top-name, ratios A/B of each context's share of its run,
outliers by robust z, LOF, ECOD, IForest, LSCP (+ SO_GAAL, LUNAR with torch), score =
outlier rate x share x ratio's lower 95 % bound summed over metrics. A ratio whose interval is
wider than --quote-within is printed as ">=" that bound. Details: docs/compare.md.
Exit status: 0 report written, 1 bad input or not enough samples, 2 usage.
"""


def add_parser(sub, raw_formatter) -> None:
    p = sub.add_parser(
        "compare", help="rank kernel contexts where ISA A does relatively worse than ISA B",
        description="Cross-ISA kernel defect mining: match call-stack contexts of the same workloads "
        "recorded on two ISAs and rank those where A spends relatively more cycles, instructions or CPI.",
        epilog=EPILOG, formatter_class=raw_formatter)
    p.add_argument("a", nargs="+", metavar="A_PROFILE", help="profiles of ISA A (files or directories)")
    p.add_argument("--vs", nargs="+", required=True, metavar="B_PROFILE", help="profiles of ISA B")
    p.add_argument("--html", metavar="FILE", help="write the self-contained HTML report")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON")
    p.add_argument("--top", type=int, default=25, metavar="N", help="contexts to show (default 25)")
    p.add_argument("--metrics", metavar="LIST",
                   help="cycles,instructions,cpi,samples (default: cycles,instructions,cpi, those recorded)")
    p.add_argument("--min-samples", type=int, default=10, metavar="N",
                   help="samples a matched context needs on each side, else it is 'too thin' (default 10)")
    p.add_argument("--min-contexts", type=int, default=10, metavar="N",
                   help="non-thin matched contexts needed to rank at all (default 10)")
    p.add_argument("--detectors", metavar="LIST",
                   help="zscore,lof,ecod,iforest,lscp[,sogaal,lunar] (default: all; the last two need torch)")
    p.add_argument("--vote", type=float, default=0.5, metavar="F",
                   help="share of detectors that must flag a metric (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomised detectors (default 0)")
    p.add_argument("--scope", choices=("kernel", "all"), default="kernel",
                   help="kernel contexts only (default) or user contexts too")
    p.add_argument("--normalise", choices=("total", "none"), default="total",
                   help="ratio of each context's share of its run (default) or of raw counts")
    p.add_argument("--no-noise-check", action="store_true",
                   help="score flags even when the ratio is within sampling noise of the median")
    p.add_argument("--quote-within", type=float, default=0.15, metavar="F",
                   help="print a ranked ratio as a number only when its 95%% interval lies within "
                   "x/÷ (1+F) of it, else as 'at least' its lower bound (default 0.15; 0: always)")
    p.add_argument("--fcr", action="store_true",
                   help="widen the ranked rows' intervals for having been selected (false coverage "
                   "rate, Benjamini-Yekutieli): bounds and quoted ratios that hold after ranking")
    p.add_argument("--truth", metavar="FILE.tsv", help="labelled known issues: report precision@k and recall@k")
    p.add_argument("--export-contexts", metavar="DIR",
                   help="also write both sides as compact context tables (A-<isa>.ctx.tsv, B-<isa>.ctx.tsv); "
                   "the folder is made if needed")
    p.add_argument("--explain", metavar="FILE.tsv",
                   help="also write every context (matched or not) with its ratios, 95%% intervals, "
                   "detector votes and why it was or was not ranked; written even when nothing can be "
                   "ranked ('-': to stdout instead of the report)")
    p.add_argument("--comm", "--comms", dest="comms", metavar="NAMES",
                   help="only samples of these commands (comma-separated, as perf report --comms), "
                   "on both sides; how many others were left out is reported")
    p.add_argument("--pid", "--pids", dest="pids", metavar="PIDS",
                   help="only samples of these process ids (comma-separated; a recording's ids are its "
                   "own, so list those of both sides); with --comm both must hold")
    p.add_argument("-q", "--quiet", action="store_true", help="no terminal report and no progress (files only)")
    p.set_defaults(run=_run)


def _list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [x.strip() for x in text.split(",") if x.strip()]


def _run(args) -> int:
    from ..errors import UsageError
    from . import analyse, html, inputs, summary, text, truth as truthmod
    from .contexts import contexts
    from .names import EntryFrames

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    if args.min_samples < 1 or args.min_contexts < 3:
        raise UsageError("--min-samples must be >= 1 and --min-contexts >= 3")
    if not 0 < args.vote <= 1:
        raise UsageError("--vote must be in (0, 1]")
    if not 0 <= args.quote_within < 10:
        raise UsageError("--quote-within must be in [0, 10) (0.15: within 15 %)")
    from ..outputs import check
    for opt, out in (("--html", args.html), ("--json", args.json), ("--explain", args.explain)):
        check(out, opt)   # before any work; a missing folder is made when the file is written
    if args.html == "-" or args.json == "-":
        raise UsageError("--html and --json take a file name ('-' is for --explain only)")
    if args.export_contexts:
        d = Path(args.export_contexts)
        if d.exists() and not d.is_dir():
            raise UsageError(f"--export-contexts {d}: exists and is not a folder")
    from ..progress import Progress
    prog = Progress("compare", quiet=args.quiet)
    truth = truthmod.load(Path(args.truth)) if args.truth else None
    pa, pb = inputs.expand(args.a), inputs.expand(args.vs)   # both sides exist before any is read
    select = inputs.Select.parse(args.comms, args.pids)
    ta = inputs.load_side(pa, prog, "reading side A", select)
    tb = inputs.load_side(pb, prog, "reading side B", select)
    if ta.isa and tb.isa and ta.isa == tb.isa:
        prog.close()
        print(f"hpmkit: compare: warning: both sides are {ta.isa}", file=sys.stderr)
    if args.export_contexts:
        d = Path(args.export_contexts)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--export-contexts {d}: cannot make the folder: {e.strerror}") from None
        inputs.write_ctx(ta, d / f"A-{ta.isa}.ctx.tsv")
        inputs.write_ctx(tb, d / f"B-{tb.isa}.ctx.tsv")
    from .gcpause import paused
    na, nb = len(ta.workload), len(tb.workload)
    stage = "reducing stacks to contexts"
    prog(stage, "A", 0, na + nb, unit=" stacks")
    with paused():
        ca = contexts(ta, progress=lambda done, _: prog(stage, "A", done, na + nb, unit=" stacks"))
        cb = contexts(tb, progress=lambda done, _: prog(stage, "B", na + done, na + nb, unit=" stacks"))
    opts = analyse.Options(
        metrics=tuple(_list(args.metrics)) if args.metrics else None, min_samples=args.min_samples,
        min_contexts=args.min_contexts, detectors=_list(args.detectors), seed=args.seed, vote=args.vote,
        normalise=args.normalise, scope=args.scope, noise_check=not args.no_noise_check,
        quote_within=args.quote_within, fcr=args.fcr)
    try:
        with paused():
            res = analyse.run(ca, cb, opts, progress=prog)
    except analyse.NotEnoughSamples as e:
        if args.explain and e.result is not None:
            from . import exact
            _write_explain(args.explain, e.result, exact.Exact(e.result, pa, pb) if select is None else exact.Exact(e.result, [], []))
        raise
    ev = None
    if truth is not None:
        entry_names = frozenset(EntryFrames.load(ca.isa, ca.kernel).roles)
        ev = truthmod.evaluate(res.ranked, truth, entry_names=entry_names,
                               reached_names=truthmod.reached_names(res.a, entry_names))
        missing = [t for i, t in enumerate(truth) if i not in set(ev["reached"])]
        if missing:
            res.warnings.append(
                f"truth: {len(missing)} of {len(truth)} entries are in no kernel context of {ca.isa or 'A'} "
                f"and in no ranked context (not reached by these workloads, or inlined under another "
                f"name): "
                + ", ".join(t.function for t in missing[:6]) + (" ..." if len(missing) > 6 else ""))
        wls = set(res.workloads)
        narrow = [t for t in truth if t.workload is not None and t.workload not in wls]
        if narrow:
            res.warnings.append(
                f"truth: {len(narrow)} entries count only in a workload that is not compared "
                f"({', '.join(sorted({t.workload for t in narrow}))}); use '*' to count them in any")
    from . import exact
    if select is not None and exact.Exact(res, pa, pb).any():
        res.warnings.append("exact counts not shown: the lab's exact tables count every process of a "
                            "recording, not only those --comm/--pid chose")
    s = summary.to_dict(res, args.top, ev, truth)
    # exact counts of the same runs, where recorded (not for a --comm/--pid subset of them)
    src = exact.Exact(res, pa, pb) if select is None else exact.Exact(res, [], [])
    exact.annotate(s, res, src)
    from . import samework
    samework.annotate(s, res, src)
    from . import onesided
    s["one_sided"] = onesided.find(res)
    onesided.annotate_exact(s["one_sided"], res, src)
    from . import byfunction
    s["by_function"] = byfunction.find(res)
    if byfunction.annotate_exact(s["by_function"], res, src):
        s["by_function"]["exact_check"] = byfunction.check(s["by_function"])
    if truth is not None:
        s["truth"]["one_sided"] = onesided.truth_hits(s["one_sided"], truth, ev["missed"])
        s["truth"]["by_function"] = byfunction.truth_hits(s["by_function"], truth, ev["missed"])
    if args.json:
        import json
        inputs.atomic_write(Path(args.json), json.dumps(s, indent=1) + "\n", "--json")
    if args.html:
        prog("writing the HTML report")
        with paused():
            page = html.render(res, s)
        inputs.atomic_write(Path(args.html), page, "--html")
    if args.explain:
        _write_explain(args.explain, res, src)
    prog.close()
    if not args.quiet and args.explain != "-":
        sys.stdout.write(text.render(s))
    return 0


def _write_explain(dest: str, res, src) -> None:
    """--explain's table; `src` (exact.Exact) adds the exact column when path tables exist."""
    from . import explain, inputs
    table = explain.render(res, src if src.has_paths() else None)
    if dest == "-":
        sys.stdout.write(table)
    else:
        inputs.atomic_write(Path(dest), table, "--explain")
