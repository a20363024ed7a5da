"""PAPI's own C tests built unchanged against libhpm-papi, for test_papi_compat.py: the
ctests, the validation programs (validation_tests/) and the perf_event component's tests
(components/perf_event/tests/).

The sources come from Debian's papi-examples package (built from the Debian source package
`papi` 7.0.0-2: src/ctests, src/testlib, src/validation_tests and src/components, files
identical to the source package's). `apt-get download` fetches the pinned version into
.cache/papi; nothing of PAPI is committed. Each set is built with its own Makefile
(ctests/Makefile, which is PAPI's Makefile.target + Makefile.recipies;
validation_tests/Makefile; components/perf_event/tests/Makefile with
Makefile_comp_tests.target), with only the configuration variables set on make's command
line, the way PAPI's configure would: compiler, flags, where the test library and papi.h
are, and PAPILIB = libhpm-papi (or Debian's libpapi, for the reference column).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "papi"
DEB = "papi-examples_7.0.0-2_all.deb"
DEB_VERSION = "7.0.0-2"
DEB_SHA256 = "f8f7418df6121203edb1a1a0be404eeb3bb91eb2ca4f4137f9ed5e1a7b99183c"
EXAMPLES = Path("usr/share/doc/papi-examples/examples")

# testlib's objects as PAPI's testlib/Makefile builds them (do_loops at -O0)
TESTLIB = [("test_utils", ""), ("do_loops", "-O0"), ("clockcore", "")]
# the validation_tests objects ctests/Makefile links (TESTFLOPS, TESTINS, TESTCYCLES,
# DISPLAYERROR)
VALIDATION = ["flops_testcode", "instructions_testcode", "busy_work", "display_error"]


class Unavailable(Exception):
    """The PAPI test sources cannot be had here (no apt, no network)."""


def examples() -> Path:
    """The unpacked examples folder (ctests, testlib, validation_tests, run_tests_exclude.txt)."""
    out = CACHE / f"examples-{DEB_VERSION}"
    if (out / EXAMPLES / "ctests").is_dir():
        return out / EXAMPLES
    CACHE.mkdir(parents=True, exist_ok=True)
    deb = CACHE / DEB
    if not deb.exists():
        p = subprocess.run(["apt-get", "download", f"papi-examples={DEB_VERSION}"], cwd=CACHE,
                           capture_output=True, text=True)
        if p.returncode or not deb.exists():
            raise Unavailable("cannot fetch PAPI's tests: 'apt-get download "
                              f"papi-examples={DEB_VERSION}' failed: "
                              f"{(p.stderr or p.stdout).strip().splitlines()[-1:]}")
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    if digest != DEB_SHA256:
        deb.unlink()
        raise Unavailable(f"{DEB} has sha256 {digest}, expected {DEB_SHA256}; removed it")
    tmp = CACHE / f"unpack-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
    try:
        tmp.rename(out)  # whole or not at all; another test run may have been first
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return out / EXAMPLES


@dataclass(frozen=True)
class Suite:
    """One set of PAPI's test programs: its folder in the examples, the Makefile variable
    that lists its programs, and the folder it is put in in a lab guest."""
    name: str
    folder: str
    var: str
    guest: str


SUITES = {
    "ctests": Suite("ctests", "ctests", "_ALL", "papi-ctests"),
    # validation_tests/Makefile: every program of ALL (memleak_check is a utility, not in ALL)
    "validation_tests": Suite("validation_tests", "validation_tests", "ALL", "papi-vtests"),
    # the perf_event component's own tests (components/perf_event/tests/Makefile's TESTS;
    # event_name_lib.c is a helper they link)
    "perf_event": Suite("perf_event", "components/perf_event/tests", "TESTS", "papi-petests"),
}


def excluded(ex: Path, suite: str = "ctests") -> set[str]:
    """Programs PAPI's own run_tests.sh does not run (helpers, MPI, known-broken)."""
    prefix = SUITES[suite].folder + "/"
    names = set()
    for line in (ex / "run_tests_exclude.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith(prefix):
            names.add(line[len(prefix):])
    return names


@dataclass
class Build:
    dir: Path
    built: list[str] = field(default_factory=list)
    # test -> the PAPI calls it needs that the library does not provide (link errors)
    missing: dict[str, list[str]] = field(default_factory=dict)
    # test -> first error line, for failures that are not missing PAPI calls
    other: dict[str, str] = field(default_factory=dict)
    suite: str = "ctests"

    @property
    def bin(self) -> Path:
        """The folder the programs are built (and run) in."""
        return self.dir / SUITES[self.suite].folder


def targets(ex: Path, suite: str = "ctests") -> list[str]:
    """Every program the suite's Makefile builds (ctests: its ALL, MPI left out: no MPI
    compiler; validation_tests: ALL; perf_event: TESTS)."""
    s = SUITES[suite]
    mk = (ex / s.folder / "Makefile").read_text()
    var = {}
    for m in re.finditer(r"^(\w+)\s*=\s*((?:.*\\\n)*.*)$", mk, re.M):
        var[m.group(1)] = m.group(2).replace("\\\n", " ")
    names: list[str] = []

    def expand(v: str):
        for word in var.get(v, "").split():
            ref = re.fullmatch(r"\$\((\w+)\)", word)
            if ref:
                if v == s.var:  # groups of programs (ctests' _ALL); deeper: not programs
                    expand(ref.group(1))
            elif not word.startswith("$(") and word not in names:
                names.append(word)

    expand(s.var)
    return names


def _prepare(kind: str, cc: str, outdir: Path, include: Path | None, subs: list[str]):
    """Copy the sources into outdir and build PAPI's test library (testlib) there, as its
    Makefile would. Returns (cc_c, cflags, testlib folder, validation_tests folder)."""
    ex = examples()
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    for sub in ("testlib", "validation_tests", *subs):
        if not (outdir / sub).exists():
            shutil.copytree(ex / sub, outdir / sub)
    inc = [f"-I{include}"] if include else []
    cflags = ["-g", "-O1", "-Wall", "-Wextra", *inc]
    tl, vt = outdir / "testlib", outdir / "validation_tests"

    def cc_c(src: Path, out: Path, extra: list[str], incs: list[str]):
        p = subprocess.run([cc, *incs, *cflags, *extra, "-c", "-o", str(out), str(src)],
                           capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(f"{kind}: compiling {src.name} failed: {p.stderr.strip()[-400:]}")

    for name, opt in TESTLIB:
        cc_c(tl / f"{name}.c", tl / f"{name}.o", [opt] if opt else [], ["-I.", f"-I{tl}"])
    ar = cc.replace("gcc", "ar") if cc.endswith("gcc") else "ar"
    subprocess.run([ar, "rc", str(tl / "libtestlib.a"), str(tl / "test_utils.o")], check=True)
    return cc_c, cflags, tl, vt


def _make(b: Build, names: list[str], config: list[str]) -> Build:
    """make -k the programs in b.bin with configure's variables; sort out what did not
    build: missing PAPI calls (link errors), or else the first compiler error."""
    where = b.bin
    p = subprocess.run(["make", "-k", "-j2", "-C", str(where), *config, *names],
                       capture_output=True, text=True)
    (b.dir / f"build-{b.suite}.log").write_text(p.stdout + p.stderr)
    for n in names:
        if (where / n).is_file() and os.access(where / n, os.X_OK):
            b.built.append(n)
            continue
        # make it alone to read its own errors
        one = subprocess.run(["make", "-C", str(where), *config, n], capture_output=True, text=True)
        text = one.stdout + one.stderr
        miss = sorted(set(re.findall(r"undefined reference to `(\w+)'", text)))
        if miss:
            b.missing[n] = miss
        else:
            err = re.search(r"(?m)error: (.*)$", text)
            b.other[n] = err.group(1) if err else f"not built (see build-{b.suite}.log)"
    return b


def build(kind: str, cc: str, papilib: list[Path], ldflags: list[str], outdir: Path,
          include: Path | None) -> Build:
    """Build every ctest into outdir with PAPI's recipes. kind names the build in errors;
    include is the folder holding papi.h (None: the system's)."""
    ex = examples()
    cc_c, cflags, tl, vt = _prepare(kind, cc, outdir, include, ["ctests"])
    for name in VALIDATION:
        cc_c(vt / f"{name}.c", vt / f"{name}.o", ["-O1"], [f"-I{vt}", f"-I{tl}"])
    config = [
        f"CC={cc}", f"CC_R={cc} -pthread", f"CFLAGS={' '.join(cflags)}", "OMPCFLGS=-fopenmp",
        f"INCLUDE=-I. -I{tl} -I{vt}", f"testlibdir={tl}", f"TESTLIB={tl / 'libtestlib.a'}",
        f"DOLOOPS={tl / 'do_loops.o'}", f"CLOCKCORE={tl / 'clockcore.o'}",
        f"TESTFLOPS={vt / 'flops_testcode.o'}", f"TESTINS={vt / 'instructions_testcode.o'}",
        f"TESTCYCLES={vt / 'busy_work.o'}", f"DISPLAYERROR={vt / 'display_error.o'}",
        f"PAPILIB={' '.join(str(p) for p in papilib)}", f"LDFLAGS={' '.join(ldflags)}",
    ]
    return _make(Build(outdir, suite="ctests"), targets(ex, "ctests"), config)


def build_suite(suite: str, kind: str, cc: str, papilib: list[Path], ldflags: list[str],
                outdir: Path, include: Path | None) -> Build:
    """Build the programs of validation_tests/ or components/perf_event/tests/ into outdir
    with their own Makefiles, configure's variables on make's command line (as build()
    does for the ctests). The component Makefile includes ../../Makefile_comp_tests.target,
    which PAPI's install renames to components/Makefile_comp_tests: it gets its name back."""
    if suite == "ctests":
        return build(kind, cc, papilib, ldflags, outdir, include)
    ex = examples()
    s = SUITES[suite]
    _, cflags, tl, _ = _prepare(kind, cc, outdir, include, [s.folder])
    if suite == "perf_event":
        shutil.copy(ex / "components" / "Makefile_comp_tests",
                    outdir / "components" / "Makefile_comp_tests.target")
    lib = f"PAPILIB={' '.join(str(p) for p in papilib)}"
    config = [f"CC={cc}", f"CC_R={cc} -pthread", f"CFLAGS={' '.join(cflags)}", lib,
              f"LDFLAGS={' '.join(ldflags)}", f"testlibdir={tl}"]
    if suite == "validation_tests":
        config += [f"INCLUDE=-I. -I{tl}", f"TESTLIB={tl / 'libtestlib.a'}"]
    else:  # Makefile_comp_tests.target's variables
        config += [f"INCLUDE=-I. -I{tl}", f"UTILOBJS={tl / 'libtestlib.a'}"]
    return _make(Build(outdir, suite=suite), targets(ex, suite), config)


STATUS = re.compile(r"(PASSED with WARNING|PASSED|FAILED|SKIPPED)")


def classify(rc: int | None, out: str) -> str:
    """A ctest's result from its exit status and its last status line."""
    if rc is None:
        return "TIMEOUT"
    if rc < 0:
        return f"SIGNAL{-rc}"
    found = STATUS.findall(re.sub(r"\x1b\[[0-9;]*m", "", out))
    last = found[-1] if found else None
    if last in ("PASSED", "PASSED with WARNING") and rc == 0:
        return "PASSED"
    if last == "SKIPPED" and rc == 0:
        return "SKIPPED"
    if last == "FAILED" or rc != 0:
        return "FAILED"
    return "NOSTATUS"


def run_native(b: Build, names: list[str], timeout: float = 120, env: dict | None = None):
    """Run each built ctest in its folder as run_tests.sh does ("TESTS_QUIET"). Output goes
    to a file and the result is taken when the test exits: a child it leaves stopped (the
    attach tests SIGSTOP theirs) must not hold the result up. Its process group (a session
    of its own) is then killed, and so is a test past the time limit."""
    import signal
    import tempfile
    res = {}
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("HPM_PMU", None)
    for n in names:
        with tempfile.TemporaryFile() as out:
            p = subprocess.Popen([f"./{n}", "TESTS_QUIET"], cwd=b.bin, env=full_env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                rc = None
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            out.seek(0)
            text = out.read().decode(errors="replace")
        res[n] = (classify(rc, text), text)
    return res


def parse_runner(text: str) -> dict[str, tuple[str, str]]:
    """papi-ctest-run's report: '@@CTEST name rc seconds cpu@@', output, '@@CTEST-END@@'.
    Returns {name: (status, output)}; (guest seconds, CPU seconds) go to parse_runner.seconds."""
    res = {}
    parse_runner.seconds = {}
    for m in re.finditer(r"@@CTEST (\S+) (-?\d+|timeout) ([\d.]+) ([\d.]+)@@\n(.*?)@@CTEST-END@@",
                         text, re.S):
        rc = None if m.group(2) == "timeout" else int(m.group(2))
        res[m.group(1)] = (classify(rc, m.group(5)), m.group(5))
        parse_runner.seconds[m.group(1)] = (float(m.group(3)), float(m.group(4)))
    return res


# helper programs other ctests execute from their folder; PAPI's run_tests.sh never runs
# them on their own (run_tests_exclude.txt)
HELPERS = ("burn", "attach_target")


def run_lab(arch: str, b: Build, names: list[str], batch_bytes: int = 40 << 20,
            per_test: float = 120):
    """Run a suite's programs in the lab guest, a few boots' worth at a time (stripped static
    binaries in /papi-ctests, /papi-vtests or /papi-petests, run by papi-ctest-run).
    Returns {name: (status, output)}."""
    from hpmkit.lab import guest
    strip = f"{arch}-linux-gnu-strip"
    staged = b.dir / "staged"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir()

    def stripped(n: str) -> bytes:
        out = staged / n
        subprocess.run([strip, "-o", str(out), str(b.bin / n)], check=True)
        return out.read_bytes()

    folder = SUITES[b.suite].guest
    helpers = {f"{folder}/{h}": stripped(h) for h in HELPERS if (b.bin / h).exists()}
    res: dict[str, tuple[str, str]] = {}
    run_lab.seconds = {}
    todo = list(names)
    while todo:
        add, size, chunk = dict(helpers), 0, []
        while todo and (not chunk or size < batch_bytes):
            n = todo.pop(0)
            data = stripped(n)
            add[f"{folder}/{n}"] = data
            size += len(data)
            chunk.append(n)
        r = guest.run(arch, ["papi-ctest-run", f"/{folder}", *chunk], add=add,
                      env={"PAPI_CTEST_TIMEOUT": str(per_test)},
                      timeout=60 + per_test * len(chunk))
        got = parse_runner(r.stdout.decode(errors="replace"))
        run_lab.seconds.update(parse_runner.seconds)
        for n in chunk:
            res[n] = got.get(n, ("LOST", r.stdout.decode(errors="replace")[-2000:]))
    return res
