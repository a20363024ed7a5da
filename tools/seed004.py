#!/usr/bin/env python3
"""Seed 004 in the lab: how much of a UDP/TCP loopback workload is the kernel's memcpy and
its user-copy routines, on riscv64 and aarch64, with aligned and misaligned user buffers.

Each case is one `hpmkit lab record --arch both --exact` of `ksuite --lab udp-loopback` or
`tcp-loopback` with $KSUITE_NET_MISALIGN set (docs/ksuite.md). The numbers are the exact
tables (every instruction of the command's processes counted, user, kernel and firmware);
the share of the precise sampler's samples (leaf function) is shown beside them as a check.
Prints a Markdown table (docs/network.md has one, made by this script).

usage: .venv/bin/python tools/seed004.py [-o DIR] [--reuse] [-n N] [--period P]
       .venv/bin/python tools/seed004.py --sweep [-o DIR] [-n N]
  -o DIR    keep the recordings in DIR/<workload>-<offset>/ (default: a temporary folder)
  --reuse   read the recordings already in DIR instead of recording again
  -n N      iterations (datagrams / 16 KiB chunks; default: ksuite's lab count, 8000)
  --sweep   instead: copy instructions per datagram/chunk for offsets 0..7 (exact counts,
            default 500 iterations)
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

ARCHES = ("riscv64", "aarch64")
# (workload, user-buffer offset from a 64-byte boundary). Offset 1 is udp-loopback's default,
# 0 tcp-loopback's. A UDP payload starts 44 bytes into its skb's data (16 reserved for the
# link header, 20 IP, 8 UDP), 4 mod 8: offset 4 is the one where user and kernel buffers are
# mutually aligned (measured with --sweep: riscv64's copies drop to a third there only).
CASES = (("udp-loopback", 1), ("udp-loopback", 0), ("udp-loopback", 4),
         ("tcp-loopback", 1), ("tcp-loopback", 0))
SWEEP_ITERS = 500
LAB_ITERS = 8000            # ksuite's lab count of both workloads (workloads/ksuite/main.c)
UNIT = {"udp-loopback": "datagram", "tcp-loopback": "chunk"}

# Kernel function names per ISA, as the exact tables spell them (Linux 6.1). riscv's
# __asm_copy_to_user and __asm_copy_from_user are one address, so a table shows only one of
# the two; arm64's memcpy is also reachable as __memcpy. Only kernel rows count: ksuite's
# own (user-space) memcpy is not what seed 004 measured.
MEMCPY = {"riscv64": {"memcpy", "__memcpy"}, "aarch64": {"memcpy", "__memcpy"}}
UCOPY = {"riscv64": {"__asm_copy_to_user", "__asm_copy_from_user"},
         "aarch64": {"__arch_copy_to_user", "__arch_copy_from_user"}}


@dataclass
class Result:
    workload: str
    offset: int
    arch: str
    iters: int
    total: int                  # exact instructions of the command's processes
    memcpy: int                 # exact instructions in kernel memcpy
    ucopy: int                  # exact instructions in the kernel's user-copy routines
    samples: int                # precise samples of the command's processes
    s_memcpy: float             # sampled leaf shares
    s_ucopy: float
    top: list                   # [(function, insns)] the largest exact rows

    @property
    def memcpy_share(self) -> float:
        return self.memcpy / self.total

    @property
    def ucopy_share(self) -> float:
        return self.ucopy / self.total


def case_dir(out: Path, workload: str, offset: int) -> Path:
    return out / f"{workload}-{offset}"


def record(out: Path, workload: str, offset: int, iters: int | None, period: int) -> None:
    """Both ISAs of one case, with the lab's precise sampler and exact counts."""
    argv = [str(ROOT / ".venv" / "bin" / "hpmkit"), "lab", "record", "--arch", "both",
            "--exact", "-c", str(period), "--env", f"KSUITE_NET_MISALIGN={offset}",
            "-o", str(case_dir(out, workload, offset)), "--", "ksuite", "--lab", workload]
    if iters:
        argv.append(str(iters))
    p = subprocess.run(argv, capture_output=True, text=True)
    want = f"ksuite: {workload} iterations={iters or LAB_ITERS} ok"
    if p.returncode or p.stdout.count(want) != len(ARCHES):
        raise SystemExit(f"seed004: {' '.join(argv[1:])} failed (exit {p.returncode}):\n"
                         f"{p.stdout[-500:]}{p.stderr[-1500:]}")


def read_exact(path: Path) -> list[tuple[str, str, int]]:
    """(priv, function, instructions) of each row of an <arch>.exact.tsv."""
    rows = []
    with open(path) as f:
        col = {n: i for i, n in enumerate(f.readline().rstrip("\n").split("\t"))}
        for line in f:
            v = line.rstrip("\n").split("\t")
            rows.append((v[col["priv"]], v[col["function"]], int(v[col["insns"]])))
    return rows


def measure(out: Path, workload: str, offset: int, arch: str, iters: int,
            sampled: bool = True) -> Result:
    d = case_dir(out, workload, offset)
    rows = read_exact(d / f"{arch}.exact.tsv")
    total = sum(n for _, _, n in rows)
    mc = sum(n for p, f, n in rows if p == "kernel" and f in MEMCPY[arch])
    uc = sum(n for p, f, n in rows if p == "kernel" and f in UCOPY[arch])
    top = sorted(((f if p == "kernel" else f"{f} ({p})", n) for p, f, n in rows),
                 key=lambda r: -r[1])[:6]
    ns, sm, su = 0, float("nan"), float("nan")
    if sampled:
        from hpmkit.lab import truth
        from hpmkit.profile import Profile
        prof = Profile.load(d / f"{arch}.hpmprof")
        ns = prof.samples.num_rows
        # leaf shares of all samples; kernel and user functions of one name would merge
        # here, but ksuite's user-space memcpy has a few hundred instructions (exact table)
        sh = truth.sampled_shares(prof)
        sm = sum(sh.get(f, 0.0) for f in MEMCPY[arch])
        su = sum(sh.get(f, 0.0) for f in UCOPY[arch])
    return Result(workload, offset, arch, iters, total, mc, uc, ns, sm, su, top)


def pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f} %"


def table(results: list[Result]) -> str:
    head = ("| workload | buffer offset | ISA | memcpy | user copy | sum | sampled sum "
            "| instructions per unit | of which copies |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
    lines = []
    for r in results:
        lines.append(
            f"| {r.workload} | {r.offset} | {r.arch} | {pct(r.memcpy_share)} | "
            f"{pct(r.ucopy_share)} | **{pct(r.memcpy_share + r.ucopy_share)}** | "
            f"{pct(r.s_memcpy + r.s_ucopy)} | {r.total / r.iters:,.0f} per {UNIT[r.workload]} | "
            f"{(r.memcpy + r.ucopy) / r.iters:,.0f} |")
    return head + "\n".join(lines) + "\n"


def tops(results: list[Result]) -> str:
    out = []
    for r in results:
        items = ", ".join(f"{f} {100 * n / r.total:.1f} %" for f, n in r.top)
        out.append(f"- {r.workload} offset {r.offset}, {r.arch}: {items}")
    return "\n".join(out) + "\n"


def sweep(results: list[Result]) -> str:
    """Kernel copy instructions (memcpy + user copy) per unit, one row per workload and
    ISA, one column per offset."""
    offs = sorted({r.offset for r in results})
    out = ["| workload | ISA | " + " | ".join(f"offset {o}" for o in offs) + " |",
           "|---|---|" + "---:|" * len(offs)]
    for w in dict.fromkeys(r.workload for r in results):
        for arch in ARCHES:
            by = {r.offset: r for r in results if r.workload == w and r.arch == arch}
            out.append(f"| {w} | {arch} | " + " | ".join(
                f"{(by[o].memcpy + by[o].ucopy) / by[o].iters:,.0f}" for o in offs) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", type=Path)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("-n", "--iters", type=int)
    ap.add_argument("--period", type=int, default=10000)
    ap.add_argument("--sweep", action="store_true")
    a = ap.parse_args()
    if a.reuse and not a.out:
        ap.error("--reuse needs -o DIR")
    tmp = None if a.out else tempfile.TemporaryDirectory(prefix="seed004-")
    out = a.out or Path(tmp.name)
    results = []
    if a.sweep:
        n = a.iters or SWEEP_ITERS
        for w in dict.fromkeys(w for w, _ in CASES):
            for off in range(8):
                if not a.reuse:
                    print(f"seed004: recording {w} offset {off}", file=sys.stderr, flush=True)
                    record(out, w, off, n, a.period)
                results += [measure(out, w, off, arch, n, sampled=False) for arch in ARCHES]
        print(sweep(results))
        return 0
    for w, off in CASES:
        if not a.reuse:
            print(f"seed004: recording {w} offset {off}", file=sys.stderr, flush=True)
            record(out, w, off, a.iters, a.period)
        results += [measure(out, w, off, arch, a.iters or LAB_ITERS) for arch in ARCHES]
    print(table(results))
    print("Largest functions (exact share of all instructions):\n")
    print(tops(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
