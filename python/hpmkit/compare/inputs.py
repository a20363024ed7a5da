"""Reading the sides of a comparison: profiles, directories of them, and context-table files.

Context-table TSV (`*.ctx.tsv`, written by `hpmkit compare --export-contexts`) is the compact,
diff-friendly form of a side: one line per distinct stack with its summed costs.

    # hpmkit-contexts 1
    # isa: riscv64
    # kernel: 6.1.192
    workload<TAB>nkernel<TAB>samples<TAB>cycles<TAB>instructions<TAB>stack
    pipe<TAB>7<TAB>41<TAB>410000<TAB>256000<TAB>_start;main;__libc_read;ret_from_syscall;...

`stack` is root -> leaf, ';'-separated (the folded-stack convention); nkernel, cycles and
instructions may be '-' (unknown / not recorded).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError, ReadError, UsageError
from .contexts import ContextTable
from .names import canonical_isa

MAGIC = "# hpmkit-contexts 1"
COLUMNS = ["workload", "nkernel", "samples", "cycles", "instructions", "stack"]
PROFILE_SUFFIXES = (".hpmprof",)
RAW_SUFFIXES = (".data", ".perf", ".script", ".txt")


def read_ctx(path: Path) -> ContextTable:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReadError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    lines = text.splitlines()
    if not lines or lines[0].strip() != MAGIC:
        raise FormatError(path, f"line 1 is not '{MAGIC}'", "write it with hpmkit compare --export-contexts")
    meta: dict[str, str] = {}
    t: ContextTable | None = None
    header_seen = False
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        if line.startswith("#"):
            k, sep, v = line[1:].partition(":")
            if sep:
                meta[k.strip()] = v.strip()
            continue
        cells = line.split("\t")
        if not header_seen:
            if cells != COLUMNS:
                raise FormatError(path, f"line {no}: header must be {'<TAB>'.join(COLUMNS)}")
            header_seen = True
            t = ContextTable(canonical_isa(meta.get("isa")) or meta.get("isa"), meta.get("kernel"), str(path))
            continue
        if len(cells) != len(COLUMNS):
            raise FormatError(path, f"line {no}: {len(cells)} cells, need {len(COLUMNS)}",
                              "separate columns with single tabs")
        try:
            nk = None if cells[1] == "-" else int(cells[1])
            n = float(cells[2])
            cyc = None if cells[3] == "-" else float(cells[3])
            ins = None if cells[4] == "-" else float(cells[4])
        except ValueError:
            raise FormatError(path, f"line {no}: nkernel/samples/cycles/instructions must be numbers or '-'") from None
        if n < 0 or (nk is not None and nk < 0) or any(v is not None and (v < 0 or not math.isfinite(v)) for v in (cyc, ins)):
            raise FormatError(path, f"line {no}: negative or non-finite count")
        if not cells[5]:
            raise FormatError(path, f"line {no}: empty stack")
        t.add(cells[0], cells[5].split(";"), nk, n, cyc, ins)
    if t is None:
        raise FormatError(path, "no header line", "write it with hpmkit compare --export-contexts")
    if not t.isa:
        raise FormatError(path, "no '# isa:' line", "add '# isa: riscv64' (or aarch64, x86_64)")
    return t


def write_ctx(t: ContextTable, path: Path) -> None:
    """Aggregate equal (workload, stack, nkernel) rows and write atomically."""
    agg: dict[tuple, list[float]] = {}
    for wl, st, nk, c in zip(t.workload, t.stack, t.nkernel, t.costs):
        v = agg.setdefault((wl, st, nk), [0.0, 0.0, 0.0])
        for i in range(3):
            v[i] += c[i]
    out = [MAGIC, f"# isa: {t.isa}", f"# kernel: {t.kernel or '-'}", "\t".join(COLUMNS)]
    fmt = lambda x: f"{x:.0f}" if float(x).is_integer() else repr(float(x))  # noqa: E731
    for (wl, st, nk), v in sorted(agg.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        has = t.has.get(wl, set())
        out.append("\t".join([wl, "-" if nk is None else str(nk), fmt(v[0]),
                              fmt(v[1]) if "cycles" in has else "-",
                              fmt(v[2]) if "instructions" in has else "-",
                              ";".join(f if f is not None else "[unknown]" for f in st)]))
    atomic_write(path, "\n".join(out) + "\n")


def atomic_write(path: Path, text: str, option: str | None = None) -> None:
    """Whole or not at all, missing folders made; a failure is one line naming the file and
    `option` (hpmkit.outputs)."""
    from ..outputs import write_text
    write_text(path, text, option)


def expand(args: list[str]) -> list[Path]:
    """Files and profile directories named on the command line; directories that are not
    profiles are searched one level deep for profiles, raw recordings and context tables."""
    out: list[Path] = []
    for a in args:
        p = Path(a)
        if not p.exists():
            raise ReadError(p, "no such file or directory")
        if p.is_dir() and not p.name.endswith(PROFILE_SUFFIXES):
            found = sorted(c for c in p.iterdir() if _usable(c))
            if not found:
                raise ReadError(p, "directory holds no profiles (*.hpmprof, perf.data, *.ctx.tsv)",
                                "record with hpm record, or name the files")
            out += found
        else:
            out.append(p)
    return out


def _usable(p: Path) -> bool:
    n = p.name
    if n.startswith("."):
        return False
    if p.is_dir():
        return n.endswith(PROFILE_SUFFIXES)
    return n.endswith(".ctx.tsv") or n.endswith(RAW_SUFFIXES) or n == "perf.data"


@dataclass(frozen=True)
class Select:
    """Which samples of a profile count: --comm and --pid (both must hold when both are given)."""
    comms: frozenset[str] | None = None
    pids: frozenset[int] | None = None

    @classmethod
    def parse(cls, comms: str | None, pids: str | None) -> "Select | None":
        if comms is None and pids is None:
            return None
        c = frozenset(x.strip() for x in comms.split(",") if x.strip()) if comms is not None else None
        if c is not None and not c:
            raise UsageError("--comm: give at least one command name")
        p = None
        if pids is not None:
            try:
                p = frozenset(int(x) for x in pids.split(",") if x.strip())
            except ValueError:
                raise UsageError(f"--pid: '{pids}' is not a comma-separated list of process ids") from None
            if not p:
                raise UsageError("--pid: give at least one process id")
        return cls(c, p)

    def describe(self) -> str:
        parts = []
        if self.comms is not None:
            parts.append("command " + ",".join(sorted(self.comms)))
        if self.pids is not None:
            parts.append("pid " + ",".join(str(p) for p in sorted(self.pids)))
        return " and ".join(parts)


def load_side(paths: list[Path], progress: Callable[..., None] | None = None,
              stage: str = "reading profiles", select: Select | None = None) -> ContextTable:
    """All files of one side into one table; each profile is one workload.
    progress(stage, item, done, total) before each file. `select`: --comm/--pid."""
    side: ContextTable | None = None
    seen: dict[str, Path] = {}
    for i, p in enumerate(paths):
        if progress:
            progress(stage, p.name, i, len(paths))
        t = _load_one(p, select)
        for wl in dict.fromkeys(t.workload):
            if wl in seen:
                raise UsageError(f"{p}: workload '{wl}' is also in {seen[wl]}; give one profile per "
                                 "workload per side (set meta.workload or rename the file)")
            seen.setdefault(wl, p)
        if side is None:
            side = t
        else:
            side.extend(t)
    if side is None:
        raise UsageError("a side of the comparison has no input files")
    if select is not None and not len(side.workload):
        why = next((n for n in side.notes if ": no sample of " in n), "")
        raise UsageError(f"--comm/--pid: no sample of {select.describe()} in {len(paths)} profile(s) of "
                         f"this side" + (f" ({why[why.index('(') + 1:]}" if "(" in why else ""))
    return side


def _load_one(p: Path, select: Select | None = None) -> ContextTable:
    if p.name.endswith(".ctx.tsv"):
        if select is not None:
            raise UsageError(f"{p}: a context table keeps no commands or process ids, so --comm/--pid "
                             "cannot choose in it; give the profiles it was made from")
        return read_ctx(p)
    try:
        from .. import profile as prof  # written by the ingest component
    except ImportError:
        raise UsageError(f"{p}: reading profiles needs hpmkit.profile, which this install lacks; "
                         "give context tables (*.ctx.tsv) instead") from None
    from .adapter import from_profile
    if p.is_dir():
        pr = prof.Profile.load(p)
    else:
        pr = prof.ingest(p)
    stem = p.name.removesuffix(".hpmprof").split(".")[0] if p.name != "perf.data" else p.parent.name
    return from_profile(pr, label=str(p), workload=(pr.meta or {}).get("workload") or stem, select=select)
