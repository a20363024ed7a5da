"""perf report's histogram of a Profile: one entry per value of the sort keys, with Self
(samples whose own address is the entry) and Children (samples with the entry anywhere in
their call chain, counted once per sample).

The rules are Linux perf 6.1's (tools/perf/util/hist.c, sort.c), so that `hpmkit report`
prints the numbers `perf report` prints for the same file:
- a sample's own entry takes its address relative to its DSO; its call-chain entries take the
  raw address, so an unnamed user leaf is one entry for Self and another for Children;
- a call-chain address in no mapping keeps the privilege level of the entry before it;
- the filters (--comms, --dsos, --pids, --tids, --symbols) judge the sample by its own
  address, and an entry is shown or hidden by the sample that created it, while every sample
  that reaches it adds to it; percentages are of every sample (perf's "absolute") unless
  `relative` is asked for;
- --cpu drops the other CPUs' samples before anything is counted, as perf does.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from . import rbtree
from .model import Profile

KEYS = ("comm", "dso", "sym", "pid", "tid", "tgid", "cpu")
ALIASES = {"symbol": "sym", "command": "comm", "thread": "pid"}
MAX_STACK = 127          # perf report's default --max-stack


def parse_sort(text: str) -> list[str]:
    keys = []
    for k in (x.strip().lower() for x in text.split(",")):
        k = ALIASES.get(k, k)
        if k == "trace":
            raise UsageError("report: sort key 'trace' (each tracepoint record's fields, "
                             "formatted) is perf report's; hpmkit reports tracepoints by "
                             f"{', '.join(KEYS)}: use 'perf report --sort trace' for it")
        if k not in KEYS:
            raise UsageError(f"report: unknown sort key '{k}'; choose from {', '.join(KEYS)}")
        if k not in keys:
            keys.append(k)
    if not keys:
        raise UsageError("report: --sort needs at least one key, e.g. --sort comm,dso,sym")
    return keys


@dataclass
class Filters:
    comms: set[str] | None = None
    dsos: set[str] | None = None
    pids: set[int] | None = None
    tids: set[int] | None = None
    symbols: set[str] | None = None
    cpus: set[int] | None = None

    def active(self) -> bool:
        return any(v is not None for v in (self.comms, self.dsos, self.pids, self.tids,
                                           self.symbols))


@dataclass
class Options:
    sort: list[str] = field(default_factory=lambda: ["comm", "dso", "sym"])
    children: bool | None = None        # None: on when the recording has call chains
    callchain: bool = True              # build call graphs (perf's -g other than none)
    order: str | None = None            # caller|callee; None: caller with children, else callee
    max_stack: int = MAX_STACK
    filters: Filters = field(default_factory=Filters)
    relative: bool = False              # --percentage relative


@dataclass(eq=False)
class Entry:
    key: tuple
    filtered: bool          # judged by the sample that created the entry (perf's rule)
    tid: int                # the thread that created it (perf breaks ties within a thread)
    level: str              # 'k' or '.', from the creating sample
    frame: int | None       # the frame that created it (its name, DSO and address)
    self_ip: bool           # created as a sample's own address (DSO-relative when unnamed)
    comm: str
    pid: int
    cpu: int
    self_period: int = 0
    self_samples: int = 0
    acc_period: int = 0
    acc_samples: int = 0
    max_depth: int = 0
    # (call chain, position, period, samples) that reached the entry, for its call graph
    chains: list = field(default_factory=list)


@dataclass
class EventHist:
    event: str
    nr_samples: int = 0
    nr_unfiltered: int = 0
    total_period: int = 0
    entries: list[Entry] = field(default_factory=list)

    @property
    def unfiltered_period(self) -> int:
        return sum(e.self_period for e in self.entries if not e.filtered)


_JIT = re.compile(r"/tmp/perf-(\d+)\.map$")
_MODULE = re.compile(r"\.ko(\.gz|\.xz|\.zst)?$")


def short_dso(dso: str | None) -> str | None:
    """perf's short DSO name: the file name of a path, '[name]' for a kernel module file,
    '[JIT] tid N' for a JIT's /tmp/perf-N.map; bracketed names as they are."""
    if dso is None:
        return None
    m = _JIT.match(dso)
    if m:
        return f"[JIT] tid {m.group(1)}"
    if not dso.startswith("/"):
        return dso
    base = os.path.basename(dso)
    if _MODULE.search(base):
        return "[" + _MODULE.sub("", base).replace("-", "_") + "]"
    return base


def unresolved_text(ip: int) -> str:
    """An unnamed address as perf's Symbol column prints it (C's "%-#.*llx" with 16 digits:
    no 0x for zero)."""
    return "0" * 16 if ip == 0 else f"0x{ip:016x}"


def _cmp_unknown_last(x, y) -> int:
    """perf's order of DSO and symbol names: by name, an unknown one (None) after all."""
    if x is None or y is None:
        return (x is None) - (y is None)
    return (-1 if x < y else 1) if x != y else 0


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def chain_text(ip: int) -> str:
    """An unnamed address in a call graph (C's "%#llx")."""
    return "0" if ip == 0 else f"0x{ip:x}"


class Frames:
    """Per frame id: what perf's histogram and call graph need of it."""

    def __init__(self, p: Profile):
        f = p.frames
        ids = f["frame_id"].to_pylist()
        n = (max(ids) + 1) if ids else 0
        self.name: list[str | None] = [None] * n
        self.dso: list[str | None] = [None] * n
        self.short: list[str | None] = [None] * n
        self.kernel: list[bool] = [False] * n
        self.addr: list[int] = [0] * n
        self.self_ip: list[int] = [0] * n
        self.sym_self: list[tuple] = [("a", 0)] * n     # hist key of the frame as a sample's ip
        self.sym_chain: list[tuple] = [("a", 0)] * n    # ... as a call-chain entry
        self.func: list[tuple] = [()] * n               # call-graph node identity
        self.start: list[int] = [0] * n                 # symbol start or address (graph ties)
        cols = [f[c].to_pylist() for c in ("symbol", "offset", "dso", "kernel", "addr", "dso_addr")]
        by_name: dict[tuple, int] = {}      # (dso, symbol, kernel) -> start of its first frame
        for i, sym, off, dso, kern, addr, daddr in zip(ids, *cols):
            kern = bool(kern)
            addr = addr or 0
            self.name[i], self.dso[i], self.short[i] = sym, dso, short_dso(dso)
            self.kernel[i], self.addr[i] = kern, addr
            # perf's address of a sample in its DSO; JIT maps are identity maps
            rel = daddr if (not kern and daddr is not None and not _JIT.match(dso or "")) else addr
            self.self_ip[i] = rel
            if sym is not None:
                # perf keys a symbol by its DSO and start; the name as well, for inputs
                # without addresses (folded stacks)
                start = rel - (off or 0)
                if off is None or (not kern and daddr is None):
                    # perf script text: a user address is absolute (each process of a
                    # fork/exec workload has its own load address) and without symoff there
                    # is no start at all, so the same function would split into one entry
                    # per address; perf's one symbol of the DSO is its name here (the first
                    # start seen only orders the entries). Kernel and user stay apart
                    # without a DSO column too (-F comm,tid,ip,sym: the kernel's strlen and
                    # libc's are two entries for perf)
                    start = by_name.setdefault((dso, sym, kern), start)
                self.sym_self[i] = self.sym_chain[i] = ("s", self.short[i] or "", start, sym)
                self.func[i] = (dso, "s", start, sym)
                self.start[i] = start
            else:
                # an unnamed module address: perf makes a sample's own address module-relative
                # (its map_ip) and keys and prints it so; the ingest keeps that address as
                # dso_addr. Without it (older profiles) it stays an entry of its own, raw.
                module = kern and self.short[i] not in (None, "[kernel.kallsyms]",
                                                        "[kernel.vmlinux]")
                if module and daddr is not None:
                    self.self_ip[i] = daddr
                    self.sym_self[i] = ("a", daddr)
                else:
                    self.sym_self[i] = ("m", addr) if module else ("a", rel)
                self.sym_chain[i] = ("a", addr)
                self.func[i] = (dso, "a", addr)
                self.start[i] = addr

    def label(self, fid: int) -> str:
        """The frame in a call graph: its symbol, else its address."""
        s = self.name[fid]
        return s if s is not None else chain_text(self.addr[fid])


def has_callchains(p: Profile) -> bool:
    """Whether the recording has call chains (perf's -g): some stack longer than its own
    address. The model keeps no sample_type; a -g recording without one such stack is
    improbable (every kernel entry is one)."""
    lens = pc.list_value_length(p.stacks["frame_ids"])
    return p.stacks.num_rows > 0 and pc.max(lens).as_py() > 1


def event_order(p: Profile) -> list[str]:
    names = [e["name"] for e in p.meta.get("events") or ()]
    for ev in pc.unique(p.samples["event"]).to_pylist():
        if ev is not None and ev not in names:
            names.append(ev)
    return names


@dataclass
class Groups:
    """Samples of one event with equal (stack, comm, pid, tid, cpu), in order of their first
    sample, as columns."""
    stack: list
    comm: list
    pid: list
    tid: list
    cpu: list
    period: list
    count: list


def groups(p: Profile, event: str) -> Groups:
    s = p.samples
    mask = pc.equal(s["event"], event)
    sub = s.filter(mask)
    n = sub.num_rows
    per = pc.fill_null(sub["period"], 1) if n else sub["period"]
    # a row of a folded file past the row cap stands for many samples (Profile.sample_counts)
    weight = p.sample_counts().filter(mask)
    t = pa.table({"stack_id": sub["stack_id"], "comm": sub["comm"], "pid": sub["pid"],
                  "tid": sub["tid"], "cpu": sub["cpu"], "period": pc.cast(per, pa.uint64()),
                  "weight": weight, "row": pa.array(np.arange(n, dtype=np.int64))})
    g = t.group_by(["stack_id", "comm", "pid", "tid", "cpu"], use_threads=False).aggregate(
        [("period", "sum"), ("weight", "sum"), ("row", "min")])
    g = g.sort_by([("row_min", "ascending")])
    return Groups(g["stack_id"].to_pylist(), g["comm"].to_pylist(), g["pid"].to_pylist(),
                  g["tid"].to_pylist(), g["cpu"].to_pylist(), g["period_sum"].to_pylist(),
                  g["weight_sum"].to_pylist())


def last_comms(p: Profile) -> dict[int, str]:
    """The name each thread had last (perf's thread comm when the report is printed)."""
    s = p.samples
    out: dict[int, str] = {}
    for tid, comm in zip(s["tid"].to_pylist(), s["comm"].to_pylist()):
        if tid is not None and comm is not None:
            out[tid] = comm
    return out


class Report:
    """The histograms of every event of a profile under one set of options."""

    def __init__(self, p: Profile, opts: Options):
        self.profile = p
        self.opts = opts
        self.frames = Frames(p)
        self.callchains = has_callchains(p)
        # perf turns Children off silently when the file has no call chains, and for a
        # pipe-mode recording (it decides before the stream has told it the sample type);
        # --children asks for them anyway
        self.pipe = "HEADER_ATTR" in (p.meta.get("records") or {})
        default = self.callchains and not self.pipe
        self.children = default if opts.children is None else (opts.children and self.callchains)
        self.use_callchain = opts.callchain and self.callchains
        # perf picks the order from --children as given, before looking at the file
        self.order = opts.order or ("callee" if opts.children is False else "caller")
        self.thread_comm = last_comms(p)
        self.null_periods = int(p.samples["period"].null_count) if p.samples.num_rows else 0
        stacks = p.stacks
        self.stacks = dict(zip(stacks["stack_id"].to_pylist(), stacks["frame_ids"].to_pylist()))
        self.events = [h for h in (self._event(ev) for ev in event_order(p)) if h.nr_samples]
        self.order_by: list[str] = []

    # -- building -------------------------------------------------------------------------
    def _key(self, comm, pid, tid, cpu, fid, own: bool) -> tuple:
        fr = self.frames
        out = []
        for k in self.opts.sort:
            if k == "comm":
                out.append(comm)
            elif k in ("pid", "tid"):
                out.append(tid)
            elif k == "tgid":
                out.append(pid)
            elif k == "cpu":
                out.append(cpu)
            elif k == "dso":
                out.append(None if fid is None else fr.short[fid])
            else:
                out.append(("a", 0) if fid is None else
                           (fr.sym_self[fid] if own else fr.sym_chain[fid]))
        return tuple(out)

    def _passes(self, comm, pid, tid, fid) -> bool:
        f = self.opts.filters
        fr = self.frames
        if f.comms is not None and comm not in f.comms:
            return False
        if f.pids is not None and pid not in f.pids:
            return False
        if f.tids is not None and tid not in f.tids:
            return False
        if f.dsos is not None:
            if fid is None or fr.dso[fid] is None or not (
                    fr.short[fid] in f.dsos or fr.dso[fid] in f.dsos):
                return False
        if f.symbols is not None:
            if fid is None or fr.name[fid] is None or fr.name[fid] not in f.symbols:
                return False
        return True

    def _event(self, event: str) -> EventHist:
        h = EventHist(event)
        g = groups(self.profile, event)
        fr = self.frames
        entries: dict[tuple, Entry] = {}
        caller = self.order == "caller"
        cpus = self.opts.filters.cpus
        max_stack = self.opts.max_stack

        def entry(key, filtered, tid, level, fid, own, comm, pid, cpu) -> Entry:
            e = entries.get(key)
            if e is None:
                e = entries[key] = Entry(key, filtered, tid, level, fid, own, comm, pid, cpu)
            return e

        for sid, comm, pid, tid, cpu, period, count in zip(g.stack, g.comm, g.pid, g.tid, g.cpu,
                                                           g.period, g.count):
            cpu = -1 if cpu is None else cpu
            pid = -1 if pid is None else pid
            tid = -1 if tid is None else tid
            comm = comm or ""
            if cpus is not None and cpu not in cpus:
                continue
            frames = self.stacks.get(sid) or []
            leaf = frames[0] if frames else None
            filtered = not self._passes(comm, pid, tid, leaf)
            h.nr_samples += count
            h.total_period += period
            level = "k" if leaf is not None and fr.kernel[leaf] else "."
            key = self._key(comm, pid, tid, cpu, leaf, True)
            e = entry(key, filtered, tid, level, leaf, True, comm, pid, cpu)
            if not e.filtered:
                h.nr_unfiltered += count
            e.self_period += period
            e.self_samples += count
            if self.children:
                e.acc_period += period
                e.acc_samples += count
            if not self.callchains:
                continue
            chain = frames[::-1] if caller else frames
            if len(chain) > max_stack:
                chain = chain[:max_stack]
            chain = tuple(chain)
            if self.use_callchain and chain:
                e.chains.append((chain, 0, period, count))
                e.max_depth = max(e.max_depth, len(chain))
            if not self.children:
                continue
            seen = {key}
            n = len(chain)
            for pos, fid in enumerate(chain):
                # an address in no mapping keeps the level of the entry before it
                if fr.dso[fid] is not None or fr.name[fid] is not None:
                    level = "k" if fr.kernel[fid] else "."
                k = self._key(comm, pid, tid, cpu, fid, False)
                if k in seen:
                    continue
                seen.add(k)
                c = entry(k, filtered, tid, level, fid, False, comm, pid, cpu)
                c.acc_period += period
                c.acc_samples += count
                if self.use_callchain:
                    c.chains.append((chain, pos, period, count))
                    c.max_depth = max(c.max_depth, n - pos)
        h.entries = list(entries.values())
        return h

    # -- perf's output order ----------------------------------------------------------------
    def _insert_key(self, e: Entry):
        """The order entries are kept in before the output sort (perf's collapse tree, in
        which addresses compare as signed differences); the output sort inserts them in this
        order."""
        out = []
        for k, v in zip(self.opts.sort, e.key):
            if k == "dso":
                out.append((1, "") if v is None else (0, v))
            elif k == "sym":
                out.append((0, v[1], _signed(v[2]), v[3]) if v[0] == "s" else (1, "", _signed(v[1]), ""))
            else:
                out.append(v)
        return tuple(out)

    def _cmp(self, a: Entry, b: Entry) -> int:
        """-1 when a is printed before b: perf's hist_entry__sort over its sort list (the
        numeric fields compare largest first, the keys by their own orders)."""
        fr = self.frames
        for k in self.order_by:
            if k == "overhead_children":
                if not self.children:
                    continue
                if a.acc_period != b.acc_period:
                    return -1 if a.acc_period > b.acc_period else 1
                # callers above callees of the same thread when both have the same period
                if a.tid == b.tid and self.use_callchain:
                    d = a.max_depth - b.max_depth
                    if self.order == "callee":
                        d = -d
                    if d:
                        return -1 if d > 0 else 1
                continue
            if k in ("overhead", "period", "sample"):
                x, y = (a.self_samples, b.self_samples) if k == "sample" else (a.self_period, b.self_period)
                if x != y:
                    return -1 if x > y else 1
                continue
            i = self.opts.sort.index(k)
            x, y = a.key[i], b.key[i]
            if k == "dso":
                c = _cmp_unknown_last(x, y)
            elif k == "sym":
                c = _cmp_unknown_last(fr.name[a.frame] if a.frame is not None else None,
                                      fr.name[b.frame] if b.frame is not None else None)
            else:                   # comm by name, threads, processes and CPUs by number
                c = (-1 if x < y else 1) if x != y else 0
            if c:
                return c
        return 0

    def sort(self, order_by: list[str], skip: set[str] = frozenset()) -> None:
        """Put every event's entries in perf's printed order. order_by is perf's sort list
        (numeric fields and keys); skip: keys whose column a one-value filter hides, which
        perf leaves out of the comparison."""
        self.order_by = [k for k in order_by if k not in skip]
        for h in self.events:
            h.entries.sort(key=self._insert_key)
            h.entries = rbtree.inorder(h.entries, lambda new, node: self._cmp(new, node) < 0)

    # -- what the columns show -------------------------------------------------------------
    def sym_text(self, e: Entry) -> str:
        fr = self.frames
        if e.frame is None:
            return f"[{e.level}] {unresolved_text(0)}"
        name = fr.name[e.frame]
        if name is not None:
            return f"[{e.level}] {name}"
        ip = fr.self_ip[e.frame] if e.self_ip else fr.addr[e.frame]
        return f"[{e.level}] {unresolved_text(ip)}"

    def dso_text(self, e: Entry) -> str:
        s = None if e.frame is None else self.frames.short[e.frame]
        return s if s is not None else "[unknown]"

    def thread_comm_of(self, tid: int, fallback: str) -> str:
        return self.thread_comm.get(tid, fallback)
