"""Text recordings -> Profile: `perf script` output of any field set (-F: comm, pid/tid or
tid, cpu, time, period, event, ip, sym, symoff, dso; with or without -g; several events per
file; perf's '# ...' header) and folded stacks ('comm;root;...;leaf COUNT', the
stackcollapse-perf convention).

perf prints a sample's fields in a fixed order whatever -F says, so the fields present are
read from the line's shape: [comm] pid[/tid] [[cpu]] [time:] [period] [event:] [ip sym+off
(dso)]; callchain frames follow on tab-indented lines. Columns this model has no place for
(brstack, addr, srcline, ipc...) are skipped and counted, never fatal. A file whose first
sample line is neither perf script nor folded is an error naming file:line."""
from __future__ import annotations

import os
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ..errors import FormatError
from .model import FRAMES_SCHEMA, STACKS_SCHEMA, Profile, new_meta, normalise_isa

HINT = ("give `perf script` output (any -F field set that includes tid or pid, -g or not) or "
        "folded stacks 'a;b;c COUNT'")
# the sample line: fields in perf's print order, each optional but the thread id
SAMPLE_RE = re.compile(
    r"^\s*(?:(?P<comm>\S.*?)\s+)??(?P<pid>-?\d+)(?:/(?P<tid>-?\d+))?"
    r"(?:\s+\[(?P<cpu>\d+)\])?"
    r"(?:\s+(?P<time>\d+\.\d+):)?"
    r"(?:\s+(?P<period>\d+)(?=\s+\S+?:(?:\s|$)))?"
    r"(?:\s+(?P<event>[^\s\d]\S*?):(?=\s|$))?"
    r"(?:\s+(?P<rest>\S.*?))?\s*$")
# ip, then symbol (+offset) and (dso), each optional after the address (parse_frame)
FRAME_RE = re.compile(r"^\s*(?P<addr>[0-9a-fA-F]+)(?:\s+(?P<body>\S.*?))?\s*$")
FOLDED_RE = re.compile(r"^(?P<stack>.*\S)\s+(?P<count>\d+)$")
OFF_RE = re.compile(r"^(?P<sym>.+)\+0x(?P<off>[0-9a-fA-F]+)$")
HEADER_RE = re.compile(r"^#\s*(?P<key>[a-z][a-z ]*?)\s*:\s*(?P<val>.*)$")
USER_PSEUDO = {"[unknown]", "[vdso]", "[vsyscall]", "[heap]", "[stack]", "[uprobes]",
               "[vectors]", "[sigpage]", "[anon]"}
FOLDED_ANNOT = ("_[k]", "_[j]", "_[i]", "_[w]")
# a folded count becomes that many sample rows (about 35 bytes each): 10 M rows stay under
# half a GB. The fuzzer's 44 M-sample line took 4 GB when rows were built as Python lists
MAX_FOLDED_ROWS = 10_000_000


def _is_kernel(dso: str | None, addr: int) -> bool:
    if dso:
        if dso.startswith("[kernel.") or dso.startswith("[guest.kernel"):
            return True
        if os.path.basename(dso).startswith("vmlinux"):
            return True
        if dso.startswith("[") and dso.endswith("]") and dso not in USER_PSEUDO \
                and not dso.startswith("[anon") and not dso.startswith("[perf-"):
            return True     # a kernel module, printed as [name]
        if dso != "[unknown]":
            return False
    # unknown mapping: the top of the 64-bit address space is the kernel's on x86-64 and arm64
    return addr >= 0xFFFF000000000000


class _Builder:
    def __init__(self):
        self.frames: dict[tuple, int] = {}
        self.frame_rows: list[tuple] = []
        self.stacks: dict[tuple, int] = {}
        self.stack_rows: list[tuple[list[int], int]] = []
        self.cols = {k: [] for k in ("time", "cpu", "pid", "tid", "comm", "event", "period",
                                     "stack_id")}

    def frame(self, addr: int, sym: str | None, off: int | None, dso: str | None,
              kernel: bool) -> int:
        key = (addr, sym, dso, kernel) if addr or sym is None else (addr, sym, dso, kernel)
        fid = self.frames.get(key)
        if fid is None:
            fid = self.frames[key] = len(self.frame_rows)
            self.frame_rows.append((fid, addr, sym, off, dso, kernel))
        return fid

    def stack(self, fids: list[int], kern: list[bool]) -> int:
        t = tuple(fids)
        sid = self.stacks.get(t)
        if sid is None:
            nk = 0
            for k in kern:
                if not k:
                    break
                nk += 1
            sid = self.stacks[t] = len(self.stack_rows)
            self.stack_rows.append((fids, nk))
        return sid

    def tables(self) -> tuple[pa.Table, pa.Table]:
        fr = self.frame_rows
        frames = pa.table({
            "frame_id": [r[0] for r in fr], "addr": [r[1] for r in fr],
            "symbol": [r[2] for r in fr], "offset": [r[3] for r in fr],
            "dso": [r[4] for r in fr], "kernel": [r[5] for r in fr],
            "srcline": [None] * len(fr),
            "dso_addr": [r[1] if r[4] and not r[5] and r[4] != "[unknown]" else None
                         for r in fr],
        }, schema=FRAMES_SCHEMA)
        stacks = pa.table({"stack_id": list(range(len(self.stack_rows))),
                           "frame_ids": [r[0] for r in self.stack_rows],
                           "nkernel": [r[1] for r in self.stack_rows]}, schema=STACKS_SCHEMA)
        return stacks, frames


def _ns(t: str) -> int:
    sec, _, frac = t.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


# the sample columns' types (model.SAMPLES_SCHEMA): pid, tid, cpu int32; time, period uint64
_RANGES = (("pid", 1, -(1 << 31), 1 << 31), ("tid", 2, -(1 << 31), 1 << 31), ("cpu", 3, -(1 << 31), 1 << 31),
           ("time", 4, 0, 1 << 64), ("period", 5, 0, 1 << 64))


def _out_of_range(cur: tuple) -> str | None:
    for name, i, lo, hi in _RANGES:
        if cur[i] is not None and not lo <= cur[i] < hi:
            return f"{name} {cur[i]} is out of range"
    return None


def _parse_event_line(val: str) -> dict:
    ev: dict = {}
    m = re.search(r"name = ([^,]+)", val)
    ev["name"] = m.group(1).strip() if m else None
    m = re.search(r"\btype = (\d+)", val)
    ev["type"] = int(m.group(1)) if m else None
    m = re.search(r"\bconfig = (0x[0-9a-fA-F]+|\d+)", val)
    ev["config"] = int(m.group(1), 0) if m else (0 if ev["type"] is not None else None)
    m = re.search(r"\{ sample_period, sample_freq \} = (\d+)", val)
    freq = re.search(r"\bfreq = 1\b", val) is not None
    if m:
        ev["freq" if freq else "period"] = int(m.group(1))
    return ev


def _unit(name: str) -> str:
    base = name.split(":")[0].split("/")[0]      # cpu-clock:u, task-clock/call-graph=fp/
    return "ns" if base in ("cpu-clock", "task-clock") else "events"


def ingest_text(path: str, *, progress: Callable[[str, int, int], None] | None = None) -> Profile:
    size = os.path.getsize(path)
    meta = new_meta(path, "perf-script", size)
    b = _Builder()
    header_events: list[dict] = []
    order: list[str] = []
    mode = None          # "script" | "folded"
    cur = None           # (comm, pid, tid, cpu, time, period, event)
    frames: list[int] = []
    kern: list[bool] = []
    unparsed = 0        # lines that are neither sample nor frame (srcline, insn, raw...)
    unread = 0          # sample lines whose last columns are not an 'ADDR SYM (DSO)' frame
    folded_counts: list[int] = []

    def flush():
        nonlocal cur, frames, kern
        if cur is None:
            return
        comm, pid, tid, cpu, tm, period, ev = cur
        c = b.cols
        c["comm"].append(comm); c["pid"].append(pid); c["tid"].append(tid)
        c["cpu"].append(cpu); c["time"].append(tm); c["period"].append(period)
        c["event"].append(ev)
        c["stack_id"].append(b.stack(frames, kern))
        cur, frames, kern = None, [], []

    def bad(lineno: int, line: str, why: str) -> FormatError:
        return FormatError(path, f"line {lineno}: {why}: {line.strip()[:80]!r}", HINT)

    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        from ..errors import ReadError
        raise ReadError(path, f"cannot open: {e.strerror}") from e
    with f:
        done = 0
        for lineno, line in enumerate(f, 1):
            done += len(line)
            if progress and lineno % 200_000 == 0:
                progress("parse", done, size)
            s = line.rstrip("\n")
            if not s.strip():
                if mode == "script":
                    flush()
                continue
            if s.startswith("#"):
                m = HEADER_RE.match(s)
                if m:
                    k, v = m.group("key"), m.group("val").strip()
                    if k == "hostname":
                        meta["hostname"] = v
                    elif k == "os release":
                        meta["kernel"] = v
                    elif k == "arch":
                        meta["isa"] = normalise_isa(v)
                    elif k == "nrcpus online":
                        meta["nrcpus"] = int(v) if v.isascii() and v.isdigit() else None
                    elif k == "cpudesc":
                        meta["cpudesc"] = v
                    elif k == "cmdline":
                        meta["cmdline"] = v
                        if " -- " in v:
                            meta["workload"] = v.split(" -- ", 1)[1].strip() or None
                    elif k == "event":
                        header_events.append(_parse_event_line(v))
                continue
            if mode != "folded" and s[0] == "\t":
                # a callchain frame (perf indents them with a tab)
                fr = parse_frame(s)
                if cur is None or fr is None:
                    unparsed += 1
                else:
                    frames_add(b, fr, frames, kern)
                continue
            m = None
            if mode == "script" or (mode is None and not (";" in s and FOLDED_RE.match(s))):
                m = SAMPLE_RE.match(s)
            if m:
                if mode is None:
                    mode = "script"
                flush()
                ev = m.group("event") or "samples"
                if ev not in order:
                    order.append(ev)
                tid = int(m.group("tid") or m.group("pid"))
                comm = m.group("comm").strip() if m.group("comm") else f":{tid}"
                cur = (comm, int(m.group("pid")) if m.group("tid") else None, tid,
                       int(m.group("cpu")) if m.group("cpu") else None,
                       _ns(m.group("time")) if m.group("time") else None,
                       int(m.group("period")) if m.group("period") else None, ev)
                why = _out_of_range(cur)
                if why:
                    raise bad(lineno, s, why)
                rest = m.group("rest")
                if rest:
                    fr = parse_frame(rest)
                    if fr is None:
                        # a column the model has no place for (brstack, addr, ipc, raw...)
                        unread += 1
                    else:
                        frames_add(b, fr, frames, kern)
                continue
            if mode == "script":
                if s[0] in " " and cur is not None and (fr := parse_frame(s)) is not None:
                    frames_add(b, fr, frames, kern)     # a frame indented with spaces
                else:
                    unparsed += 1                       # srcline, insn, a line of raw data...
                continue
            m = FOLDED_RE.match(s) if mode in (None, "folded") else None
            if m:
                mode = "folded"
                parts = m.group("stack").split(";")
                comm, names = parts[0], parts[1:]
                fids, ks = [], []
                for nm in reversed(names):          # folded is root first; the model leaf first
                    k = False
                    for a in FOLDED_ANNOT:
                        if nm.endswith(a):
                            k = a == "_[k]"
                            nm = nm[:-len(a)]
                            break
                    fids.append(b.frame(0, None if nm == "[unknown]" else nm, None, None, k))
                    ks.append(k)
                c = b.cols
                c["comm"].append(comm); c["pid"].append(None); c["tid"].append(None)
                c["cpu"].append(None); c["time"].append(None); c["period"].append(None)
                c["event"].append("samples")
                c["stack_id"].append(b.stack(fids, ks))
                n = int(m.group("count"))
                if n > MAX_FOLDED_ROWS:
                    raise bad(lineno, s, f"a count above {MAX_FOLDED_ROWS:,} samples")
                folded_counts.append(n)
                continue
            raise bad(lineno, s, "not a perf script sample header, stack line or folded stack"
                      if mode is None else f"line does not fit the {mode} format of this file")
        flush()
    if mode is None:
        raise FormatError(path, "no samples found (empty or comments only)", HINT)

    stacks, frames_t = b.tables()
    cols = b.cols
    if mode == "folded":
        cnt = np.array(folded_counts, dtype=np.int64)
        if cnt.sum() > MAX_FOLDED_ROWS:
            raise FormatError(path, f"{int(cnt.sum()):,} samples in folded counts: more than "
                              f"{MAX_FOLDED_ROWS:,} rows", "scale the counts down (every count "
                              "divided by the same factor keeps the shares)")
        # one row per sample, taken from the per-line values by index (no Python objects)
        idx = pa.array(np.repeat(np.arange(len(cnt), dtype=np.int64), cnt))
        rep = lambda v, t: pa.array(v, t).take(idx)  # noqa: E731
        n = len(idx)
        samples = pa.table({
            "time": pa.nulls(n, pa.uint64()), "cpu": pa.nulls(n, pa.int32()),
            "pid": pa.nulls(n, pa.int32()), "tid": pa.nulls(n, pa.int32()),
            "comm": rep(cols["comm"], pa.string()), "event": rep(cols["event"], pa.string()),
            "period": pa.array(np.ones(n, np.uint64), pa.uint64()),
            "stack_id": rep(cols["stack_id"], pa.int32()),
        })
        meta["source"]["format"] = "folded"
        meta["events"] = [{"name": "samples", "type": None, "config": None, "period": 1,
                           "sampling": True, "unit": "samples"}]
    else:
        by_name = {e["name"]: e for e in header_events if e.get("name")}
        periods = cols["period"]
        # perf prints no period unless asked: the header's fixed period is every sample's
        for i, (p, ev) in enumerate(zip(periods, cols["event"])):
            if p is None:
                h = by_name.get(ev) or by_name.get(ev.split(":")[0])
                periods[i] = h.get("period") if h else None
        samples = pa.table({
            "time": pa.array(cols["time"], pa.uint64()), "cpu": pa.array(cols["cpu"], pa.int32()),
            "pid": pa.array(cols["pid"], pa.int32()), "tid": pa.array(cols["tid"], pa.int32()),
            "comm": pa.array(cols["comm"], pa.string()), "event": pa.array(cols["event"], pa.string()),
            "period": pa.array(periods, pa.uint64()),
            "stack_id": pa.array(cols["stack_id"], pa.int32()),
        })
        evs = []
        for name in order:
            h = by_name.get(name) or by_name.get(name.split(":")[0]) or {}
            e = {"name": name, "type": h.get("type"), "config": h.get("config")}
            if "freq" in h:
                e["freq"] = h["freq"]
            else:
                e["period"] = h.get("period")
                if e["period"] is None:
                    # no header: the period the samples print, when it is one
                    ps = {p for p, n in zip(periods, cols["event"]) if n == name}
                    e["period"] = ps.pop() if len(ps) == 1 else None
            e.update(sampling=True, unit=_unit(name))
            evs.append(e)
        meta["events"] = evs
    if unparsed:
        meta["skipped"]["lines that are neither a sample nor a frame (srcline, insn...)"] = unparsed
    if unread:
        meta["skipped"]["sample columns that are not 'ADDR SYMBOL (DSO)' (brstack, addr...)"] = unread
    meta["symbolisation"] = {"kernel": "as printed by perf script",
                             "unresolved_frames": sum(1 for s in frames_t.column("symbol").to_pylist()
                                                      if s is None)}
    return Profile(meta, samples, stacks, frames_t)


def parse_frame(text: str) -> tuple[int, str | None, str | None] | None:
    """(address, symbol or None, dso or None) of 'ADDR [SYMBOL[+0xOFF]] [(DSO)]'."""
    m = FRAME_RE.match(text)
    if not m:
        return None
    body = m.group("body") or ""
    sym, dso = body, None
    if body.endswith(")"):
        if body.startswith("("):
            sym, dso = "", body[1:-1]
        else:
            k = body.find(" (")      # the dso is the first ' (...)' to the end: '(/x (deleted))'
            if k >= 0:
                sym, dso = body[:k].rstrip(), body[k + 2:-1]
    if not sym and dso is None and body:
        return None
    addr = int(m.group("addr"), 16)
    if addr >> 64:
        return None     # not an address of a 64-bit machine: a column of something else
    return addr, sym or None, dso


def frames_add(b: "_Builder", frame: tuple, frames: list[int], kern: list[bool]) -> None:
    addr, sym, dso = frame
    off = None
    if sym == "[unknown]":
        sym = None
    elif sym:
        om = OFF_RE.match(sym)
        if om and not int(om.group("off"), 16) >> 64:
            sym, off = om.group("sym"), int(om.group("off"), 16)
    k = _is_kernel(dso, addr)
    frames.append(b.frame(addr, sym, off, dso, k))
    kern.append(k)
