"""perf.data -> Profile. The C scanner turns samples into columns, dedups raw call chains and
gives every record its place in perf's delivery order (time order, flushed per round); this
module decodes the side records (COMM, FORK, MMAP2, READ, LOST...) in that order, names the
threads and maps as perf would have them when it delivers each sample, computes group-read
deltas, and symbolises the distinct frames."""
from __future__ import annotations

import os
import socket
import struct
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import InputError
from ..perfdata import PerfData
from ..perfdata import format as F
from ..perfdata import records as R
from ..perfdata.scan import scan
from . import symbols as S
from .model import FRAMES_SCHEMA, STACKS_SCHEMA, VALUE_PREFIX, Profile, new_meta, normalise_isa

NO_TIME = np.uint64(2**64 - 1)
U64 = (1 << 64) - 1
KERNEL_DSO = "[kernel.kallsyms]"
# records the profile needs no data from, but which are not "skipped data" either
STRUCTURAL = {"FINISHED_ROUND", "FINISHED_INIT", "ID_INDEX", "EVENT_UPDATE", "THREAD_MAP",
              "CPU_MAP", "TIME_CONV", "HEADER_FEATURE", "HEADER_BUILD_ID", "STAT_CONFIG",
              "HEADER_ATTR", "HEADER_EVENT_TYPE", "COMPRESSED", "COMPRESSED2"}
USED = {"SAMPLE", "MMAP", "MMAP2", "COMM", "EXIT", "FORK", "LOST", "LOST_SAMPLES", "THROTTLE",
        "UNTHROTTLE", "READ"}


def event_name(a) -> str:
    if a.name:
        return a.name
    if a.type == 0 and a.config < len(F.HW_NAMES):
        return F.HW_NAMES[a.config]
    if a.type == 1 and a.config < len(F.SW_NAMES):
        return F.SW_NAMES[a.config]
    return f"{F.PERF_TYPE_NAMES.get(a.type, f'type{a.type}')}:{a.config:#x}"


def event_unit(name: str, attr=None) -> str:
    """ns for the clock events (whatever name the file gives them), else events."""
    if attr is not None and attr.type == 1 and attr.config in (0, 1):
        return "ns"
    base = name.split(":")[0].split("/")[0]
    return "ns" if base in ("cpu-clock", "task-clock") else "events"


@dataclass
class Map:
    start: int
    end: int
    pgoff: int
    name: str
    build_id: bytes | None
    seq: int        # delivery order: later maps win over earlier overlapping ones


class _Side:
    """State from the non-SAMPLE records, fed in perf's delivery order (dseq)."""

    def __init__(self, pd: PerfData):
        self.pd = pd
        self.comms: dict[int, list[tuple[int, str]]] = defaultdict(list)   # tid -> (dseq, comm)
        self.maps: dict[int, list[Map]] = defaultdict(list)                  # pid -> maps
        self.kmaps: list[Map] = []
        self.parent: dict[int, tuple[int, int]] = {}                        # pid -> (ppid, dseq)
        self.lost = 0
        self.throttle = {"throttle": 0, "unthrottle": 0}
        self.reads: list[tuple[int, int, int, int]] = []     # (attr, id, tid, value)
        self.counts: dict[str, int] = defaultdict(int)

    def feed(self, rec, dseq: int) -> None:
        name = rec.name
        self.counts[name] += 1
        if name not in USED:
            return
        p = rec.payload
        sid = self.pd.sample_id(rec)
        try:
            if name == "COMM":
                c = R.comm(rec, self.pd.trailer_size(rec))
                self.comms[c.tid].append((dseq, c.comm))
            elif name == "FORK":
                t = R.fork(rec)
                # perf drops a thread of the same id and starts the new one with its
                # parent's name as it stands now (if the parent has one); a new process
                # shares the parent's mappings until it execs
                h = self.comms.get(t.ptid)
                if h:
                    self.comms[t.tid].append((dseq, h[-1][1]))
                elif t.tid in self.comms:
                    self.comms[t.tid].append((dseq, f":{t.tid}"))
                if t.pid != t.ppid:
                    self.parent[t.pid] = (t.ppid, dseq)
            elif name in ("MMAP", "MMAP2"):
                self._mmap(R.mmap(rec), dseq)
            elif name == "LOST":
                self.lost += struct.unpack_from("<QQ", p, 0)[1]
            elif name == "LOST_SAMPLES":
                self.lost += struct.unpack_from("<Q", p, 0)[0]
            elif name in ("THROTTLE", "UNTHROTTLE"):
                self.throttle[name.lower()] += 1
            elif name == "READ":
                self._read(rec, p, sid)
        except struct.error as e:
            raise self.pd.error(rec.offset, f"{name} record too short ({rec.size} bytes)") from e

    def _mmap(self, mm: R.Mmap, seq) -> None:
        if not mm.exec:
            return
        fname, pid = mm.filename, mm.pid
        if fname == "//anon" or fname.startswith(("/dev/zero", "/anon_hugepage")):
            # perf names anonymous executable memory (JIT code) after the map file a JIT
            # writes for it
            fname = f"/tmp/perf-{pid}.map"
        m = Map(mm.start, mm.end, mm.pgoff, fname, mm.build_id, seq)
        if pid == -1 or mm.cpumode in (F.MISC_KERNEL, F.MISC_GUEST_KERNEL):
            self.kmaps.append(m)
        else:
            self.maps[pid].append(m)

    def _read(self, rec, p, sid) -> None:
        pid, tid = struct.unpack_from("<ii", p, 0)
        attrs = self.pd.attrs
        a = self.pd.attr_for_id(sid["id"]) if "id" in sid else None
        a = a or attrs[0]
        rf = a.read_format
        q = 8
        nflags = sum(bool(rf & b) for b in (F.FORMAT_TOTAL_TIME_ENABLED,
                                              F.FORMAT_TOTAL_TIME_RUNNING, F.FORMAT_ID,
                                              F.FORMAT_LOST))
        body = len(p) - self.pd.trailer_size(rec)
        if rf & F.FORMAT_GROUP and body == 8 + 8 * (1 + nflags):
            # a per-event READ (one counter, e.g. written for each member at the end)
            # although the attr reads as a group: its size says which layout it has
            rf &= ~F.FORMAT_GROUP
        if rf & F.FORMAT_GROUP:
            (nr,) = struct.unpack_from("<Q", p, q)
            q += 8 + 8 * (bool(rf & F.FORMAT_TOTAL_TIME_ENABLED) + bool(rf & F.FORMAT_TOTAL_TIME_RUNNING))
            for i in range(nr):
                (v,) = struct.unpack_from("<Q", p, q)
                q += 8
                ident = None
                if rf & F.FORMAT_ID:
                    (ident,) = struct.unpack_from("<Q", p, q)
                    q += 8
                if rf & F.FORMAT_LOST:
                    q += 8
                m = self.pd.attr_for_id(ident) if ident is not None else None
                idx = m.index if m else min(a.index + i, len(attrs) - 1)
                self.reads.append((idx, ident or 0, tid, v))
        else:
            (v,) = struct.unpack_from("<Q", p, q)
            q += 8 + 8 * (bool(rf & F.FORMAT_TOTAL_TIME_ENABLED) + bool(rf & F.FORMAT_TOTAL_TIME_RUNNING))
            ident = struct.unpack_from("<Q", p, q)[0] if rf & F.FORMAT_ID else sid.get("id", 0)
            m = self.pd.attr_for_id(ident) if ident else None
            self.reads.append(((m or a).index, ident, tid, v))


def module_name(path: str, pd: PerfData) -> str:
    """perf's name of a kernel module mapped from `path`: the path itself when the file's
    build-id table (read before the records) names it, else '[name]' from the file name
    ('.ko[.gz|.xz|.zst]' dropped, '-' as '_'), as perf names a module it first meets in an
    MMAP record (pipe mode)."""
    if path.startswith("["):
        return path
    if not pd.pipe:
        if not hasattr(pd, "_bid_names"):
            pd._bid_names = {name for _, _, name in pd.build_ids()}
        if path in pd._bid_names:
            return path
    return f"[{module_short(path)}]"


def module_short(path: str) -> str:
    """A module map's name as kallsyms writes it (without brackets): 'ath9k_common' for
    .../ath9k_common.ko or [ath9k_common]."""
    if path.startswith("["):
        return path.strip("[]")
    base = os.path.basename(path)
    for ext in (".ko.gz", ".ko.xz", ".ko.zst", ".ko"):
        if base.endswith(ext):
            base = base[:-len(ext)]
            break
    return base.replace("-", "_")


def _comm_column(side: _Side, tid: np.ndarray, dseq: np.ndarray) -> pa.Array:
    """Thread name when perf delivers each sample: the latest COMM (or name inherited at
    FORK) delivered before it; ':<tid>' like perf when there is none yet ('swapper' for
    the idle task)."""
    names: dict[str, int] = {}
    lo = int(tid.min()) if len(tid) else 0
    span = int(tid.max()) - lo + 1 if len(tid) else 0
    if 0 < span <= 1 << 22:
        # thread ids are few and close together: a table instead of a sort
        seen = np.zeros(span, dtype=bool)
        seen[tid - lo] = True
        utids = np.flatnonzero(seen).astype(tid.dtype) + lo
    else:
        utids = np.unique(tid)
    single = np.zeros(len(utids), dtype=np.int32)
    multi = []
    for k, t in enumerate(utids.tolist()):
        hist = sorted(side.comms.get(t, []), key=lambda x: x[0])
        # perf names the idle task 'swapper' and any other unnamed thread ':<tid>'
        hist = [(-1, "swapper" if t == 0 else f":{t}")] + hist
        hc = np.array([names.setdefault(c, len(names)) for _, c in hist], dtype=np.int32)
        single[k] = hc[0]
        if len(hist) > 1:
            multi.append((t, np.array([h[0] for h in hist], dtype=np.int64), hc))
    # one name per thread is the common case: a gather through the sorted thread ids
    if 0 < span <= 1 << 22:
        lut = np.zeros(span, dtype=np.int32)
        lut[utids - lo] = single
        codes = lut[tid - lo]
    else:
        codes = single[np.searchsorted(utids, tid)] if len(utids) else np.zeros(0, np.int32)
    # threads with several names: their samples grouped by one sort, not one scan each
    if multi:
        mt = np.array(sorted(m[0] for m in multi), dtype=tid.dtype)
        msel = np.flatnonzero(np.isin(tid, mt))
        grp = tid[msel]
        o = np.argsort(grp, kind="stable")
        msel, grp = msel[o], grp[o]
        starts = np.searchsorted(grp, mt, side="left")
        ends = np.searchsorted(grp, mt, side="right")
        where = {int(t): msel[a:b] for t, a, b in zip(mt.tolist(), starts.tolist(), ends.tolist())}
    for t, ht, hc in multi:
        sel = where[t]
        pos = np.searchsorted(ht, dseq[sel].astype(np.int64), side="right") - 1
        codes[sel] = hc[np.maximum(pos, 0)]
    dictionary = pa.array(list(names), pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(codes), dictionary).cast(pa.string())


def _skipped(k: S.Kallsyms) -> str:
    """What a kallsyms text had that names nothing, for the symbolisation note."""
    return f", {k.bad_lines} lines without a hex address skipped" if k.bad_lines else ""


def _pick_kallsyms(pd: PerfData, meta: dict, kallsyms: str | None, kmaps: list[Map]):
    """The kallsyms that matches the recorded kernel, and where it came from."""
    kmap = next((m for m in kmaps if m.name.startswith(KERNEL_DSO)), None)
    # perf and hpm record the kernel map with pgoff = address of the reference symbol
    ref_addr = kmap.pgoff if kmap else None

    def check(k: S.Kallsyms) -> str | None:
        r = k.ref()
        if ref_addr and r and r[1] != ref_addr:
            return (f"{r[0]} is at {r[1]:#x} there but at {ref_addr:#x} in the recording "
                    f"(another kernel or boot)")
        return None

    if kallsyms:
        k = S.read_kallsyms(kallsyms)
        why = check(k)
        if why:
            raise InputError(kallsyms, f"does not match {pd.path}: {why}",
                             "give the kallsyms of the boot the recording was made on")
        return k, f"--kallsyms {kallsyms}"
    text = pd.kallsyms_text()
    if text:
        k = S.Kallsyms(text, f"{pd.path} (recorded kallsyms)")
        if len(k):
            return k, "recorded (hpmkit kallsyms section)" + _skipped(k)
    if meta["kernel"] and meta["kernel"] == os.uname().release and \
            (meta["hostname"] in (None, socket.gethostname())):
        try:
            k = S.Kallsyms(open("/proc/kallsyms").read(), "/proc/kallsyms")
        except (OSError, InputError) as e:
            return None, f"none: /proc/kallsyms unusable ({e})"
        if len(k) and not check(k):
            return k, "/proc/kallsyms (the recording came from this running kernel)" + _skipped(k)
        return None, "none: /proc/kallsyms belongs to another boot"
    return None, "none: no recorded kallsyms; give --kallsyms FILE"


class _Symboliser:
    def __init__(self, side: _Side, ksyms, dsos: S.DsoCache, build_ids: dict[str, bytes]):
        self.side = side
        self.ksyms = ksyms
        self.dsos = dsos
        self.build_ids = build_ids

    def find_map(self, pid: int, addr: int, t: int) -> Map | None:
        """The map of addr in pid when the sample delivered at t was: the latest delivered
        before it (one delivered later only when none was)."""
        seen = set()
        while pid not in seen:
            seen.add(pid)
            best = None
            for m in self.side.maps.get(pid, ()):
                if m.start <= addr < m.end and (m.seq <= t or best is None):
                    if best is None or (m.seq <= t and m.seq > best.seq) or best.seq > t:
                        best = m
            if best:
                return best
            if pid not in self.side.parent:
                return None
            # a child has a copy of its parent's maps as they were at the fork: what the
            # parent maps later is not the child's
            pid, forked = self.side.parent[pid]
            t = min(t, forked)
        return None

    def module_map(self, addr: int) -> Map | None:
        """The module map (MMAP record of a .ko or [name]) holding a kernel address, the
        latest delivered when several do."""
        for m in reversed(self.side.kmaps):
            if m.start <= addr < m.end and not m.name.startswith(KERNEL_DSO):
                return m
        return None

    def kernel_dso(self, addr: int, mod: str | None, named: bool) -> str | None:
        """The DSO perf gives a kernel address: the module whose map (MMAP record) holds it,
        else the module kallsyms names, else the kernel's map; an address in no kernel map
        of a file that has them is perf's [unknown] (None)."""
        mm = self.module_map(addr)
        if mm is not None:
            return module_name(mm.name, self.side.pd)
        if mod:
            return f"[{mod}]"
        if named or any(m.start <= addr < m.end for m in self.side.kmaps):
            return KERNEL_DSO
        return None

    def _module_symbol_fits(self, addr: int, i: int, mm: Map | None) -> bool:
        """perf moves each kallsyms symbol of a module into that module's map (found by
        name) and looks an address up in the map that holds it only: a symbol names the
        address when its module is the map's, and, if its module has a map, not past that
        map's end (the next kallsyms line may be another module's, far above)."""
        mod = self.ksyms.mods[i]
        if mm is not None:
            return mod == module_short(mm.name) and addr < mm.end
        if mod is None:
            return True
        own = self._mod_maps().get(mod)
        return own is None or any(m.start <= addr < m.end for m in own)

    def _mod_maps(self) -> dict[str, list[Map]]:
        if not hasattr(self, "_by_mod"):
            self._by_mod: dict[str, list[Map]] = {}
            for m in self.side.kmaps:
                if not m.name.startswith(KERNEL_DSO):
                    self._by_mod.setdefault(module_short(m.name), []).append(m)
        return self._by_mod

    def kernel(self, addrs: np.ndarray):
        """(symbol, offset, dso, dso_addr) lists for kernel addresses; dso_addr is the
        address in its module (perf's map_ip: what it prints for an unnamed one), None
        outside modules."""
        n = len(addrs)
        alist = addrs.tolist()
        mmaps = [self.module_map(a) for a in alist]
        # modulo 2^64 as perf computes it (a damaged pgoff must not overflow the column)
        rel = [(a - m.start + m.pgoff) & U64 if m is not None else None
               for a, m in zip(alist, mmaps)]
        if self.ksyms is None:
            return [None] * n, [None] * n, [self.kernel_dso(a, None, False) for a in alist], rel
        idx, off = self.ksyms.lookup(addrs)
        syms, offs, dsos = [], [], []
        for a, i, o, mm in zip(alist, idx.tolist(), off.tolist(), mmaps):
            if i < 0 or not self._module_symbol_fits(a, i, mm):
                syms.append(None)
                offs.append(None)
                dsos.append(self.kernel_dso(a, None, False))
            else:
                syms.append(self.ksyms.names[i])
                offs.append(o)
                dsos.append(self.kernel_dso(a, self.ksyms.mods[i], True))
        return syms, offs, dsos, rel

    def user(self, pids: np.ndarray, addrs: np.ndarray, times: np.ndarray):
        """(symbol, offset, dso, dso_addr, srcline) lists for user (pid, addr) pairs."""
        n = len(addrs)
        sym, off, dso = [None] * n, [None] * n, [None] * n
        daddr: list[int | None] = [None] * n
        src: list[str | None] = [None] * n
        by_map: dict[int, tuple[Map, list[int]]] = {}
        for k, (pid, a, t) in enumerate(zip(pids.tolist(), addrs.tolist(), times.tolist())):
            m = self.find_map(pid, a, t)
            if m is None:
                continue
            dso[k] = m.name
            daddr[k] = a - m.start + m.pgoff
            by_map.setdefault(id(m), (m, []))[1].append(k)
        for m, ks in by_map.values():
            img = self.dsos.get(m.name, m.build_id or self.build_ids.get(m.name))
            if img is None:
                continue
            fo = np.array([daddr[k] for k in ks], dtype=np.uint64)
            va = img.offset_to_vaddr(fo)
            good = va >= 0
            idx, so = img.lookup(np.where(good, va, 0).astype(np.uint64))
            lines = img.srclines(np.where(good, va, 0).astype(np.uint64))
            for j, k in enumerate(ks):
                if good[j]:
                    daddr[k] = int(va[j])
                    if idx[j] >= 0:
                        sym[k] = img.names[idx[j]]
                        off[k] = int(so[j])
                    src[k] = lines[j]
        return sym, off, dso, daddr, src


def _header_meta(meta: dict, pd: PerfData) -> None:
    """The recording's features (host, kernel, ISA, command line, CPUs) and its events, as the
    header has them so far: ingest_perfdata asks again after the scan in pipe mode."""
    meta["hostname"] = pd.feature_string("HOSTNAME")
    meta["kernel"] = pd.feature_string("OSRELEASE")
    meta["isa"] = normalise_isa(pd.feature_string("ARCH"))
    meta["cpudesc"] = pd.feature_string("CPUDESC")
    cl = pd.cmdline()
    meta["cmdline"] = " ".join(cl) if cl else None
    if cl and "--" in cl:
        meta["workload"] = " ".join(cl[cl.index("--") + 1:]) or None
    nr = pd.nrcpus()
    meta["nrcpus"] = nr[1] if nr else None
    names = [event_name(a) for a in pd.attrs]
    meta["events"] = [{
        "name": n, "type": a.type, "config": a.config,
        **({"freq": a.sample_period} if a.freq else {"period": a.sample_period}),
        "sampling": None, "unit": event_unit(n, a),
    } for n, a in zip(names, pd.attrs)]


def ingest_perfdata(path: str, *, kallsyms: str | None = None, symfs: str | None = None,
                    srcline: str = "own", progress: Callable[[str, int, int], None] | None = None) -> Profile:
    with PerfData(path) as pd:
        meta = new_meta(path, "perf.data", pd.size)
        _header_meta(meta, pd)

        res = scan(pd, (lambda d, t: progress("scan", d, t or 0)) if progress else None,
                   copy={F.REC[n] for n in USED if n != "SAMPLE"})
        # pipe mode: the attrs, their names and the features are known once the stream is read
        names = [event_name(a) for a in pd.attrs]
        if len(meta["events"]) != len(pd.attrs) or pd.pipe:
            _header_meta(meta, pd)
        c = res.cols
        side = _Side(pd)
        for dseq, rec in res.other_records():
            side.feed(rec, dseq)
        notes = list(pd.notes)
        if pd.truncation:
            notes.append(pd.truncation.describe())
            # report refuses a cut file as perf report does; a cut stream is read as far as it goes
            meta["truncated"] = {"pipe": bool(pd.pipe), "problem": pd.truncation.problem()}
        if not len(c["attr"]):
            notes.append("the recording holds no samples")
        dwarf = [event_name(a) for a in pd.attrs if a.sample_type & F.SAMPLE_STACK_USER]
        if dwarf and len(c["attr"]):
            # --call-graph dwarf: the user stack is a raw copy that perf unwinds with libdw;
            # hpmkit keeps the kernel chain and the sampled user address, never silently
            notes.append(f"samples of {', '.join(dwarf)} carry user stack copies (perf record "
                         "--call-graph dwarf), which hpmkit does not unwind: their user callers "
                         "are missing (perf report unwinds them; record with -g or "
                         "--call-graph fp for frame-pointer chains hpmkit reads)")
        comp = pd.compression()
        if comp:
            notes.append(f"records compressed with {comp['type']} level {comp['level']} "
                         f"(perf record -z)")
        meta["notes"] = notes

        skipped: dict[str, int] = {}
        for t, cnt in sorted(res.type_counts.items()):
            nm = F.RECORD_NAMES.get(t)
            if nm is None:
                skipped[f"unknown record type {t}" if t < 255 else "unknown record types >= 255"] = cnt
            elif nm not in USED and nm not in STRUCTURAL:
                skipped[f"{nm} records (not used)"] = cnt
        if res.unknown_ids:
            skipped["samples with an id of no event"] = res.unknown_ids
        meta["records"] = {F.RECORD_NAMES.get(t, f"type {t}"): n for t, n in sorted(res.type_counts.items())}
        meta["lost"] = side.lost
        per_attr = np.bincount(c["attr"], minlength=len(pd.attrs)) if len(c["attr"]) else []
        with_samples = {i for i, n in enumerate(per_attr) if n}
        for i, e in enumerate(meta["events"]):
            e["sampling"] = i in with_samples
        meta["throttle"] = side.throttle

        # -- samples, in perf's delivery order (the file is ordered per CPU buffer; perf
        # sorts by time per round, and that order decides names and maps)
        ns = len(c["attr"])
        keys = ("attr", "pid", "tid", "time", "cpu", "period", "stack", "dseq")
        if ns and not (c["dseq"][1:] > c["dseq"][:-1]).all():
            order = np.argsort(c["dseq"], kind="stable")
            moved = np.flatnonzero(order != np.arange(ns))
            if len(moved) < ns // 4:
                # nearly in order (one CPU's buffer at a time): move the few in place in the
                # scanner's columns instead of copying every column
                src = order[moved]
                for k in keys:
                    c[k][moved] = c[k][src]
                col = {k: c[k] for k in keys}
            else:
                col = {k: c[k][order] for k in keys}
        else:
            order = np.arange(ns)       # already in delivery order
            col = {k: c[k] for k in keys}
        def nullable(arr, bit, typ):
            # null where the sample's attr does not ask for the field
            has = np.array([bool(a.sample_type & bit) for a in pd.attrs])
            return pa.array(arr, typ, mask=None if has.all() else ~has[col["attr"]])
        time_arr = pa.array(col["time"], pa.uint64(), mask=col["time"] == NO_TIME)
        ev_dict = pa.array(names, pa.string())
        event_arr = pa.DictionaryArray.from_arrays(pa.array(col["attr"]), ev_dict).cast(pa.string())
        comm_arr = _comm_column(side, col["tid"], col["dseq"])

        # -- stacks and frames
        if progress:
            progress("symbols", 0, 1)
        # when each raw stack was first delivered: samples are in delivery order, and a fancy
        # assignment keeps the last write, so writing them backwards leaves the first
        stack_first_time = np.full(len(c["stack_pid"]), NO_TIME, dtype=np.uint64)
        stack_first_time[col["stack"][::-1]] = col["dseq"][::-1]
        bids = {name: bid for _, bid, name in pd.build_ids()}
        if kallsyms or _any_kernel(c):
            ksyms, ksrc = _pick_kallsyms(pd, meta, kallsyms, side.kmaps)
        else:
            ksyms, ksrc = None, "not needed: no kernel frames"
        dsos = S.DsoCache(symfs, srcline)
        stacks_tbl, frames_tbl, remap, unresolved = _stacks(c, stack_first_time, side, ksyms,
                                                            dsos, bids)
        stack_col = remap[col["stack"]]
        meta["symbolisation"] = {"kernel": ksrc, "unresolved_frames": unresolved,
                                 "kallsyms_symbols": len(ksyms) if ksyms else 0,
                                 "dsos": dict(sorted(dsos.status.items()))}

        samples = {
            "time": time_arr,
            "cpu": nullable(col["cpu"], F.SAMPLE_CPU, pa.int32()),
            "pid": nullable(col["pid"], F.SAMPLE_TID, pa.int32()),
            "tid": nullable(col["tid"], F.SAMPLE_TID, pa.int32()),
            "comm": comm_arr, "event": event_arr,
            "period": nullable(col["period"], F.SAMPLE_PERIOD, pa.uint64()),
            "stack_id": pa.array(stack_col, pa.int32()),
        }
        # a period-less sample (no PERIOD bit) weighs its attr's fixed period
        if not all(a.sample_type & F.SAMPLE_PERIOD for a in pd.attrs):
            fixed = np.array([0 if a.freq else a.sample_period for a in pd.attrs], np.uint64)
            has_p = np.array([bool(a.sample_type & F.SAMPLE_PERIOD) for a in pd.attrs])
            per = np.where(has_p[col["attr"]], col["period"], fixed[col["attr"]])
            samples["period"] = pa.array(per, pa.uint64())
        samples.update(_group_values(pd, c, col, order, names, skipped))
        meta["skipped"] = skipped
        meta["totals"] = _totals(side, names)
        return Profile(meta, pa.table(samples), stacks_tbl, frames_tbl)


def _any_kernel(c) -> bool:
    """Does any chain hold kernel frames? (then kallsyms is worth loading)"""
    ch = c["chain"]
    marker = ch >= np.uint64(F.CONTEXT_MAX)
    kern = np.array([F.CONTEXT_KERNEL, F.CONTEXT_GUEST_KERNEL, F.CONTEXT_HV], dtype=np.uint64)
    if np.isin(ch[marker], kern).any():
        return True
    return not marker.any() and bool((ch >= np.uint64(1 << 63)).any())


def _totals(side: _Side, names: list[str]) -> dict[str, int] | None:
    if not side.reads:
        return None
    # one READ record per counter instance (thread or CPU): the last value of each instance
    last: dict[tuple[int, int, int], int] = {}
    for attr, ident, tid, v in side.reads:
        last[(attr, ident, tid)] = v
    tot: dict[str, int] = {}
    for (attr, _i, _t), v in last.items():
        tot[names[attr]] = tot.get(names[attr], 0) + v
    return tot


def _group_values(pd: PerfData, c: dict, col: dict, order: np.ndarray, names: list[str],
                  skipped: dict) -> dict[str, pa.Array]:
    """value:<event> columns: per-sample deltas of each PERF_SAMPLE_READ value, per counter
    instance (member id; and thread when the event is inherited, whose counters are
    per-thread), in time order. The first sample of an instance carries the count since
    the counter was enabled."""
    rs = c["read_sample"]
    if not len(rs):
        return {}
    ns = len(order)
    inv = np.empty(ns, dtype=np.int64)
    inv[order] = np.arange(ns)
    pos = inv[rs.astype(np.int64)]                      # sample row after sorting
    sattr = col["attr"][pos]
    ids = c["read_id"]
    id2attr = {i: a.index for a in pd.attrs for i in a.ids}
    member_attr = np.empty(len(rs), dtype=np.int64)
    for k, (i, m, sa) in enumerate(zip(ids.tolist(), c["read_member"].tolist(), sattr.tolist())):
        member_attr[k] = id2attr.get(i, sa + m if sa + m < len(pd.attrs) else -1)
    bad = member_attr < 0
    if bad.any():
        skipped["group-read values of unknown members"] = int(bad.sum())
    inherit = np.array([a.flag("inherit") for a in pd.attrs])
    tid = col["tid"][pos].astype(np.int64)
    key_tid = np.where(inherit[np.maximum(member_attr, 0)], tid, -1)
    # instance key: (id or attr, tid-if-inherited); sort by key then time position
    inst = np.where(ids != 0, ids.astype(np.int64), -1 - member_attr)
    srt = np.lexsort((pos, key_tid, inst))
    v = c["read_value"][srt].astype(np.int64)
    same = np.zeros(len(srt), bool)
    same[1:] = (inst[srt][1:] == inst[srt][:-1]) & (key_tid[srt][1:] == key_tid[srt][:-1])
    delta = v.copy()
    delta[1:] = np.where(same[1:], v[1:] - v[:-1], v[1:])
    out = {}
    ma = member_attr[srt]
    p = pos[srt]
    for ai in sorted(set(ma.tolist()) - {-1}):
        sel = ma == ai
        vals = np.zeros(ns, dtype=np.int64)
        mask = np.ones(ns, dtype=bool)
        vals[p[sel]] = delta[sel]
        mask[p[sel]] = False
        out[VALUE_PREFIX + names[ai]] = pa.array(vals, pa.int64(), mask=mask)
    return out


def _stacks(c, stack_time, side: _Side, ksyms, dsos: S.DsoCache, bids):
    """Split raw chains at context markers, resolve distinct frames, build the tables.
    Returns (stacks, frames, remap raw stack index -> stack_id, unresolved frame count)."""
    chain = c["chain"]
    starts = c["stack_start"].astype(np.int64)
    lens = c["stack_len"].astype(np.int64)
    nst = len(starts)
    owner = np.repeat(np.arange(nst), lens)
    is_marker = chain >= np.uint64(F.CONTEXT_MAX)
    idx = np.arange(len(chain))
    last = np.maximum.accumulate(np.where(is_marker, idx, -1)) if len(chain) else idx
    valid = (last >= 0) & (last >= starts[owner] if len(chain) else True)
    ctx = np.where(valid, chain[np.maximum(last, 0)] if len(chain) else chain, np.uint64(0))
    kern_ctx = np.isin(ctx, np.array([F.CONTEXT_KERNEL, F.CONTEXT_GUEST_KERNEL, F.CONTEXT_HV],
                                     dtype=np.uint64))
    kstart = min((m.start for m in side.kmaps), default=None)
    no_ctx = ctx == 0
    # no marker: a kernel address if it lies at or above the kernel's lowest mapping
    guess_k = (chain >= np.uint64(kstart)) if kstart else (chain >= np.uint64(1 << 63))
    kernel = np.where(no_ctx, guess_k, kern_ctx)
    keep = ~is_marker
    f_owner, f_addr, f_kern = owner[keep], chain[keep], kernel[keep]
    f_pid = np.where(f_kern, -1, c["stack_pid"][f_owner].astype(np.int64))
    # distinct (pid, addr): kernel entries share pid -1
    key = np.stack([f_pid, f_addr.view(np.int64)], axis=1) if len(f_addr) else np.zeros((0, 2), np.int64)
    ukey, uinv = np.unique(key, axis=0, return_inverse=True) if len(key) else (key, np.zeros(0, np.int64))
    uinv = uinv.reshape(-1)
    utime = np.full(len(ukey), NO_TIME, dtype=np.uint64)
    if len(key):
        np.minimum.at(utime, uinv, stack_time[f_owner])
    upid, uaddr = ukey[:, 0], ukey[:, 1].view(np.uint64)
    uk = upid == -1
    n = len(ukey)
    sym, off, dso = [None] * n, [None] * n, [None] * n
    src: list = [None] * n
    da: list = [None] * n
    kidx = np.nonzero(uk)[0]
    sy = _Symboliser(side, ksyms, dsos, bids)
    ks, ko, kd, ka = sy.kernel(uaddr[kidx])
    for j, k in enumerate(kidx.tolist()):
        sym[k], off[k], dso[k], da[k] = ks[j], ko[j], kd[j], ka[j]
    uidx = np.nonzero(~uk)[0]
    us, uo, ud, ua, usrc = sy.user(upid[uidx], uaddr[uidx], utime[uidx])
    for j, k in enumerate(uidx.tolist()):
        sym[k], off[k], dso[k], src[k], da[k] = us[j], uo[j], ud[j], usrc[j], ua[j]
    # frames: one per distinct (addr, dso, kernel)
    fkey: dict[tuple, int] = {}
    fid_of_u = np.empty(n, dtype=np.int32)
    rows = {k: [] for k in ("frame_id", "addr", "symbol", "offset", "dso", "kernel", "srcline",
                            "dso_addr")}
    for k in range(n):
        kk = (int(uaddr[k]), dso[k], bool(uk[k]))
        fid = fkey.get(kk)
        if fid is None:
            fid = fkey[kk] = len(fkey)
            for col, v in zip(rows, (fid, kk[0], sym[k], off[k], dso[k], kk[2], src[k], da[k])):
                rows[col].append(v)
        fid_of_u[k] = fid
    frames = pa.table(rows, schema=FRAMES_SCHEMA)
    unresolved = sum(1 for s in rows["symbol"] if s is None)
    # stacks: frame ids per raw chain, deduplicated after resolution
    f_fid = fid_of_u[uinv] if len(uinv) else np.zeros(0, np.int32)
    bounds = np.searchsorted(f_owner, np.arange(nst + 1)) if nst else np.zeros(1, np.int64)
    seen: dict[tuple, int] = {}
    remap = np.empty(nst, dtype=np.int32)
    s_ids, s_frames, s_nk = [], [], []
    fk_list = f_kern.tolist()
    fid_list = f_fid.tolist()
    for s in range(nst):
        a, b = int(bounds[s]), int(bounds[s + 1])
        fr = tuple(fid_list[a:b])
        sid = seen.get(fr)
        if sid is None:
            sid = seen[fr] = len(seen)
            nk = 0
            for kf in fk_list[a:b]:
                if not kf:
                    break
                nk += 1
            s_ids.append(sid)
            s_frames.append(list(fr))
            s_nk.append(nk)
        remap[s] = sid
    stacks = pa.table({"stack_id": s_ids, "frame_ids": s_frames, "nkernel": s_nk},
                      schema=STACKS_SCHEMA)
    return stacks, frames, remap, unresolved
