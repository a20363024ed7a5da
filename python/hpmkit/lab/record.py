"""`hpmkit lab record`: precise, unperturbed profiles of a command in the lab guests.

The sampler runs in the emulator (lab/pes, a QEMU TCG plugin), not in the guest: it counts
retired instructions (or loads, stores, branches) exactly, takes a sample at the precise
instruction where a jittered period runs out, and reads the task and its frame-pointer call
chain from guest memory. Nothing in the guest changes, so interrupt-masked code is sampled
like any other (seed 000's Precise Event Sampling, emulated). See docs/pes.md.

Outputs in OUT/: <arch>.perf.data (Linux perf reads it), <arch>.hpmprof (the command and its
children only: the guest's init, idle and kernel threads are counted and left out), and with
--exact <arch>.exact.tsv (every instruction, per function) beside them.
"""
from __future__ import annotations

import errno
import gzip
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..exacttables import EXACT_COLUMNS, PATHS_COLUMNS, paths_name
from . import guest
from .protocol import LabError

EVENTS = ("instructions", "loads", "stores", "branches", "taken-branches")
DEFAULT_PERIOD = 10000
PLUGIN = guest.ROOT / "build" / "lab" / "libhpmpes.so"
INIT_PID = 1          # the guest's init (lab/init.c) forks the command


@dataclass
class Options:
    event: str = "instructions"
    period: int = DEFAULT_PERIOD
    seed: int = 1
    exact: bool = False
    comms: list[str] = field(default_factory=list)
    add: list[Path] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)   # --root folders (guest.root_of per arch)
    timeout: float = 600
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Recording:
    arch: str
    perf_data: Path
    profile: Path
    exact: Path | None
    status: int
    kept: int
    skipped: dict[str, int]
    stdout: bytes
    stderr: bytes


def plugin_path() -> Path:
    """The plugin, built (or brought up to date) by make."""
    p = subprocess.run(["make", "-s", "-C", str(guest.ROOT), str(PLUGIN.relative_to(guest.ROOT))],
                       capture_output=True, text=True)
    if p.returncode or not PLUGIN.is_file():
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        raise LabError(f"building the lab sampler {PLUGIN.name} failed: {tail or 'no output'}")
    return PLUGIN


def symfs_for(arch: str, out: Path, add: list[Path], roots: list[Path] = ()) -> Path:
    """A folder laid out like the guest's / (links to the host files), so user frames of
    the guest binaries, of the user's own (--add) and of --root files (programs and their
    libraries) resolve; kept for later re-imports."""
    d = out / f"{arch}.symfs"
    b = d / "bin"
    b.mkdir(parents=True, exist_ok=True)
    for old in sorted(d.rglob("*"), reverse=True):
        if old.is_symlink() or old.is_file():
            old.unlink()
        elif old.is_dir() and old != b:
            old.rmdir()
    for r in roots:
        for rel, f in guest.root_entries(guest.root_of(r, arch)):
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).symlink_to(f.resolve())
    for f in sorted((guest.ROOT / "build" / arch / "bin").iterdir()):
        if f.is_file():
            (b / f.name).symlink_to(f.resolve())
    for a in add:
        a = Path(a)
        files = [a] if a.is_file() else [f for f in sorted(a.iterdir()) if f.is_file()]
        for f in files:
            link = b / f.name
            if link.is_symlink():
                link.unlink()
            link.symlink_to(f.resolve())
    return d


def process_parents(perf_data: Path) -> dict[int, int]:
    """pid -> parent pid, from the FORK records the sampler writes for every new process."""
    from ..perfdata import PerfData
    from ..perfdata import records as R
    parents: dict[int, int] = {}
    with PerfData(perf_data) as pd:
        for rec in pd.records():
            if rec.name == "FORK":
                t = R.fork(rec)
                if t.pid == t.tid and t.pid != t.ppid:
                    parents[t.pid] = t.ppid
    return parents


def command_pids(parents: dict[int, int]) -> set[int]:
    """The command (a child of init) and everything it started."""
    keep = set()
    for pid in parents:
        p, seen = pid, set()
        while p in parents and p not in seen:
            seen.add(p)
            if parents[p] == INIT_PID:
                keep.add(pid)
                break
            p = parents[p]
    return keep


def check(opts: Options) -> None:
    if opts.event not in EVENTS:
        raise LabError(f"unknown lab event '{opts.event}' (choose {', '.join(EVENTS)})")
    if opts.period < 1:
        raise LabError(f"--period must be at least 1, got {opts.period}")


def make_job(arch: str, argv: list[str], opts: Options, key: str | None = None):
    """The recording as a job any executor can run (hpmkit.lab.jobs)."""
    from .jobs import Job
    check(opts)
    guest.check_arch(arch)
    added = guest.added_files(opts.add, [guest.root_of(r, arch) for r in opts.roots])
    return Job(key or f"{arch}/{' '.join(argv)}", arch, tuple(argv), opts.event, opts.period,
               opts.seed, opts.exact, opts.timeout, tuple(sorted(opts.env.items())),
               tuple(sorted(added.items())))


def record(arch: str, argv: list[str], out: Path, opts: Options) -> Recording:
    """Record argv on arch here and now (one job, run in this process)."""
    from .jobs import execute, make_bundle
    job = make_job(arch, argv, opts)
    return finish(job, execute(job, make_bundle(arch)), out, opts)


def finish(job, res, out: Path, opts: Options) -> Recording:
    """The files of a recording from a job's result: OUT/<arch>.perf.data as the sampler
    wrote it, the profile and (--exact) the per-function table. Runs on the client."""
    arch, argv = job.arch, list(job.argv)
    data = out / f"{arch}.perf.data"
    if res.error:
        raise LabError(f"{job.key}: {res.error} (on {res.worker})")
    if res.exec_errno is not None:
        # nothing was recorded of the command: leave no output that looks like a recording
        data.unlink(missing_ok=True)
        err = LabError(f"{arch} guest: cannot run '{argv[0]}': {os.strerror(res.exec_errno)} "
                       f"(the guest's PATH is /bin: hpmkit's tools and --add files)")
        err.exit_code = 127 if res.exec_errno == errno.ENOENT else 126
        raise err
    if res.perf_data is None:
        raise LabError(f"{arch}: the sampler wrote no perf.data (QEMU's messages: "
                       f"{' | '.join(res.warnings[-3:]) or 'none'}; on {res.worker})")
    if opts.exact and res.exact_z is None:
        raise LabError(f"{arch}: the sampler wrote no exact table (on {res.worker})")
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{arch}.perf.data.tmp"
    tmp.write_bytes(res.perf_data)
    tmp.replace(data)
    write_kallsyms(data, out / f"{arch}.kallsyms")
    prof, kept, skipped = to_profile(arch, data, out, argv, opts)
    exact = None
    if opts.exact:
        raw_exact = out / f".{arch}.exact-raw.tsv"
        raw_exact.write_bytes(res.exact_raw)
        raw_paths = None
        if res.paths_z is not None:
            raw_paths = out / f".{arch}.exact-raw.paths"
            raw_paths.write_bytes(res.paths_raw)
        exact = out / f"{arch}.exact.tsv"
        kf = guest.kernel_files(arch)
        try:
            write_exact(arch, raw_exact, data, kf.system_map, symfs_for(arch, out, opts.add, opts.roots),
                        exact, opts.comms, raw_paths, paths_file(exact))
        finally:
            raw_exact.unlink(missing_ok=True)
            if raw_paths is not None:
                raw_paths.unlink(missing_ok=True)
    return Recording(arch, data, prof, exact, res.status, kept, skipped, res.stdout, res.stderr)


def write_kallsyms(data: Path, path: Path) -> None:
    """The guest kernel's symbols beside its recording, for Linux perf: without them perf
    names the guest's kernel addresses with this machine's symbols
    (`perf script -i OUT/<arch>.perf.data --kallsyms OUT/<arch>.kallsyms`)."""
    from ..outputs import write_text
    from ..perfdata.reader import PerfData
    with PerfData(data) as pd:
        text = pd.kallsyms_text()
    if text:
        write_text(path, text)


def paths_file(exact: Path) -> Path:
    """X.exact.tsv -> X.exact-paths.tsv.gz (exact kernel instructions per call path)."""
    return exact.with_name(paths_name(exact.name))


def to_profile(arch: str, data: Path, out: Path, argv: list[str], opts: Options):
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..profile import Profile, ingest

    prof = ingest(data, symfs=str(symfs_for(arch, out, opts.add, opts.roots)))
    if prof.meta.get("isa") != arch:
        raise LabError(f"{data}: recorded on {prof.meta.get('isa')}, expected {arch}")
    prof = name_firmware(arch, prof)
    pids = command_pids(process_parents(data))
    keep = pc.is_in(prof.samples.column("pid"), value_set=pa.array(sorted(pids), pa.int32()))
    skipped = dict(prof.meta.get("skipped") or {})
    n_all = prof.samples.num_rows
    n_cmd = pc.sum(keep).as_py() or 0
    if n_all - n_cmd:
        skipped["samples outside the command (init, idle, kernel threads)"] = n_all - n_cmd
    if opts.comms:
        keep = pc.and_(keep, pc.is_in(prof.samples.column("comm"), value_set=pa.array(opts.comms)))
        n_comm = pc.sum(keep).as_py() or 0
        if n_cmd - n_comm:
            skipped[f"samples of other commands than {','.join(opts.comms)}"] = n_cmd - n_comm
    samples = prof.samples.filter(keep)
    meta = dict(prof.meta)
    meta["skipped"] = skipped
    meta["workload"] = " ".join(argv)
    meta["source"] = dict(meta["source"], path=data.name)
    meta["lab"] = {"qemu": guest.MACHINES[arch].qemu, "icount": "shift=0,sleep=off",
                   "sampler": "lab/pes (in-emulator, precise)", "event": opts.event,
                   "period": opts.period, "seed": opts.seed, "command": " ".join(argv),
                   "comms": opts.comms}
    path = Profile(meta, samples, prof.stacks, prof.frames).save(out / f"{arch}.hpmprof")
    return path, samples.num_rows, skipped


# OpenSBI runs in M mode at physical 0x80000000-0x801fffff (QEMU virt, -bios default): the
# kernel's SBI calls (timer, console, IPIs) execute there. In-guest perf never sees these
# instructions; the emulator-side sampler does and marks them hypervisor-mode.
FIRMWARE = {"riscv64": (0x80000000, 0x80200000, "[firmware]", "[opensbi]")}


def name_firmware(arch: str, prof):
    """Name the unnamed user-space-looking frames in the firmware's range as one function."""
    if arch not in FIRMWARE:
        return prof
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..profile import Profile
    lo, hi, sym, dso = FIRMWARE[arch]
    f = prof.frames
    addr = f.column("addr")
    hit = pc.and_(pc.and_(pc.greater_equal(addr, pa.scalar(lo, pa.uint64())),
                          pc.less(addr, pa.scalar(hi, pa.uint64()))),
                  pc.is_null(f.column("symbol")))
    if not pc.any(hit).as_py():
        return prof
    cols = {n: f.column(n) for n in f.column_names}
    cols["symbol"] = pc.if_else(hit, pa.scalar(sym), f.column("symbol"))
    cols["dso"] = pc.if_else(hit, pa.scalar(dso), f.column("dso"))
    frames = pa.table(cols, schema=f.schema)
    return Profile(prof.meta, prof.samples, prof.stacks, frames)


def _exe_maps(data: Path) -> dict[int, list[tuple[int, int, int, str]]]:
    """pid -> [(start, end, pgoff, filename)] of executable user mappings (MMAP2/MMAP)."""
    from ..perfdata import PerfData
    from ..perfdata import records as R
    maps: dict[int, list] = defaultdict(list)
    with PerfData(data) as pd:
        for rec in pd.records():
            if rec.name in ("MMAP", "MMAP2"):
                m = R.mmap(rec)
                if m.pid not in (-1, 0) and not m.filename.startswith("["):
                    maps[m.pid].append((m.start, m.end, m.pgoff, m.filename))
    return maps


def write_exact(arch: str, raw: Path, data: Path, system_map: Path, symfs: Path, dst: Path,
                comms: list[str], paths: Path | None = None, paths_dst: Path | None = None) -> None:
    """Per-function exact counts of the command's processes from the sampler's per-block
    table: `priv function dso insns loads stores branches` sorted by instructions.

    The table has one row per (task, block): a fork-heavy workload gives millions. Rows are
    first summed per address (kernel, firmware) or per (program mapping, address) (user), so
    each distinct address is symbolised once, vectorised.

    With the sampler's kernel call paths (`paths`, EXACT.paths) also `paths_dst`: exact
    kernel instructions per call path, `insns<TAB>stack` with the stack root -> leaf as
    `;`-joined function names (the kernel part of a sample's stack at that code)."""
    import numpy as np

    from ..profile.symbols import Kallsyms, open_elf

    if not raw.is_file():
        raise LabError(f"{arch}: the sampler wrote no exact table ({raw.name})")
    pids = command_pids(process_parents(data))
    maps = _exe_maps(data)
    kern: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    kpath: dict[tuple[int, int], int] = defaultdict(int)    # (path id, block pc) -> insns
    user: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    other: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    mapping: dict[tuple[int, str], list] = {}

    def user_map(tgid: int, comm: str):
        # after an exec the task has its new program's map, before it the parent's: the
        # comm (the program's name since exec) tells which one ran the block
        key = (tgid, comm)
        if key not in mapping:
            ms = maps.get(tgid, [])
            mapping[key] = sorted(ms, key=lambda m: Path(m[3]).name[:15] != comm)
        return mapping[key]

    with open(raw) as f:
        col = {n: i for i, n in enumerate(f.readline().split())}
        ci, cp, cc, cs = col["tgid"], col["priv"], col["comm"], col["start_pc"]
        cn = [col[k] for k in ("insns", "loads", "stores", "branches")]
        cpath = col.get("path")
        for line in f:
            v = line.rstrip("\n").split("\t")
            tgid = int(v[ci])
            if tgid not in pids or (comms and v[cc] not in comms):
                continue
            priv, pc_ = v[cp], int(v[cs], 16)
            if priv == "kernel":
                t = kern[pc_]
                if cpath is not None:
                    kpath[(int(v[cpath]), pc_)] += int(v[cn[0]])
            elif priv == "user":
                m = next((m for m in user_map(tgid, v[cc]) if m[0] <= pc_ < m[1]), None)
                t = user[(m[3], m[0], m[2], pc_) if m else (None, 0, 0, pc_)]
            else:
                t = other[priv]
            for i, c in enumerate(cn):
                t[i] += int(v[c])
    totals: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])

    def add(key, counts):
        t = totals[key]
        for i in range(4):
            t[i] += counts[i]

    if kern:
        ks = Kallsyms(system_map.read_text(), str(system_map))
        addrs = list(kern)
        idx = ks.lookup(np.array(addrs, dtype=np.uint64))[0].tolist()
        for a, i in zip(addrs, idx):
            add(("kernel", ks.names[i] if i >= 0 else f"{a:#x}", "[kernel.kallsyms]"), kern[a])
        if paths is not None and paths_dst is not None:
            _write_paths(ks, kpath, paths, paths_dst)
    by_file: dict[str | None, list] = defaultdict(list)
    for key in user:
        by_file[key[0]].append(key)
    for fname, keys in by_file.items():
        img = None
        if fname is not None:
            host = symfs / fname.lstrip("/")
            try:
                img = open_elf(str(host)) if host.exists() else None
            except Exception:           # an unreadable ELF names nothing
                img = None
        names = [None] * len(keys)
        if img is not None:
            off = np.array([pc_ - start + pgoff for _, start, pgoff, pc_ in keys], np.uint64)
            va = img.offset_to_vaddr(off)
            idx = img.lookup(np.where(va >= 0, va, 0).astype(np.uint64))[0]
            names = [img.names[i] if (i >= 0 and a >= 0) else None for i, a in zip(idx.tolist(), va.tolist())]
        for key, nm in zip(keys, names):
            add(("user", nm or f"{key[3]:#x}", fname or "[unknown]"), user[key])
    for priv, c in other.items():
        add((priv, f"[{priv}]", f"[{priv}]"), c)
    tmp = dst.with_name(f".{dst.name}.tmp")
    with open(tmp, "w") as f:
        f.write("\t".join(EXACT_COLUMNS) + "\n")
        for (priv, name, dso), c in sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0])):
            f.write(f"{priv}\t{name}\t{dso}\t{c[0]}\t{c[1]}\t{c[2]}\t{c[3]}\n")
    tmp.replace(dst)


def _write_paths(ks, kpath: dict[tuple[int, int], int], paths: Path, dst: Path) -> None:
    """Exact kernel instructions per call path (write_exact's `paths_dst`)."""
    import numpy as np

    used = {p for p, _ in kpath}
    parent: dict[int, tuple[int, int]] = {}
    with open(paths) as f:
        if f.readline().rstrip("\n").split("\t") != ["path", "parent", "caller"]:
            raise LabError(f"{paths.name}: not the sampler's call-path table (header)")
        for n, line in enumerate(f, 2):
            try:
                i, up, a = line.rstrip("\n").split("\t")
                parent[int(i)] = (int(up), int(a, 16))
            except ValueError:
                raise LabError(f"{paths.name} line {n}: not 'id<TAB>parent<TAB>hex'; "
                               "record again") from None
    chains: dict[int, list[int]] = {0: []}

    def chain(i: int) -> list[int]:
        # innermost caller first; parents precede children, so the walk up ends at 0
        out, seen = [], i
        while i and i not in chains:
            if i not in parent or len(out) > len(parent):
                raise LabError(f"{paths.name}: call path {seen} is not defined; record again")
            up, a = parent[i]
            out.append(a)
            i = up
        return out + chains[i]

    for p in used:
        chains[p] = chain(p)
    addrs = sorted({a for c in chains.values() for a in c} | {pc for _, pc in kpath})
    idx = ks.lookup(np.array(addrs, dtype=np.uint64))[0].tolist()
    name = {a: (ks.names[i] if i >= 0 else f"{a:#x}") for a, i in zip(addrs, idx)}
    per: dict[str, int] = defaultdict(int)
    for (p, pc_), n in kpath.items():
        per[";".join([name[a] for a in reversed(chains[p])] + [name[pc_]])] += n
    tmp = dst.with_name(f".{dst.name}.tmp")
    text = "\t".join(PATHS_COLUMNS) + "\n" + "".join(
        f"{n}\t{st}\n" for st, n in sorted(per.items(), key=lambda kv: (-kv[1], kv[0])))
    with open(tmp, "wb") as raw:
        # no name or time in the header: a recording made again is the same file
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(text.encode())
    tmp.replace(dst)


def progress(msg: str) -> None:
    print(f"lab record: {msg}", file=sys.stderr, flush=True)
