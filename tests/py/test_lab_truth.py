"""Ground truth for `hpmkit lab record` (the precise in-emulator sampler, docs/pes.md).

1. Exact mode against the guest's own PMU: the instructions one more iteration of a workload
   costs (user + kernel, differences of two run lengths, so start-up cancels) are the same
   whether the emulator-side sampler counts them or `hpm stat` reads the emulated PMU inside
   the guest. Two independent counters, one number.
2. Sampled shares against exact shares of the same run: every function within 2 percentage
   points, on both ISAs, for the issue's three calls and a socket workload.
3. Determinism and no resonance: the same recording twice is byte-identical; another jitter
   seed gives shares within sampling error.
4. The issue's table: exact per-call ratios riscv64/aarch64 of dup, close, getppid.
"""
import shutil

import pytest

from conftest import ROOT
from hpmkit.lab import guest, record, truth
from hpmkit.exacttables import read_exact
from hpmkit.profile import Profile

pytestmark = pytest.mark.skipif(not (shutil.which("qemu-system-riscv64") and
                                     shutil.which("qemu-system-aarch64")),
                                reason="QEMU system emulators missing (scripts/setup.sh)")
ARCHES = ["riscv64", "aarch64"]


def rec(tmp_path, arch, cmd, period=2000, seed=1, exact=True, name="r"):
    out = tmp_path / f"{name}-{arch}"
    r = record.record(arch, cmd.split(), out, record.Options(period=period, seed=seed,
                                                            exact=exact, comms=["hpm-truth"]))
    assert r.status == 0, r.stderr
    return r


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("mode", ["dup", "getppid"])
def test_exact_mode_agrees_with_the_guest_pmu(tmp_path, arch, mode):
    """The same execution counted twice: `hpm stat -e instructions` (the guest's emulated PMU,
    user + kernel, read in the guest) around `hpm-truth MODE N`, recorded with the exact
    mode (the plugin counts outside the guest, perturbing nothing). The PMU counts from exec
    to exit, the plugin the whole task: the difference between two run lengths removes
    those edges, leaving the cost of the extra iterations by both counters.

    Measured disagreement (docs/pes.md): when a timer tick falls into the extra iterations,
    the exact mode charges ~1,800-6,000 more instructions to the task than the guest PMU
    counts (tick and scheduler work that runs while the task is current), and on riscv64
    part of the scheduler's load-average decay at the final context switch (219
    instructions for getppid). So: equal to the instruction when no such time-driven work
    differs between the runs; otherwise the gap is reported and must stay within the
    time-driven work the exact table itself shows."""
    n1, n2 = 1000, 2000
    ex, pmu, tick = {}, {}, {}
    for n in (n1, n2):
        r = record.record(arch, ["hpm", "stat", "-x,", "-e", "instructions", "--", "hpm-truth",
                                 mode, str(n)], tmp_path / f"e{n}",
                          record.Options(period=100000, exact=True, comms=["hpm-truth"]))
        assert r.status == 0, r.stderr
        rows = read_exact(r.exact)
        # OpenSBI's M-mode instructions are outside the guest PMU's S/U counting
        ex[n] = sum(x["insns"] for x in rows if x["priv"] in ("user", "kernel"))
        tick[n] = sum(x["insns"] for x in rows if x["function"] in TICK_PATH)
        line = next(l for l in r.stderr.decode().splitlines() if ",instructions," in l)
        pmu[n] = int(line.split(",")[0])
    d_exact, d_pmu, d_tick = ex[n2] - ex[n1], pmu[n2] - pmu[n1], tick[n2] - tick[n1]
    print(f"{arch} {mode}: {n2 - n1} more iterations: exact mode {d_exact}, guest PMU {d_pmu}, "
          f"tick work in between {d_tick}; edges (exact - PMU at N={n1}): {ex[n1] - pmu[n1]}")
    if d_tick == 0:
        # equal to the instruction (one instruction of difference has been seen where fork
        # meets exec at the counters' edges: riscv64 place_entity)
        assert abs(d_exact - d_pmu) <= 1
    else:
        assert 0 <= d_exact - d_pmu <= 4 * d_tick


# work that depends on elapsed time rather than on iterations: the timer interrupt's own
# functions (a tick is in a run when these executed in it) and the scheduler's load-average
# decay (its loops run once per 1 ms period elapsed since the last update)
TICK_PATH = {"scheduler_tick", "update_process_times", "tick_sched_timer", "hrtimer_interrupt",
             "tick_handle_periodic", "__update_load_avg_se", "__update_load_avg_cfs_rq",
             "__update_load_avg_blocked_se"}


# long enough for > 5,000 samples at period 2,000 (the 2-point bound is then > 3 standard
# deviations for every share)
CASES = ["hpm-truth dup 20000", "hpm-truth getppid 60000", "hpm-truth unix 4000"]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("cmd", CASES)
def test_sampled_shares_match_exact_shares(tmp_path, arch, cmd):
    r = rec(tmp_path, arch, cmd)
    prof = Profile.load(r.profile)
    n = prof.samples.num_rows
    assert n > 5000, n
    errs = truth.share_errors(truth.sampled_shares(prof), truth.exact_shares(read_exact(r.exact)))
    worst = errs[0]
    print(f"{arch} {cmd}: {n} samples; largest gap {worst[0]} exact {100 * worst[1]:.2f} % "
          f"sampled {100 * worst[2]:.2f} %")
    assert abs(worst[1] - worst[2]) < 0.02, errs[:5]


@pytest.mark.parametrize("arch", ARCHES)
def test_same_recording_twice_is_identical_and_seeds_agree(tmp_path, arch):
    cmd = "hpm-truth pipe 5000"
    a = rec(tmp_path, arch, cmd, exact=False, name="a")
    b = rec(tmp_path, arch, cmd, exact=False, name="b")
    assert a.perf_data.read_bytes() == b.perf_data.read_bytes()
    c = rec(tmp_path, arch, cmd, exact=False, seed=7, name="c")
    assert c.perf_data.read_bytes() != a.perf_data.read_bytes()
    from scipy.stats import binomtest
    na = Profile.load(a.profile).samples.num_rows
    nc = Profile.load(c.profile).samples.num_rows
    sa = truth.sampled_shares(Profile.load(a.profile))
    sc = truth.sampled_shares(Profile.load(c.profile))
    funcs = sorted(set(sa) | set(sc))
    for f in funcs:
        # the two seeds sample the same deterministic run: given k = ka + kc samples of f, ka is
        # Binomial(k, na / (na + nc)). Exact test (small counts are common), Bonferroni over
        # every function so that the test as a whole fails by chance less than once in 1,000.
        ka, kc = round(sa.get(f, 0.0) * na), round(sc.get(f, 0.0) * nc)
        pv = binomtest(ka, ka + kc, na / (na + nc)).pvalue
        assert pv * len(funcs) > 1e-3, (f, ka, na, kc, nc)


def test_per_call_ratios_of_the_issue(tmp_path):
    """The PES issue's table, read around each call in the guest (perf_event_open)."""
    calls = {arch: {**truth.per_call_counts(arch, ["hpm-truth", "dup", "2000"]),
                    **truth.per_call_counts(arch, ["hpm-truth", "getppid", "2000"])}
             for arch in ARCHES}
    ratio = {c: calls["riscv64"][c] / calls["aarch64"][c] for c in ("dup", "close", "getppid")}
    print(calls, ratio)
    # The issue measured dup 496/414 (1.20), close 413/412, getppid 183/236 (0.78). Since the
    # kernels trust the device tree's random seed (lab/common.config) the RNG is ready from
    # boot and the same calls read dup 517/419 (1.23), close 412/412, getppid 201/248 (0.81):
    # only those two options differ between the two kernel builds.
    assert ratio["dup"] == pytest.approx(1.23, abs=0.03)
    assert ratio["close"] == pytest.approx(1.00, abs=0.03)
    assert ratio["getppid"] == pytest.approx(0.81, abs=0.04)


@pytest.mark.parametrize("arch", ARCHES)
def test_timer_driven_workload_keeps_its_own_samples(tmp_path, arch):
    """A mostly idle, timer-driven command (clock_nanosleep loop, like cyclictest): the
    profile holds the command's own instructions (its samples ~ its exact count / period),
    never the idle loop, whatever the guest's idle time."""
    period = 1000
    r = rec(tmp_path, arch, "hpm-truth sleep 300", period=period)
    prof = Profile.load(r.profile)
    exact = truth.exact_total(r.exact)
    n = prof.samples.num_rows
    print(f"{arch}: {n} samples, exact {exact} instructions -> {exact / period:.0f} expected")
    assert abs(n - exact / period) <= 4 * (exact / period) ** 0.5 + 5
    idle = {"default_idle_call", "arch_cpu_idle", "cpu_startup_entry", "do_idle", "cpu_do_idle"}
    in_idle = [sid for sid in prof.samples.column("stack_id").to_pylist()
               if idle & set(prof.stack_symbols(sid))]
    print(f"{arch}: {len(in_idle)} samples whose chain runs through the idle loop: "
          f"{sorted({prof.stack_symbols(s)[0] for s in in_idle})}")
    # known (docs/pes.md): the few instructions of the context switch between the task
    # change and the stack change are charged to the woken task with the idle task's chain
    assert len(in_idle) <= 0.02 * n
    assert set(prof.samples.column("comm").to_pylist()) == {"hpm-truth"}


def test_record_of_a_missing_command_exits_127_and_writes_nothing(tmp_path):
    from conftest import run
    out = tmp_path / "o"
    p = run([ROOT / ".venv" / "bin" / "hpmkit", "lab", "record", "--arch", "riscv64", "-o", out,
             "--", "no-such-cmd"], timeout=300)
    assert p.returncode == 127 and "Traceback" not in p.stderr, p.stderr
    assert not any(out.glob("*.perf.data")) and not any(out.glob("*.hpmprof"))


@pytest.mark.parametrize("arch", guest.ARCHES)
def test_perf_names_the_guest_kernel_with_the_kallsyms_written_beside(tmp_path, arch):
    """`hpmkit lab record` writes OUT/<arch>.kallsyms: Linux perf given it names the guest's
    kernel frames as the profile does (without it perf uses this machine's symbols)."""
    import subprocess
    from conftest import run
    if not shutil.which("perf"):
        pytest.skip("Linux perf is not installed")
    out = tmp_path / "o"
    p = run([ROOT / ".venv" / "bin" / "hpmkit", "lab", "record", "--arch", arch, "-c", "2000",
             "-o", out, "--", "hpm-truth", "getppid", "2000"], timeout=600)
    assert p.returncode == 0, p.stderr
    k = out / f"{arch}.kallsyms"
    assert k.read_text().count("\n") > 100   # the symbols the samples need
    text = subprocess.run(["perf", "script", "-i", out / f"{arch}.perf.data", "--kallsyms", k,
                           "-F", "ip,sym,dso"], capture_output=True, text=True, check=True).stdout
    kern = [l.split() for l in text.splitlines() if "[kernel.kallsyms]" in l]
    named = {f[1].split("+")[0] for f in kern if len(f) >= 3}
    unknown = sum(1 for f in kern if "[unknown]" in f)
    assert kern and unknown <= len(kern) // 100, unknown
    # the syscall itself, by both namers
    syscall = {"aarch64": "__arm64_sys_getppid", "riscv64": "sys_getppid"}[arch]  # riscv 6.1: no wrapper
    prof = Profile.load(out / f"{arch}.hpmprof")
    ours = set(prof.frames.column("symbol").to_pylist())
    assert syscall in named and syscall in ours, sorted(named)[:20]
    # every name perf gives a kernel frame of the command's samples is one the profile knows
    # (perf also shows init's and idle's samples, which the profile leaves out: a subset)
    assert len(named & ours) >= 0.5 * len(named), sorted(named - ours)[:20]
