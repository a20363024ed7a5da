#!/usr/bin/env python3
"""Sampled kernel call paths against exact ones, per workload of a lab suite folder.

The lab sampler writes two independent views of the same run: samples, each with the
call chain a frame walk read at that instruction, and exact counts of every kernel
instruction under the call path exact mode followed through calls and returns
(docs/pes.md). If both are right, each path's share of the samples matches its share of
the exact kernel instructions, up to sampling noise. This prints, per workload, half the
L1 distance between the two distributions over raw paths (no entry frames dropped, no
names normalised; 0 % = identical), the distance sampling noise alone gives (as many
samples drawn from the exact distribution, seed 1: thousands of rare paths make it
several points), and the paths that differ most.

    .venv/bin/python tools/exact_paths_check.py examples/lab-suite [--arch riscv64] [--top 3]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from collections import Counter
from pathlib import Path

from hpmkit.exacttables import read_exact_paths
from hpmkit.profile import Profile


def kernel_paths(prof: Path) -> Counter:
    """root -> leaf kernel path -> samples"""
    p = Profile.load(prof)
    out: Counter = Counter()
    per = Counter(p.samples.column("stack_id").to_pylist())
    nk = dict(zip(p.stacks.column("stack_id").to_pylist(), p.stacks.column("nkernel").to_pylist()))
    for sid, c in per.items():
        k = nk.get(sid) or 0
        if k > 0:
            out[tuple(reversed(p.stack_symbols(sid)[:k]))] += c
    return out


def check(folder: Path, arch: str, workload: str, top: int) -> float:
    got = kernel_paths(folder / arch / f"{workload}.hpmprof")
    exact: Counter = Counter()
    for n, stack in read_exact_paths(folder / arch / f"{workload}.exact-paths.tsv.gz"):
        exact[tuple(stack)] += n
    ns, ne = sum(got.values()), sum(exact.values())
    if not ns or not ne:
        print(f"{arch} {workload}: no kernel samples or counts")
        return 0.0, 0.0
    keys = set(got) | set(exact)
    diff = {k: got[k] / ns - exact[k] / ne for k in keys}
    dist = sum(abs(v) for v in diff.values()) / 2
    p = np.array(list(exact.values()), float) / ne
    draw = np.random.default_rng(1).multinomial(ns, p) / ns
    noise = float(np.abs(draw - p).sum()) / 2
    print(f"{arch} {workload}: {ns} kernel samples, {ne:,} exact kernel instructions, "
          f"{len(exact)} exact paths; distance {100 * dist:.1f} % (sampling noise alone "
          f"{100 * noise:.1f} %)")
    for k in sorted(keys, key=lambda k: -abs(diff[k]))[:top]:
        print(f"    sampled {100 * got[k] / ns:5.2f} %  exact {100 * exact[k] / ne:5.2f} %  "
              + " > ".join(k[-6:]))
    return dist, noise


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--arch", action="append", help="riscv64, aarch64 (default both)")
    ap.add_argument("--workload", action="append", help="default: every one with an exact-paths table")
    ap.add_argument("--top", type=int, default=3)
    a = ap.parse_args()
    for arch in a.arch or ("riscv64", "aarch64"):
        names = a.workload or sorted(f.name.removesuffix(".exact-paths.tsv.gz")
                                     for f in (a.folder / arch).glob("*.exact-paths.tsv.gz"))
        got = [check(a.folder, arch, w, a.top) for w in names]
        d = sorted(x for x, _ in got)
        e = sorted(x - n for x, n in got)
        if d:
            print(f"{arch}: {len(d)} workloads, distance median {100 * d[len(d) // 2]:.1f} %, "
                  f"largest {100 * d[-1]:.1f} %; above sampling noise: median "
                  f"{100 * e[len(e) // 2]:.1f} points, largest {100 * e[-1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
