#!/usr/bin/env python3
"""Seed 001's table 6 (the paper's 25 high-priority riscv64 contexts, Linux 5.10 on boards)
mapped onto the lab's Linux 6.1 kernels and a suite folder recorded with exact counts.

For each row of data/compare/seed001-table6.tsv: is the function still a symbol in each lab
kernel (System.map, names normalised as compare normalises frames), which workloads of the
suite reach it as a context's own function, and what `hpmkit compare` makes of the best such
context: preferably one under the paper's caller, then the best ranked, then the one with
the most samples. Beside the sampled ratio and its 95 % interval stands the exact ratio of
the context's call paths (the lab's per-path tables of the same runs), so a row reads as
"the paper's anomaly, measured exactly on 6.1". Rows whose anomaly the paper saw in cycles
or IPC only cannot show in the lab: under -icount, cycles are instructions.

    .venv/bin/python tools/seed001_table6.py examples/lab-suite [examples/rt-tests ...]
        [--a riscv64 --b aarch64]
        [--system-map riscv64=PATH --system-map aarch64=PATH]   (default: the lab kernels,
        prepared first if they are not cached, as every lab command does)
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "data" / "compare" / "seed001-table6.tsv"


def read_table(path: Path = TABLE) -> list[dict[str, str]]:
    lines = [l for l in path.read_text().splitlines() if l and not l.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def kernel_names(arch: str, given: dict[str, str], norm) -> set[str] | None:
    """Normalised function names of the lab kernel of arch (None: no System.map at hand)."""
    from hpmkit.profile.symbols import read_kallsyms
    if arch in given:
        path = Path(given[arch])
    else:
        from hpmkit.lab import guest
        from hpmkit.lab.protocol import LabError
        try:
            path = guest.kernel_files(arch).system_map
        except LabError:   # no cached kernel: the column says "?"
            return None
    k = read_kallsyms(path)
    names = set(k.names) | {o[0] for o in k.overridden.values()}
    return {norm(n) for n in names}


def compare(folders: list[Path], a: str, b: str):
    """One comparison over every suite folder's <a>/ and <b>/ profiles."""
    from hpmkit.compare import analyse, exact, inputs
    from hpmkit.compare.contexts import contexts
    pa = inputs.expand([str(f / a) for f in folders])
    pb = inputs.expand([str(f / b) for f in folders])
    ca, cb = contexts(inputs.load_side(pa)), contexts(inputs.load_side(pb))
    res = analyse.run(ca, cb, analyse.Options())
    return res, exact.Exact(res, pa, pb)


def best(rows, caller: str | None, tests: set[str] = frozenset()):
    """The context to show for a function: in the paper's own test when the suite ran it
    (rt-tests; hackbench-socket and -pipe are hackbench's modes), under the paper's caller if one is, then ranked first, then not thin, then
    by samples on both sides."""
    def key(r):
        under = caller is not None and caller in r.group.anchor[:-1]
        own = any(r.workload == t or r.workload.startswith(t + "-") for t in tests)
        return (not own, not under, r.rank is None, r.rank or 0, r.thin,
                -(r.a[0] + r.b[0]))
    return min(rows, key=key) if rows else None


def fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def render(table, res, src, names: dict[str, set[str] | None], norm) -> str:
    from hpmkit.compare.explain import status_of
    by_fn: dict[str, list] = {}
    for r in res.rows:
        if r.space == "kernel":
            by_fn.setdefault(r.function, []).append(r)
    out = ["| # | function (paper's test) | paper's metrics | in 6.1 riscv64 / arm64 | "
           "reached in the suite by | best context | samples A / B | sampled ratio [95 %] | "
           "exact ratio | compare says |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    visible = reached = agree = 0
    for i, t in enumerate(table, 1):
        fn = norm(t["name_6_1"] if t["name_6_1"] != "-" else t["function"])
        stack = [norm(s) for s in t["seed_stack"].split(";") if s != "..."]
        caller = stack[-2] if len(stack) > 1 else None
        have = ["?" if n is None else ("yes" if fn in n else "no") for n in
                (names.get(res.a.isa), names.get(res.b.isa))]
        rows = by_fn.get(fn, [])
        wls = sorted({r.workload for r in rows})
        r = best(rows, caller, set(t["seed_workload"].split(",")))
        ins = "ins" in t["seed_metrics"].split(",")
        visible += ins
        label = f"`{t['function']}`" + ("" if t["name_6_1"] == "-" else f" (6.1: `{t['name_6_1']}`)")
        cells = [str(i), f"{label} ({t['seed_workload']})", t["seed_metrics"].replace(",", ", "),
                 " / ".join(have), ", ".join(wls) or "none"]
        if r is None:
            cells += ["-", "-", "-", "-", "not reached by the suite" +
                      ("" if ins else "; the paper saw it in cycles/IPC only")]
        else:
            reached += 1
            lo, hi = r.ci("instructions")
            x = src.ratio(r)
            status, why = status_of(r, res)
            said = {"ranked": f"ranked #{r.rank}", "thin": "too thin"}.get(status, "not ranked")
            if status == "not-ranked":
                said += (": within sampling noise" if "sampling noise" in why else
                         ": no detector vote" if "no detector" in why else
                         ": too few detector votes" if "fewer than --vote" in why else "")
            if x is not None and math.isfinite(lo) and lo <= x <= hi:
                agree += 1
            tail = " > ".join(r.group.anchor[-3:])
            cells += [f"{r.workload}: {tail}", f"{r.a[0]:.0f} / {r.b[0]:.0f}",
                      f"{fmt(r.ratio.get('instructions'))} [{fmt(lo)}, {fmt(hi)}]", fmt(x),
                      said + ("" if ins else "; the paper: cycles/IPC only")]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"{len(table)} rows: {reached} reached by the suite, {visible} with an "
               f"instruction anomaly in the paper (the others need cycles, which the lab does "
               f"not model); exact ratio inside the sampled 95 % interval for {agree} of "
               f"{reached}.")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", type=Path, nargs="+",
                    help="suite folder(s) with <arch>/ of profiles and exact tables (several: "
                    "one comparison over all of them)")
    ap.add_argument("--a", default="riscv64")
    ap.add_argument("--b", default="aarch64")
    ap.add_argument("--system-map", action="append", default=[], metavar="ARCH=PATH")
    args = ap.parse_args(argv)
    from hpmkit.compare.names import Normaliser
    from hpmkit.errors import HpmkitError
    norm = Normaliser.load()
    given = dict(s.split("=", 1) for s in args.system_map)
    try:
        res, src = compare(args.suite, args.a, args.b)
        names = {arch: kernel_names(arch, given, norm) for arch in (args.a, args.b)}
    except HpmkitError as e:
        print(f"seed001_table6: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(render(read_table(), res, src, names, norm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
