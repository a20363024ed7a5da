"""libhpm-papi: PAPI programs run on hpm unchanged (issue 17, docs/papi.md).

Checked against things libhpm-papi did not write: Debian's papi.h (constants and structure
layouts), Debian's papi_avail (preset names and codes), PAPI's own C tests built unchanged
from Debian's papi-examples package (natively with software events, in the lab with
hardware counters; Debian's libpapi runs the same tests natively as the reference), exact
counts (page faults of fresh pages natively, instructions under -icount in the lab) that
must equal libhpm's own.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import papi_ctests as pc
from conftest import BUILD, ROOT, hpm, require, run

PAPI_CHECK = BUILD / "bin" / "papi-check"
SO = BUILD / "lib" / "libhpm-papi.so"
INCLUDE = ROOT / "include" / "hpm-papi"

# The calls libhpm-papi leaves out (declared in its papi.h, not defined): a ctest that
# needs one fails to link, and that is the whole list of reasons a ctest may not build.
NOT_PROVIDED = {"PAPI_overflow", "PAPI_get_overflow_event_index", "PAPI_profil", "PAPI_sprofil",
                "PAPI_write", "PAPI_get_shared_lib_info", "PAPI_hl_read", "PAPI_hl_stop"}
# ctests that need them (the same on every machine: it is a link-time fact)
NEEDS_MISSING = {
    "byte_profile", "child_overflow", "earprofile", "exec_overflow", "fork_overflow",
    "krentel_pthreads", "overflow", "overflow2", "overflow3_pthreads", "overflow_allcounters",
    "overflow_force_software", "overflow_index", "overflow_one_and_read", "overflow_pthreads",
    "overflow_single_event", "overflow_twoevents", "profile", "profile_force_software",
    "profile_pthreads", "profile_twoevents", "shlib", "sprofile", "system_child_overflow",
    "system_overflow",
}
# ctests that may fail natively, and why: they need hardware counters (this repository's
# VMs have none; Debian's PAPI fails them the same way there)
MAY_FAIL_NATIVE = {
    "all_events": "no preset counts without a hardware PMU",
    "destroy": "needs PAPI_TOT_CYC",
}
GOLDEN_LAB = ROOT / "tests" / "data" / "papi" / "ctests-lab.tsv"


def papi_check(*args, **kw):
    return run([require(PAPI_CHECK), *args], **kw)


# ---- the header ---------------------------------------------------------------------
def test_header_matches_debian_papi_h(tmp_path):
    """Every preset code, the constants programs use and the layout of the structures
    libhpm-papi fills are those of Debian's papi.h (PAPI 7.0): same source, same binary."""
    src = ROOT / "tests" / "papi" / "abi_dump.c"
    if not Path("/usr/include/papi.h").exists():
        pytest.fail("/usr/include/papi.h is missing: scripts/setup.sh installs libpapi-dev")
    outs = []
    for name, inc in (("ours", [f"-I{INCLUDE}"]), ("debian", [])):
        exe = tmp_path / name
        run(["gcc", "-Wall", "-Werror", *inc, "-o", exe, src], check_rc=0)
        outs.append(run([exe], check_rc=0).stdout)
    assert outs[0] == outs[1]
    assert len(re.findall(r"^PAPI_\w+ 0x8", outs[0], re.M)) == 108


def test_unprovided_calls_warn_at_compile_time(tmp_path):
    """A call outside the subset is named when the program is compiled, then at link."""
    (tmp_path / "p.c").write_text('#include "papi.h"\nint main(void){return PAPI_overflow(0,0,0,0,0);}\n')
    p = run(["gcc", f"-I{INCLUDE}", "-c", "-o", tmp_path / "p.o", tmp_path / "p.c"])
    assert p.returncode == 0 and "not provided by libhpm-papi" in p.stderr, p.stderr
    p = run(["gcc", "-o", tmp_path / "p", tmp_path / "p.o", f"-L{BUILD / 'lib'}", "-lhpm-papi"])
    assert p.returncode != 0 and "PAPI_overflow" in p.stderr


# ---- the library, natively ------------------------------------------------------------
def test_api_semantics_with_exact_counts():
    """PAPI's return codes and counting rules (start zeroes, read keeps counting, accum adds
    and restarts, reset, stop, one running set per thread, domains, threads count only
    themselves...) on page faults of fresh pages: exact counts, equal to libhpm's own."""
    p = papi_check("api")
    fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL")]
    assert not fails and p.returncode == 0, p.stdout + p.stderr
    assert len(re.findall(r"^ok ", p.stdout, re.M)) >= 110
    for check in ("lc-read-10", "lc-accum-adds-15-to-100", "lc-restart-from-0",
                  "libhpm-same-count", "thread-counts-itself", "kernel-domain-no-user-faults"):
        assert f"ok {check}\n" in p.stdout


def test_errors_are_one_line_with_the_reason(tmp_path):
    """PAPI_VERB_ECONT prints one line per failing call: the call, PAPI's meaning of the
    code, and what libhpm found out; PAPI_perror prints the last one."""
    (tmp_path / "e.c").write_text(r'''
#include <stdio.h>
#include "papi.h"
int main(void) {
    int es = PAPI_NULL, r;
    PAPI_library_init(PAPI_VER_CURRENT);
    PAPI_create_eventset(&es);
    PAPI_set_debug(PAPI_VERB_ECONT);
    r = PAPI_add_named_event(es, "perf::NO-SUCH-EVENT");
    printf("%d\n", r);
    PAPI_set_debug(PAPI_QUIET);
    r = PAPI_add_named_event(es, "armv9_nope::X");
    PAPI_perror("mine");
    printf("%d\n", r);
    return 0;
}''')
    exe = tmp_path / "e"
    run(["gcc", f"-I{INCLUDE}", "-o", exe, tmp_path / "e.c", f"-L{BUILD / 'lib'}", "-lhpm-papi",
         f"-Wl,-rpath,{BUILD / 'lib'}"], check_rc=0)
    p = run([exe], check_rc=0)
    assert p.stdout.split() == ["-7", "-7"]
    lines = p.stderr.splitlines()
    assert len(lines) == 2, p.stderr
    assert lines[0].startswith("PAPI Error: PAPI_event_name_to_code: Event does not exist: "
                               "'perf::NO-SUCH-EVENT'")
    assert lines[1].startswith("mine: PAPI_event_name_to_code: Event does not exist: "
                               "'armv9_nope::X': no event table for PMU 'armv9_nope'")


def test_high_level_regions_write_hpm_region_output(tmp_path):
    """PAPI_hl_region_begin/end are libhpm's regions: PAPI_EVENTS (perf:: names) picks the
    events, the totals land in hpm-regions.json, exact for page faults."""
    p = papi_check("hl", "23", cwd=tmp_path, env={"PAPI_EVENTS": "perf::PAGE-FAULTS"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "end-without-begin -9" in p.stdout  # PAPI_ENOTRUN
    doc = json.loads((tmp_path / "hpm-regions.json").read_text())
    assert doc["events"] == ["page-faults:u"]
    regions = {r["name"]: r for r in doc["regions"]}
    assert regions["touch"]["calls"] == 1
    assert regions["touch"]["values"]["page-faults:u"] == 23
    assert doc["unmatched_markers"] == 1  # the end without a begin, counted
    out = tmp_path / "dir"
    out.mkdir()
    papi_check("hl", "2", cwd=tmp_path, env={"PAPI_OUTPUT_DIRECTORY": str(out)}, check_rc=0)
    assert json.loads((out / "hpm-regions.json").read_text())["events"][0] == "task-clock:u"


def _compile_with_pkg_config(tmp_path, static: bool):
    env = dict(os.environ, PKG_CONFIG_PATH=str(BUILD / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", *(["--static"] if static else []),
                            "hpm-papi"], capture_output=True, text=True, env=env, check=True).stdout.split()
    src = tmp_path / "faults.c"
    src.write_text(r'''
#include <stdio.h>
#include <sys/mman.h>
#include <papi.h>
int main(void) {
    int es = PAPI_NULL; long long v[1];
    char *p = mmap(0, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, 64 << 12, MADV_NOHUGEPAGE);
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) return 1;
    if (PAPI_create_eventset(&es) || PAPI_add_named_event(es, "perf::MINOR-FAULTS")) return 2;
    PAPI_start(es); PAPI_stop(es, v);       /* warm the path up */
    PAPI_start(es);
    for (int i = 0; i < 64; i++) p[i << 12] = 1;
    PAPI_stop(es, v);
    printf("%lld\n", v[0]);
    return 0;
}''')
    exe = tmp_path / ("faults-static" if static else "faults")
    extra = ["-static"] if static else [f"-Wl,-rpath,{BUILD / 'lib'}"]
    run(["gcc", "-o", exe, src, *extra, *flags], check_rc=0)
    return exe


@pytest.mark.parametrize("static", [False, True], ids=["shared", "static"])
def test_pkg_config_builds_a_papi_program(tmp_path, static):
    require(SO)
    exe = _compile_with_pkg_config(tmp_path, static)
    assert run([exe], check_rc=0).stdout.strip() == "64"


def test_binary_built_for_debian_papi_runs_on_libhpm_papi(tmp_path):
    """A program compiled with Debian's papi.h and linked to Debian's libpapi runs on
    libhpm-papi.so put in front of it (LD_PRELOAD): the same ABI. On this VM Debian's
    PAPI itself cannot count at all (libpfm4 does not know the CPU), libhpm-papi can."""
    src = tmp_path / "deb.c"
    src.write_text(r'''
#include <stdio.h>
#include <sys/mman.h>
#include <papi.h>
int main(void) {
    int es = PAPI_NULL, r; long long v[1];
    char *p = mmap(0, 32 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, 32 << 12, MADV_NOHUGEPAGE);
    PAPI_library_init(PAPI_VER_CURRENT);
    PAPI_create_eventset(&es);
    r = PAPI_add_named_event(es, "perf::PAGE-FAULTS");
    if (r != PAPI_OK) { printf("add %d\n", r); return 0; }
    PAPI_start(es); PAPI_stop(es, v);
    PAPI_start(es);
    for (int i = 0; i < 32; i++) p[i << 12] = 1;
    PAPI_stop(es, v);
    printf("count %lld\n", v[0]);
    return 0;
}''')
    exe = tmp_path / "deb"
    run(["gcc", "-o", exe, src, "-lpapi"], check_rc=0)
    p = run([exe], env={"LD_PRELOAD": str(require(SO))}, check_rc=0)
    assert p.stdout.strip() == "count 32"


# ---- hpm papi-avail ---------------------------------------------------------------------
def test_papi_avail_lists_papis_presets_with_the_librarys_availability():
    p = hpm("papi-avail", check_rc=0)
    ours = re.findall(r"^(PAPI_\w+)\s+(0x[0-9a-f]+)\s+(Yes|No)\s+No\s+(.+)$", p.stdout, re.M)
    assert len(ours) == 108
    # names and codes: Debian's papi_avail (needs no counters to list them)
    deb = run(["papi_avail"], check_rc=0).stdout
    theirs = re.findall(r"^(PAPI_\w+)\s+(0x[0-9a-f]+)\s", deb, re.M)
    assert [(n, c) for n, c, _, _ in ours] == theirs
    # availability: what libhpm-papi's PAPI_query_event says in a PAPI program
    lib = papi_check("avail", check_rc=0).stdout
    lib_rows = re.findall(r"^(PAPI_\w+)\s+(0x[0-9a-f]+)\s+(Yes|No)", lib, re.M)
    assert [(n, c, a) for n, c, a, _ in ours] == lib_rows
    n_avail = sum(a == "Yes" for _, _, a, _ in ours)
    assert f"Of 108 possible events, {n_avail} are available, of which 0 are derived." in p.stdout
    only = hpm("papi-avail", "-a", check_rc=0).stdout
    assert len(re.findall(r"^PAPI_", only, re.M)) == n_avail


def test_papi_avail_json_and_bad_option():
    rows = json.loads(hpm("papi-avail", "--json", check_rc=0).stdout)
    assert len(rows) == 108 and rows[0]["name"] == "PAPI_L1_DCM" and rows[0]["code"] == "0x80000000"
    tot = next(r for r in rows if r["name"] == "PAPI_TOT_CYC")
    assert tot["event"] == "cycles"  # the generic alias, on every CPU with a table
    p = hpm("papi-avail", "--bogus")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == "hpm papi-avail: unknown option '--bogus' (hpm papi-avail --help)"


# ---- PAPI's own tests, natively ---------------------------------------------------------
@pytest.fixture(scope="module")
def examples():
    try:
        return pc.examples()
    except pc.Unavailable as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module")
def ctest_dir(tmp_path_factory):
    """Where this test run builds PAPI's tests (its own: concurrent runs do not collide)."""
    return tmp_path_factory.mktemp("papi-ctests")


def _native_build(kind: str, where: Path, suite: str = "ctests"):
    sub = "" if suite == "ctests" else f"-{suite}"
    if kind == "hpm":
        lib = require(SO)
        return pc.build_suite(suite, "native-hpm", "gcc", [lib],
                              [f"-Wl,-rpath,{lib.parent}", "-pthread", "-lm"],
                              where / f"native{sub}", INCLUDE)
    return pc.build_suite(suite, "native-debian", "gcc", [Path("-lpapi")], ["-pthread", "-lm"],
                          where / f"native-debian{sub}", None)


def _runnable(ex, b):
    skip = pc.excluded(ex, b.suite) | set(pc.HELPERS)
    return [n for n in b.built if n not in skip]


@pytest.fixture(scope="module")
def native_results(examples, ctest_dir):
    b = _native_build("hpm", ctest_dir)
    return b, pc.run_native(b, _runnable(examples, b))


def test_ctests_build_unchanged_except_calls_outside_the_subset(examples, native_results):
    b, _ = native_results
    assert not b.other, b.other  # nothing fails to build for another reason
    assert set(b.missing) == NEEDS_MISSING
    assert set().union(*b.missing.values()) <= NOT_PROVIDED
    assert len(b.built) + len(b.missing) == len(pc.targets(examples))


def test_ctests_run_natively(examples, native_results):
    _, res = native_results
    status = {n: s for n, (s, _) in res.items()}
    bad = {n: s for n, s in status.items()
           if s not in ("PASSED", "SKIPPED") and not (s == "FAILED" and n in MAY_FAIL_NATIVE)}
    assert not bad, {n: res[n][1][-600:] for n in bad}
    # what needs no hardware counter passes here
    for n in ("case1", "case2", "clockres_pthreads", "cmpinfo", "code2name", "disable_component",
              "dmem_info", "eventname", "exeinfo", "failed_events", "get_event_component",
              "hwinfo", "locks_pthreads", "max_multiplex", "memory", "omp_hl", "pthread_hl",
              "pthrtough", "realtime", "serial_hl", "thrspecific", "version", "virttime",
              "all_native_events", "fork", "exec", "forkexec"):
        assert status[n] == "PASSED", (n, res[n][1][-600:])


def test_ctests_debian_papi_passes_no_test_libhpm_papi_fails(examples, native_results, ctest_dir):
    """Debian's libpapi runs the same programs here: whatever it passes, libhpm-papi passes."""
    _, ours = native_results
    b = _native_build("debian", ctest_dir)
    theirs = pc.run_native(b, [n for n in _runnable(examples, b) if n in ours])
    worse = [n for n, (s, _) in theirs.items() if s == "PASSED" and ours[n][0] != "PASSED"]
    assert not worse, {n: ours[n][1][-400:] for n in worse}


# ---- validation_tests/ and components/perf_event/tests/, natively ------------------------
# PAPI's validation programs (validation_tests/Makefile's ALL: 25) and the perf_event
# component's tests (components/perf_event/tests/Makefile's TESTS: 5), built unchanged with
# their own Makefiles. They use only calls of the subset: every one builds.
SUITES = ("validation_tests", "perf_event")
# may fail natively, and the reason the failure must give: flops_validation compares the
# wall-clock time of two matrix multiplies (the swapped loop order is ~2.5x faster here);
# a loaded machine can turn that round, whatever library counts
SUITES_MAY_FAIL_NATIVE = {"flops_validation": "time should be better when swapped"}
GOLDEN_SUITES_LAB = ROOT / "tests" / "data" / "papi" / "validation-lab.tsv"


def _timing_failure(name: str, status: str, out: str) -> bool:
    reason = SUITES_MAY_FAIL_NATIVE.get(name)
    return status == "FAILED" and reason is not None and reason in out


@pytest.fixture(scope="module")
def native_suites(examples, ctest_dir):
    out = {}
    for suite in SUITES:
        b = _native_build("hpm", ctest_dir, suite)
        out[suite] = (b, pc.run_native(b, _runnable(examples, b)))
    return out


def test_validation_and_perf_event_tests_build_unchanged(examples, native_suites):
    """Every program of both sets builds against libhpm-papi: none needs a call outside
    the subset."""
    for suite, (b, _) in native_suites.items():
        assert not b.other and not b.missing, (suite, b.other, b.missing)
        assert b.built == pc.targets(examples, suite)
    assert [len(native_suites[s][0].built) for s in SUITES] == [25, 5]


def test_validation_and_perf_event_tests_run_natively(native_suites):
    """No hardware PMU here: what needs one is SKIPPED (PAPI's own tests skip when a preset
    cannot be added), nothing fails; the high-level regions validation passes."""
    res = {n: r for _, (_, rs) in native_suites.items() for n, r in rs.items()}
    bad = {n: s for n, (s, out) in res.items()
           if s not in ("PASSED", "SKIPPED") and not _timing_failure(n, s, out)}
    assert not bad, {n: res[n][1][-600:] for n in bad}
    assert res["fp_validation_hl"][0] == "PASSED", res["fp_validation_hl"][1][-600:]


def test_validation_and_perf_event_debian_papi_passes_no_test_libhpm_papi_fails(
        examples, native_suites, ctest_dir):
    """Debian's libpapi runs the same programs here: whatever it passes, libhpm-papi passes."""
    worse = {}
    for suite, (_, ours) in native_suites.items():
        b = _native_build("debian", ctest_dir, suite)
        assert not b.other and not b.missing, (suite, b.other, b.missing)
        theirs = pc.run_native(b, [n for n in _runnable(examples, b) if n in ours])
        worse.update({n: ours[n][1][-400:] for n, (s, _) in theirs.items()
                      if s == "PASSED" and ours[n][0] != "PASSED"
                      and not _timing_failure(n, *ours[n])})
    assert not worse, worse


# ---- the lab: hardware counters under -icount -------------------------------------------
ARCHES = ["aarch64", "riscv64"]


@pytest.fixture(scope="module", params=ARCHES)
def arch(request):
    return request.param


def lab(arch, *argv, **kw):
    from hpmkit.lab import guest
    res = guest.run(arch, [str(a) for a in argv], **kw)
    assert res.exec_errno is None, f"cannot run {argv[0]} in the guest"
    return res


def test_lab_counts_equal_libhpm_exactly(arch):
    """The same loop counted through PAPI (PAPI_TOT_INS, PAPI_TOT_CYC) and through libhpm
    (the same presets, :u): the counts for N1 and N2 iterations differ by exactly the same
    number, twice over (under -icount every run is identical)."""
    res = lab(arch, "papi-check", "counts", "100000", "300000", "PAPI_TOT_INS", "PAPI_TOT_CYC")
    assert res.status == 0, res.stderr.decode()
    rows = re.findall(r"round (\d) n (\d+) event (\S+) papi (\d+) hpm (\d+)", res.stdout.decode())
    assert len(rows) == 8, res.stdout.decode()
    val = {(int(r), int(n), e): (int(p), int(h)) for r, n, e, p, h in rows}
    for ev in ("PAPI_TOT_INS", "PAPI_TOT_CYC"):
        for rnd in (1, 2):
            dp = val[(rnd, 300000, ev)][0] - val[(rnd, 100000, ev)][0]
            dh = val[(rnd, 300000, ev)][1] - val[(rnd, 100000, ev)][1]
            assert dp == dh > 0, (ev, rnd, dp, dh)
        assert val[(1, 100000, ev)] == val[(2, 100000, ev)]  # repeatable to the instruction
    # what each library's start..stop adds around the work, in instructions (reported)
    ins = val[(1, 100000, "PAPI_TOT_INS")]
    print(f"{arch}: start..stop around the loop: libhpm-papi {ins[0]}, libhpm {ins[1]} instructions")


def test_lab_api_semantics_and_rates(arch):
    """The native semantics checks in the guest, where PAPI_ipc has its events: the rate
    calls start, step and report instructions and IPC."""
    res = lab(arch, "papi-check", "api")
    out = res.stdout.decode()
    assert res.status == 0 and "failures 0" in out, out
    for check in ("ipc-start", "ipc-step", "ipc-values", "rate-stop", "lc-accum-adds-15-to-100"):
        assert f"ok {check}\n" in out


def test_lab_papi_ecnflct_when_counters_run_out():
    """Adding hardware events one by one: the one that does not fit beside the others is
    refused with PAPI_ECNFLCT, at the counter count PAPI_num_hwctrs measured; the set keeps
    counting what it has; the same events multiplexed all go in and count."""
    # the guest's PMU implements cycles, instructions and three stall events (PMCEID):
    # the same events at other privilege levels fill the counters
    evs = ["PAPI_TOT_CYC", "PAPI_TOT_INS"] + [f"armv8_pmuv3::{e}" for e in (
        "CPU_CYCLES", "INST_RETIRED", "STALL", "STALL_BACKEND", "STALL_FRONTEND", "CPU_CYCLES:k",
        "INST_RETIRED:k", "STALL:k")]
    res = lab("aarch64", "papi-check", "conflict", *evs)
    out = res.stdout.decode()
    assert res.status == 0, res.stderr.decode()
    kv = dict(re.findall(r"^(num_hwctrs|added|first_conflict|multiplexed_added) (-?\d+)$", out, re.M))
    n = int(kv["num_hwctrs"])
    assert 1 < n < len(evs)
    assert int(kv["added"]) == n and int(kv["first_conflict"]) == n
    assert re.search(rf"^add {re.escape(evs[n])} -8$", out, re.M)  # PAPI_ECNFLCT
    counts = [int(x) for x in re.search(r"^counts_after_conflict 0 (.*)$", out, re.M).group(1).split()]
    assert counts[0] == counts[1] > 0  # cycles == instructions under -icount
    assert int(kv["multiplexed_added"]) == len(evs)
    mcounts = [int(x) for x in re.search(r"^multiplexed_counts 0 (.*)$", out, re.M).group(1).split()]
    # scaled estimates of 100 times the work, close to 100 times the exact count
    assert abs(mcounts[0] - 100 * counts[0]) < 100 * counts[0] * 0.05, (mcounts, counts)


def test_lab_papi_avail_counts_hardware_presets(arch):
    res = lab(arch, "hpm", "papi-avail", "-a")
    out = res.stdout.decode()
    assert res.status == 0, res.stderr.decode()
    assert re.search(r"^PAPI_TOT_INS\s+0x80000032\s+Yes", out, re.M)
    assert re.search(r"^PAPI_TOT_CYC\s+0x8000003b\s+Yes", out, re.M)


def _lab_build(arch, where: Path, suite: str = "ctests"):
    from hpmkit.lab import guest
    a = BUILD / arch / "lib"
    guest.guest_binaries(arch)  # the guest's cross build (make cross-ARCH, under the lab's lock)
    sub = "" if suite == "ctests" else f"-{suite}"
    return pc.build_suite(suite, arch, f"{arch}-linux-gnu-gcc",
                          [a / "libhpm-papi.a", a / "libhpm.a"], ["-static", "-pthread", "-lm"],
                          where / f"{arch}{sub}", INCLUDE)


def golden_lab():
    rows = {}
    for line in GOLDEN_LAB.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, a64, rv = line.split("\t")[:3]
        rows[name] = {"aarch64": a64, "riscv64": rv}
    return rows


# ctests that loop for 10-110 guest seconds each under -icount (~12 min of the lab on
# aarch64): recorded in the golden file, run with HPM_PAPI_CTESTS=all
HEAVY_IN_LAB = {"multiplex1", "multiplex1_pthreads", "multiplex3_pthreads", "kufrin", "memory",
                "sdsc-mpx", "sdsc4-mpx", "second", "clockres_pthreads"}


def test_lab_ctests(examples, arch, ctest_dir):
    """PAPI's ctests, built unchanged and static for the guest, run in the lab with its
    hardware counters: every result as recorded in tests/data/papi/ctests-lab.tsv (the lab
    is deterministic), and nothing crashes or hangs."""
    b = _lab_build(arch, ctest_dir)
    assert not b.other, b.other
    assert set(b.missing) == NEEDS_MISSING
    names = _runnable(examples, b)
    if os.environ.get("HPM_PAPI_CTESTS") != "all":
        names = [n for n in names if n not in HEAVY_IN_LAB]
    res = pc.run_lab(arch, b, names)
    got = {n: s for n, (s, _) in res.items()}
    want = {n: r[arch] for n, r in golden_lab().items() if n in names}
    assert got == want, {n: (got.get(n), want.get(n), res[n][1][-500:] if n in res else "")
                         for n in set(got) | set(want) if got.get(n) != want.get(n)}


def golden_suites_lab():
    """tests/data/papi/validation-lab.tsv: {(suite, program): {arch: status}}."""
    rows = {}
    for line in GOLDEN_SUITES_LAB.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        suite, name, a64, rv = line.split("\t")[:4]
        rows[(suite, name)] = {"aarch64": a64, "riscv64": rv}
    return rows


def test_lab_validation_and_perf_event_tests(examples, arch, ctest_dir):
    """PAPI's validation programs and perf_event component tests, built unchanged and static
    for the guest, run in the lab: exact instruction counts make the validation tests'
    instruction and branch checks meaningful there. Every result as recorded in
    tests/data/papi/validation-lab.tsv (the lab is deterministic)."""
    got, outs = {}, {}
    for suite in SUITES:
        b = _lab_build(arch, ctest_dir, suite)
        assert not b.other and not b.missing, (suite, b.other, b.missing)
        res = pc.run_lab(arch, b, _runnable(examples, b))
        for n, (s, out) in res.items():
            got[(suite, n)], outs[(suite, n)] = s, out
    want = {k: r[arch] for k, r in golden_suites_lab().items()}
    assert got == want, {k: (got.get(k), want.get(k), outs.get(k, "")[-500:])
                         for k in set(got) | set(want) if got.get(k) != want.get(k)}


# ---- the overhead benchmark's column ---------------------------------------------------
def test_overhead_benchmark_has_the_libhpm_papi_column(tmp_path):
    """bench/overhead runs PAPI's column on libhpm-papi too (no timing asserted here: the
    numbers are in docs/papi.md); its counts are real and PAPI's init is kept even where
    PAPI cannot count."""
    run(["make", "-s", "-C", ROOT / "bench", "overhead"], check_rc=0, timeout=600)
    out = tmp_path / "o.json"
    p = run([ROOT / "bench" / "overhead", "-n", "40", "-c", "4", "--json", out], check_rc=0,
            timeout=600)
    doc = json.loads(out.read_text())
    hp = doc["libraries"]["hpm_papi"]
    assert hp["available"], hp
    for phase in ("add", "start", "read", "stop", "cleanup"):
        assert hp["in_process"][phase]["n"] == 40
    assert hp["fresh_process"]["init"]["n"] == 4
    assert "init" in doc["libraries"]["papi"]["fresh_process"]  # PAPI_library_init always works
    names = [t["name"] for t in doc["targets"]]
    assert "hpm-papi init >= 100x faster than PAPI's (fresh)" in names
    assert re.search(r"hpm-papi=\d+", p.stdout) and "hpm-papi=0" not in p.stdout.split("zero values")[0]
