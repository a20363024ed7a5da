"""Ground truth for the lab's precise sampling: function shares of a sampled profile against
the exact counts of the same run, and exact per-iteration costs against the guest's own PMU.

Both sides are computed here so the test suite, the skew report (tools/lab_skew.py) and a
user checking their own workload use one definition of "share" and "per iteration".
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from . import guest
from .protocol import LabError


def sampled_shares(profile) -> dict[str, float]:
    """Leaf-function share of the samples (each sample stands for the same mean period: the
    jittered periods are independent of where a sample lands, so counts are unbiased)."""
    leaf: Counter = Counter()
    for sid in profile.samples.column("stack_id").to_pylist():
        names = profile.stack_symbols(sid)
        leaf[names[0] if names else "?"] += 1
    n = sum(leaf.values())
    return {k: v / n for k, v in leaf.items()} if n else {}


def exact_shares(rows: list[dict], key: str = "insns") -> dict[str, float]:
    """Function share of the exact counts (rows of <arch>.exact.tsv)."""
    tot: Counter = Counter()
    for r in rows:
        tot[r["function"]] += r[key]
    n = sum(tot.values())
    return {k: v / n for k, v in tot.items()} if n else {}


def share_errors(sampled: dict[str, float], exact: dict[str, float]) -> list[tuple[str, float, float]]:
    """(function, exact, sampled) for every function either side has, largest gap first."""
    names = set(sampled) | set(exact)
    rows = [(f, exact.get(f, 0.0), sampled.get(f, 0.0)) for f in names]
    return sorted(rows, key=lambda r: -abs(r[1] - r[2]))


def pmu_count(arch: str, argv: list[str], event: str = "instructions") -> int:
    """The guest PMU's count of a command (user + kernel, the command and its children), read
    by `hpm stat` in the guest: independent of the emulator-side sampler."""
    res = guest.run(arch, ["hpm", "stat", "-x,", "-e", event, "--", *argv])
    if res.exec_errno is not None or res.status != 0:
        raise LabError(f"{arch}: hpm stat {' '.join(argv)} failed: "
                       f"{res.stderr.decode(errors='replace').strip()[-300:]}")
    for line in res.stderr.decode().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == event:
            return int(f[0])
    raise LabError(f"{arch}: no '{event}' line in hpm stat's output")


def per_call_counts(arch: str, argv: list[str]) -> dict[str, float]:
    """`hpm-truth ... -c`: instructions per call read around each call in the guest."""
    res = guest.run(arch, [*argv, "-c"])
    if res.status != 0:
        raise LabError(f"{arch}: {' '.join(argv)} -c failed: {res.stderr.decode(errors='replace')}")
    out = {}
    for line in res.stdout.decode().splitlines():
        m = re.match(r"(\w+): (\d+) (\d+) ([\d.]+)$", line)
        if m and m.group(1) != "empty":
            out[m.group(1)] = float(m.group(4))
    return out


def exact_total(path: Path, priv: str | None = None) -> int:
    from ..exacttables import read_exact
    return sum(r["insns"] for r in read_exact(path) if priv is None or r["priv"] == priv)
