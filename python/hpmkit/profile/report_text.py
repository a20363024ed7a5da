"""`hpmkit report --stdio`: the table perf report prints, column for column.

Widths, alignment, percentages and the lines under the header follow perf 6.1's stdio
output (tools/perf/ui/stdio/hist.c), so scripts that read `perf report --stdio` read this
too; the first header line names hpmkit and the input instead of perf's hint.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from . import callgraph
from .hist import KEYS, Entry, EventHist, Report

# output fields besides the sort keys (perf's -F names) -> header
NUMERIC = {"overhead_children": "Children", "overhead": "Overhead", "sample": "Samples",
           "period": "Period"}
FIELD_ALIASES = {"children": "overhead_children", "self": "overhead", "samples": "sample",
                 "symbol": "sym", "command": "comm"}
HEADERS = {"comm": "Command", "dso": "Shared Object", "sym": "Symbol", "pid": "    Pid:Command",
           "tid": "    Tid:Command", "tgid": "   Tgid:Command", "cpu": "CPU"}


def parse_fields(text: str) -> list[str]:
    out = []
    for f in (x.strip().lower() for x in text.split(",")):
        f = FIELD_ALIASES.get(f, f)
        if f not in NUMERIC and f not in KEYS:
            raise UsageError(f"report: unknown field '{f}' for -F; choose from "
                             f"{', '.join([*NUMERIC, *KEYS])}")
        if f not in out:
            out.append(f)
    if not out:
        raise UsageError("report: -F needs at least one field, e.g. -F overhead,comm,sym")
    return out


@dataclass
class View:
    fields: list[str]                    # columns, in order
    percent_limit: float = 0.0
    graph: callgraph.GraphOptions = field(default_factory=callgraph.GraphOptions)
    threshold: float = 0.5               # call-graph threshold, percent
    elide: dict[str, str] = field(default_factory=dict)   # key -> the one filtered value
    hidden: set[str] = field(default_factory=set)         # columns left out
    strict: bool = False                 # columns from -F (perf then keeps "Overhead")


def columns(keys: list[str] | None, fields: list[str] | None, children: bool,
            show_samples: bool, show_period: bool) -> tuple[list[str], list[str]]:
    """perf's sort list and output fields from --sort and -F (tools/perf/util/sort.c):
    without -F the percentages come first and lead the sort; with -F the columns are as
    given and the sort follows them after any --sort keys. Sort keys missing from the
    columns are appended to them, and columns missing from the sort list to it."""
    if fields:
        order = list(keys or [])
        out = list(fields)
    else:
        order = (["overhead_children"] if children else []) + ["overhead"] + \
            list(keys or ["comm", "dso", "sym"])
        out = (["overhead_children"] if children else []) + ["overhead"]
        if show_samples:
            out.append("sample")
        if show_period:
            out.append("period")
    out += [k for k in order if k not in out]
    order += [f for f in out if f not in order]
    return order, out


def _convert_unit(n: int) -> str:
    """perf's sample count in the header: K, M, G above a thousand (integer division)."""
    unit = " "
    for u in "KMG":
        if n > 1000:
            n //= 1000
            unit = u
    return f"{n}{unit}"


class _Table:
    def __init__(self, rep: Report, h: EventHist, view: View):
        self.rep, self.h, self.view = rep, h, view
        self.total = h.unfiltered_period if rep.opts.relative else h.total_period
        self.cols = [f for f in view.fields if f not in view.hidden]
        self.widths = self._widths()

    def header_name(self, f: str) -> str:
        if f == "overhead" and self.rep.children and not self.view.strict:
            return "Self"
        return NUMERIC.get(f) or HEADERS[f]

    def _widths(self) -> dict[str, int]:
        rep = self.rep
        fr = rep.frames
        w: dict[str, int] = {}
        for f in self.cols:
            w[f] = len(self.header_name(f))
            if f in ("overhead_children", "overhead"):
                w[f] = max(w[f], 8)
            elif f in ("sample", "period"):
                w[f] = max(w[f], 12)
        comm_len = 0
        dso_len = 0
        sym_len = 0
        unresolved = False
        for e in self.h.entries:
            if e.filtered:
                continue
            comm_len = max(comm_len, len(rep.thread_comm_of(e.tid, e.comm)))
            if e.frame is not None and fr.short[e.frame] is not None:
                dso_len = max(dso_len, len(fr.short[e.frame]))
            name = fr.name[e.frame] if e.frame is not None else None
            if name is not None:
                sym_len = max(sym_len, len(name) + 4)
            else:
                sym_len = max(sym_len, 16 + 4 + 2)
                unresolved = True
        if unresolved and rep.opts.filters.dsos is None:
            dso_len = max(dso_len, 16)
        for f in self.cols:
            if f == "comm":
                w[f] = max(w[f], comm_len)
            elif f == "dso":
                w[f] = max(w[f], dso_len)
            elif f == "sym":
                w[f] = max(w[f], sym_len)
            elif f in ("pid", "tid", "tgid"):
                w[f] = max(w[f], comm_len + 8)
        return w

    def percent(self, v: int) -> float:
        return 100.0 * v / self.total if self.total else 0.0

    def cell(self, f: str, e: Entry) -> str:
        w = self.widths[f]
        if f == "overhead_children":
            return f" {self.percent(e.acc_period):{w - 2}.2f}%"
        if f == "overhead":
            return f" {self.percent(e.self_period):{w - 2}.2f}%"
        if f == "sample":
            return f" {e.self_samples:{w - 1}d}"
        if f == "period":
            return f" {e.self_period:{w - 1}d}"
        if f == "comm":
            return f"{e.comm[:w]:<{w}}"
        if f == "dso":
            return f"{self.rep.dso_text(e)[:w]:<{w}}"
        if f == "sym":
            return self.rep.sym_text(e)[:w]
        if f in ("pid", "tid", "tgid"):
            num = e.pid if f == "tgid" else e.tid
            name = self.rep.thread_comm_of(num, e.comm)
            cw = max(7, w) - 8
            return f"{num:7d}:{name[:cw]:<{cw}}"
        if f == "cpu":
            return "%*.*d" % (w, w, e.cpu)
        raise AssertionError(f)

    def row(self, e: Entry) -> str:
        parts = []
        for i, f in enumerate(self.cols):
            c = self.cell(f, e)
            if i < len(self.cols) - 1 and len(c) < self.widths[f]:
                c = c + " " * (self.widths[f] - len(c))
            parts.append("  " + c)
        return "".join(parts)

    def header(self) -> str:
        names = []
        for f in self.cols:
            w = self.widths[f]
            name = self.header_name(f)
            names.append(f"{name:>{w}}" if f in NUMERIC else f"{name[:w]:<{w}}")
        dots = ["." * self.widths[f] for f in self.cols]
        return "# " + "  ".join(names) + "\n# " + "  ".join(dots) + "\n#\n"

    def visible(self, e: Entry) -> bool:
        if e.filtered:
            return False
        if not self.view.percent_limit:
            return True
        v = e.acc_period if self.rep.children else e.self_period
        pct = np.float32(v * 100.0 / self.total) if self.total else np.float32(0)
        return not pct < np.float32(self.view.percent_limit)


def render(rep: Report, view: View, source: str) -> str:
    out = [f"# hpmkit report of {source}\n#\n"]
    for key, value in view.elide.items():
        out.append(f"# {'symbol' if key == 'sym' else key}: {value}\n")
    lost = rep.profile.meta.get("lost") or 0
    out.append(f"#\n# Total Lost Samples: {lost}\n#\n")
    for h in rep.events:
        out.append(_event(rep, h, view))
    return "".join(out)


def _event(rep: Report, h: EventHist, view: View) -> str:
    t = _Table(rep, h, view)
    nsamples = h.nr_unfiltered if rep.opts.relative else h.nr_samples
    out = [f"# Samples: {_convert_unit(nsamples)} of event '{h.event}'\n",
           f"# Event count (approx.): {t.total}\n#\n", t.header()]
    graph = rep.use_callchain and view.graph.mode != "none"
    if graph:
        base = h.unfiltered_period if rep.opts.relative else h.total_period
        min_hit = int(base * (view.threshold / 100.0))
        dso_rank = dso_ranks(rep)
    for e in h.entries:
        if not t.visible(e):
            continue
        out.append(t.row(e) + "\n")
        if graph and e.chains:
            root = callgraph.build(e.chains, rep.frames)
            callgraph.sort(root, rep.frames, dso_rank, view.graph.mode, min_hit, view.threshold)
            parent = e.acc_period if rep.children else e.self_period
            out.append(callgraph.render(root, rep.frames, h.total_period, parent, view.graph,
                                        min_hit))
    out.append("\n\n")
    return "".join(out)


def dso_ranks(rep: Report) -> dict:
    """An order of DSOs like the one perf creates them in (its call graphs break equal
    weights by the DSO object's address, i.e. by when perf read its mapping): no mapping,
    then the kernel, then each process's DSOs, processes in sample order. Within a process
    the mappings of an exec come top-down: the program (lowest address) first, then the
    dynamic loader and libraries from the highest address down."""
    cached = getattr(rep, "_dso_rank", None)
    if cached is not None:
        return cached
    fr = rep.frames
    rank: dict = {None: 0}
    for fid, d in enumerate(fr.dso):
        if d is not None and fr.kernel[fid] and d not in rank:
            rank[d] = len(rank)
    s = rep.profile.samples
    lowest: dict[int, dict[str, int]] = {}      # pid -> dso -> lowest address seen
    for pid, sid in zip(s["pid"].to_pylist(), s["stack_id"].to_pylist()):
        per = lowest.setdefault(pid, {})
        for fid in rep.stacks.get(sid) or ():
            d = fr.dso[fid]
            if d is not None and not fr.kernel[fid] and fr.addr[fid] < per.get(d, 1 << 64):
                per[d] = fr.addr[fid]
    for per in lowest.values():
        todo = sorted((a, d) for d, a in per.items() if d not in rank)
        if todo:
            order = [todo[0]] + sorted(todo[1:], reverse=True)
            for _, d in order:
                rank[d] = len(rank)
    rep._dso_rank = rank
    return rank
