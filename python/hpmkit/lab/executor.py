"""Run many lab jobs at once: a local pool (-j N) or a Dask cluster (--cluster ADDRESS).

Guest runs are deterministic and independent, so no scheduler of our own: local jobs go to a
thread pool (each job's work is a QEMU process, the threads only wait for it), cluster jobs
to Dask's scheduler, which copies each ISA's bundle to a worker once. Results come back to
this process, which turns them into files one at a time as they arrive (finish), so output
does not depend on which worker ran what or in which order.

A failed run (the worker could not run it, the guest timed out or crashed, the command
failed) is retried once, then reported with the workload and the worker: never dropped.
Progress: one line per change (running, done, failed) with the totals, on stderr.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from .jobs import Bundle, Job, JobResult, execute, worker_name
from .protocol import LabError

RETRIES = 1


@dataclass
class Outcome:
    """What became of a batch: finished values by job key, and failures (key -> message)."""
    done: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    workers: dict[str, str] = field(default_factory=dict)


def default_jobs() -> int:
    return os.cpu_count() or 1


class _Local:
    """A pool of N threads, each running one guest at a time."""

    def __init__(self, n: int):
        self.n = n
        self.pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="lab")
        self.running: dict[str, str] = {}
        self.lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"{self.n} local job{'s' if self.n != 1 else ''}"

    def _run(self, job: Job, bundle: Bundle) -> JobResult:
        with self.lock:
            self.running[job.key] = worker_name()
        try:
            return execute(job, bundle)
        finally:
            with self.lock:
                self.running.pop(job.key, None)

    def bundle(self, b: Bundle):
        return b

    def submit(self, job: Job, bundle, attempt: int):
        return self.pool.submit(self._run, job, bundle)

    def wait(self, futures, timeout: float):
        done, _ = wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    def now_running(self) -> dict[str, str]:
        with self.lock:
            return dict(self.running)

    def close(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


class _Dask:
    """Jobs on a Dask distributed cluster; bundles scattered once, moved by Dask."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:
            raise LabError("--cluster needs Dask's distributed package: pip install "
                           "'hpmkit[cluster]' (or 'pip install distributed') here and on the "
                           "workers") from None
        try:
            self.client = Client(address, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise LabError(f"cannot reach the Dask scheduler at {address}: {e} (start one with "
                           "'dask scheduler' and workers with 'dask worker ADDRESS')") from None
        self.address = address
        self.keys: dict[str, str] = {}        # dask key -> job key

    @property
    def name(self) -> str:
        n = len(self.client.scheduler_info().get("workers", {}))
        return f"Dask cluster {self.address} ({n} worker{'s' if n != 1 else ''})"

    def bundle(self, b: Bundle):
        return self.client.scatter(b, hash=False)

    def submit(self, job: Job, bundle, attempt: int):
        key = f"hpmkit-lab-{job.key}-try{attempt}-{time.time_ns()}"
        self.keys[key] = job.key
        return self.client.submit(execute, job, bundle, key=key, pure=False)

    def wait(self, futures, timeout: float):
        from distributed import wait as dwait
        try:
            dwait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        except Exception:       # noqa: BLE001 (dask's own timeout type differs by version)
            pass
        return {f for f in futures if f.done()}

    def now_running(self) -> dict[str, str]:
        out = {}
        try:
            for worker, keys in self.client.processing().items():
                for k in keys:
                    if k in self.keys:
                        out[self.keys[k]] = worker
        except Exception:       # noqa: BLE001 (progress only: never fail a batch on it)
            pass
        return out

    def close(self, cancel: bool = False) -> None:
        self.client.close()


def run_jobs(jobs: list[Job], bundles: dict[str, Bundle], finish: Callable[[Job, JobResult], Any],
             accept: Callable[[JobResult], str | None] | None = None, workers: int | None = None,
             cluster: str | None = None, label: str = "lab", quiet: bool = False) -> Outcome:
    """Run jobs (bundles: one per arch) on `workers` local threads, or on the Dask cluster at
    `cluster`; finish(job, result) runs here, as results arrive. accept says why a result
    counts as failed (None: it is fine); a run that fails is retried once."""
    ex = _Dask(cluster) if cluster else _Local(max(1, workers or default_jobs()))
    out = Outcome()
    total = len(jobs)

    def say(msg: str) -> None:
        if not quiet:
            n_run = len(ex.now_running())
            print(f"{label}: [{len(out.done)} done, {n_run} running, {len(out.failed)} failed "
                  f"of {total}] {msg}", file=sys.stderr, flush=True)

    try:
        refs = {arch: ex.bundle(b) for arch, b in bundles.items()}
        if not quiet:
            print(f"{label}: {total} job(s) on {ex.name}", file=sys.stderr, flush=True)
        pending = {}
        attempts: dict[str, int] = {}
        for job in jobs:
            attempts[job.key] = 0
            pending[ex.submit(job, refs[job.arch], 0)] = job
        seen_running: set[str] = set()
        while pending:
            done = ex.wait(set(pending), timeout=2.0)
            for key, worker in sorted(ex.now_running().items()):
                if key not in seen_running:
                    seen_running.add(key)
                    say(f"{key}: running on {worker}")
            for fut in done:
                job = pending.pop(fut)
                try:
                    res = fut.result()
                    why = res.error or (accept(res) if accept else None)
                    where = res.worker
                except Exception as e:      # the worker died or the cluster lost the job
                    res, why, where = None, f"{type(e).__name__}: {e}", "the cluster"
                if why is None:
                    try:
                        out.done[job.key] = finish(job, res)
                        out.seconds[job.key] = res.seconds
                        out.workers[job.key] = res.worker
                        say(f"{job.key}: done in {res.seconds:.1f} s on {res.worker}")
                    except LabError as e:
                        out.failed[job.key] = f"{e} (result from {res.worker})"
                        say(f"{job.key}: FAILED here: {e}")
                    continue
                attempts[job.key] += 1
                if attempts[job.key] <= RETRIES:
                    say(f"{job.key}: failed on {where}: {why}; retrying")
                    seen_running.discard(job.key)
                    pending[ex.submit(job, refs[job.arch], attempts[job.key])] = job
                else:
                    out.failed[job.key] = f"failed twice, last on {where}: {why}"
                    say(f"{job.key}: FAILED on {where}: {why}")
    except BaseException:
        ex.close(cancel=True)
        raise
    ex.close()
    return out
