"""Benchmark: hpmkit compare on 100k distinct kernel contexts per side, target < 10 s.

    .venv/bin/python bench/compare/bench_compare.py [--contexts N] [--html]

Synthetic but shaped like real recordings: paths of 3-14 frames under 300 syscall roots drawn
from a 6000-name vocabulary; 88% of paths identical on both sides, 5% one level deeper on B,
3% deeper on A, 2% with a different leaf, 2% only on one side; heavy-tailed sample counts
(Pareto), so many contexts are too thin, as in practice; A is 1.3x slower with lognormal noise
and 25 planted contexts 3x slower. Timed: stacks -> contexts -> matching -> ratios ->
detection (all five default detectors) -> score -> summary (+ HTML with --html). Printed: the
time, its ratio to the 10 s budget, and to an anchor measured in the same run (one Python pass
summing the same rows into a dict: the least any implementation must do).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from hpmkit.compare import analyse, html, summary  # noqa: E402
from hpmkit.compare.contexts import ContextTable, contexts  # noqa: E402
from hpmkit.compare.gcpause import paused  # noqa: E402

BUDGET = 10.0


def build(n: int, seed: int = 0):
    rnd = random.Random(seed)
    vocab = [f"fn_{i}" for i in range(6000)]
    roots = [f"sys_call{i}" for i in range(300)]
    user = ["_start", "__libc_start_main", "main", "work"]
    a = ContextTable("riscv64", "6.1.192", "bench-A")
    b = ContextTable("aarch64", "6.1.0", "bench-B")
    ea = ["ret_from_syscall"]
    eb = ["el0t_64_sync", "el0t_64_sync_handler", "el0_svc", "do_el0_svc", "el0_svc_common.constprop.0",
          "invoke_syscall"]
    seen = set()
    planted = 0
    while len(seen) < n:
        path = tuple([rnd.choice(roots)] + [rnd.choice(vocab) for _ in range(rnd.randint(2, 13))])
        if path in seen:
            continue
        seen.add(path)
        samples_b = int(min(5000, rnd.paretovariate(1.1) * 4))
        ratio = 1.3 * rnd.lognormvariate(0, 0.1)
        if planted < 25 and samples_b > 60 and rnd.random() < 0.05:
            ratio *= 3
            planted += 1
        u = rnd.random()
        pa, pb = list(path), list(path)
        if u < 0.05:
            pb = pb + [rnd.choice(vocab)]
        elif u < 0.08:
            pa = pa + [rnd.choice(vocab)]
        elif u < 0.10:
            pb[-1] = rnd.choice(vocab)
        elif u < 0.11:
            pb = None
        elif u < 0.12:
            pa = None
        cyc_b = samples_b * 10_000.0
        if pa is not None:
            sa = max(1, round(samples_b * ratio))
            a.add("wl", user + ea + pa, len(pa) + 1, sa, sa * 10_000.0, sa * 6_000.0)
        if pb is not None:
            b.add("wl", user + eb + pb, len(pb) + 6, samples_b, cyc_b, cyc_b * 0.8)
    for t in (a, b):
        t.add("wl", user, 0, 200_000, 2e9, 1.6e9)
    return a, b, planted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", type=int, default=100_000)
    ap.add_argument("--html", action="store_true", help="also time the HTML report")
    args = ap.parse_args()
    a, b, planted = build(args.contexts)
    print(f"input: {len(a.stack)} stacks on A, {len(b.stack)} on B ({planted} planted anomalies)")

    t0 = time.perf_counter()
    d: dict = {}
    for t in (a, b):
        for wl, st, c in zip(t.workload, t.stack, t.costs):
            k = (wl, st)
            d[k] = d.get(k, 0.0) + c[0]
    anchor = time.perf_counter() - t0

    c0 = time.process_time()
    t0 = time.perf_counter()
    pause = paused()  # as the CLI does (hpmkit/compare/gcpause.py)
    pause.__enter__()
    ca, cb = contexts(a), contexts(b)
    t_ctx = time.perf_counter() - t0
    res = analyse.run(ca, cb, analyse.Options())
    t_an = time.perf_counter() - t0 - t_ctx
    s = summary.to_dict(res, 25)
    if args.html:
        html.render(res, s)
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    pause.__exit__(None, None, None)
    hits = sum(1 for r in res.ranked[:25] if r.ratio["cycles"] > 2.5)
    print(f"contexts: {res.coverage.contexts[0]} A, {res.coverage.contexts[1]} B; matched groups "
          f"{len(res.rows)}, too thin {res.thin}, detected on {len(res.rows) - res.thin}")
    print(f"matched by kind (A/B): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in res.coverage.by_kind.items()))
    print(f"planted anomalies in the top 25: {hits} of {planted}")
    print(f"time: contexts {t_ctx:.2f} s, match+detect+score {t_an:.2f} s, total {total:.2f} s"
          + (" (with HTML)" if args.html else ""))
    print(f"cpu time of this process: {cpu:.2f} s (wall > cpu: other processes share the cores; "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"ratio to the {BUDGET:.0f} s budget: {total / BUDGET:.2f}  "
          f"({'PASS' if total < BUDGET else 'FAIL'}); anchor (dict sum of the rows) {anchor:.2f} s, "
          f"total/anchor {total / anchor:.1f}x")
    return 0 if total < BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
