"""Text recordings -> Profile: `perf script` output of any field set (-F: comm, pid/tid or
tid or neither, cpu, misc, time, period, event, ip, sym, symoff, dso, and the columns the
model has no place for; with or without -g; several events per file; perf's '# ...' header)
and folded stacks ('comm;root;...;leaf COUNT', the stackcollapse-perf convention).

perf prints a sample's fields in a fixed order whatever -F says (builtin-script.c,
process_event), so the fields present are read from the line's shape:

    [comm] [pid[/tid]] [[cpu]] [misc] [tod] [time:] [period] [event:] [flags] [addr [sym]
    [(dso)]] [data_src] [weight] [ip [sym+off] [(dso)]] [iregs] [uregs] [brstack]
    [ilen: N] [insn: xx..] [phys_addr] [page sizes] [IPC: ...]

A header is first read at perf's exact widths (strict_header: comm '%16s ', or '%s '
before a callchain, tid '%5d ', period '%10lu '...), which keeps a thread name holding
spaces or digits whole and reads a period printed without the event; a line that fits
several readings takes the layout of the file's other lines (counted in a note when that
does not settle it); a line that fits none is read loosely (header()).

With -g the ip is a callchain on tab-indented lines after the header, and the columns after
ip go to one line of their own after the chain (no blank line follows it then). Columns this
model has no place for (misc, addr, weight, brstack*, ilen, insn, iregs, phys_addr, page
sizes, ipc) are skipped and counted in meta "skipped" by name, never glued into a frame and
never taken for a sample; lines that are not samples (srcline, srccode, PERF_RECORD_* of
--show-*-events) are counted too. Without pid and tid (-F comm,ip,sym; -F ip,sym) the
thread is unknown: pid and tid are null, and so is comm when it is not printed.

Folded stacks: one sample row per counted sample while the file holds at most
MAX_FOLDED_ROWS samples; above that, one row per line whose period holds the line's count
(the event's unit is "samples": Profile.weights("samples") sums those counts). A file whose
first sample line is neither perf script nor folded is an error naming file:line."""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from ..errors import FormatError
from .model import FRAMES_SCHEMA, STACKS_SCHEMA, Profile, new_meta, normalise_isa

HINT = ("give `perf script` output (any -F field set, -g or not) or folded stacks "
        "'a;b;c COUNT'")
_HEAD = (r"(?:\s+\[(?P<cpu>\d+)\])?"
         r"(?:\s+(?P<misc>[KUHGg]{1,5})(?=\s|$))?"                 # -F misc: K, U, H, G, g
         r"(?:\s+(?P<tod>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?))?"
         r"(?:\s+(?P<time>\d+\.\d+):)?"
         r"(?:\s+(?P<period>\d+)(?=\s+\S+?:(?:\s|$)))?"
         r"(?:\s+(?P<event>[^\s\d]\S*?):(?=\s|$))?")
# the sample line with a thread id: fields in perf's print order, each optional but the id
SAMPLE_RE = re.compile(
    r"^(?P<vm>\s*VM:\s*\d+(?:\s+VCPU:\d+)?)?"
    r"\s*(?:(?P<comm>\S.*?)\s+)??(?P<pid>-?\d+)(?:/(?P<tid>-?\d+))?" + _HEAD +
    r"(?:\s+(?P<rest>\S.*?))?\s*$")
# a sample line without pid or tid (-F comm,ip,sym; -F ip,sym): taken only with an ip where
# perf prints it, a cpu, misc, tod, time or event (ingest_text), else any line of text would
# be a sample
_NOPID = (r"^\s*(?:VM:\s*\d+\s+(?:VCPU:\d+\s+)?)?(?:(?P<comm>\S.*?)\s+){}"
          r"(?:\[(?P<cpu>\d+)\](?:\s+|$))?"
          r"(?:(?P<misc>[KUHGg]{{1,5}})(?:\s+|$))?"
          r"(?:(?P<tod>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)(?:\s+|$))?"
          r"(?:(?P<time>\d+\.\d+):(?:\s+|$))?"
          r"(?:(?P<period>\d+)\s+(?=\S+?:(?:\s|$)))?"
          r"(?:(?P<event>[^\s\d]\S*?):(?:\s+|$))?"
          r"(?P<rest>[0-9a-fA-F]+(?=\s|$).*?)?\s*$")
NOPID_RE = re.compile(_NOPID.format("??"))
NOPID_COMM_RE = re.compile(_NOPID.format(""))      # perf's '%16s ' comm, then the ip
# ip, then symbol (+offset) and (dso), each optional after the address (parse_frame)
FRAME_RE = re.compile(r"^\s*(?P<addr>[0-9a-fA-F]+)(?:\s+(?P<body>\S.*?))?\s*$")
HEX_RE = re.compile(r"[0-9a-fA-F]{1,16}")
TOKEN_RE = re.compile(r"\S+")
PHYS_RE = re.compile(r"(\s+)([0-9a-fA-F]{1,16})$")
COMM_TAIL_RE = re.compile(r"\s(?:[KUHGg]{1,5}|\[\d+\]|\d\d:\d\d:\d\d(?:\.\d+)?)$")   # misc, cpu, tod
TIME_IN_RE = re.compile(r"(?:^|\s)\d+\.\d+:(?:\s|$)")
LATER_HEX_RE = re.compile(r"\s[0-9a-fA-F]{1,16}(?=\s|$)")
FOLDED_RE = re.compile(r"^(?P<stack>.*\S)\s+(?P<count>\d+)$")
OFF_RE = re.compile(r"^(?P<sym>.+)\+0x(?P<off>[0-9a-fA-F]+)$")
HEADER_RE = re.compile(r"^#\s*(?P<key>[a-z][a-z ]*?)\s*:\s*(?P<val>.*)$")
RECORD_RE = re.compile(r"(?:^|\s)PERF_RECORD_[A-Z0-9_]+(?=[\s:(]|$)")
# the columns perf prints after the sample's ip (process_event), matched at the end of a line
_BR_END = r"(?:0x[0-9a-fA-F]+|[^\s/()]+)(?:\([^()]*\))?"
TRAILER_RE = re.compile(
    r"(?:(?P<ipc>\s+IPC: \d+\.\d+ \(\d+/\d+\))"
    r"|(?P<page>\s+(?:N/A|\d+[BKMGTPEZY]))"
    r"|(?P<insn>\s+insn:(?: [0-9a-fA-F]{2})+)"
    r"|(?P<ilen>\s+ilen: \d+)"
    r"|(?P<brstack>\s*" + _BR_END + "/" + _BR_END + r"/[-PM]/[-X]/[-A]/\d+/(?:N/A|[A-Z0-9_]*))"
    r"|(?P<regs>\s+ABI:\d+(?:\s+\w+:0x[0-9a-fA-F]+)*)"
    r")\s*$")
TRAILER_NAMES = {"ipc": "ipc columns (IPC: ...)", "page": "page size columns",
                 "insn": "insn columns", "ilen": "insnlen columns (ilen: N)",
                 "brstack": "brstack columns (brstack, brstackoff, brstacksym)",
                 "regs": "iregs/uregs columns (ABI: ...)",
                 "phys": "phys_addr columns"}
SKIP_MISC = "misc columns (K, U...)"
SKIP_TOD = "tod columns"
SKIP_BEFORE = "columns before the sample's ip (addr, weight, data_src, flags...)"
SKIP_UNREAD = "sample columns that are not 'ADDR SYMBOL (DSO)'"
SKIP_LINES = "lines that are neither a sample nor a frame (srcline, srccode...)"
SKIP_RECORDS = "non-sample records (PERF_RECORD_* lines)"
USER_PSEUDO = {"[unknown]", "[vdso]", "[vsyscall]", "[heap]", "[stack]", "[uprobes]",
               "[vectors]", "[sigpage]", "[anon]"}
FOLDED_ANNOT = ("_[k]", "_[j]", "_[i]", "_[w]")
# folded stacks: up to this many samples in a file, one row per sample; above it, one row per
# line carrying its count in `period`. A folded line says nothing per sample (no time, cpu or
# thread), so the cap only bounds memory: a 373-byte file of 9.9 M samples took 771 MB to
# import under a 10 M cap and over 2 GB with its reports (fuzzing round 9); at 1 M, 89 MB.
MAX_FOLDED_ROWS = 1_000_000
TID5_RE = re.compile(r" *\d+ ")    # perf's '%5d ' tid column
# the counts of a file must add up to a number the weights' int64 holds
MAX_FOLDED_TOTAL = (1 << 63) - 1
# perf's longest sample lines (32 brstack entries with dso names) are a few KiB: longer
# lines are not searched for trailing columns, which keeps a hostile line from costing
# quadratic time
MAX_TRAILER_LINE = 65536
MAX_TRAILERS = 256


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
        key = (addr, sym, dso, kernel)
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
            # perf script prints a frame's address, not where it lies in its DSO (that needs
            # the map, which the text does not give): unknown, so the report does not key a
            # symbol on addresses that differ between the processes running the same code
            "dso_addr": [None] * len(fr),
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


def _may_trail(t: str) -> bool:
    """Whether a line can end in a column printed after the ip (a cheap test first)."""
    return ("IPC:" in t or "N/A" in t or "insn:" in t or "ilen:" in t or "ABI:" in t
            or "/-/" in t or "/X/" in t
            or (len(t) > 2 and t[-1] in "BKMGTPEZY" and t[-2].isdigit()))


def strip_trailers(t: str) -> tuple[str, list[str]]:
    """The line without the columns perf prints after the sample's ip, and their kinds
    (TRAILER_NAMES keys), rightmost first. phys_addr, a bare hex number, is taken only after
    another of those columns (after the ip alone it is ip_frame's to tell)."""
    kinds: list[str] = []
    t = t.rstrip()
    if len(t) > MAX_TRAILER_LINE or not _may_trail(t):
        return t, kinds
    for _ in range(MAX_TRAILERS):
        m = TRAILER_RE.search(t)
        if m is None:
            # phys_addr ('%16x' right after the column before it, which may end in a space)
            # is printed between insn and the page sizes: taken when one of those is before it
            p = PHYS_RE.search(t)
            if p and 0 <= len(p.group(1)) - (16 - len(p.group(2))) <= 1 \
                    and TRAILER_RE.search(t[:p.start()]):
                kinds.append("phys")
                t = t[:p.start()]
                continue
            break
        kind = m.lastgroup
        if not (kind in ("brstack", "page") and kinds and kinds[-1] == kind):
            kinds.append(kind)           # one brstack column of many entries; page sizes
        t = t[:m.start()].rstrip()
    return t, kinds


def parse_frame(text: str) -> tuple[int, str | None, str | None] | None:
    """(address, symbol or None, dso or None) of 'ADDR [SYMBOL[+0xOFF]] [(DSO)]'."""
    m = FRAME_RE.match(text)
    if not m:
        return None
    body = m.group("body") or ""
    if body.endswith(" (inlined)"):        # perf script --inline: no dso is printed
        body = body[:-len(" (inlined)")].rstrip()
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


def ip_frame(line: str, start: int) -> tuple[tuple | None, int, int]:
    """The sample's own frame in line[start:] (the part of a sample line after the event),
    with how many columns before and after it were skipped. perf prints addr, weight... before
    the ip and phys_addr after it, each right-aligned in 16 columns ('%16x'; the ip ' %16x'):
    a column starts at a hex number outside a dso's parentheses that is preceded by at
    least 16 - len spaces (or at `start`). The ip is the last column with a symbol or dso,
    else the last column not exactly '%16x' after another (phys_addr), else the last."""
    first = _first_token(line, start)
    m = TOKEN_RE.match(line, first)
    if m is None:
        return None, 0, 0
    if HEX_RE.fullmatch(m.group()) and LATER_HEX_RE.search(line, m.end()) is None:
        # the common line: one 'ADDR [SYM] [(DSO)]' column, no other number after the address
        fr = parse_frame(line[first:])
        return fr, 0 if fr is not None else 1, 0
    starts: list[int] = []
    gaps: list[int] = []
    depth = 0
    prev_end = first
    for m in TOKEN_RE.finditer(line, start):
        tok = m.group()
        gap = m.start() - prev_end
        if depth == 0 and HEX_RE.fullmatch(tok) and (m.start() == first or gap >= max(1, 16 - len(tok))):
            starts.append(m.start())
            gaps.append(gap)
        depth = max(0, depth + tok.count("(") - tok.count(")"))
        prev_end = m.end()
    before = 1 if line[start:starts[0] if starts else len(line)].strip() else 0
    if not starts:
        return None, before, 0
    cols = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])]
    frames = [parse_frame(c) for c in cols]
    pick = None
    for i in range(len(cols) - 1, -1, -1):
        if frames[i] is not None and (frames[i][1] is not None or frames[i][2] is not None):
            pick = i
            break
    if pick is None:
        for i in range(len(cols) - 1, -1, -1):
            if frames[i] is not None and (i == 0 or gaps[i] != 16 - len(cols[i])):
                pick = i
                break
    if pick is None:
        return None, before + len(cols), 0
    return frames[pick], before + pick, len(cols) - 1 - pick


def _first_token(line: str, start: int) -> int:
    n = len(line)
    while start < n and line[start].isspace():
        start += 1
    return start


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


def _lookahead(f) -> Iterator[tuple[int, str, str | None]]:
    """(line number, line, next line or None)."""
    prev = None
    n = 0
    for n, line in enumerate(f, 1):
        if prev is not None:
            yield n - 1, prev, line
        prev = line
    if prev is not None:
        yield n, prev, None


def _comm16_ip(t: str) -> bool:
    """Whether t starts as perf prints '-F comm,ip': a '%16s ' comm, then ' %16x'."""
    if len(t) < 34 or t[16] != " " or t[15].isspace():
        return False
    m = TOKEN_RE.search(t, 17)
    return m is not None and HEX_RE.fullmatch(m.group()) is not None and _perf_ip_at(t, m.end(), True)


def _tid_column(s: str) -> bool:
    """Whether a line starts with perf's '%5d ' thread id: a header of a file without comm
    ('  301  ffffffff8175336a'), not a srcline, although a tid of three digits or less
    leaves two spaces before it as a srcline does (pids wrap at 32768 on a busy machine)."""
    m = TID5_RE.match(s)
    return m is not None and m.end() == 6


def _ip_column(t: str, start: int) -> bool:
    """Whether the hex number at t[start:] is an address as perf prints it without a
    callchain (' %16x': at least 17 - len spaces before it), or long enough to be one: a
    line of prose ('... nor a report') is no sample without pid."""
    n = len(TOKEN_RE.match(t, start).group())
    ws = start - len(t[:start].rstrip())
    return ws >= 17 - n or n >= 8


def _perf_ip_at(t: str, end: int, comm: bool) -> bool:
    """Whether the number ending at `end` sits where perf prints an ip without callchain:
    ' %16x' after the line start or after a '%16s ' comm (so `-F ip,sym` and
    `-F comm,ip,sym` lines with a decimal-looking address are not read as a pid)."""
    return end == (34 if comm else 17) and t[end - 17] == " " and (not comm or t[16] == " ")


# perf's sample header, field by field (builtin-script.c perf_sample__fprintf_start and
# process_event): '%5d ' tid or pid, '%5d/%-5d ' pid/tid, '[%03d] ' cpu, misc, tod,
# '%5lu.%06lu: ' time, '%10lu ' period, '%*s: ' event. The exact widths tell the fields
# apart where a loose reading cannot (a thread named '4242', 'my thread 7', 'x [001] y').
S_ID = re.compile(r"( *)(-?\d{1,7})(?:/(-?\d{1,7}))?(?= |$)")    # pid_max is 2^22
S_CPU = re.compile(r"\[(\d{3,})\](?= |$)")
S_MISC = re.compile(r"[KUHGg]{1,5}(?= |$)")    # perf prints M, E, S, p for other records
S_TOD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?= |$)")
S_TIME = re.compile(r"( *)(\d+)\.\d+:(?= |$)")
S_PERIOD = re.compile(r"( *)(\d+)(?= |$)")
S_EVENT = re.compile(r" *([^\s\d]\S*?):(?= |$)")
S_FIELDS = ("comm", "pid", "cpu", "misc", "tod", "time", "period", "event")
AMBIGUOUS_COMM = ("sample lines whose thread name (comm, which may hold spaces and digits) "
                  "could end at more than one place: read with the name the other lines' "
                  "columns fit, else the longest")


class _Hit:
    """A sample header read field by field, with the parts of re.Match the reader uses."""
    __slots__ = ("g", "rest_at", "layout")

    def __init__(self, g: dict, rest_at: int, layout: tuple):
        self.g, self.rest_at, self.layout = g, rest_at, layout

    def group(self, name: str):
        return self.g.get(name)

    def groupdict(self) -> dict:
        return self.g

    def start(self, name: str) -> int:
        assert name == "rest"
        return self.rest_at


def _strict_fields(t: str, pos: int) -> tuple[dict, int] | None:
    """The header fields perf prints after the comm, read from t[pos:] at perf's widths;
    the fields and where the rest of the line starts."""
    g: dict = {}
    n = len(t)
    c = t[pos:pos + 1]
    if c and c in " -0123456789":
        m = S_ID.match(t, pos)
        if m:
            sp, num, tid = m.groups()
            end = m.end()
            if tid is not None and end < n:         # '%-5d ': the tid padded on its right
                pad = max(0, 5 - len(tid))
                end = end + pad if t[end:end + pad + 1] == " " * (pad + 1) else -1
            if len(sp) == max(0, 5 - len(num)) and end >= 0:
                g["pid"], g["tid"] = num, tid
                pos = end + 1 if end < n else end
                c = t[pos:pos + 1]
    if c == "[":
        m = S_CPU.match(t, pos)
        if m:
            g["cpu"] = str(int(m.group(1)))
            pos = m.end() + 1
            c = t[pos:pos + 1]
    if c and c in "KUHGg":
        m = S_MISC.match(t, pos)
        if m:
            g["misc"] = m.group()      # the letters, then '%*s' to 6 columns
            pos = min(n, pos + max(6, len(m.group()) + 1))
            if t[m.end():pos].strip():
                return None
            c = t[pos:pos + 1]
    if c.isdigit():
        m = S_TOD.match(t, pos)
        if m:
            g["tod"] = m.group()
            pos = m.end() + 1
            c = t[pos:pos + 1]
    if c == " " or c.isdigit():
        m = S_TIME.match(t, pos)
        if m and len(m.group(1)) == max(0, 5 - len(m.group(2))):
            g["time"] = t[m.end(1):m.end() - 1]
            pos = m.end() + 1
            c = t[pos:pos + 1]
        m = S_PERIOD.match(t, pos)
        if m and len(m.group(1)) == max(0, 10 - len(m.group(2))):
            g["period"] = m.group(2)
            pos = m.end() + 1
            c = t[pos:pos + 1]
    if c and not c.isdigit():
        m = S_EVENT.match(t, pos)
        if m:
            g["event"] = m.group(1)
            pos = m.end() + 1
    pos = min(pos, n)
    rest = _first_token(t, pos)
    if not ("pid" in g or "cpu" in g or "time" in g or "event" in g or "misc" in g):
        # a period alone: where perf prints it, before the end, the ip (' %16x'), or the
        # addr or weight column ('%16x', '%16u') before the ip
        if "period" not in g:
            return None
        if rest < n:
            tok = TOKEN_RE.match(t, rest)
            if not (tok.end() in (pos + 16, pos + 17) and HEX_RE.fullmatch(tok.group())):
                return None
    return g, rest


def strict_header(t: str, callchain: bool) -> list[_Hit]:
    """The readings of a sample header line t at perf's exact widths, one per place the
    comm can end: '%16s ' without a callchain, '%s ' before one, or no comm. A reading
    without callchain must end in nothing, the ip column(s) or, after an event, any text
    (tracepoint fields)."""
    splits: list[int | None] = [None]
    if callchain:
        # a name ends before the single space perf prints after it: not inside a run of
        # spaces (that would be a name ending in a space before a padded field)
        splits += [p for p in range(1, min(len(t) - 1, 17))
                   if t[p] == " " and (t[p - 1] != " " or t[p + 1] != " ")]
    elif len(t) > 16 and t[16] == " ":
        splits.append(16)
    out = []
    for p in splits:
        r = _strict_fields(t, 0 if p is None else p + 1)
        if r is None:
            continue
        g, rest_at = r
        if p is not None:
            # perf prints the name as it is ('%s') or right-aligned ('%16s': the leading
            # spaces are padding)
            g["comm"] = t[:p] if callchain else t[:p].lstrip()
            if not g["comm"].strip():
                continue
        rest = rest_at < len(t)
        if rest and not callchain and "event" not in g and ip_frame(t, rest_at)[0] is None:
            continue
        for k in ("comm", "pid", "tid", "cpu", "misc", "tod", "time", "period", "event"):
            g.setdefault(k, None)
        g["rest"] = t[rest_at:] if rest else None
        g["vm"] = None
        layout = tuple(g[k] is not None for k in S_FIELDS) + (g["tid"] is not None,)
        out.append(_Hit(g, rest_at, layout))
    return out


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
    head = None          # the frame on cur's header line: its ip, or (with -g) an addr column
    head_after = 0       # the columns after it on the line: phys_addr, or (with -g) weight
    nopid: bool | None = None   # whether the file's samples have no pid and tid
    prev = None          # the previous line: "frame" (tab), "sframe" (spaces), "hframe" (a
    #                      header with its ip), "header", None (anything else)
    skip: Counter = Counter()
    layouts: Counter = Counter()     # the header layouts (strict_header) read one way only
    ambiguous = [0]                  # headers whose comm could end at several places
    folded_counts: list[int] = []

    def flush():
        nonlocal cur, frames, kern, head, head_after
        if cur is None:
            return
        if head is not None:
            frames_add(b, head, frames, kern)
            if head_after:
                skip[TRAILER_NAMES["phys"]] += head_after
        comm, pid, tid, cpu, tm, period, ev = cur
        c = b.cols
        c["comm"].append(comm); c["pid"].append(pid); c["tid"].append(tid)
        c["cpu"].append(cpu); c["time"].append(tm); c["period"].append(period)
        c["event"].append(ev)
        c["stack_id"].append(b.stack(frames, kern))
        cur, frames, kern, head, head_after = None, [], [], None, 0

    def bad(lineno: int, line: str, why: str) -> FormatError:
        return FormatError(path, f"line {lineno}: {why}: {line.strip()[:80]!r}", HINT)

    def strict(t: str, nxt: str | None, after_chain: bool) -> _Hit | None:
        """The header read at perf's exact widths (strict_header), when it reads one way
        or one way fits the layout of the file's other lines; else None (the loose reading
        of header() follows)."""
        nonlocal nopid
        if len(t) > MAX_TRAILER_LINE:
            return None
        hits = strict_header(t, nxt is not None and nxt.startswith("\t"))
        if after_chain:      # after a callchain: a header only with perf's later fields
            hits = [h for h in hits if h.g["time"] or h.g["event"] or h.g["cpu"]]
        if nopid is not None:
            hits = [h for h in hits if (h.g["pid"] is None) == nopid]
        if not hits:
            return None
        if len(hits) == 1:
            h = hits[0]
            layouts[h.layout] += 1
        else:
            known = [h for h in hits if h.layout in layouts]
            if known:
                hits = known
            # the most fields, then a name without spaces at its ends and not a number
            # (rather a thread id), then the longest
            rank = [(sum(h.layout), h.g["comm"] is None or (h.g["comm"] == h.g["comm"].strip()
                                                            and not h.g["comm"].isdigit()),
                     len(h.g["comm"] or "")) for h in hits]
            best = max(rank)
            h = hits[rank.index(best)]
            if sum(1 for r in rank if r[:2] == best[:2]) > 1:
                ambiguous[0] += 1
                return h                # no evidence of the file's layout
        nopid = h.g["pid"] is None
        return h

    def header(s: str, t: str, nxt: str | None, after_chain: bool):
        """The match of a sample header line (trailing columns stripped: t), or None; for
        a line holding only a comm (-g without pid/tid: 'comm ' then the callchain), the
        comm. Decides, and keeps, whether the file's samples have a pid. After a callchain
        only a line with perf's header fields (time, event...) is a header: the others are
        srcline lines, or the columns printed after the chain."""
        nonlocal nopid
        h = strict(t, nxt, after_chain)
        if h is not None:
            return h
        n = None
        if nopid is not True:
            m = SAMPLE_RE.match(t)
            if m and m.group("comm") and (TIME_IN_RE.search(m.group("comm"))
                                          or COMM_TAIL_RE.search(m.group("comm"))):
                m = None          # 'comm [K] [TIME:] PERIOD event:': the period is no pid
            if m:
                if m.group("tid") or m.group("cpu") or m.group("misc") or m.group("tod") \
                        or m.group("time") or m.group("event"):
                    nopid = False
                    return m
                # '[comm] NUMBER [rest]': a tid, or a number of a file without one (the ip,
                # a period or weight); comm is at most 15 characters, 16 printed
                comm = m.group("comm")
                # perf's '%16s %5d ': the layout tells a comm from a srcline ('  x.c:12  0')
                comm16 = comm is not None and m.end("comm") == 16 and t[0] == " " \
                    and m.end("pid") == 17 + max(5, len(m.group("pid")))
                if after_chain and not comm16:
                    return None
                n = NOPID_RE.match(t) if nopid is None else None
                if (comm is None or len(comm.strip()) <= 16) \
                        and not _perf_ip_at(t, m.end("pid"), comm is not None) \
                        and not (n and (n.group("cpu") or n.group("misc") or n.group("tod")
                                        or n.group("time") or n.group("event"))):
                    if m.group("rest") is None:
                        return m          # '[comm] TID': -F tid, -F comm,tid
                    if ip_frame(t, m.start("rest"))[0] is not None:
                        nopid = False
                        return m
        if nopid is False or after_chain:
            return None
        m = n or NOPID_RE.match(t)
        if m and m.group("comm") is None and m.group("rest") is not None \
                and m.start("rest") == _first_token(t, 0) and _comm16_ip(t):
            m = NOPID_COMM_RE.match(t) or m      # '%16s ' comm, then ' %16x' ip
        if m:
            if m.group("cpu") or m.group("misc") or m.group("tod") or m.group("time") \
                    or m.group("event") or (m.group("rest") is not None
                                            and _ip_column(t, m.start("rest"))
                                            and ip_frame(t, m.start("rest"))[0] is not None):
                nopid = True
                return m
        if s.endswith(" ") and s.strip() and (
                (nxt is not None and nxt.startswith("\t") and parse_frame(nxt))
                or not s.endswith("  ") and (nopid or (len(s) == 17 and s[0] == " "))):
            nopid = True
            return s.strip()
        return None

    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        from ..errors import ReadError
        raise ReadError(path, f"cannot open: {e.strerror}") from e
    with f:
        done = 0
        for lineno, line, nxt in _lookahead(f):
            done += len(line)
            if progress and lineno % 200_000 == 0:
                progress("parse", done, size)
            s = line.rstrip("\n")
            if not s.strip():
                if mode == "script":
                    flush()
                prev = None
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
                if fr is None:
                    skip[SKIP_LINES] += 1
                elif cur is None:
                    if nopid is False:
                        skip[SKIP_LINES] += 1
                    else:
                        # -F ip,sym with -g: the header line is empty
                        mode, nopid = "script", True
                        if "samples" not in order:
                            order.append("samples")
                        cur = (None, None, None, None, None, None, "samples")
                        frames_add(b, fr, frames, kern)
                else:
                    if head is not None:
                        # the header's frame was a column before the ip (addr): the ip is
                        # this callchain
                        skip[SKIP_BEFORE] += 1 + head_after
                        head, head_after = None, 0
                    frames_add(b, fr, frames, kern)
                prev = "frame"
                continue
            if mode is None and ";" in s and FOLDED_RE.match(s):
                mode = "folded"
            if mode == "folded":
                m = FOLDED_RE.match(s)
                if not m:
                    raise bad(lineno, s, "line does not fit the folded format of this file")
                if len(m.group("count")) > 19:
                    raise bad(lineno, s, "a count above 2^63 - 1 samples")
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
                c["comm"].append(comm)
                c["stack_id"].append(b.stack(fids, ks))
                folded_counts.append(int(m.group("count")))
                continue
            # perf script: a sample header, a line of columns after a callchain, srcline...
            if s[0] == "|" and mode == "script":
                skip[SKIP_LINES] += 1               # srccode: '|LINE source text'
                prev = None
                continue
            t, kinds = strip_trailers(s)
            for k in kinds:
                skip[TRAILER_NAMES[k]] += 1
            if not t.strip():
                prev = None                         # columns printed after a callchain
                if mode == "script":
                    continue
                raise bad(lineno, s, "not a perf script sample header, stack line or folded stack")
            if "PERF_RECORD_" in t and RECORD_RE.search(t):
                flush()                             # --show-task-events and the like
                mode = "script"
                skip[SKIP_RECORDS] += 1
                prev = None
                continue
            after_chain = prev == "frame"
            srcline_like = prev in ("hframe", "sframe") and s.startswith("  ") \
                and not s[2:3].isspace() and not _tid_column(s)
            m = header(s, t, nxt, after_chain or srcline_like)
            if m is not None:
                mode = "script"
                flush()
                if isinstance(m, str):              # a comm alone: its callchain follows
                    if "samples" not in order:
                        order.append("samples")
                    cur = (m, None, None, None, None, None, "samples")
                    prev = "header"
                    continue
                ev = m.group("event") or "samples"
                if ev not in order:
                    order.append(ev)
                g = m.groupdict()
                pid_s, tid_s = g.get("pid"), g.get("tid")
                tid = int(tid_s or pid_s) if pid_s else None
                comm = (g["comm"] if isinstance(m, _Hit) else g["comm"].strip()) if g["comm"] \
                    else (f":{tid}" if tid is not None else None)
                cur = (comm, int(pid_s) if tid_s else None, tid,
                       int(g["cpu"]) if g["cpu"] else None,
                       _ns(g["time"]) if g["time"] else None,
                       int(g["period"]) if g["period"] else None, ev)
                why = _out_of_range(cur)
                if why:
                    raise bad(lineno, s, why)
                if g["misc"]:
                    skip[SKIP_MISC] += 1
                if g["tod"]:
                    skip[SKIP_TOD] += 1
                prev = "header"
                if g["rest"] is not None:
                    fr, n_before, n_after = ip_frame(t, m.start("rest"))
                    if fr is None:
                        # a column the model has no place for, and no address
                        skip[SKIP_UNREAD] += 1
                    else:
                        head = fr
                        prev = "hframe"
                    if n_before and fr is not None:
                        skip[SKIP_BEFORE] += n_before
                    head_after = n_after
                continue
            if mode == "script":
                if after_chain and HEX_RE.fullmatch(t.strip()):
                    skip[TRAILER_NAMES["phys"]] += 1    # phys_addr alone after the chain
                    prev = None
                    continue
                if s[0] == " " and cur is not None and nopid is not True and not after_chain \
                        and not srcline_like and (fr := parse_frame(s)) is not None:
                    if head is not None:
                        frames_add(b, head, frames, kern)
                        skip[TRAILER_NAMES["phys"]] += head_after
                        head, head_after = None, 0
                    frames_add(b, fr, frames, kern)     # a frame indented with spaces
                    prev = "sframe"
                else:
                    skip[SKIP_LINES] += 1               # srcline, a line of raw data...
                    prev = None
                continue
            raise bad(lineno, s, "not a perf script sample header, stack line or folded stack")
        flush()
    if mode is None:
        raise FormatError(path, "no samples found (empty or comments only)", HINT)

    stacks, frames_t = b.tables()
    cols = b.cols
    if mode == "folded":
        samples = _folded_samples(path, meta, cols, folded_counts)
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
        # perf report prints the events in the order of the recording's event list (the
        # '# event :' lines of `perf script --header`); without them, in order of the first
        # sample (the text says no more)
        pos = {e["name"]: i for i, e in reversed(list(enumerate(header_events))) if e.get("name")}

        def at(name: str) -> int:
            i = pos.get(name, pos.get(name.split(":")[0]))
            return len(pos) if i is None else i
        order.sort(key=at)        # stable: events not in the header keep their order, last
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
    meta["skipped"].update(sorted(skip.items()))
    if ambiguous[0]:
        meta.setdefault("notes", []).append(f"{ambiguous[0]} {AMBIGUOUS_COMM}")
    meta["symbolisation"] = {"kernel": "as printed by perf script",
                             "unresolved_frames": sum(1 for s in frames_t.column("symbol").to_pylist()
                                                      if s is None)}
    return Profile(meta, samples, stacks, frames_t)


def _folded_samples(path: str, meta: dict, cols: dict, counts: list[int]) -> pa.Table:
    """The sample rows of folded stacks: one per counted sample when the file holds at most
    MAX_FOLDED_ROWS, else one per line with its count as period (event unit "samples")."""
    total = sum(counts)
    if total > MAX_FOLDED_TOTAL:
        raise FormatError(path, f"the folded counts add up to {total}, above 2^63 - 1 samples",
                          "scale the counts down (every count divided by the same factor "
                          "keeps the shares)")
    n_lines = len(counts)
    if total <= MAX_FOLDED_ROWS:
        cnt = np.array(counts, dtype=np.int64)
        # one row per sample, taken from the per-line values by index (no Python objects)
        idx = pa.array(np.repeat(np.arange(n_lines, dtype=np.int64), cnt))
        n = len(idx)
        period = pa.array(np.ones(n, np.uint64), pa.uint64())
    else:
        cnt = np.array(counts, dtype=np.uint64)
        idx = pa.array(np.flatnonzero(cnt))          # a line counting 0 samples is no row
        n = len(idx)
        period = pa.array(cnt, pa.uint64()).take(idx)
        meta.setdefault("notes", []).append(
            f"folded counts add up to {total:,} samples, more than {MAX_FOLDED_ROWS:,}: one "
            f"row per line ({n:,}), its count as the period of event 'samples'")
    return pa.table({
        "time": pa.nulls(n, pa.uint64()), "cpu": pa.nulls(n, pa.int32()),
        "pid": pa.nulls(n, pa.int32()), "tid": pa.nulls(n, pa.int32()),
        "comm": pa.array(cols["comm"], pa.string()).take(idx),
        "event": pa.array(["samples"] * n_lines, pa.string()).take(idx),
        "period": period,
        "stack_id": pa.array(cols["stack_id"], pa.int32()).take(idx),
    })
