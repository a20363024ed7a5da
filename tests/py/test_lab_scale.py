"""The lab scales out (hpmkit.lab.jobs, hpmkit.lab.executor, `lab suite -j N --cluster`).

1. Bundles are content-addressed and checked on the worker: a damaged cached file is found
   by its hash and rewritten before a run.
2. Failed runs are retried once, then reported with the workload and the worker; the others
   are kept (a fake job runner, no QEMU).
3. A small suite recorded serially, with -j 2, and on a local Dask cluster of two worker
   processes (started here, with their own bundle cache): every file is byte-identical.
4. The CLI: a workload that fails is named with its worker, exit status 1, the good one kept.
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from hpmkit.lab import executor, jobs, suite
from hpmkit.lab.protocol import LabError

HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"
has_qemu = bool(shutil.which("qemu-system-riscv64") and shutil.which("qemu-system-aarch64"))
needs_qemu = pytest.mark.skipif(not has_qemu, reason="QEMU system emulators missing "
                                "(scripts/setup.sh)")


def fake_bundle(arch="riscv64", **extra):
    files = {"Image": b"kernel", "System.map": b"ffffffff80000000 T _text\n", "offsets": b"x 1\n",
             "libhpmpes.so": b"\x7fELF", "guest/bin/ksuite": b"\x7fELF ksuite", **extra}
    return jobs.Bundle(arch, jobs.digest_of(files), files)


def test_bundle_names_its_content():
    a, b = fake_bundle(), fake_bundle()
    assert a.digest == b.digest and len(a.digest) == 64
    assert fake_bundle(Image=b"kernel2").digest != a.digest
    # a file moved to another name is another bundle
    assert fake_bundle(**{"guest/bin/other": b"\x7fELF ksuite"}).digest != a.digest


def test_worker_checks_the_cached_bundle_by_hash(tmp_path):
    b = fake_bundle()
    d, notes = jobs.materialise(b, tmp_path)
    assert d == tmp_path / b.digest and notes == []
    assert (d / "guest" / "bin" / "ksuite").read_bytes() == b"\x7fELF ksuite"
    assert os.access(d / "guest" / "bin" / "ksuite", os.X_OK)
    # a damaged file (same size, one byte) and a missing one: found, rewritten, said
    (d / "Image").write_bytes(b"kernek")
    (d / "offsets").unlink()
    d2, notes = jobs.materialise(b, tmp_path)
    assert d2 == d and (d / "Image").read_bytes() == b"kernel" and (d / "offsets").is_file()
    assert len(notes) == 1 and "Image" in notes[0] and "offsets" in notes[0], notes
    assert jobs.materialise(b, tmp_path)[1] == []


def test_a_bundle_whose_content_does_not_match_its_address_is_refused(tmp_path):
    good = fake_bundle()
    bad = jobs.Bundle(good.arch, good.digest, dict(good.files, Image=b"kernek"))
    with pytest.raises(jobs.LabError, match=f"bundle {good.digest[:12]} arrived with other content"):
        jobs.materialise(bad, tmp_path)
    assert not (tmp_path / good.digest).exists()


def test_a_worker_with_another_qemu_refuses_the_job(tmp_path, monkeypatch):
    """The client's QEMU is part of the bundle: a worker with another version does not run."""
    from hpmkit.lab import guest
    if not shutil.which(guest.MACHINES["riscv64"].qemu):
        pytest.skip("QEMU is not installed")
    monkeypatch.setenv("HPMKIT_BUNDLE_CACHE", str(tmp_path))
    r = jobs.execute(jobs.Job("riscv64/x", "riscv64", ("ksuite",)),
                     fake_bundle(**{"qemu-version": b"QEMU emulator version 1.0.0"}))
    assert r.error and "the client 'QEMU emulator version 1.0.0'" in r.error, r.error
    assert guest.qemu_version("riscv64") in r.error and r.perf_data is None
    assert not any(tmp_path.iterdir())    # nothing materialised


def test_a_job_for_the_wrong_bundle_is_an_error_not_a_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HPMKIT_BUNDLE_CACHE", str(tmp_path))
    r = jobs.execute(jobs.Job("aarch64/x", "aarch64", ("ksuite",)), fake_bundle("riscv64"))
    assert r.error and "is for riscv64, not aarch64" in r.error and r.perf_data is None


def test_failed_runs_are_retried_once_then_reported(monkeypatch):
    calls = []

    def fake_execute(job, bundle):
        calls.append(job.key)
        r = jobs.JobResult(job.key, worker="w1")
        n = calls.count(job.key)
        if job.key == "flaky" and n == 1:
            r.error = "guest timed out"
        elif job.key == "broken":
            r.status = 3
        r.perf_data = b"data"
        return r

    monkeypatch.setattr(executor, "execute", fake_execute)
    js = [jobs.Job(k, "riscv64", ("ksuite",)) for k in ("ok", "flaky", "broken")]
    out = executor.run_jobs(js, {"riscv64": fake_bundle()}, lambda j, r: j.key,
                            accept=lambda r: f"exit {r.status}" if r.status else None,
                            workers=2, quiet=True)
    assert out.done == {"ok": "ok", "flaky": "flaky"}
    assert sorted(calls) == ["broken", "broken", "flaky", "flaky", "ok"]
    assert out.failed == {"broken": "failed twice, last on w1: exit 3"}


def test_an_unreachable_cluster_is_one_clear_error():
    with pytest.raises(LabError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        executor.run_jobs([], {}, lambda j, r: None, cluster="tcp://127.0.0.1:1", quiet=True)


def tree(d):
    """Every file under d (relative name -> bytes)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def differing(a, b):
    """Names of the files that are not the same in two trees (a short message, not the bytes)."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


@needs_qemu
def test_serial_local_pool_and_dask_cluster_give_the_same_files(tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    names = ["syscalls", "pipe"]
    arches = ["riscv64", "aarch64"]
    runs, raw = {}, {}
    # one raw folder for the three runs: the profiles' symbol notes name the folder their
    # binaries were found in (a path the user chose, not the executor)
    raw_dir = tmp_path / "raw"

    def keep_raw(k):
        raw[k] = {n: b for n, b in tree(raw_dir).items() if n.endswith(".perf.data")}
        shutil.rmtree(raw_dir)

    runs["serial"] = suite.record_suite(arches, tmp_path / "serial", names, raw_dir, jobs=1,
                                        quiet=True)
    keep_raw("serial")
    runs["j2"] = suite.record_suite(arches, tmp_path / "j2", names, raw_dir, jobs=2, quiet=True)
    keep_raw("j2")
    # the workers start with an empty bundle cache of their own: the bundles reach them
    # through Dask, and are checked there
    monkeypatch.setenv("HPMKIT_BUNDLE_CACHE", str(tmp_path / "worker-cache"))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      worker_dashboard_address=None) as cl, Client(cl) as c:
        addr = cl.scheduler_address
        runs["dask"] = suite.record_suite(arches, tmp_path / "dask", names, raw_dir,
                                          cluster=addr, quiet=True)
        used = {w for w in c.run(lambda: os.getpid()).values()}
        assert len(used) == 2
    keep_raw("dask")
    cached = sorted(p.name for p in (tmp_path / "worker-cache").iterdir() if not p.name.startswith("."))
    assert cached == sorted(jobs.make_bundle(a).digest for a in arches)
    for k in ("serial", "j2", "dask"):
        assert [p.relative_to(tmp_path / k) for p in runs[k]] == \
            [p.relative_to(tmp_path / "serial") for p in runs["serial"]]
    s = tree(tmp_path / "serial")
    assert len(s) == len(names) * len(arches) * 6, sorted(s)   # 4 parquet/json, exact.tsv, exact-paths.tsv.gz
    assert len(raw["serial"]) == 4
    # every difference at once, by file name: a profile that differs while its perf.data does
    # not is the client's doing; a perf.data that differs is the guest run's
    diffs = {k: differing(tree(tmp_path / k), s) for k in ("j2", "dask")}
    diffs.update({f"raw {k}": differing(raw[k], raw["serial"]) for k in ("j2", "dask")})
    assert not any(diffs.values()), diffs


@needs_qemu
def test_a_failing_workload_is_named_with_its_worker_and_the_rest_kept(tmp_path, capfd):
    """ksuite exits 2 for a name it does not know (the CLI refuses such names before it
    boots anything; the library call goes through, which is how a real failure looks)."""
    with pytest.raises(LabError) as e:
        suite.record_suite(["riscv64"], tmp_path / "o", ["syscalls", "no-such-workload"],
                           tmp_path / "raw", jobs=2)
    err = capfd.readouterr().err.splitlines()
    # progress: the failure and its retry, then the final failure, each naming the worker
    assert sum("riscv64/no-such-workload: failed on" in l and "retrying" in l for l in err) == 1
    assert sum("riscv64/no-such-workload: FAILED on" in l for l in err) == 1
    assert any("riscv64/syscalls: done in" in l for l in err)
    msg = str(e.value)
    assert msg.startswith("lab suite: 1 of 2 workload(s) failed (1 profile(s) kept in"), msg
    assert "riscv64/no-such-workload: failed twice, last on" in msg
    assert "exit 2: ksuite: unknown workload 'no-such-workload'" in msg
    assert (tmp_path / "o" / "riscv64" / "syscalls.hpmprof" / "meta.json").is_file()
    assert not (tmp_path / "o" / "riscv64" / "no-such-workload.hpmprof").exists()


def test_the_cli_refuses_unknown_workloads_before_booting(tmp_path):
    p = subprocess.run([str(HPMKIT), "lab", "suite", "--arch", "both", "--workload", "pipe",
                        "--workload", "nope", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("hpmkit: unknown workload nope (ksuite has: ") and \
        p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "o").exists()
