"""One precise lab recording as a self-contained job that any machine can run.

A recording needs the guest kernel, its System.map and structure offsets, the sampler plugin
and the guest's binaries. Together they are a *bundle*, named by the SHA-256 of its files:
the client makes it once per ISA, executors ship it (a Dask cluster copies it to each worker
once) and the worker writes it into its bundle cache and checks every file's hash before
each run. The job itself is small (command, sampler options, --add files); its result is the
bytes the sampler wrote. Turning them into profiles happens on the client (record.finish), so
whatever the executor, the same job gives the same perf.data byte for byte (the guest runs
under -icount shift=0 and the sampler writes nothing host-specific) and the same profiles.

Every executor, the serial one included, runs jobs from a materialised bundle: a local run
and a worker's run use the very same files.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import socket
import tempfile
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import guest
from .protocol import LabError

# the files of a bundle besides the guest's root (guest/<path>)
KERNEL_FILES = ("Image", "System.map", "offsets", "libhpmpes.so", "qemu-version")


@dataclass(frozen=True, eq=False)
class Bundle:
    """Everything a worker needs to boot `arch` with the sampler, content-addressed."""
    arch: str
    digest: str
    files: dict[str, bytes] = field(repr=False)

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.files.values())


def digest_of(files: dict[str, bytes]) -> str:
    """SHA-256 over the sorted (name, SHA-256 of content) list: same files, same name."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def make_bundle(arch: str) -> Bundle:
    """The bundle of this checkout for arch: builds what is missing (kernel, plugin, guest
    binaries) first."""
    from .record import plugin_path
    guest.check_arch(arch)
    kf = guest.kernel_files(arch)
    files = {"Image": kf.image.read_bytes(), "System.map": kf.system_map.read_bytes(),
             "offsets": kf.offsets.read_bytes(), "libhpmpes.so": plugin_path().read_bytes(),
             "qemu-version": guest.qemu_version(arch).encode()}
    for name, data in guest.guest_binaries(arch).items():
        files[f"guest/{name}"] = data
    return Bundle(arch, digest_of(files), files)


def bundle_cache() -> Path:
    """Where a machine keeps materialised bundles: $HPMKIT_BUNDLE_CACHE, else .cache/lab/
    bundles of the checkout hpmkit runs from."""
    env = os.environ.get("HPMKIT_BUNDLE_CACHE")
    return Path(env) if env else guest.CACHE / "bundles"


_LOCK = threading.Lock()


def materialise(bundle: Bundle, cache: Path | None = None) -> tuple[Path, list[str]]:
    """The bundle's folder on this machine, written if absent, every file's hash checked
    against the bundle (a damaged cached file is rewritten from the shipped copy). Returns
    the folder and notes on what was repaired."""
    cache = cache or bundle_cache()
    # the content address itself is checked here, on the worker: bytes damaged in transit (or
    # a client and worker that disagree on what the files are) must not run under its name
    got = digest_of(bundle.files)
    if got != bundle.digest:
        raise LabError(f"bundle {bundle.digest[:12]} arrived with other content (hash "
                       f"{got[:12]}): damaged in transit, or client and worker run different "
                       "hpmkit versions")
    d = cache / bundle.digest
    notes = []
    cache.mkdir(parents=True, exist_ok=True)
    # threads of one worker and worker processes on one machine may share the cache
    with _LOCK, open(cache / f".{bundle.digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if d.is_dir():
            bad = _damaged(d, bundle)
            if not bad:
                return d, notes
            notes.append(f"cached bundle {bundle.digest[:12]} had damaged or missing "
                         f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}: rewritten")
            shutil.rmtree(d)
        tmp = Path(tempfile.mkdtemp(dir=cache, prefix=f".{bundle.digest[:12]}-"))
        for name, data in bundle.files.items():
            f = tmp / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)
            if name == "libhpmpes.so" or name.startswith("guest/bin/"):
                f.chmod(0o755)
        tmp.rename(d)
    bad = _damaged(d, bundle)
    if bad:
        raise LabError(f"bundle {bundle.digest[:12]} written to {d} does not read back "
                       f"({', '.join(bad[:3])}): is the disk full?")
    return d, notes


def _damaged(d: Path, bundle: Bundle) -> list[str]:
    """Names whose file in d is missing or differs from the bundle (by SHA-256)."""
    bad = []
    for name, data in bundle.files.items():
        f = d / name
        try:
            ok = hashlib.sha256(f.read_bytes()).digest() == hashlib.sha256(data).digest()
        except OSError:
            ok = False
        if not ok:
            bad.append(name)
    return bad


@dataclass(frozen=True)
class Job:
    """One recording: COMMAND on arch with the sampler's options. key names it in progress
    and errors (e.g. riscv64/pipe)."""
    key: str
    arch: str
    argv: tuple[str, ...]
    event: str = "instructions"
    period: int = 10000
    seed: int = 1
    exact: bool = False
    timeout: float = 600
    env: tuple[tuple[str, str], ...] = ()
    add: tuple[tuple[str, bytes], ...] = field(default=(), repr=False)

    def plugin_args(self, d: Path, out: Path, exact: Path) -> str:
        args = [str(d / "libhpmpes.so"), f"arch={self.arch}", f"out={out}", f"event={self.event}",
                f"period={self.period}", f"seed={self.seed}", f"kernel={d / 'System.map'}",
                f"offsets={d / 'offsets'}", f"bins={d / 'guest' / 'bin'}",
                # sample and count from the command's exec: the boot is not part of the profile
                f"start={Path(self.argv[0]).name[:15]}"]
        if self.exact:
            args.append(f"exact={exact}")
        if any("," in a for a in args):
            raise LabError("a path given to the lab sampler contains ',' (QEMU splits plugin "
                           "arguments there): set HPMKIT_BUNDLE_CACHE or TMPDIR elsewhere")
        return ",".join(args)


@dataclass
class JobResult:
    key: str
    worker: str
    status: int = 0
    exec_errno: int | None = None
    perf_data: bytes | None = None
    exact_z: bytes | None = None     # the exact table, zlib-compressed (it can be large)
    paths_z: bytes | None = None     # its kernel call paths (exact.tsv.paths), zlib-compressed
    stdout: bytes = b""
    stderr: bytes = b""
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None         # the run itself failed (not the command): why

    @property
    def exact_raw(self) -> bytes | None:
        return zlib.decompress(self.exact_z) if self.exact_z is not None else None

    @property
    def paths_raw(self) -> bytes | None:
        return zlib.decompress(self.paths_z) if self.paths_z is not None else None


def worker_name() -> str:
    """This worker as people know it: the Dask worker's address, else host and thread."""
    try:
        from distributed import get_worker
        return get_worker().address
    except Exception:           # not in a Dask worker (or Dask not installed)
        return f"{socket.gethostname()}/{threading.current_thread().name}"


def execute(job: Job, bundle: Bundle) -> JobResult:
    """Run one job on this machine. Never raises for a failed run: the result says what went
    wrong and where, so a cluster reports it instead of losing it."""
    res = JobResult(job.key, worker_name())
    try:
        if bundle.arch != job.arch:
            raise LabError(f"bundle {bundle.digest[:12]} is for {bundle.arch}, not {job.arch}")
        guest.check_qemu(job.arch)
        want = bundle.files.get("qemu-version", b"").decode(errors="replace")
        if want and guest.qemu_version(job.arch) != want:
            raise LabError(f"this worker has '{guest.qemu_version(job.arch)}', the client "
                           f"'{want}': install the same QEMU on every worker (scripts/setup.sh)")
        d, res.notes = materialise(bundle)
        base = {name[len("guest/"):]: data for name, data in bundle.files.items()
                if name.startswith("guest/")}
        rd = guest.pack_initramfs(base, list(job.argv), env=dict(job.env), add=dict(job.add))
        with tempfile.TemporaryDirectory(prefix="hpmkit-job-") as tmp:
            out, exact = Path(tmp) / "perf.data", Path(tmp) / "exact.tsv"
            g = guest.boot(job.arch, d / "Image", rd, job.timeout,
                           plugin=job.plugin_args(d, out, exact), scratch=Path(tmp))
            res.status, res.exec_errno = g.status, g.exec_errno
            res.stdout, res.stderr, res.warnings = g.stdout, g.stderr, list(g.warnings)
            res.seconds = getattr(g, "seconds", 0.0)
            if out.is_file():
                res.perf_data = out.read_bytes()
            if exact.is_file():
                res.exact_z = zlib.compress(exact.read_bytes(), 1)
            paths = exact.with_name(exact.name + ".paths")
            if paths.is_file():
                res.paths_z = zlib.compress(paths.read_bytes(), 1)
    except LabError as e:
        res.error = str(e)
    except Exception as e:      # anything else on a remote machine: name it, do not lose it
        res.error = f"{type(e).__name__}: {e}"
    return res
