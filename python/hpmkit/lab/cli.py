"""`hpmkit lab run|prepare`: the command-line side of the lab."""
from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from . import guest
from .. import outputs
from .protocol import LabError

EPILOG = """\
examples:
  hpmkit lab run --arch riscv64 -- hpm stat -e instructions:u -- hpm-loop 1000
  hpmkit lab run --arch both -- hpm list --pmus
  hpmkit lab run --arch aarch64 --out res -- hpm stat --json -o stat.json -e cycles:u -- hpm-loop 10
  hpmkit lab prepare --arch both          (build/download the kernels once; cached in .cache/lab)

COMMAND is run directly with PATH=/bin, which holds hpm, hpm-loop, hpm-truth, ksuite,
touch-pages and hpm-unit (the C unit tests). For pipes, redirections and loops, --shell runs
it with Debian's busybox sh (fetched once and checked against Debian's signed index):
  hpmkit lab run --arch riscv64 --shell -- 'ksuite list | head -3'
(--add copies your own static binaries or folders; a missing command exits 127). A dynamically
linked program needs its loader and libraries: --root DIR puts a folder laid out like / into
the guest (its <arch>/ subfolder when it has one), e.g. Debian's rt-tests as the suite unpacks them:
  hpmkit lab run --arch both --root .cache/lab/rt-tests -- hackbench -g 1 -l 10
Files the command writes in its working folder
are copied to --out/<arch>/. Exit status: the command's (the first nonzero with --arch both).
"""


RECORD_EPILOG = """\
examples:
  hpmkit lab record --arch both -o prof -- hpm-truth dup 2000
  hpmkit lab record --arch riscv64 -e loads -c 5000 -o prof -- ksuite --lab pipe
  hpmkit lab record --arch both --add ./myprog --exact -o prof -- myprog --size 4096
  hpmkit lab record --arch aarch64 --comm exe -o prof -- ksuite --lab exec
  hpmkit lab record --arch both --root .cache/lab/rt-tests --exact -o prof -- pi_stress --inversions 100
  hpmkit lab record --arch riscv64 --shell -o prof -- 'ksuite --lab pipe; ksuite --lab path'
  perf script -i prof/riscv64.perf.data --kallsyms prof/riscv64.kallsyms   (Linux perf reads the file)
  hpmkit profile show prof/riscv64.hpmprof
  hpmkit compare prof/riscv64.hpmprof --vs prof/aarch64.hpmprof

Samples outside COMMAND's process tree (the guest's init, idle, kernel threads) are
counted and left out of the profile (the perf.data keeps them). Exit status: COMMAND's.
"""


def _scale_flags(p, what: str) -> None:
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help=f"{what} at once on this machine (default: one per core, "
                   f"{os.cpu_count() or 1} here); each is one QEMU process")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the recordings on the Dask cluster whose scheduler is at ADDRESS "
                   "(tcp://host:8786; pip install 'hpmkit[cluster]'); kernels, sampler and "
                   "guest binaries are shipped to the workers and checked by hash. Profiles "
                   "are made here, the same as a local run's. docs/scale-out.md")


def add_parser(sub, raw_formatter) -> None:
    lab = sub.add_parser("lab", help="run commands in riscv64/aarch64 Linux guests under QEMU",
                         description="Real riscv64 and aarch64 kernels under QEMU with exact, "
                         "repeatable instruction counts (-icount shift=0).",
                         epilog=EPILOG, formatter_class=raw_formatter)
    ls = lab.add_subparsers(dest="lab_command", metavar="ACTION", required=True)
    r = ls.add_parser("run", help="boot, run COMMAND, copy results back, power off",
                      epilog=EPILOG, formatter_class=raw_formatter)
    r.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    r.add_argument("--out", default="lab-out", help="folder for the command's files (default lab-out)")
    r.add_argument("--timeout", type=float, default=300, help="seconds before the guest is killed")
    r.add_argument("--sysctl", action="append", default=[], metavar="PATH=VALUE",
                   help="write VALUE to PATH in the guest before the command (the guest's own "
                   "settings, e.g. /proc/sys/kernel/perf_user_access=1)")
    r.add_argument("--console-log", metavar="FILE", help="keep the raw console output")
    r.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="set an environment variable for the command")
    r.add_argument("--add", action="append", default=[], metavar="PATH", type=Path,
                   help="copy your own static binary (to /bin) or folder (to /NAME, its "
                   "top-level executables also on /bin) into the guest; repeatable")
    r.add_argument("--root", action="append", default=[], metavar="DIR", type=Path,
                   help="a folder laid out like the guest's root (bin/, lib/...): its files join the guest "
                   "at the same paths, for dynamically linked programs and their loader and "
                   "libraries; its <arch>/ subfolder when it has one (one folder for --arch "
                   "both); repeatable")
    r.add_argument("--shell", action="store_true",
                   help="run COMMAND with sh -c (Debian's busybox-static, put into the guest "
                   "as /bin/sh): pipes, redirections, loops; one quoted argument is the script")
    r.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ...")
    r.set_defaults(run=_run)
    rec = ls.add_parser("record", help="precise profile of a command, sampled in the emulator",
                        description="Boot the guest with the lab's precise sampler (a QEMU TCG "
                        "plugin: exact event counts, the precise instruction of every sample, "
                        "frame-pointer call chains read from guest memory; nothing in the guest "
                        "changes) and run COMMAND. Writes OUT/<arch>.perf.data (perf reads it, "
                        "naming kernel frames with OUT/<arch>.kallsyms), OUT/<arch>.hpmprof (COMMAND and its children; --comm narrows it) and "
                        "with --exact OUT/<arch>.exact.tsv (instructions per function, counted, "
                        "not sampled) and OUT/<arch>.exact-paths.tsv.gz (kernel instructions per "
                        "call path, as 'hpmkit compare' checks its ratios). docs/pes.md.",
                        epilog=RECORD_EPILOG, formatter_class=raw_formatter)
    rec.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    rec.add_argument("-o", "--out", required=True, type=Path, help="output folder")
    rec.add_argument("-e", "--event", default="instructions",
                     help="event to sample on: instructions (default), loads, stores, branches, "
                     "taken-branches")
    rec.add_argument("-c", "--period", type=int, default=10000,
                     help="mean events between samples (default 10000; each period is jittered "
                     "so sampling cannot resonate with a loop; 'lab suite', which makes the "
                     "data of 'hpmkit compare', samples every 2000: docs/compare.md)")
    rec.add_argument("--seed", type=int, default=1, help="jitter seed (default 1)")
    rec.add_argument("--exact", action="store_true",
                     help="also count every instruction per function and kernel call path "
                     "(no sampling)")
    rec.add_argument("--comm", action="append", default=[], metavar="NAME",
                     help="keep only samples of tasks with this name (repeatable)")
    rec.add_argument("--add", action="append", default=[], metavar="PATH", type=Path,
                     help="copy your own static binary or folder into the guest (as lab run)")
    rec.add_argument("--root", action="append", default=[], metavar="DIR", type=Path,
                     help="a folder laid out like the guest's root, for dynamically linked "
                     "programs (as lab run)")
    rec.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                     help="set an environment variable for the command")
    rec.add_argument("--timeout", type=float, default=600, help="seconds before the guest is killed")
    rec.add_argument("--shell", action="store_true",
                     help="run COMMAND with sh -c (as lab run; the shell's own work is in the "
                     "profile too)")
    _scale_flags(rec, "with --arch both: record both ISAs")
    rec.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ...")
    rec.set_defaults(run=_record)
    su = ls.add_parser("suite", help="record a suite of workloads (ksuite, rt-tests, your own) as profiles",
                       description="Record every workload of the suite (ksuite, hpmkit's own; "
                       "rt-tests, seed 001's, Debian's binary packages unpacked into the "
                       "guest, commands in data/lab/rt-tests.tsv; or a table of your own: "
                       "NAME<TAB>COMMAND lines, programs brought in by --add or --root) or "
                       "--workload ones in its "
                       "own boot, by default with the lab's precise sampler (in the emulator, "
                       "on retired instructions, the workload's processes only; see 'hpmkit lab "
                       "record'), and save it as OUT/<arch>/<workload>.hpmprof. This is how "
                       "examples/lab-suite, the data of 'hpmkit compare', is made.",
                       epilog="examples:\n  hpmkit lab suite --arch both --out examples/lab-suite\n"
                       "  hpmkit lab suite --arch riscv64 --workload pipe --out /tmp/s\n"
                       "  hpmkit lab suite --suite rt-tests --arch both --out examples/rt-tests\n"
                       "  hpmkit lab suite --suite mine.tsv --root ./sysroot --arch both --out prof\n"
                       "  hpmkit compare prof/riscv64 --vs prof/aarch64    (then: the cross-ISA report)\n"
                       "  hpmkit lab suite --arch both -j 2 --out /tmp/s      (two guests at once)\n"
                       "  hpmkit lab suite --arch both --cluster tcp://sched:8786 --out /tmp/s\n"
                       "\nA run that fails is retried once, then named with its worker; the "
                       "others are kept\nand the exit status is 1.\n",
                       formatter_class=raw_formatter)
    su.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    su.add_argument("--out", required=True, help="folder for <arch>/<workload>.hpmprof")
    su.add_argument("--suite", default="ksuite", metavar="NAME|FILE",
                    help="which workloads: ksuite (default), rt-tests (downloaded from Debian "
                    "and checked against its signed index the first time) or FILE, your own "
                    "table of NAME<TAB>COMMAND lines ('#' comments)")
    su.add_argument("--add", action="append", default=[], metavar="PATH", type=Path,
                    help="copy your own static binary or folder into every guest (as lab run)")
    su.add_argument("--root", action="append", default=[], metavar="DIR", type=Path,
                    help="a folder laid out like the guest's root, for dynamically linked "
                    "programs (as lab run)")
    su.add_argument("--workload", action="append", metavar="NAME",
                    help="only this workload (repeatable; default: all of the suite)")
    su.add_argument("--raw", metavar="DIR", help="keep the perf.data files here "
                    "(default .cache/lab/suite-raw, suite-raw-<suite> for the others)")
    su.add_argument("--sampler", choices=["precise", "interrupt"], default="precise",
                    help="precise: in-emulator sampling on retired instructions (default); "
                    "interrupt: hpm record in the guest on cpu-clock (skewed: docs/pes.md)")
    su.add_argument("-c", "--period", type=int, default=None,
                    help="sampling period (default 2000 instructions precise, 100000 ns "
                    "interrupt)")
    su.add_argument("--reimport", action="store_true",
                    help="make the profiles from perf.data files already in the raw folder "
                    "(record only the missing ones)")
    _scale_flags(su, "record this many workloads")
    su.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    su.set_defaults(run=_suite)
    p = ls.add_parser("prepare", help="prepare (build or download) the kernels")
    p.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    p.set_defaults(run=_prepare)


def _argv(args) -> list[str]:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise LabError(f"lab {args.lab_command}: give the command after '--' "
                       f"(hpmkit lab {args.lab_command} --help)")
    if getattr(args, "shell", False):
        from . import shell
        for arch in _arches(args.arch):
            shell.root(arch)           # fetched (once) before anything boots
        args.root = [*args.root, shell.base()]
        return shell.wrap(argv)
    return argv


def _env(items: list[str]) -> dict[str, str]:
    env = {}
    for s in items:
        name, eq, val = s.partition("=")
        if not eq or not name:
            raise LabError(f"--env wants NAME=VALUE, got '{s}'")
        env[name] = val
    return env


def _record(args) -> int:
    from . import record
    from .executor import run_jobs
    from .jobs import make_bundle
    argv = _argv(args)
    opts = record.Options(event=args.event, period=args.period, seed=args.seed,
                          exact=args.exact, comms=args.comm, add=args.add, roots=args.root,
                          timeout=args.timeout, env=_env(args.env))
    if args.jobs is not None and args.jobs < 1:
        raise LabError(f"-j wants a number of jobs of at least 1, got {args.jobs}")
    arches = _arches(args.arch)
    outputs.check_folder(args.out, "--out")
    jobs = [record.make_job(arch, argv, opts, key=arch) for arch in arches]
    for arch in arches:
        record.progress(f"{arch}: {' '.join(argv)} (event {opts.event}, period {opts.period})")
    bundles = {arch: make_bundle(arch) for arch in arches}
    # the command's own output and status are the answer here, so a nonzero exit is not a
    # failed run; a guest that cannot run the command is (cannot run it on a retry either)
    res = run_jobs(jobs, bundles, lambda j, r: (j, r), workers=args.jobs,
                   cluster=args.cluster, label="lab record", quiet=True)
    for key, msg in res.failed.items():
        raise LabError(f"{key}: {msg}")
    rc = 0
    for arch in arches:
        job, r = res.done[arch]
        rec = record.finish(job, r, args.out, opts)
        sys.stdout.write(rec.stdout.decode(errors="replace"))
        sys.stdout.flush()
        sys.stderr.write(rec.stderr.decode(errors="replace"))
        notes = "; ".join(f"{v} {k}" for k, v in rec.skipped.items())
        record.progress(f"{arch}: exit status {rec.status}; {rec.kept} samples in {rec.profile}"
                        + (f" (left out: {notes})" if notes else ""))
        if rec.exact:
            record.progress(f"{arch}: exact counts per function in {rec.exact}")
        rc = rc or rec.status
    return rc


def _arches(a: str) -> list[str]:
    return list(guest.ARCHES) if a == "both" else [a]


def _suite(args) -> int:
    from . import suite
    if args.jobs is not None and args.jobs < 1:
        raise LabError(f"-j wants a number of jobs of at least 1, got {args.jobs}")
    su = suite.get(args.suite, args.root, args.add)
    known = su.workloads()
    bad = [w for w in args.workload or [] if w not in known]
    if bad:
        raise LabError(f"unknown workload{'s' if len(bad) > 1 else ''} {', '.join(bad)} "
                       f"({su.name} has: {' '.join(known)})")
    # a missing --root or --add is named before anything is recorded
    for arch in _arches(args.arch):
        for r in args.root:
            guest.root_of(r, arch)
    for a in args.add:
        if not a.exists():
            raise LabError(f"--add {a}: no such file or folder")
    if args.period is not None and args.period < 1:   # 0 would read as "the default"
        raise LabError(f"--period must be at least 1, got {args.period}")
    outputs.check_folder(args.out, "--out")
    if args.raw:
        outputs.check_folder(args.raw, "--raw")
    paths = suite.record_suite(_arches(args.arch), Path(args.out), args.workload,
                               Path(args.raw) if args.raw else None, period=args.period,
                               reuse_raw=args.reimport, sampler=args.sampler, jobs=args.jobs,
                               cluster=args.cluster, quiet=args.quiet, suite=su)
    print(f"lab suite: {len(paths)} profile(s) in {args.out}/", file=sys.stderr)
    return 0


def _prepare(args) -> int:
    for arch in _arches(args.arch):
        print(f"{arch}: {guest.kernel(arch)}")
    return 0


def _cannot_run(arch: str, name: str, err_no: int, shell: bool) -> LabError:
    """The guest could not exec the command: what its PATH holds and how to get a shell."""
    hint = (f"--shell runs the script with /bin/sh, Debian's busybox-static in "
            f"{guest.CACHE / 'busybox' / arch}: delete that folder to fetch it again" if shell else
            "no shell unless asked: for pipes, redirections and loops give --shell and the script "
            f"as one quoted argument, e.g. hpmkit lab run --arch {arch} --shell -- "
            "'ksuite list | head -3'; other programs: --add a static binary")
    err = LabError(f"{arch} guest: cannot run '{name}': {os.strerror(err_no)} "
                   f"(the guest's PATH is /bin: {', '.join(guest.bin_names(arch))}; {hint})")
    # like a shell (and perf): 127 for a command that is not there, 126 for one that cannot be run
    err.exit_code = 127 if err_no == errno.ENOENT else 126
    return err


def _run(args) -> int:
    argv = _argv(args)
    sysctls = {}
    for s in args.sysctl:
        path, eq, val = s.partition("=")
        if not eq or not path.startswith("/proc/sys/"):
            raise LabError(f"--sysctl wants /proc/sys/PATH=VALUE, got '{s}'")
        sysctls[path] = val
    env = _env(args.env)
    # outputs that can never be written are named before a guest boots
    outputs.check_folder(args.out, "--out")
    if args.console_log:
        outputs.check(args.console_log, "--console-log")
    rc = 0
    for arch in _arches(args.arch):
        added = guest.added_files(args.add, [guest.root_of(r, arch) for r in args.root])
        if args.arch == "both":
            print(f"== {arch} ==", flush=True)
        log = Path(f"{args.console_log}.{arch}" if args.arch == "both" else args.console_log) \
            if args.console_log else None
        res = guest.run(arch, argv, timeout=args.timeout, sysctls=sysctls, console_log=log,
                        env=env, add=added)
        if res.exec_errno is not None:
            raise _cannot_run(arch, argv[0], res.exec_errno, args.shell)
        for w in res.warnings:
            print(f"lab: {arch} guest: {w}", file=sys.stderr)
        sys.stdout.write(res.stdout.decode(errors="replace"))
        sys.stdout.flush()
        sys.stderr.write(res.stderr.decode(errors="replace"))
        outs = {k[4:]: v for k, v in res.files.items() if k.startswith("out/")}
        if outs:
            d = Path(args.out) / arch
            d.mkdir(parents=True, exist_ok=True)
            for name, data in outs.items():
                tmp = d / f".{name}.tmp"
                tmp.write_bytes(data)
                tmp.replace(d / name)
            print(f"lab: {arch}: {len(outs)} file(s) in {d}/", file=sys.stderr)
        print(f"lab: {arch}: exit status {res.status}, {res.seconds:.1f} s", file=sys.stderr)
        rc = rc or res.status
    return rc
