"""`hpmkit lab run|prepare`: the command-line side of the lab."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import guest
from .protocol import LabError

EPILOG = """\
examples:
  hpmkit lab run --arch riscv64 -- hpm stat -e instructions:u -- hpm-loop 1000
  hpmkit lab run --arch both -- hpm list --pmus
  hpmkit lab run --arch aarch64 --out res -- hpm stat --json -o stat.json -e cycles:u -- hpm-loop 10
  hpmkit lab prepare --arch both          (build/download the kernels once; cached in .cache/lab)

The guest has no shell: COMMAND is run directly with PATH=/bin, which holds hpm, hpm-loop,
touch-pages and hpm-unit (the C unit tests). Files the command writes in its working folder
are copied to --out/<arch>/. Exit status: the command's (the first nonzero with --arch both).
"""


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
    r.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ...")
    r.set_defaults(run=_run)
    su = ls.add_parser("suite", help="record the ksuite workloads on both ISAs as profiles",
                       description="Record every ksuite workload (or --workload ones) in its "
                       "own boot with hpm record (cpu-clock sampling, cycles and instructions "
                       "read in each sample, call stacks, whole CPU) and save the workload's "
                       "samples as OUT/<arch>/<workload>.hpmprof. This is how "
                       "examples/lab-suite, the data of 'hpmkit compare', is made.",
                       epilog="examples:\n  hpmkit lab suite --arch both --out examples/lab-suite\n"
                       "  hpmkit lab suite --arch riscv64 --workload pipe --out /tmp/s\n",
                       formatter_class=raw_formatter)
    su.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    su.add_argument("--out", required=True, help="folder for <arch>/<workload>.hpmprof")
    su.add_argument("--workload", action="append", metavar="NAME",
                    help="only this workload (repeatable; default: all of 'ksuite list')")
    su.add_argument("--raw", metavar="DIR", help="keep the perf.data files here "
                    "(default .cache/lab/suite-raw)")
    su.add_argument("--reimport", action="store_true",
                    help="make the profiles from perf.data files already in the raw folder "
                    "(record only the missing ones)")
    su.set_defaults(run=_suite)
    p = ls.add_parser("prepare", help="prepare (build or download) the kernels")
    p.add_argument("--arch", choices=[*guest.ARCHES, "both"], required=True)
    p.set_defaults(run=_prepare)


def _arches(a: str) -> list[str]:
    return list(guest.ARCHES) if a == "both" else [a]


def _suite(args) -> int:
    from . import suite
    paths = suite.record_suite(_arches(args.arch), Path(args.out), args.workload,
                               Path(args.raw) if args.raw else None, reuse_raw=args.reimport)
    print(f"lab suite: {len(paths)} profile(s) in {args.out}/", file=sys.stderr)
    return 0


def _prepare(args) -> int:
    for arch in _arches(args.arch):
        print(f"{arch}: {guest.kernel(arch)}")
    return 0


def _run(args) -> int:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise LabError("lab run: give the command after '--' (hpmkit lab run --help)")
    sysctls = {}
    for s in args.sysctl:
        path, eq, val = s.partition("=")
        if not eq or not path.startswith("/proc/sys/"):
            raise LabError(f"--sysctl wants /proc/sys/PATH=VALUE, got '{s}'")
        sysctls[path] = val
    env = {}
    for s in args.env:
        name, eq, val = s.partition("=")
        if not eq or not name:
            raise LabError(f"--env wants NAME=VALUE, got '{s}'")
        env[name] = val
    rc = 0
    for arch in _arches(args.arch):
        if args.arch == "both":
            print(f"== {arch} ==", flush=True)
        log = Path(f"{args.console_log}.{arch}" if args.arch == "both" else args.console_log) \
            if args.console_log else None
        res = guest.run(arch, argv, timeout=args.timeout, sysctls=sysctls, console_log=log,
                        env=env)
        if res.exec_errno is not None:
            raise LabError(f"{arch} guest: cannot run '{argv[0]}': {os.strerror(res.exec_errno)} "
                           f"(the guest's PATH is /bin: {', '.join(guest.bin_names(arch))})")
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
