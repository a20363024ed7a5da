"""Profile (hpmkit.profile, contract version 1) -> ContextTable.

Weights: `value:<cycles event>` / `value:<instructions event>` group-read deltas when the
samples carry them (each delta is charged to the stack of the sample that read it), else the
period of samples whose sampling event is cycles / instructions. `samples` counts the samples
of the first sampling event in meta.events (one count per sampling tick, not per event).
Stacks are leaf-first in the profile and become root->leaf here; nkernel comes along.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import FormatError
from .contexts import ContextTable
from .names import canonical_isa

ALIASES = {
    "cycles": {"cycles", "cpu-cycles", "cpu_cycles", "papi_tot_cyc", "cpu_clk_unhalted",
               "cpu_clk_unhalted.thread", "cycles-ct", "r11"},
    "instructions": {"instructions", "inst_retired", "inst_retired.any", "instructions-retired",
                     "papi_tot_ins", "instr_retired", "r08"},
}


def canonical_event(name: str | None) -> str | None:
    """'cpu-cycles:u' -> 'cycles'; 'armv8_pmuv3/inst_retired/' -> 'instructions'; else None."""
    if not name:
        return None
    n = name.strip().lower()
    m = re.fullmatch(r"[\w.-]+/([^/]+)/\w*", n)   # pmu/event/modifiers
    if m:
        n = m[1]
    n = n.split(":")[0]
    for canon, names in ALIASES.items():
        if n in names:
            return canon
    return None


def from_profile(profile, *, label: str | None = None, workload: str | None = None,
                 select=None) -> ContextTable:
    """`select` (inputs.Select): keep only the samples of those commands / process ids; the
    others are counted in a note, never dropped silently."""
    import pyarrow as pa
    import pyarrow.compute as pc

    meta = profile.meta or {}
    src = (meta.get("source") or {}).get("path") or label or "profile"
    label = label or src
    wl = workload or meta.get("workload") or Path(src).name.split(".")[0]
    events = meta.get("events") or []
    samples = profile.samples
    cols = set(samples.column_names)
    for need in ("stack_id", "event", "period"):
        if need not in cols:
            raise FormatError(src, f"profile samples have no '{need}' column", "re-ingest it with hpmkit")
    sampling = [e.get("name") for e in events if e.get("sampling")]
    lead = sampling[0] if sampling else None
    t = ContextTable(canonical_isa(meta.get("isa")) or meta.get("isa"), meta.get("kernel"), label)
    per_row = profile.sample_counts().cast(pa.float64())
    if select is not None and samples.num_rows:
        keep = None
        if select.comms is not None:
            if "comm" not in cols:
                raise FormatError(src, "profile samples have no 'comm' column, so --comm cannot choose",
                                  "re-ingest it with hpmkit")
            keep = pc.fill_null(pc.is_in(samples.column("comm"), pa.array(sorted(select.comms))), False)
        if select.pids is not None:
            if "pid" not in cols:
                raise FormatError(src, "profile samples have no 'pid' column, so --pid cannot choose",
                                  "re-ingest it with hpmkit")
            by_pid = pc.fill_null(pc.is_in(samples.column("pid"), pa.array(sorted(select.pids), pa.int64())
                                           .cast(samples.schema.field("pid").type)), False)
            keep = by_pid if keep is None else pc.and_(keep, by_pid)
        left = float(pc.sum(pc.filter(per_row, pc.invert(keep))).as_py() or 0)
        if left == float(pc.sum(per_row).as_py() or 0) and "comm" in cols:
            seen = pc.value_counts(samples.column("comm")).to_pylist()
            seen.sort(key=lambda d: (-d["counts"], str(d["values"])))
            t.notes.append(f"{wl}: no sample of {select.describe()} (its commands: "
                           + ", ".join(str(d["values"]) for d in seen[:5]) + (" ..." if len(seen) > 5 else "") + ")")
        samples, per_row = samples.filter(keep), per_row.filter(keep)
        t.notes.append(f"{wl}: --comm/--pid left out {left:.0f} samples not of {select.describe()}")
    if samples.num_rows == 0:
        if select is None:
            t.notes.append(f"{label}: no samples")
        return t

    weights: dict[str, object] = {}
    for metric in ("cycles", "instructions"):
        col = next((c for c in samples.column_names
                    if c.startswith("value:") and canonical_event(c[6:]) == metric), None)
        if col is not None:
            v = samples.column(col)
            nulls = v.null_count
            if nulls:
                t.notes.append(f"{nulls} sample(s) carry no {col} read (counted as 0)")
            weights[metric] = pc.fill_null(v, 0).cast(pa.float64())
            continue
        ev = next((e for e in sampling if canonical_event(e) == metric), None)
        if ev is not None:
            weights[metric] = pc.if_else(pc.equal(samples.column("event"), ev),
                                         samples.column("period").cast(pa.float64()), 0.0)
    # a row is one sample, but a folded file's rows stand for their line's count
    # (Profile.sample_counts, per_row above): count those, not the rows
    count = (pc.if_else(pc.equal(samples.column("event"), lead), per_row, 0.0)
             if lead is not None else per_row)
    tab = pa.table({"stack_id": samples.column("stack_id"),
                    "n": count,
                    **{m: w for m, w in weights.items()}})
    agg = tab.group_by("stack_id").aggregate([("n", "sum")] + [(m, "sum") for m in weights])
    sid = agg.column("stack_id").to_numpy(zero_copy_only=False)
    n = agg.column("n_sum").to_numpy(zero_copy_only=False)
    w = {m: agg.column(f"{m}_sum").to_numpy(zero_copy_only=False) for m in weights}

    frames = profile.frames
    fid = frames.column("frame_id").to_pylist()
    sym = frames.column("symbol").to_pylist()
    addr = frames.column("addr").to_pylist() if "addr" in frames.column_names else [None] * len(fid)
    name_of = {f: (s if s is not None else (f"0x{a:x}" if a is not None else None))
               for f, s, a in zip(fid, sym, addr)}
    st = profile.stacks
    stack_of = dict(zip(st.column("stack_id").to_pylist(),
                        zip(st.column("frame_ids").to_pylist(), st.column("nkernel").to_pylist())))
    missing = 0
    for i, s in enumerate(sid.tolist()):
        got = stack_of.get(s)
        if got is None:
            missing += int(n[i])
            continue
        ids, nk = got
        names = [name_of.get(f) for f in (ids or [])][::-1]  # leaf-first -> root->leaf
        t.add(wl, names, None if nk is None else int(nk), float(n[i]),
              float(w["cycles"][i]) if "cycles" in w else None,
              float(w["instructions"][i]) if "instructions" in w else None)
    if missing:
        t.notes.append(f"{missing} sample(s) point at stacks the profile does not hold (skipped)")
    skipped = meta.get("skipped") or {}
    if skipped:
        for k, v in sorted(skipped.items()):
            t.notes.append(f"{wl}: ingest skipped {v} {k}")
    if meta.get("lost"):
        t.notes.append(f"{wl}: {meta['lost']} sample(s) lost while recording ({label})")
    return t
