"""The neutral input of `hpmkit compare`: a context table per side, and its reduction to contexts.

A ContextTable holds rows of (workload, stack, nkernel, samples, cycles, instructions) for one
ISA. `stack` is a tuple of function names ordered **root -> leaf** (outermost caller first,
sampled function last), because matching walks from the root; the profile model stores stacks
leaf-first and the adapter (adapter.py) reverses them. `nkernel` is how many frames at the
leaf end are kernel frames (None: unknown, then the split is found from the ISA's entry frames).

`contexts(table)` normalises names, splits user/kernel, drops the entry frames and sums costs
per (workload, space, path): the "contexts" the method matches across ISAs.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from .names import ENTRY_ONLY, EntryFrames, KernelSymbols, Normaliser, canonical_isa

COSTS = ("samples", "cycles", "instructions")  # columns of every cost vector, in this order
KERNEL, USER = "kernel", "user"


@dataclass
class ContextTable:
    isa: str | None
    kernel: str | None = None
    label: str = ""                    # what the user gave (file names), for messages
    workload: list[str] = field(default_factory=list)
    stack: list[tuple[str, ...]] = field(default_factory=list)
    nkernel: list[int | None] = field(default_factory=list)
    costs: list[tuple[float, float, float]] = field(default_factory=list)
    has: dict[str, set[str]] = field(default_factory=dict)  # workload -> metrics its rows carry
    notes: list[str] = field(default_factory=list)   # skipped / lost data, shown in the report

    def add(self, workload: str, stack: Iterable[str], nkernel: int | None, samples: float = 1,
            cycles: float | None = None, instructions: float | None = None) -> None:
        self.workload.append(workload)
        self.stack.append(tuple(stack))
        self.nkernel.append(nkernel)
        has = self.has.setdefault(workload, set())
        if cycles is not None:
            has.add("cycles")
        if instructions is not None:
            has.add("instructions")
        self.costs.append((samples, cycles or 0.0, instructions or 0.0))

    @classmethod
    def from_rows(cls, isa: str | None, rows: Iterable[Mapping], kernel: str | None = None,
                  label: str = "") -> "ContextTable":
        t = cls(canonical_isa(isa) or isa, kernel, label)
        for r in rows:
            t.add(r["workload"], r["stack"], r.get("nkernel"), r.get("samples", 1),
                  r.get("cycles"), r.get("instructions"))
        return t

    def extend(self, other: "ContextTable") -> None:
        """Append another recording of the same ISA (one profile per workload)."""
        if other.isa != self.isa:
            raise UsageError(f"{other.label}: ISA {other.isa} differs from {self.label}'s {self.isa}; "
                             "put each ISA's profiles on its own side of --vs")
        self.workload += other.workload
        self.stack += other.stack
        self.nkernel += other.nkernel
        self.costs += other.costs
        for wl, metrics in other.has.items():
            self.has.setdefault(wl, set()).update(metrics)
        self.notes += other.notes
        self.kernel = self.kernel or other.kernel
        # name the side after what its profiles have in common, not after the first one
        if self.label and other.label and self.label != other.label:
            import os
            a, b = self.label.split(" (")[0], other.label.split(" (")[0]
            if os.path.isabs(a) != os.path.isabs(b):    # commonpath refuses a mix
                a, b = os.path.abspath(a), os.path.abspath(b)
            common = os.path.commonpath([a, b])
            n = len(set(self.workload))
            self.label = f"{common or '.'} ({n} workloads)"


@dataclass
class Contexts:
    """One side reduced to contexts: {workload: {(space, path): cost vector}} plus totals."""

    isa: str | None
    kernel: str | None
    label: str
    by_workload: dict[str, dict[tuple[str, tuple[str, ...]], np.ndarray]]
    totals: dict[str, np.ndarray]              # per workload, all samples (user + kernel)
    entry_roles: dict[str, dict[str, float]]   # per workload: role -> samples entering that way
    has: dict[str, set[str]]
    notes: list[str]


def split_kernel(stack, nkernel: int | None, entry: EntryFrames) -> int:
    """Index in the root->leaf `stack` where the kernel part starts (len(stack): no kernel part)."""
    if nkernel is not None:
        return len(stack) - max(0, min(nkernel, len(stack)))
    for i, f in enumerate(stack):  # outermost entry frame: everything from it on is kernel
        if f in entry.roles:
            return i
    return len(stack)


def contexts(table: ContextTable, normalise: Normaliser | None = None,
             entry: EntryFrames | None = None, ksyms: KernelSymbols | None = None,
             progress=None) -> Contexts:
    """progress(done, total): rows of `table` reduced so far (every few thousand rows)."""
    from ..profile.symbols import is_marker
    normalise = normalise or Normaliser.load()
    entry = entry or EntryFrames.load(table.isa, table.kernel)
    ksyms = ksyms or KernelSymbols.load(table.isa, table.kernel)
    roles = entry.roles
    rename = ksyms.rename
    by_wl: dict[str, dict] = {}
    totals: dict[str, list[float]] = {}
    entries: dict[str, dict[str, float]] = {}
    # (raw stack, nkernel) -> ((space, path), role, section markers left in it); stacks repeat a lot
    memo: dict[tuple, tuple] = {}
    names_memo = normalise._memo
    marked: dict[str, float] = {}      # marker name -> samples whose kernel stack still holds it
    marker_memo: dict[str, bool] = {}
    nrows = len(table.workload)
    for row, (wl, raw, nk, cost) in enumerate(zip(table.workload, table.stack, table.nkernel, table.costs)):
        if progress is not None and not row & 4095:
            progress(row, nrows)
        key = (raw, nk)
        got = memo.get(key)
        if got is None:
            names = [names_memo[f] if f in names_memo else normalise(f) for f in raw]
            cut = split_kernel(names, nk, entry)
            kpart, role = [rename.get(f, f) for f in names[cut:]], None
            i = 0
            while i < len(kpart) and kpart[i] in roles:  # drop entry code at the root end
                role = roles[kpart[i]]
                i += 1
            if kpart:
                path = _collapse(kpart[i:], raw[cut + i:]) or (ENTRY_ONLY,)
                marks = []
                for f in kpart:
                    m = marker_memo.get(f)
                    if m is None:
                        m = marker_memo[f] = is_marker(f)
                    if m:
                        marks.append(f)
                got = ((KERNEL, path), role, tuple(marks))
            else:
                got = ((USER, _collapse(names, raw) or ("[no-stack]",)), None, ())
            memo[key] = got
        ctx, role, markers = got
        for m in markers:
            marked[m] = marked.get(m, 0.0) + cost[0]
        d = by_wl.get(wl)
        if d is None:
            d = by_wl[wl] = {}
            totals[wl] = [0.0, 0.0, 0.0]
        acc = d.get(ctx)
        if acc is None:
            d[ctx] = [cost[0], cost[1], cost[2]]
        else:
            acc[0] += cost[0]
            acc[1] += cost[1]
            acc[2] += cost[2]
        tot = totals[wl]
        tot[0] += cost[0]
        tot[1] += cost[1]
        tot[2] += cost[2]
        if role is not None:
            r = entries.setdefault(wl, {})
            r[role] = r.get(role, 0.0) + cost[0]
    if progress is not None:
        progress(nrows, nrows)
    # cost vectors: numpy arrays of (samples, cycles, instructions), built once at the end
    by_wl = {wl: {k: np.array(v, dtype=np.float64) for k, v in d.items()} for wl, d in by_wl.items()}
    totals = {wl: np.array(v, dtype=np.float64) for wl, v in totals.items()}
    notes = list(table.notes)
    if marked:
        top = sorted(marked.items(), key=lambda kv: (-kv[1], kv[0]))
        notes.append(
            f"kernel frames named after a section marker ({', '.join(f'{m} {n:.0f}' for m, n in top[:4])}"
            f"{' ...' if len(top) > 4 else ''} samples): the recording's symbol copy had no other name "
            f"there, so the function at that address is hidden; add a row for kernel "
            f"{table.kernel or '?'} to data/compare/kernel-symbols.tsv, or import with the full "
            "kallsyms (hpm record --kallsyms all)")
    return Contexts(table.isa, table.kernel, table.label, by_wl, totals, entries, {w: set(m) for w, m in table.has.items()},
                    notes)


def _collapse(names: list[str], raw: tuple[str, ...]) -> tuple[str, ...]:
    """Merge neighbours that normalisation made equal (__se_sys_read -> __do_sys_read both become
    sys_read); true recursion (equal raw names) is kept."""
    if len(set(names)) == len(names):
        return tuple(names)
    out: list[str] = []
    prev_raw = None
    for n, r in zip(names, raw):
        if out and out[-1] == n and r != prev_raw:
            prev_raw = r
            continue
        out.append(n)
        prev_raw = r
    return tuple(out)
