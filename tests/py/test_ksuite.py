"""ksuite, the kernel-exercising workload suite (workloads/ksuite/, docs/ksuite.md): every
workload runs and checks itself natively and under qemu-user (static cross builds), bad
input is one line and exit 2, failed checks are one line and exit 1, the binaries are
static with frame pointers, and the lab guests run them; the truth list is well formed."""
import csv
import os
import re
import resource
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, require, run

KSUITE = BUILD / "bin" / "ksuite"
ARCHES = ["riscv64", "aarch64"]
NAMES = ["pipe", "ctxswitch", "futex", "sem-sysv", "sem-posix", "signals", "fork", "exec",
         "vfork", "posix-spawn", "mmap", "mprotect", "pagefault", "syscalls", "copy-pipe",
         "copy-file", "sendfile", "fd-alloc", "poll", "path", "unix-stream", "udp-loopback",
         "tcp-loopback"]
EXEC_NAMES = {"exec", "vfork", "posix-spawn"}
TRUTH = ROOT / "data" / "compare" / "known-riscv64-slower.tsv"


def ks(*args, binary=None, env=None, **kw):
    return run([require(binary or KSUITE), *args], env=env, **kw)


def listing():
    p = ks("list", check_rc=0)
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["WORKLOAD", "AREA", "DEFAULT", "LAB", "WHAT"]
    rows = {}
    for l in lines[1:]:
        name, area, dflt, lab, what = l.split(None, 4)
        rows[name] = (area, int(dflt), int(lab), what)
    return rows


def test_list_names_and_counts():
    rows = listing()
    assert list(rows) == NAMES
    for name, (area, dflt, lab, what) in rows.items():
        assert 1 <= lab <= dflt, name  # the lab count is the smaller one
        assert what


def test_help_has_examples():
    p = ks("--help", check_rc=0)
    assert p.stdout.startswith("usage: ksuite list")
    assert "examples:" in p.stdout and "ksuite --lab copy-pipe" in p.stdout


@pytest.mark.parametrize("args,msg", [
    (["nosuch"], "ksuite: unknown workload 'nosuch' (`ksuite list` shows the 23 names)"),
    (["pipe", "0"], "ksuite: bad iteration count '0' for pipe (a positive integer)"),
    (["pipe", "-3"], "ksuite: bad iteration count '-3' for pipe (a positive integer)"),
    (["pipe", "12x"], "ksuite: bad iteration count '12x' for pipe (a positive integer)"),
    (["all", "x"], "ksuite: bad iteration count 'x' for all (a positive integer)"),
    (["pipe", "3", "4"], "ksuite: too many arguments after 'pipe 3'"),
    (["list", "x"], "ksuite: 'list' takes no arguments"),
    ([], "ksuite: no workload named (`ksuite list` shows them, `ksuite --help` the usage)"),
])
def test_bad_input_is_one_line_exit_2(args, msg):
    p = ks(*args)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr == msg + "\n"


@pytest.mark.parametrize("name", NAMES)
def test_native_workload_runs_and_checks(name, tmp_path):
    p = ks(name, "37", env={"TMPDIR": str(tmp_path)}, check_rc=0)
    assert p.stdout == f"ksuite: {name} iterations=37 ok\n"
    assert p.stderr == ""
    assert list(tmp_path.iterdir()) == []  # scratch files and directories are removed


def test_all_runs_every_workload(tmp_path):
    p = ks("all", "3", env={"TMPDIR": str(tmp_path)}, check_rc=0)
    assert p.stdout.splitlines() == [f"ksuite: {n} iterations=3 ok" for n in NAMES]


def test_copy_workloads_cover_every_offset_pair_and_size(tmp_path):
    # 53 sizes x 64 offset pairs, coprime: 3392 iterations visit every combination once
    for name in ("copy-pipe", "copy-file"):
        p = ks(name, "3392", env={"TMPDIR": str(tmp_path)}, check_rc=0)
        assert p.stdout == f"ksuite: {name} iterations=3392 ok\n"


@pytest.mark.parametrize("name", ["copy-file", "sendfile", "path"])
def test_missing_scratch_dir_is_one_line_exit_1(name, tmp_path):
    missing = tmp_path / "nope"
    p = ks(name, "5", env={"TMPDIR": str(missing)})
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ksuite: {name}: ")
    assert str(missing) in lines[0] and "No such file or directory" in lines[0]


def _low_nofile():
    resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))


@pytest.mark.parametrize("name,need", [("fd-alloc", 964), ("poll", 320)])
def test_fd_limit_is_named(name, need):
    p = subprocess.run([require(KSUITE), name, "5"], capture_output=True, text=True,
                       preexec_fn=_low_nofile, timeout=60)
    assert p.returncode == 1
    assert p.stderr == (f"ksuite: {name}: needs {need} open files, RLIMIT_NOFILE hard limit "
                        "is 100\n")


def test_child_exit_mode():
    assert ks("--child-exit", "42").returncode == 42


def qemu(arch):
    q = shutil.which(f"qemu-{arch}-static") or shutil.which(f"qemu-{arch}")
    assert q, f"qemu-{arch}-static missing: scripts/setup.sh installs qemu-user-static"
    return q


def binfmt_registered(arch):
    # with binfmt_misc the host kernel runs foreign execs through QEMU; without, exec fails
    return os.path.exists(f"/proc/sys/fs/binfmt_misc/qemu-{arch}")


@pytest.mark.parametrize("arch", ARCHES)
def test_cross_build_is_static_with_frame_pointers(arch):
    b = require(BUILD / arch / "bin" / "ksuite")
    assert "statically linked" in run(["file", b], check_rc=0).stdout
    dis = run([f"{arch}-linux-gnu-objdump", "-d", "--no-show-raw-insn", b], check_rc=0).stdout
    body = dis.split("<ks_pipe>:")[1].split("\n\n")[0]
    prologue = "\n".join(body.splitlines()[:8])
    if arch == "aarch64":  # frame record: stp x29, x30 then x29 = sp
        assert re.search(r"stp\s+x29, x30, \[sp", prologue) and re.search(r"mov\s+x29, sp", prologue)
    else:  # s0 is the frame pointer: saved, then set from sp
        assert re.search(r"sd\s+s0,", prologue) and re.search(r"addi?\s+s0,\s*sp,", prologue)


def test_native_build_has_frame_pointers():
    dis = run(["objdump", "-d", "--no-show-raw-insn", require(KSUITE)], check_rc=0).stdout
    body = dis.split("<ks_pipe>:")[1].split("\n\n")[0]
    prologue = "\n".join(body.splitlines()[:6])
    assert "push   %rbp" in prologue and "mov    %rsp,%rbp" in prologue


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", NAMES)
def test_qemu_user_workload(arch, name, tmp_path):
    b = require(BUILD / arch / "bin" / "ksuite")
    p = run([qemu(arch), b, name, "17"], env={"TMPDIR": str(tmp_path)}, timeout=180)
    if name in EXEC_NAMES and not binfmt_registered(arch):
        # the host kernel cannot exec a foreign binary: named in one line, not a hang/crash
        assert p.returncode == 1
        assert p.stderr == (f"ksuite: {name}: cannot execve /proc/self/exe (the exec workloads "
                            "need /proc and a kernel that runs this binary): Exec format error\n")
        return
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"ksuite: {name} iterations=17 ok\n"


def test_truth_list_is_well_formed():
    text = TRUTH.read_text()
    lines = text.splitlines()
    header = [l for l in lines if l.startswith("#")]
    assert header, "the TSV starts with a comment block explaining the columns"
    rows = list(csv.DictReader([l for l in lines if not l.startswith("#")], delimiter="\t"))
    assert rows
    cols = ["function", "aliases", "label", "confidence", "lab_applies", "workloads", "metric",
            "reason", "riscv64_evidence", "arm64_evidence", "in_riscv64_lab_kallsyms"]
    assert list(rows[0].keys()) == cols
    seen = set()
    kallsyms = (ROOT / ".cache/lab/riscv64/build-6.1.192-2/System.map")
    syms = None
    if kallsyms.exists():
        # System.map names normalised like stack frames: no .isra.N / .constprop.N / .part.N
        syms = {re.sub(r"(\.(isra|constprop|part|cold|lto_priv)\.\d+)+$", "", l.split()[2])
                for l in kallsyms.read_text().splitlines() if len(l.split()) == 3}
    for r in rows:
        assert r["function"] and r["function"] not in seen, r
        seen.add(r["function"])
        assert r["label"] in ("slower", "not-slower", "config"), r
        assert r["confidence"] in ("high", "medium", "low"), r
        assert r["lab_applies"] in ("yes", "no"), r
        assert r["metric"] in ("instructions", "cycles", "both"), r
        for w in r["workloads"].split(","):
            assert w in NAMES, (r["function"], w)
        for ev in ("riscv64_evidence", "arm64_evidence"):
            for ref in r[ev].split(";"):
                path, _, line = ref.strip().partition(":")
                assert path and re.fullmatch(r"\d+(-\d+)?", line), (r["function"], ref)
        assert r["in_riscv64_lab_kallsyms"] in ("yes", "no", "inlined"), r
        if syms is not None:  # the column says what the lab kernel's System.map holds
            names = [r["function"], *filter(None, r["aliases"].split(","))]
            present = any(n in syms for n in names)
            assert present == (r["in_riscv64_lab_kallsyms"] == "yes"), r["function"]
    assert sum(r["label"] == "slower" for r in rows) >= 10


def test_truth_list_evidence_lines_exist():
    """Every file:line cited exists in the Linux 6.1 tree the lab kernel is built from."""
    tree = ROOT / ".cache/lab/riscv64/linux-6.1.192-2"
    if not tree.is_dir():
        pytest.fail(f"{tree} is missing: `hpmkit lab prepare --arch riscv64` unpacks it")
    rows = list(csv.DictReader([l for l in TRUTH.read_text().splitlines()
                                if not l.startswith("#")], delimiter="\t"))
    for r in rows:
        for ev in ("riscv64_evidence", "arm64_evidence"):
            for ref in r[ev].split(";"):
                path, _, line = ref.strip().partition(":")
                f = tree / path
                assert f.is_file(), (r["function"], path)
                last = int(line.split("-")[-1])
                assert last <= len(f.read_text(errors="replace").splitlines()), (r["function"], ref)


@pytest.mark.parametrize("arch", ARCHES)
def test_lab_guest_runs_every_workload(arch):
    from hpmkit.lab import guest
    res = guest.run(arch, ["ksuite", "all", "10"], timeout=600)
    assert res.exec_errno is None, "ksuite is not in the guest's /bin"
    assert res.status == 0, res.stderr.decode()
    assert res.stdout.decode().splitlines() == [f"ksuite: {n} iterations=10 ok" for n in NAMES]
