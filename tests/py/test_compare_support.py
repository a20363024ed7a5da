"""Shared builders for the compare tests (no tests here): realistic Linux 6.1 kernel stacks
from tests/data/compare/kstacks-6.1.tsv turned into context tables with chosen costs."""
from __future__ import annotations

import math
import random
from pathlib import Path

from hpmkit.compare.contexts import ContextTable

KSTACKS = Path(__file__).resolve().parents[1] / "data" / "compare" / "kstacks-6.1.tsv"


def kstacks() -> list[dict]:
    rows, header = [], None
    for line in KSTACKS.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        r = dict(zip(header, cells))
        rows.append({"workload": r["workload"], "user": r["user"].split(";"),
                     "riscv64": r["riscv64"].split(";") if r["riscv64"] else None,
                     "aarch64": r["aarch64"].split(";") if r["aarch64"] else None})
    return rows


def tables(*, seed: int = 1, slow: dict[str, float] | None = None, base_ratio: float = 1.3,
           noise: float = 0.08, samples: int = 400, period: int = 10_000, cpi_a: float = 1.6,
           cpi_b: float = 1.2, user_share: float = 0.3) -> tuple[ContextTable, ContextTable]:
    """riscv64 (A) and aarch64 (B) tables for every fixture stack.

    Each stack gets a weight; B's cycles = weight * samples * period; A's = B's * base_ratio *
    lognormal noise, times slow[leaf] for planted anomalies (leaf = last raw frame on A).
    Instructions follow from per-side CPI (with noise). User-space samples are added so the
    kernel share is realistic.
    """
    rnd = random.Random(seed)
    slow = slow or {}
    a = ContextTable("riscv64", "6.1.192", "riscv64-fixture")
    b = ContextTable("aarch64", "6.1.0-26-arm64", "aarch64-fixture")
    for r in kstacks():
        w = rnd.uniform(0.5, 2.0)
        base_b = w * samples * period
        factor = base_ratio * math.exp(rnd.gauss(0, noise))
        if r["riscv64"]:
            factor *= slow.get(r["riscv64"][-1], 1.0)
        for t, isa, cyc, cpi in ((a, "riscv64", base_b * factor, cpi_a), (b, "aarch64", base_b, cpi_b)):
            k = r[isa]
            if k is None:
                continue
            ins = cyc / (cpi * math.exp(rnd.gauss(0, noise / 2)))
            t.add(r["workload"], r["user"] + k, len(k), samples=max(1, round(cyc / period)),
                  cycles=cyc, instructions=ins)
    for t in (a, b):
        for wl in sorted(set(t.workload)):
            kern = sum(c[1] for w, c in zip(t.workload, t.costs) if w == wl)
            cyc = kern * user_share / (1 - user_share)
            t.add(wl, ["_start", "__libc_start_main", "main", "spin"], 0, samples=round(cyc / period),
                  cycles=cyc, instructions=cyc / 1.1)
    return a, b


class ExactTables:
    """exact.Exact's interface with per-function tables only: `a`, `b` are (table, total) of
    one workload, as exact.read_table gives them."""

    def __init__(self, workload: str, a, b):
        self.ta, self.tb = {workload: "a"}, {workload: "b"}
        self._t = {"a": a, "b": b}

    def any(self):
        return True

    def table(self, t):
        return self._t[t]
