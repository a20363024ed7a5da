"""hpmkit compare on profiles (hpmkit.profile, contract v1) through adapter.from_profile."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hpmkit.compare.adapter import canonical_event, from_profile
from hpmkit.compare.contexts import contexts
from test_compare_support import tables

REPO = Path(__file__).resolve().parents[2]
from hpmkit import profile  # noqa: E402  (the ingest component; contract v1)


def to_profile(t, workload, *, group=True, meta_workload=True):
    """One workload of a ContextTable as a Profile: one sample per `samples`, costs spread as
    group-read deltas (or as periods of a sampled cycles event when group=False)."""
    frames, fid = [], {}
    stacks, sid = [], {}
    rows = {"time": [], "cpu": [], "pid": [], "tid": [], "comm": [], "event": [], "period": [], "stack_id": []}
    vc, vi = [], []
    for wl, st, nk, c in zip(t.workload, t.stack, t.nkernel, t.costs):
        if wl != workload:
            continue
        ids = []
        for k, name in enumerate(reversed(st)):  # leaf first
            kern = k < nk
            key = (name, kern)
            if key not in fid:
                fid[key] = len(frames)
                frames.append((fid[key], 0x1000 + 16 * len(frames), name, kern))
            ids.append(fid[key])
        s = sid.setdefault((tuple(ids), nk), len(sid))
        if s == len(stacks):
            stacks.append((s, ids, nk))
        n = int(c[0])
        for j in range(n):
            rows["time"].append(len(rows["time"]))
            for col, v in (("cpu", 0), ("pid", 7), ("tid", 7), ("comm", workload)):
                rows[col].append(v)
            rows["event"].append("cpu-clock" if group else "cycles")
            rows["period"].append(int(c[1] / n) if not group else 250000)
            rows["stack_id"].append(s)
            vc.append(c[1] / n)
            vi.append(c[2] / n)
    cols = {k: pa.array(v) for k, v in rows.items()}
    cols["time"] = cols["time"].cast(pa.uint64())
    cols["period"] = cols["period"].cast(pa.uint64())
    for k in ("cpu", "pid", "tid", "stack_id"):
        cols[k] = cols[k].cast(pa.int32())
    events = [{"name": "cpu-clock" if group else "cycles", "type": 1, "config": 0, "period": 250000,
               "sampling": True, "unit": "ns"}]
    if group:
        vc[0] = None  # the first read of a group carries no delta
        cols["value:cycles"] = pa.array([None if v is None else round(v) for v in vc], pa.int64())
        cols["value:instructions:u"] = pa.array([round(v) for v in vi], pa.int64())
        events += [{"name": "cycles", "type": 0, "config": 0, "sampling": False, "unit": None},
                   {"name": "instructions:u", "type": 0, "config": 1, "sampling": False, "unit": None}]
    meta = profile.model.new_meta(f"/lab/{workload}.perf.data", "perf.data", 1)
    meta.update(isa={"riscv64": "riscv64", "aarch64": "aarch64"}[t.isa], kernel=t.kernel, events=events,
                workload=workload if meta_workload else None, lost=3)
    samples = pa.table(cols)
    st = pa.table({"stack_id": pa.array([s for s, _, _ in stacks], pa.int32()),
                   "frame_ids": pa.array([i for _, i, _ in stacks], pa.list_(pa.int32())),
                   "nkernel": pa.array([n for _, _, n in stacks], pa.int16())})
    fr = pa.table({"frame_id": pa.array([f[0] for f in frames], pa.int32()),
                   "addr": pa.array([f[1] for f in frames], pa.uint64()),
                   "symbol": pa.array([f[2] for f in frames], pa.string()),
                   "offset": pa.array([0] * len(frames), pa.uint64()),
                   "dso": pa.array(["[kernel.kallsyms]" if f[3] else "work" for f in frames], pa.string()),
                   "kernel": pa.array([f[3] for f in frames], pa.bool_()),
                   "srcline": pa.array([None] * len(frames), pa.string()),
                   "dso_addr": pa.array([None] * len(frames), pa.uint64())})
    return profile.Profile(meta, samples, st, fr)


@pytest.mark.parametrize("name,want", [("cycles", "cycles"), ("cpu-cycles:u", "cycles"), ("PAPI_TOT_CYC", "cycles"),
                                       ("armv8_pmuv3/inst_retired/u", "instructions"), ("instructions:k", "instructions"),
                                       ("cpu-clock", None), (None, None)])
def test_canonical_event(name, want):
    assert canonical_event(name) == want


def test_adapter_group_reads_match_the_table():
    a, _ = tables(seed=2, samples=40)
    p = to_profile(a, "pipe")
    t = from_profile(p)
    assert t.isa == "riscv64" and set(t.workload) == {"pipe"} and t.has["pipe"] == {"cycles", "instructions"}
    assert "1 sample(s) carry no value:cycles read (counted as 0)" in t.notes
    # the warning names the workload (a suite run has dozens of recordings)
    assert any(n.startswith("pipe: 3 sample(s) lost while recording") for n in t.notes), t.notes
    got = contexts(t).by_workload["pipe"]
    want = contexts(a).by_workload["pipe"]
    assert got.keys() == want.keys()
    for k in want:  # samples exact; cycles within the rounding of per-sample deltas (and the null)
        assert got[k][0] == want[k][0]
        assert abs(got[k][2] - want[k][2]) <= want[k][0]


def test_adapter_period_weights_without_group_reads():
    a, _ = tables(seed=2, samples=40)
    t = from_profile(to_profile(a, "futex", group=False, meta_workload=False))
    assert set(t.workload) == {"futex"}  # from the file name when meta.workload is unset
    assert t.has["futex"] == {"cycles"}


def test_cli_on_profile_directories(tmp_path):
    a, b = tables(seed=1, samples=60, slow={"__asm_copy_to_user": 3.0})
    for side, t in (("rv", a), ("arm", b)):
        (tmp_path / side).mkdir()
        for wl in ("pipe", "futex", "mprotect"):
            to_profile(t, wl).save(tmp_path / side / f"{wl}.hpmprof")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([sys.executable, "-m", "hpmkit.cli", "compare", "rv", "--vs", "arm", "--json", "o.json", "-q"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "o.json").read_text())
    assert s["workloads"] == ["futex", "mprotect", "pipe"]
    assert s["ranking"][0]["function"] == "raw_copy_to_user" and s["ranking"][0]["workload"] == "pipe"
    assert any("lost while recording" in w for w in s["warnings"])


def test_adapter_counts_the_samples_of_folded_lines(tmp_path):
    """A folded file past script_ingest.MAX_FOLDED_ROWS keeps a row per line that stands for
    its count: compare counts those samples, as a file of one row per sample would."""
    from hpmkit.profile.script_ingest import MAX_FOLDED_ROWS
    lines = {"main;sys_read_[k];copy_[k]": 3, "main;sys_write_[k];copy_[k]": 1}
    scale = MAX_FOLDED_ROWS  # 4 x this many samples: weighted rows
    big, small = tmp_path / "w.folded", tmp_path / "w-small.folded"
    big.write_text("".join(f"{s} {n * scale}\n" for s, n in lines.items()))
    small.write_text("".join(f"{s} {n}\n" for s, n in lines.items()))
    pb, ps = profile.ingest(big), profile.ingest(small)
    assert pb.samples.num_rows == 2 and ps.samples.num_rows == 4
    tb, ts = from_profile(pb, workload="w"), from_profile(ps, workload="w")
    assert sorted(c[0] for c in tb.costs) == sorted(c[0] * scale for c in ts.costs)
    assert sum(c[0] for c in tb.costs) == 4 * scale
