"""Record a suite of workloads in the lab guests and keep them as profiles: ksuite's (the
example data that `hpmkit compare` ships with, examples/lab-suite, and the way to refresh
it), rt-tests' (seed 001's workloads, from Debian's packages: examples/rt-tests) or a
table of the user's own (`NAME<TAB>COMMAND` lines, programs brought in by --add/--root).

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

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import guest
from .protocol import LabError

EVENTS = "{cpu-clock,cycles,instructions}"
PERIOD = 100000            # interrupt sampler: ns of guest time (= instructions)
# precise sampler: instructions (mean of the jittered periods). 2,000 gives examples/
# lab-suite about 5x the samples of 10,000. A ranked ratio's error is sampling noise
# on its thinner side (docs/compare.md, "How dense to sample"): on the held-out busybox loops
# 20 of the top 25 sampled ratios were within 15 % of the exact ones at 2,000 and 9 of 25 at
# 10,000, for 1.14x the recording time; at 50,000 ratios were up to 68 % off
PRECISE_PERIOD = 2000
SAMPLERS = ("precise", "interrupt")
# the workload and the processes it starts: ksuite, and "exe" for the children it
# execs through /proc/self/exe (the kernel names a task after the file it execs)
WORKLOAD_COMMS = ["ksuite", "exe"]


SUITES = ("ksuite", "rt-tests")
_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*")


def read_table(table: Path) -> dict[str, list[str]]:
    """A suite table: `NAME<TAB>COMMAND` lines ('#' comments), workload name -> argv, in the
    table's order. Names become file names (<arch>/<NAME>.hpmprof)."""
    out: dict[str, list[str]] = {}
    try:
        lines = Path(table).read_text().splitlines()
    except UnicodeDecodeError as e:
        raise LabError(f"{table}: not a text file (byte {e.start} is not UTF-8); a suite table "
                       "is 'NAME<TAB>COMMAND' lines") from None
    except OSError as e:
        raise LabError(f"{table}: {e.strerror or e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, cmd = line.partition("\t")
        if not tab or not cmd.split() or name in out or not _NAME.fullmatch(name):
            raise LabError(f"{Path(table).name} line {n}: want 'NAME<TAB>COMMAND' with a new "
                           "NAME of letters, digits and _.+-")
        out[name] = cmd.split()
    if not out:
        raise LabError(f"{table}: no workloads (want 'NAME<TAB>COMMAND' lines)")
    return out


@dataclass(frozen=True)
class Suite:
    """What a suite run records: its workloads and what the guest needs to run them."""
    name: str
    table: Path | None = None          # NAME<TAB>COMMAND lines; None: ksuite's own list
    roots: tuple[Path, ...] = ()       # --root folders (their <arch>/ subfolder if present)
    add: tuple[Path, ...] = ()         # --add files and folders
    debian: bool = False               # rt-tests: Debian's unpacked packages are one more root
    commands: dict[str, list[str]] | None = field(default=None, compare=False)  # table, read once

    def workloads(self) -> list[str]:
        return list(self.commands) if self.table else _ksuite_workloads()

    def command(self, workload: str) -> list[str]:
        if self.table is None:
            return ["ksuite", "--lab", workload]
        if workload not in self.commands:
            raise LabError(f"{self.name} has no workload '{workload}'")
        return self.commands[workload]

    def options(self, period: int, arch: str) -> "rec.Options":
        from . import record as rec
        roots = list(self.roots)
        if self.debian:
            from . import rttests
            # rt-tests' programs and the libraries they are linked against
            roots.insert(0, rttests.root(arch))
        # exact counts of the same run come along: compare shows them beside sampled ratios
        return rec.Options(period=period, exact=True, roots=roots, add=list(self.add))

    def raw_name(self) -> str:
        return "suite-raw" if self.table is None else \
            "suite-raw-" + (self.name if self.debian else self.table.stem)


def get(suite: "str | Suite" = "ksuite", roots=(), add=()) -> Suite:
    """ksuite, rt-tests or a table file of the user's own (NAME<TAB>COMMAND lines)."""
    if isinstance(suite, Suite):
        return suite
    roots, add = tuple(Path(r) for r in roots), tuple(Path(a) for a in add)
    if suite == "ksuite":
        return Suite("ksuite", None, roots, add)
    if suite == "rt-tests":
        from . import rttests
        return Suite("rt-tests", rttests.TABLE, roots, add, True, read_table(rttests.TABLE))
    if Path(suite).is_file():
        return Suite(str(suite), Path(suite), roots, add, False, read_table(Path(suite)))
    raise LabError(f"unknown suite '{suite}' (choose {', '.join(SUITES)}, or give a file of "
                   "'NAME<TAB>COMMAND' lines)")


def workloads(suite: "str | Suite" = "ksuite") -> list[str]:
    """The suite's workload names: ksuite's own table, rt-tests' (data/lab/rt-tests.tsv) or a
    table file's."""
    return get(suite).workloads()


def _ksuite_workloads() -> list[str]:
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


def command(suite: "str | Suite", workload: str) -> list[str]:
    """The guest command of a suite workload."""
    return get(suite).command(workload)


def precise_job(arch: str, workload: str, period: int = PRECISE_PERIOD,
                suite: "str | Suite" = "ksuite"):
    from . import record as rec
    su = get(suite)
    return rec.make_job(arch, su.command(workload), su.options(period, arch),
                        key=f"{arch}/{workload}")


def finish_precise(job, res, raw_dir: Path, out_dir: Path, period: int,
                   suite: "str | Suite" = "ksuite") -> Path:
    """A precise suite recording's files: the raw ones in raw_dir/precise/<workload>/, the
    profile and exact table in out_dir/<arch>/."""
    from . import record as rec
    su = get(suite)
    workload = job.key.split("/", 1)[1]
    work = raw_dir / "precise" / workload
    r = rec.finish(job, res, work, su.options(period, job.arch))
    return _save_precise(job.arch, workload, r.profile, work / f"{job.arch}.exact.tsv", out_dir,
                         su)


def _save_precise(arch: str, workload: str, prof: Path, exact: Path, out_dir: Path,
                  suite: "str | Suite" = "ksuite") -> Path:
    from ..profile import Profile
    su = get(suite)
    p = Profile.load(prof)
    p.meta["workload"] = workload
    if su.table is not None:
        lab = dict(p.meta.get("lab") or {}, suite=su.name)
        if su.debian:
            from . import rttests
            # the programs are Debian's: which build of them ran is part of the result
            lab["packages"] = rttests.packages(arch)
        p.meta["lab"] = lab
    p.meta["source"] = dict(p.meta["source"], path=f"{arch}/{workload}.perf.data")
    dest = out_dir / arch / f"{workload}.hpmprof"
    saved = p.save(dest)
    from .record import paths_file
    for src, name in ((exact, f"{workload}.exact.tsv"),
                      (paths_file(exact), f"{workload}.exact-paths.tsv.gz")):
        if src.is_file():
            tmp = dest.with_name(f".{name}.tmp")
            shutil.copyfile(src, tmp)
            tmp.replace(dest.with_name(name))
    return saved


def command_failed(res) -> str | None:
    """A suite workload must exit 0: anything else is a failed run (retried, then reported)."""
    if res.exec_errno is not None or res.status != 0:
        tail = " | ".join(res.stderr.decode(errors="replace").strip().splitlines()[-3:])
        return f"exit {res.status}{': ' + tail if tail else ''}"
    return None


def record_suite(arches: list[str], out_dir: Path, names: list[str] | None = None,
                 raw_dir: Path | None = None, period: int | None = None,
                 reuse_raw: bool = False, sampler: str = "precise", jobs: int | None = None,
                 cluster: str | None = None, quiet: bool = False,
                 suite: "str | Suite" = "ksuite") -> list[Path]:
    """Record the suite (ksuite, rt-tests or a table of the user's own: get()); precise
    recordings run as jobs (jobs local at once, default one per core, or on a Dask cluster).
    Raises LabError naming every workload that failed, after keeping the ones that did not."""
    if sampler not in SAMPLERS:
        raise LabError(f"unknown sampler '{sampler}' (choose {', '.join(SAMPLERS)})")
    suite = get(suite)
    names = names or suite.workloads()
    raw_dir = raw_dir or guest.CACHE / suite.raw_name()
    if sampler == "interrupt":
        if suite.table is not None:
            raise LabError("the interrupt sampler records ksuite only (hpm record in the guest)")
        if (jobs or 1) > 1 or cluster:
            raise LabError("-j and --cluster run the precise sampler's jobs; the interrupt "
                           "sampler records one workload at a time (leave them out)")
        return _record_interrupt(arches, out_dir, names, raw_dir, period or PERIOD, reuse_raw)
    from .executor import run_jobs
    from .jobs import make_bundle
    period = period or PRECISE_PERIOD
    done: dict[str, Path] = {}
    todo = []
    for arch in arches:
        for w in names:
            work = raw_dir / "precise" / w
            data, exact = work / f"{arch}.perf.data", work / f"{arch}.exact.tsv"
            if reuse_raw and data.is_file() and exact.is_file():
                from . import record as rec
                prof, _, _ = rec.to_profile(arch, data, work, suite.command(w),
                                            suite.options(period, arch))
                done[f"{arch}/{w}"] = _save_precise(arch, w, prof, exact, out_dir, suite)
            else:
                todo.append(precise_job(arch, w, period, suite))
    if todo:
        bundles = {a: make_bundle(a) for a in sorted({j.arch for j in todo})}
        res = run_jobs(todo, bundles,
                       lambda j, r: finish_precise(j, r, raw_dir, out_dir, period, suite),
                       accept=command_failed, workers=jobs, cluster=cluster, label="lab suite",
                       quiet=quiet)
        done.update(res.done)
        if res.failed:
            lines = "; ".join(f"{k}: {m}" for k, m in sorted(res.failed.items()))
            raise LabError(f"lab suite: {len(res.failed)} of {len(todo)} workload(s) failed "
                           f"({len(done)} profile(s) kept in {out_dir}): {lines}")
    return [done[f"{a}/{w}"] for a in arches for w in names]


def _record_interrupt(arches, out_dir, names, raw_dir, period, reuse_raw) -> list[Path]:
    done = []
    total = len(arches) * len(names)
    for arch in arches:
        for w in names:
            print(f"lab suite: [{len(done) + 1}/{total}] {arch} {w}", file=sys.stderr, flush=True)
            raw = raw_dir / arch / f"{w}.data"
            if not (reuse_raw and raw.is_file()):
                raw = record(arch, w, raw_dir, period)
            done.append(to_profile(raw, arch, w, out_dir))
    return done


def record_precise(arch: str, workload: str, raw_dir: Path, out_dir: Path,
                   period: int = PRECISE_PERIOD) -> Path:
    """One workload with the in-emulator sampler, here (a batch of one)."""
    return record_suite([arch], out_dir, [workload], raw_dir, period, jobs=1, quiet=True)[0]
