#!/usr/bin/env python3
"""Wall time of `hpmkit lab suite` serially, with -j N here, and (--dask) on a local Dask
cluster of N worker processes; and how well the simple model predicts it.

The model: the recordings are independent, so with W workers the batch takes about the
makespan of the jobs' serial times packed onto W workers (longest first), plus the profile
making that runs on the client after each result. Each job's time is measured in the serial
run, so the prediction for W workers uses nothing measured with W workers. On a 2-core
machine W > 2 cannot be checked here; the table gives the model's numbers for it.

Not a test: on a shared VM the numbers move with the other jobs.

    .venv/bin/python bench/scale/run.py [--workload NAME ...] [-j 2] [--dask] [--json F]
"""
import argparse
import heapq
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from hpmkit.lab import executor, jobs, suite  # noqa: E402

DEFAULT = ["syscalls", "pipe", "fd-alloc", "mmap", "unix-stream", "udp-loopback", "pagefault",
           "ctxswitch"]


def makespan(times: list[float], w: int) -> float:
    """Longest-processing-time-first packing of the jobs onto w workers."""
    load = [0.0] * w
    for t in sorted(times, reverse=True):
        heapq.heappush(load, heapq.heappop(load) + t)   # the least loaded worker takes it
    return max(load)


def batch(names, arches, out: Path, workers=None, cluster=None):
    """One suite run; wall time, per-job guest seconds, client-side finishing seconds."""
    todo = [suite.precise_job(a, w) for a in arches for w in names]
    bundles = {a: jobs.make_bundle(a) for a in arches}
    fin = []

    def finish(job, res):
        t = time.monotonic()
        p = suite.finish_precise(job, res, out / "raw", out / "prof", suite.PRECISE_PERIOD)
        fin.append(time.monotonic() - t)
        return p

    t0 = time.monotonic()
    o = executor.run_jobs(todo, bundles, finish, accept=suite.command_failed, workers=workers,
                          cluster=cluster, label="bench", quiet=True)
    wall = time.monotonic() - t0
    if o.failed:
        raise SystemExit(f"bench: failed: {o.failed}")
    return wall, o.seconds, sum(fin), o.workers


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="append", help=f"default: {' '.join(DEFAULT)}")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--dask", action="store_true", help="also a local Dask cluster of -j workers")
    ap.add_argument("--json")
    a = ap.parse_args()
    names = a.workload or DEFAULT
    arches = ["riscv64", "aarch64"]
    res = {"machine": f"{os.cpu_count()} cores", "workloads": names, "jobs": len(names) * 2}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # warm: bundles made and materialised once, so no run pays for it
        for arch in arches:
            jobs.materialise(jobs.make_bundle(arch))
        wall1, secs, fin1, _ = batch(names, arches, tmp / "serial", workers=1)
        res["serial"] = {"wall": wall1, "job_seconds": secs, "finish": fin1}
        walln, secsn, finn, _ = batch(names, arches, tmp / "pool", workers=a.j)
        res[f"j{a.j}"] = {"wall": walln, "finish": finn}
        if a.dask:
            from distributed import LocalCluster
            os.environ["HPMKIT_BUNDLE_CACHE"] = str(tmp / "worker-cache")
            with LocalCluster(n_workers=a.j, threads_per_worker=1, processes=True,
                              dashboard_address=None, worker_dashboard_address=None) as cl:
                walld, _, find, used = batch(names, arches, tmp / "dask",
                                             cluster=cl.scheduler_address)
            res["dask"] = {"wall": walld, "finish": find, "workers_used": len(set(used.values()))}
    times = list(secs.values())
    cores = os.cpu_count() or 1
    last = fin1 / len(times)

    def cluster(w):
        """W workers, the client on a core of its own: the guests' makespan or the client's
        profile making, whichever is longer, then the last result's profile."""
        return max(makespan(times, w), fin1) + last

    def here(w):
        """On this machine the client shares the cores with the guests: CPU-bound once
        W >= cores."""
        return max(cluster(w), (sum(times) + fin1) / cores if w >= cores else 0.0)

    model = {w: cluster(w) for w in (1, 2, 4, 8, 16, 32)}
    res["model"] = {"cluster": model, "here": {w: here(w) for w in (1, a.j)}}
    print(f"{len(times)} recordings ({', '.join(names)} on riscv64 and aarch64); "
          f"guest runs {sum(times):.1f} s in all, longest {max(times):.1f} s; profiles made "
          f"here {fin1:.1f} s; {cores} cores")
    print(f"{'executor':<22}{'wall s':>8}{'speed-up':>10}{'model s':>9}{'error':>8}")

    def row(name, wall, pred):
        print(f"{name:<22}{wall:>8.1f}{wall1 / wall:>10.2f}{pred:>9.1f}{(pred - wall) / wall:>+8.0%}")

    row("serial (-j 1)", wall1, here(1))
    row(f"-j {a.j}", walln, here(a.j))
    if a.dask:
        row(f"Dask, {a.j} workers", res["dask"]["wall"], here(a.j))
    print("model for a cluster of W one-core workers (client on its own core): "
          + ", ".join(f"W={w}: {t:.1f} s" for w, t in model.items()))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
