"""Record the ksuite workloads in the lab guests and keep them as profiles: the example data
that `hpmkit compare` ships with (examples/lab-suite) and the way to refresh it.

Every workload is recorded in its own boot. The default sampler is the precise one in the
emulator (lab/pes through hpmkit.lab.record): retired instructions, a jittered period, the
precise instruction and its call chain, the workload's process tree only. `sampler=
"interrupt"` keeps the older way for comparison: `hpm record` in the guest, whole-CPU,
sampling on cpu-clock with cycles and instructions read in each sample (QEMU's emulated PMUs
lose overflow interrupts of hardware events, docs/record.md). Timer interrupts cannot
sample interrupt-masked code: those samples land at the next unmask point (docs/pes.md
measures the skew). Under -icount shift=0 both are the same on every run.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from . import guest
from .protocol import LabError

EVENTS = "{cpu-clock,cycles,instructions}"
PERIOD = 100000            # interrupt sampler: ns of guest time (= instructions)
# precise sampler: instructions (mean of the jittered periods). 10,000 gives examples/
# lab-suite ~30,000-50,000 samples per workload: at 50,000, contexts ranked with 10-20
# samples on a side had ratios up to 68 % off their exact ratio
PRECISE_PERIOD = 10000
SAMPLERS = ("precise", "interrupt")
# the workload and the processes it starts: ksuite, and "exe" for the children it
# execs through /proc/self/exe (the kernel names a task after the file it execs)
WORKLOAD_COMMS = ["ksuite", "exe"]


def workloads() -> list[str]:
    """Names in ksuite's table, asked from the native build (same table in every build)."""
    exe = guest.ROOT / "build" / "bin" / "ksuite"
    if not exe.exists():
        raise LabError(f"{exe} is missing: run 'make'")
    p = subprocess.run([str(exe), "list"], capture_output=True, text=True)
    if p.returncode:
        raise LabError(f"'ksuite list' failed: {p.stderr.strip()}")
    return [l.split()[0] for l in p.stdout.splitlines()[1:] if l.strip()]


def record(arch: str, workload: str, raw_dir: Path, period: int = PERIOD,
           timeout: float = 600) -> Path:
    """Boot, record one workload, return the perf.data copied back to raw_dir/arch/."""
    name = f"{workload}.data"
    argv = ["hpm", "record", "-q", "-e", EVENTS, "-c", str(period), "-g", "-a", "-o", name,
            "--", "ksuite", "--lab", workload]
    res = guest.run(arch, argv, timeout=timeout)
    if res.exec_errno is not None or res.status != 0 or f"out/{name}" not in res.files:
        tail = " | ".join(res.stderr.decode(errors="replace").strip().splitlines()[-3:])
        raise LabError(f"{arch}: recording {workload} failed (exit {res.status}): {tail}")
    out = raw_dir / arch / name
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{name}.tmp")
    tmp.write_bytes(res.files[f"out/{name}"])
    tmp.replace(out)
    return out


def to_profile(raw: Path, arch: str, workload: str, out_dir: Path) -> Path:
    """Import a suite recording, keep the workload's own samples, save NAME.hpmprof."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..profile import Profile, ingest

    # the guest's /bin is build/<arch>/bin: user frames resolve against those binaries
    symfs = guest.CACHE / f"symfs-{arch}"
    symfs.mkdir(parents=True, exist_ok=True)
    if not (symfs / "bin").exists():
        (symfs / "bin").symlink_to(guest.ROOT / "build" / arch / "bin")
    prof = ingest(raw, symfs=str(symfs))
    if prof.meta.get("isa") != arch:
        raise LabError(f"{raw}: recorded on {prof.meta.get('isa')}, expected {arch}")
    keep = pc.is_in(prof.samples.column("comm"), value_set=pa.array(WORKLOAD_COMMS))
    others = prof.samples.num_rows - pc.sum(keep).as_py()
    meta = dict(prof.meta)
    meta["workload"] = workload
    meta["source"] = dict(meta["source"], path=f"{arch}/{workload}.data")  # not this machine's path
    meta["lab"] = {"qemu": guest.MACHINES[arch].qemu, "icount": "shift=0,sleep=off",
                   "events": EVENTS, "period": PERIOD, "command": f"ksuite --lab {workload}"}
    skipped = dict(meta.get("skipped") or {})
    if others:
        # the recorder itself and the guest's init share the CPU: counted, not kept
        skipped["samples of other processes (hpm, idle, kernel threads)"] = others
    meta["skipped"] = skipped
    prof = Profile(meta, prof.samples.filter(keep), prof.stacks, prof.frames)
    return prof.save(out_dir / arch / f"{workload}.hpmprof")


def record_precise(arch: str, workload: str, raw_dir: Path, out_dir: Path,
                   period: int = PRECISE_PERIOD, reuse_raw: bool = False) -> Path:
    """One workload with the in-emulator sampler; the profile keeps ksuite's process tree."""
    from . import record as rec
    argv = ["ksuite", "--lab", workload]
    work = raw_dir / "precise" / workload
    # exact counts of the same run come along: compare shows them beside sampled ratios
    opts = rec.Options(period=period, exact=True)
    data = work / f"{arch}.perf.data"
    exact = work / f"{arch}.exact.tsv"
    if reuse_raw and data.is_file() and exact.is_file():
        prof, _, _ = rec.to_profile(arch, data, work, argv, opts)
    else:
        r = rec.record(arch, argv, work, opts)
        if r.status != 0:
            tail = " | ".join(r.stderr.decode(errors="replace").strip().splitlines()[-3:])
            raise LabError(f"{arch}: {' '.join(argv)} failed (exit {r.status}): {tail}")
        prof = r.profile
    from ..profile import Profile
    p = Profile.load(prof)
    p.meta["workload"] = workload
    p.meta["source"] = dict(p.meta["source"], path=f"{arch}/{workload}.perf.data")
    dest = out_dir / arch / f"{workload}.hpmprof"
    saved = p.save(dest)
    shutil.copyfile(exact, dest.with_name(f"{workload}.exact.tsv"))
    return saved


def record_suite(arches: list[str], out_dir: Path, names: list[str] | None = None,
                 raw_dir: Path | None = None, period: int | None = None,
                 reuse_raw: bool = False, sampler: str = "precise") -> list[Path]:
    if sampler not in SAMPLERS:
        raise LabError(f"unknown sampler '{sampler}' (choose {', '.join(SAMPLERS)})")
    names = names or workloads()
    raw_dir = raw_dir or guest.CACHE / "suite-raw"
    done = []
    total = len(arches) * len(names)
    for arch in arches:
        for w in names:
            print(f"lab suite: [{len(done) + 1}/{total}] {arch} {w}", file=sys.stderr, flush=True)
            if sampler == "precise":
                done.append(record_precise(arch, w, raw_dir, out_dir, period or PRECISE_PERIOD,
                                           reuse_raw))
                continue
            raw = raw_dir / arch / f"{w}.data"
            if not (reuse_raw and raw.is_file()):
                raw = record(arch, w, raw_dir, period or PERIOD)
            done.append(to_profile(raw, arch, w, out_dir))
    return done
