"""rt-tests (seed 001's workloads) in the lab: Debian's binary packages checked and unpacked
into a guest root, recorded with the precise sampler, compared; the bundled recordings
(examples/rt-tests) made again bit for bit, and hpmkit compare's result on workloads it was
not built on, checked against the exact counts of the same runs."""
import hashlib
import json
import lzma

import pytest

from conftest import ROOT, run
from hpmkit.lab import debian, guest, rttests, suite
from hpmkit.lab.protocol import LabError
from hpmkit.profile import Profile

RT = ROOT / "examples" / "rt-tests"
HPMKIT = ROOT / ".venv" / "bin" / "hpmkit"


# --- pieces, no guest -------------------------------------------------------------------

def test_workload_table_is_seed001s_set():
    w = rttests.workloads()
    assert list(w) == ["hackbench-socket", "hackbench-pipe", "ptsematest", "svsematest",
                       "sigwaittest", "signaltest", "cyclictest", "pi_stress"]
    assert w["hackbench-pipe"][:2] == ["hackbench", "-p"]
    assert suite.workloads("rt-tests") == list(w)
    assert suite.command("rt-tests", "cyclictest")[0] == "cyclictest"
    assert suite.command("ksuite", "pipe") == ["ksuite", "--lab", "pipe"]


@pytest.mark.parametrize("text,msg", [("a\n", "line 1"), ("x\tcmd\nx\tcmd2\n", "line 2"),
                                      ("# c\n\ny\t  \n", "line 3"), ("../x\tcmd\n", "line 1"),
                                      ("# only a comment\n", "no workloads")])
def test_bad_workload_table_names_its_line(tmp_path, text, msg):
    t = tmp_path / "t.tsv"
    t.write_text(text)
    with pytest.raises(LabError, match=msg):
        rttests.workloads(t)


def test_unknown_suite_and_workload_are_refused(tmp_path):
    with pytest.raises(LabError, match="unknown suite 'unixbench'.*NAME<TAB>COMMAND"):
        suite.workloads("unixbench")
    p = run([HPMKIT, "lab", "suite", "--suite", "rt-tests", "--arch", "riscv64", "--out", "x",
             "--root", tmp_path / "none"])
    assert p.returncode == 1 and "--root" in p.stderr and "not a folder" in p.stderr, p.stderr
    p = run([HPMKIT, "lab", "suite", "--suite", "rt-tests", "--arch", "riscv64", "--out", "x",
             "--workload", "pmqtest"])
    assert p.returncode == 1 and "rt-tests has: hackbench-socket" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_root_files_keep_their_paths(tmp_path):
    r = tmp_path / "root"
    (r / "aarch64" / "lib" / "aarch64-linux-gnu").mkdir(parents=True)
    (r / "aarch64" / "bin").mkdir()
    (r / "aarch64" / "bin" / "prog").write_bytes(b"\x7fELFprog")
    (r / "aarch64" / "lib" / "aarch64-linux-gnu" / "libc.so.6").write_bytes(b"libc")
    (r / "aarch64" / ".packages").write_text("hidden files stay out\n")
    assert guest.root_of(r, "aarch64") == r / "aarch64"
    assert guest.root_of(r / "aarch64", "aarch64") == r / "aarch64"
    files = guest.added_files([], [guest.root_of(r, "aarch64")])
    assert files == {"bin/prog": b"\x7fELFprog", "lib/aarch64-linux-gnu/libc.so.6": b"libc"}
    (r / "aarch64" / "dev").mkdir()
    (r / "aarch64" / "dev" / "null").write_bytes(b"")
    with pytest.raises(LabError, match="would replace the guest's own /dev"):
        guest.added_files([], [r / "aarch64"])
    with pytest.raises(LabError, match="not a folder"):
        guest.root_of(tmp_path / "none", "riscv64")
    # a root's program may not shadow one of hpmkit's own guest files
    with pytest.raises(LabError, match="already in the guest"):
        guest.pack_initramfs({"bin/prog": b"ours"}, ["prog"], add={"bin/prog": b"theirs"})


def test_release_without_a_good_signature_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(debian, "_get", lambda url: b"Origin: Debian\nSuite: stable\n")
    with pytest.raises(LabError, match="bad or unknown signature"):
        debian.package_index("arm64", tmp_path)


def test_index_and_package_hashes_are_checked(tmp_path, monkeypatch):
    """Nothing is unpacked unless its SHA-256 matches the signed chain: release file ->
    Packages.xz -> .deb (the release file's own gpgv check is the test above)."""
    index = b"Package: rt-tests\nVersion: 1\nFilename: pool/r/rt-tests_1_arm64.deb\nSHA256: " + \
        hashlib.sha256(b"the deb").hexdigest().encode() + b"\n\n"
    packages_xz = lzma.compress(index)
    served = {"dists/trixie/main/binary-arm64/Packages.xz": packages_xz,
              "pool/r/rt-tests_1_arm64.deb": b"the deb"}
    release = ("SHA256:\n " + hashlib.sha256(packages_xz).hexdigest() +
               f" {len(packages_xz)} main/binary-arm64/Packages.xz\n")
    monkeypatch.setattr(debian, "_verified_release", lambda cache: release)
    monkeypatch.setattr(debian, "_get", lambda url: served[url.split("/debian/", 1)[1]])
    [(name, ver, deb)] = debian.fetch("arm64", ["rt-tests"], tmp_path)
    assert (name, ver, deb.read_bytes()) == ("rt-tests", "1", b"the deb")
    with pytest.raises(LabError, match="no package libfoo"):
        debian.fetch("arm64", ["libfoo"], tmp_path)
    deb.unlink()
    served["pool/r/rt-tests_1_arm64.deb"] = b"a deb someone changed"
    with pytest.raises(LabError, match="SHA-256 differs from Debian's index"):
        debian.fetch("arm64", ["rt-tests"], tmp_path)
    assert not deb.exists()
    served["dists/trixie/main/binary-arm64/Packages.xz"] = lzma.compress(index + b"X")
    with pytest.raises(LabError, match="differs from the signed release file"):
        debian.fetch("arm64", ["rt-tests"], tmp_path)
    with pytest.raises(LabError, match="has no main/binary-riscv64"):
        debian.package_index("riscv64", tmp_path)


# --- the lab --------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_root_holds_the_programs_and_their_loader(arch):
    d = rttests.root(arch)
    for prog in ("hackbench", "ptsematest", "svsematest", "sigwaittest", "signaltest",
                 "cyclictest", "pi_stress"):
        assert (d / "bin" / prog).read_bytes()[:4] == b"\x7fELF", prog
    assert (d / "lib" / rttests.LOADER[arch]).is_file()
    assert (d / "lib" / rttests.TRIPLET[arch] / "libc.so.6").is_file()
    assert (d / "lib" / rttests.TRIPLET[arch] / "libnuma.so.1").is_file()
    assert [l.split()[0] for l in rttests.packages(arch)] == list(rttests.PACKAGES)


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_recording_repeats_and_matches_the_bundled_one(tmp_path, arch):
    """A dynamically linked third-party program under the precise sampler is as
    deterministic as ksuite: two recordings give the same samples, stacks and per-function
    exact counts. The per-path table may differ by one timer interrupt's call-path prefix
    (seen once in about 20 recordings: aarch64 sigwaittest, 2,349 of 193.7 M instructions;
    docs/pes.md): same total, at most 0.01 % of the instructions on other paths.
    Against the bundled recording, made with other builds of the guest's own files (init,
    hpm, ksuite share the initramfs with rt-tests; a clean clone relinks them): the work per
    message is the same to the instruction (vfs_read/vfs_write and the syscalls around
    them), while how often hackbench's 40 tasks switch varies with such a perturbation
    (measured on a clean clone: riscv64 __schedule -21 %, 5.4 % fewer samples; aarch64
    -14 %, 2.7 % fewer), so the scheduler's totals are not compared."""
    from collections import Counter

    from hpmkit.exacttables import read_exact, read_exact_paths
    w = "hackbench-pipe"
    runs = [Profile.load(suite.record_suite([arch], tmp_path / f"p{i}", [w], tmp_path / f"raw{i}",
                                            jobs=1, quiet=True, suite="rt-tests")[0])
            for i in range(2)]
    a, b = runs
    assert a.meta["lab"]["command"] == "hackbench -p -g 2 -f 10 -l 700"
    assert a.samples.column("time").to_pylist() == b.samples.column("time").to_pylist()
    assert [a.stack_symbols(s) for s in a.samples.column("stack_id").to_pylist()] == \
        [b.stack_symbols(s) for s in b.samples.column("stack_id").to_pylist()]
    ea, eb = (tmp_path / f"p{i}" / arch / f"{w}.exact.tsv" for i in range(2))
    assert ea.read_bytes() == eb.read_bytes()

    def paths(f):
        c = Counter()
        for n, st in read_exact_paths(f):
            c[tuple(st)] += n
        return c
    pa, pb = (paths(tmp_path / f"p{i}" / arch / f"{w}.exact-paths.tsv.gz") for i in range(2))
    total = sum(pa.values())
    assert sum(pb.values()) == total > 0
    moved = sum(abs(pa[k] - pb[k]) for k in set(pa) | set(pb)) / 2
    assert moved <= 1e-4 * total, (moved, total)
    # the program's own frames resolve through the root (--symfs of the guest's /)
    assert a.meta["symbolisation"]["dsos"]["/bin/hackbench"].startswith("ok"), a.meta
    old = Profile.load(RT / arch / f"{w}.hpmprof")
    if old.meta["lab"]["packages"] != rttests.packages(arch):
        pytest.skip(f"Debian now serves {rttests.packages(arch)}; the bundled recording used "
                    f"{old.meta['lab']['packages']}: re-record examples/rt-tests")
    kern = {r["function"]: r["insns"] for r in read_exact(ea) if r["priv"] == "kernel"}
    kold = {r["function"]: r["insns"] for r in read_exact(RT / arch / f"{w}.exact.tsv")
            if r["priv"] == "kernel"}
    for f in ("vfs_write", "vfs_read", "ksys_write", "ksys_read"):
        assert kern[f] == kold[f] > 0, (f, kern.get(f), kold.get(f))
    # __fget_light takes its slower path while a task's file table is shared (a child being
    # forked or exiting): which calls fall in those moments moves with the same
    # perturbation as the task switches (measured: 46 of 12.9 M instructions, riscv64)
    assert abs(kern["__fget_light"] - kold["__fget_light"]) <= 1e-5 * kold["__fget_light"], \
        (kern["__fget_light"], kold["__fget_light"])


def test_lab_record_runs_a_dynamic_program_with_root(tmp_path):
    """--root puts a folder laid out like / into the guest: the loader and libraries of a
    dynamically linked program with it (the arch's subfolder of .cache/lab/rt-tests)."""
    rttests.root("riscv64")
    p = run([HPMKIT, "lab", "record", "--arch", "riscv64", "--root", ROOT / ".cache" / "lab" / "rt-tests",
             "-o", tmp_path, "--", "hackbench", "-g", "1", "-f", "2", "-l", "20"], timeout=600)
    assert p.returncode == 0, p.stderr
    assert "Running in process mode with 1 groups" in p.stdout
    assert (tmp_path / "riscv64.symfs" / "lib" / rttests.LOADER["riscv64"]).is_symlink()
    assert (tmp_path / "riscv64.perf.data").stat().st_size > 0


def test_compare_on_rt_tests_agrees_with_exact_counts(tmp_path):
    """hpmkit compare on seed 001's workloads, which its methods and thresholds were not
    developed on: what it ranks is real by exact count (every ranked context's exact
    instruction ratio of the same runs is at least x1.2, and the exact ratio lies inside the
    sampled 95 % interval for most), and the top of the ranking is riscv64's byte-wise
    memset and user copies (the labelled list's entries)."""
    out = tmp_path / "c.json"
    p = run([HPMKIT, "compare", RT / "riscv64", "--vs", RT / "aarch64", "-q", "--json", out,
             "--truth", ROOT / "data" / "compare" / "known-riscv64-slower.tsv"], timeout=600)
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    top = [(r["function"], r["workload"]) for r in d["ranking"]]
    assert {f for f, _ in top[:6]} == {"memset", "copy_siginfo_to_user", "raw_copy_to_user"}, top
    ex = d["exact"]
    assert ex["rows"] == ex["with_exact"] == len(top) and ex["below_1_2"] == 0, ex
    inside = sum(r["ci95"]["instructions"][0] <= r["exact"]["ratio"] <= r["ci95"]["instructions"][1]
                 for r in d["ranking"])
    assert inside >= 0.8 * len(top), (inside, len(top))
    at = {row["k"]: row for row in d["truth"]["at_k"]}
    # precision by the labelled list: the top five are its entries; below them come
    # update_rq_clock in the scheduler (x5.7-7.5 by exact count, real, not in the list)
    assert at[5]["precision"] == 1.0 and at[10]["precision"] >= 0.7, at
    for wl, v in d["coverage"]["workloads"].items():
        assert v["coverage_pct"][0] > 90, (wl, v)


@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
@pytest.mark.parametrize("w", ["cyclictest", "signaltest"])
def test_timer_driven_rt_tests_keep_their_own_samples(arch, w):
    """cyclictest and signaltest (the issue's timer-driven, mostly idle workloads), as
    bundled: the samples are the workload's own instructions, exact count / period within
    sampling error, not the guest's idle time, and every sample is of the workload's
    processes."""
    from hpmkit.exacttables import read_exact
    prof = Profile.load(RT / arch / f"{w}.hpmprof")
    lab = prof.meta["lab"]
    assert lab["event"] == "instructions"
    exact = sum(r["insns"] for r in read_exact(RT / arch / f"{w}.exact.tsv"))
    want = exact / lab["period"]
    n = prof.samples.num_rows
    assert abs(n - want) <= 4 * want ** 0.5 + 5, (n, want)
    assert set(prof.samples.column("comm").to_pylist()) == {w}
    idle = {"default_idle_call", "arch_cpu_idle", "cpu_startup_entry", "do_idle", "cpu_do_idle"}
    leaves = [prof.stack_symbols(s)[0] for s in prof.samples.column("stack_id").to_pylist()
              if prof.stack_symbols(s)]
    assert sum(f in idle for f in leaves) <= 0.02 * n


def test_a_suite_of_the_users_own(tmp_path):
    """`hpmkit lab suite --suite FILE`: the user's own NAME<TAB>COMMAND table, their programs
    brought in by --root (a dynamically linked one) beside hpmkit's own (a static one), both
    ISAs, then compared: the whole path from a user's binaries to the cross-ISA report."""
    rttests.root("riscv64")
    rttests.root("aarch64")
    table = tmp_path / "mine.tsv"
    table.write_text("# my workloads\nmsg\thackbench -p -g 1 -f 4 -l 100\ndup\thpm-truth dup 3000\n")
    out = tmp_path / "prof"
    p = run([HPMKIT, "lab", "suite", "--suite", table, "--root", ROOT / ".cache" / "lab" / "rt-tests",
             "--arch", "both", "--out", out, "--raw", tmp_path / "raw", "-q"], timeout=900)
    assert p.returncode == 0, p.stderr
    for arch in ("riscv64", "aarch64"):
        for w in ("msg", "dup"):
            prof = Profile.load(out / arch / f"{w}.hpmprof")
            assert prof.meta["workload"] == w and prof.meta["lab"]["suite"] == str(table)
            assert prof.samples.num_rows > 100, (arch, w)
            assert (out / arch / f"{w}.exact.tsv").is_file()
    c = run([HPMKIT, "compare", out / "riscv64", "--vs", out / "aarch64",
             "--json", tmp_path / "c.json", "-q"], timeout=600)
    assert c.returncode == 0, c.stderr
    d = json.loads((tmp_path / "c.json").read_text())
    assert set(d["coverage"]["workloads"]) == {"msg", "dup"}


def test_unreachable_mirror_is_one_line(tmp_path, monkeypatch):
    """No network to Debian: one line naming the address and what to set, no traceback."""
    monkeypatch.setattr(debian, "MIRROR", "http://127.0.0.1:9/debian")
    with pytest.raises(LabError, match=r"cannot download http://127\.0\.0\.1:9/debian/dists/trixie/InRelease.*HPMKIT_DEBIAN_MIRROR"):
        debian.package_index("arm64", tmp_path)


def test_the_interrupt_sampler_records_ksuite_only(tmp_path):
    with pytest.raises(LabError, match="interrupt sampler records ksuite only"):
        suite.record_suite(["riscv64"], tmp_path, sampler="interrupt", suite="rt-tests")
