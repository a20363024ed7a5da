"""hpmkit report (issue 23 item 4): the output of `perf report --stdio` (perf 6.1) on the same
file, line for line, for the options perf users type: Children/Self, sort keys, filters, call
graphs in every mode and order, percent limits, chosen columns. The reference recording is
made here with `perf record -e task-clock -g` of tests/data/report/callers.c (threads, a
child process, recursion, system calls); the corpus adds an aarch64 JIT recording (aperf)
and perf 3.x armv7 files. Only the first line differs (perf's hint, hpmkit's title) and
perf's random tip at the end."""
import lzma
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HPM, ROOT, require, run

CORPUS = ROOT / "tests" / "data" / "perfdata"


def perf() -> str:
    p = shutil.which("perf")
    assert p, "perf is not installed: scripts/setup.sh installs linux-perf"
    return p


def hpmkit(*args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=300, **kw)


def perf_report(data, *opts) -> str:
    p = subprocess.run([perf(), "report", "--stdio", "-i", str(data), *opts],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout


def body(text: str) -> list[str]:
    """The report without its first line (perf's hint / hpmkit's title) and perf's tip.
    perf 6.1 allocates the symbol of fractal mode's '[...]' line without clearing it, so it
    is sometimes followed by ' (inlined)': that is taken out."""
    lines = text.splitlines()[1:]
    lines = [l.replace("[...] (inlined)", "[...]") for l in lines if not l.startswith("# (Tip:")]
    while lines and lines[-1] in ("#", ""):
        lines.pop()
    return lines


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    exe = d / "callers"
    # -O0: every function keeps its frame (gcc leaves none in leaf functions at -O1);
    # -fno-plt: calls into libc go straight to their function, so the call graphs below are
    # the workload's own (PLT slots are compared with perf in test_symbols_plt.py)
    run(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-fno-plt", "-pthread", "-o", exe,
         ROOT / "tests" / "data" / "report" / "callers.c"], check_rc=0)
    data = d / "callers.data"
    for _ in range(3):
        run([perf(), "record", "-q", "-e", "task-clock", "-c", "200000", "-g", "-o", data, "--",
             exe, "100000000"], check_rc=0)
        # a sample inside libc's own PLT stubs (rare) is misnamed by perf 6.1 (it takes
        # relocation i for slot i; x86 ld writes libc's IRELATIVE relocations last), while
        # hpmkit names the slot as objdump does: record again
        if "@plt" not in perf_report(data, "-g", "none"):
            break
    else:
        pytest.fail("every recording has samples in libc's PLT stubs, which perf 6.1 misnames")
    # the option sets read the recording's profile (the same report as the recording's,
    # test_profile_and_script_text_inputs), to spare re-reading the ELF files each time
    prof = d / "callers.hpmprof"
    p = hpmkit("profile", "import", data, "-o", prof, "-q")
    assert p.returncode == 0, p.stderr
    return data, prof


OPTION_SETS = [
    [],
    ["-g", "none"],
    ["--no-children"],
    ["--no-children", "-g", "none"],
    ["-g", "callee"],
    ["-g", "caller", "--no-children"],
    ["--no-children", "-g"],                  # -g alone is perf's whole default: caller
    ["--no-children", "-g", "graph"],         # a partial list keeps the order of --children
    ["-G"],
    ["-g", "fractal"],
    ["-g", "fractal,2,callee"],
    ["-g", "flat"],
    ["-g", "folded"],
    ["--no-children", "-g", "folded,0,caller,period"],
    ["-g", "graph,0.5,callee,period"],
    ["-g", "graph,1,caller,count"],
    ["-g", "graph,0.5,2"],
    ["--max-stack", "3"],
    ["--sort", "dso,sym"],
    ["--sort", "sym"],
    ["--sort", "pid", "-g", "none"],
    ["--sort", "cpu"],
    ["--sort", "comm,pid", "-n"],
    ["-n"],
    ["--show-total-period", "-g", "none"],
    ["--percent-limit", "2"],
    ["--percent-limit", "3", "-g", "callee"],
    ["--comm", "child"],
    ["--comms", "child,helper", "--sort", "dso,sym"],
    ["--dso", "[kernel.kallsyms]"],
    ["-S", "spin"],
    ["--percentage", "relative", "--comm", "helper"],
    ["-F", "overhead,sample,sym"],
    ["-F", "sym,overhead", "-g", "none"],
    ["-F", "overhead_children,overhead,comm", "--sort", "dso"],
]


@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: " ".join(o) or "default")
def test_stdio_equals_perf_report(rec, opts):
    data, prof = rec
    ours = hpmkit("report", "-q", "-i", data if not opts else prof, *opts)
    assert ours.returncode == 0, ours.stderr
    assert ours.stderr == ""
    theirs = perf_report(data, *opts)
    assert body(ours.stdout) == body(theirs)


def test_what_the_recording_shows(rec):
    """The numbers mean what the workload did: spin is a leaf (Children = Self, but for
    interrupts taken in it), recursion is counted once per sample, and the call graph of run
    splits its Children among its callees exactly."""
    rec = rec[1]
    out = hpmkit("report", "-i", rec, "-g", "none", "--sort", "comm,sym").stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+\[.\] (\S+)$", line)
        if m:
            rows[(m.group(3), m.group(4))] = (float(m.group(1)), float(m.group(2)))
    children, self_ = rows[("callers", "spin")]
    # interrupts on top of spin: a few points, more on a loaded VM (53.96 % over 50.x seen)
    assert self_ > 30 and self_ <= children <= self_ + 5
    run_total = rows[("callers", "run")][0]
    assert rows[("callers", "recurse")][0] < run_total       # six frames deep, counted once
    assert rows[("callers", "phase_a")][0] > rows[("callers", "phase_b")][0] > 0  # n/2, n/4
    assert rows[("child", "run")][0] > 0 and rows[("helper", "run")][0] > 0
    # run's own graph (caller order, no threshold): its branches are its callees, and they
    # add up to its Children (libc's write keeps no frame pointer, so the unwinder steps
    # from it straight to run: it is one of run's callees, as in perf)
    graph = hpmkit("report", "-i", rec, "--comm", "callers", "--sort", "comm,sym",
                   "-g", "caller,0").stdout
    block = graph[graph.index("[.] run\n"):].split("\n\n")[0]
    # under a single root line ("---run") the branches are indented by three more columns
    margin = 15 if "---run\n" in block else 12
    branches = {m.group(2): float(m.group(1))
                for m in re.finditer(r"^ {%d}[| ]--([\d.]+)%%--(.+)$" % margin, block, re.M)}
    assert {"phase_a", "phase_b", "recurse", "__GI___libc_write"} <= set(branches), branches
    assert abs(sum(branches.values()) - run_total) <= 0.005 * len(branches) + 0.005


def test_profile_and_script_text_inputs(rec, tmp_path):
    rec, prof = rec
    direct = hpmkit("report", "-i", rec).stdout
    assert direct.startswith(f"# hpmkit report of {rec} (perf.data)\n")
    saved = hpmkit("report", "-i", prof).stdout
    assert saved.splitlines()[0] == f"# hpmkit report of {prof} (profile of {rec}, perf.data)"
    assert body(saved) == body(direct)
    # perf script text keeps every sample and name: the Self table is perf's
    text = tmp_path / "callers.txt"
    with open(text, "w") as f:
        subprocess.run([perf(), "script", "-i", str(rec)], stdout=f, check=True,
                       stderr=subprocess.DEVNULL)
    ours = hpmkit("report", "-i", text, "--no-children", "-g", "none")
    assert ours.returncode == 0, ours.stderr
    assert body(ours.stdout) == body(perf_report(rec, "--no-children", "-g", "none"))


@pytest.fixture(scope="module")
def forkexec(tmp_path_factory):
    """A fork/exec workload: twenty processes run the same ld.so and libc code, each at its
    own load address (ASLR), so perf script text has one address per process for one
    symbol."""
    d = tmp_path_factory.mktemp("forkexec")
    data = d / "fx.data"
    run([perf(), "record", "-q", "-e", "task-clock", "-c", "50000", "-g", "-o", data, "--",
         "sh", "-c", "for i in $(seq 20); do /bin/true; done"], check_rc=0)
    return data


@pytest.mark.parametrize("fields", [[], ["-F", "comm,tid,ip,sym"]],
                         ids=["default", "comm,tid,ip,sym"])
@pytest.mark.parametrize("which", ["forkexec", "callers"])
def test_script_text_keys_a_symbol_by_name(request, tmp_path, fields, which):
    """perf script text gives a symbol's absolute address (another in each process) or, without
    symoff, no start at all: one symbol is still one row, as perf report has it on the
    binary file."""
    data = request.getfixturevalue("forkexec") if which == "forkexec" else request.getfixturevalue("rec")[0]
    text = tmp_path / "x.txt"
    with open(text, "w") as f:
        subprocess.run([perf(), "script", "-i", str(data), *fields], stdout=f, check=True,
                       stderr=subprocess.DEVNULL)
    opts = ["--sort", "comm,sym", "-n", "--no-children", "-g", "none"]
    ours = hpmkit("report", "-i", text, *opts)
    assert ours.returncode == 0, ours.stderr
    theirs = body(perf_report(data, *opts))
    mine = body(ours.stdout)
    from collections import Counter
    key = lambda l: l.split(None, 2)[2]  # noqa: E731
    rows = [l for l in mine if l and not l.startswith("#")]
    # one symbol is one row; a name twice only where perf has it twice too: a kernel can
    # have two static functions of one name (this host's lruvec_stat_mod_folio.constprop.0
    # at two addresses), and perf report keeps them apart
    twice = Counter(key(l) for l in theirs if l and not l.startswith("#"))
    assert all(n <= twice[k] for k, n in Counter(key(l) for l in rows).items()), "a symbol split into rows"

    def table(lines):
        # samples per (comm, symbol) on both sides: perf also splits one name where it sees two
        # symbol starts (a kernel's two static functions of one name, which perf script text
        # without symoff cannot tell apart; once, ld.so's check_match at two starts in one
        # recording), so rows of one name are added up. ld.so's start runs through libc's own
        # PLT slots, which perf 6.1 names "@plt" or one slot off (docs/report.md, PLT slots):
        # those rows are left out on both sides
        out = Counter()
        for l in lines:
            if l and not l.startswith("#") and "@plt" not in l:
                out[key(l)] += int(l.split()[1])
        return out
    assert table(mine) == table(theirs)
    if not fields:
        # without the period and event fields the header differs (samples counted as 1;
        # with a fixed period the same percentages)
        assert [l for l in mine if l.startswith("#")] == [l for l in theirs if l.startswith("#")]


@pytest.mark.parametrize("name, opts", [
    ("aperf/graviton3-cpuclock.perf.data", []),
    ("aperf/graviton3-cpuclock.perf.data", ["--no-children", "-g", "callee"]),
    ("aperf/graviton3-cpuclock.perf.data", ["--sort", "dso,sym", "-n"]),
    ("aperf/graviton3-cpuclock.perf.data", ["--sort", "pid,cpu", "-g", "none"]),
    ("aperf/graviton3-cpuclock.perf.data", ["--comm", "java", "-g", "fractal"]),
    ("quipper/perf.data.armv7-3.4", []),
    ("quipper/perf.data.armv7-3.4", ["--sort", "pid,cpu"]),
    ("quipper/perf.data.armv7.perf_3.14-3.8", ["--sort", "dso,sym", "-n"]),
])
def test_corpus_equals_perf_report(tmp_path, name, opts):
    """Recordings from elsewhere: an aarch64 JIT (perf-PID.map DSOs, every CPU, call graphs)
    and perf 3.x armv7 files with six events (no call chains)."""
    data = tmp_path / Path(name).name
    data.write_bytes(lzma.decompress((CORPUS / f"{name}.xz").read_bytes()))
    ours = hpmkit("report", "-q", "-i", data, *opts)
    assert ours.returncode == 0, ours.stderr
    assert body(ours.stdout) == body(perf_report(data, *opts))


@pytest.mark.parametrize("sort", ["dso,sym", "comm,dso,sym", "sym"])
def test_kernel_module_symbols_equal_perf_report(tmp_path, sort):
    """Kernel modules (MMAP records of .ko files) with a kallsyms that names [module] symbols
    (tests/data/kallsyms/quipper-target-3.8-modules.kallsyms, made for this file): a module
    symbol names only addresses in its own module's map and ends at that map's end; an
    unnamed module address prints relative to its module, as perf prints them. Only the
    kernel rows are compared: perf names this old file's [vdso] from this machine's vdso."""
    name = "quipper/perf.data.piped.target-3.8"
    data = tmp_path / Path(name).name
    data.write_bytes(lzma.decompress((CORPUS / f"{name}.xz").read_bytes()))
    ksyms = ROOT / "tests" / "data" / "kallsyms" / "quipper-target-3.8-modules.kallsyms"
    opts = ["--kallsyms", ksyms, "--sort", sort, "-g", "none", "-n"]
    ours = hpmkit("report", "-q", "-i", data, *opts)
    assert ours.returncode == 0, ours.stderr

    def kernel_rows(text):
        return [l for l in text.splitlines() if "[k]" in l and not l.startswith("#")]
    rows = kernel_rows(ours.stdout)
    # the file has samples in five modules; two are named by another module's kallsyms
    # line if the module is not checked, three are unnamed
    if "dso" in sort:
        assert any("[mac80211]" in l and "[k] 0x000000000001581d" in l for l in rows), rows
        assert any("[r8169]" in l and "[k] 0x0000000000003ab5" in l for l in rows), rows
        assert not any("[mac80211]" in l and "ath9k_cmn_thing" in l for l in rows), rows
    assert rows == kernel_rows(perf_report(data, *map(str, opts)))


def test_filters_judge_the_sample_by_its_own_address(tmp_path):
    """perf's filter rule on stacks in a known order (folded text, one sample per line): a
    sample is kept or not by its own frame; an entry is shown or hidden by the sample that
    created it, and every sample reaching it adds to it; percentages are of all samples
    unless --percentage relative."""
    f = tmp_path / "order.folded"
    f.write_text("app;main;work;spin 2\n"                    # creates main, work, spin
                 "app;main;read;sys_read_[k] 1\n"            # reaches main, creates read
                 "app;main;read;sys_read_[k];copy_[k] 1\n")
    out = hpmkit("report", "-i", f, "-g", "none", "--sort", "sym", "-S", "sys_read").stdout
    rows = {l.split()[-1]: (l.split()[0], l.split()[1]) for l in out.splitlines()
            if re.match(r"\s+[\d.]+%", l)}
    assert "# symbol: sys_read" in out
    # kept: sys_read's own sample; read was created by it and also counts the copy_ sample
    assert rows == {"read": ("50.00%", "0.00%"), "sys_read": ("50.00%", "25.00%")}
    rel = hpmkit("report", "-i", f, "-g", "none", "--sort", "sym", "-S", "sys_read",
                 "--percentage", "relative").stdout
    # relative: of the Self of shown entries (one sample), so read's Children is 200%, as
    # perf's arithmetic gives
    assert re.search(r"\s200\.00%\s+100\.00%\s+\[k\] sys_read\n\s+200\.00%\s+0\.00%\s+\[\.\] read", rel), rel


@pytest.mark.parametrize("args, message", [
    (["-i", "nothere.data"], "nothere.data: no such file; give the recording with -i FILE"),
    (["--sort", "comm,bogus"], "unknown sort key 'bogus'"),
    (["-F", "overhead,nope"], "unknown field 'nope'"),
    (["-g", "sideways"], "-g: unknown 'sideways'"),
    (["-g", "address"], "-g address is not supported"),
    (["--pid", "12x"], "bad pid '12x'"),
    (["-C", "3-1"], "bad cpu range '3-1'"),
    (["--max-stack", "0"], "--max-stack must be at least 1"),
])
def test_bad_arguments_are_one_line(rec, args, message):
    rec = rec[1]
    p = hpmkit("report", *(["-i", rec] if "-i" not in args else []), *args, cwd=rec.parent)
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_bad_inputs_are_one_line(rec, tmp_path):
    rec = rec[1]
    # a program instead of a recording
    p = hpmkit("report", "-i", "/bin/true")
    assert p.returncode != 0 and "an ELF file" in p.stderr and len(p.stderr.splitlines()) == 1
    # -C on a recording without CPUs in its samples (perf: "File does not contain CPU events")
    p = hpmkit("report", "-i", rec, "-C", "0")
    assert p.returncode == 2 and "has no CPU in its samples" in p.stderr
    # -g on a recording without call chains (perf: "Selected -g ... But no callchain")
    nog = tmp_path / "nog.data"
    run([perf(), "record", "-q", "-e", "task-clock", "-o", nog, "--", "true"], check_rc=0)
    p = hpmkit("report", "-i", nog, "-g", "caller")
    assert p.returncode == 2 and "has no call chains" in p.stderr
    ok = hpmkit("report", "-i", nog, "-g", "none")
    assert ok.returncode == 0 and "# Overhead" in ok.stdout
    # perf.data in the current folder by default, like perf
    p = hpmkit("report", cwd=tmp_path)
    assert p.returncode == 2 and "perf.data: no such file" in p.stderr


def test_help_has_examples():
    p = hpmkit("report", "--help")
    assert p.returncode == 0
    assert "examples:" in p.stdout and "hpmkit report -g callee" in p.stdout
    assert "hpm report" in p.stdout


def test_hpm_report_runs_hpmkit(rec, tmp_path):
    rec = rec[0]
    hpm = require(HPM)
    env = {"HPMKIT": str(Path(sys.executable).parent / "hpmkit")}
    if not os.access(env["HPMKIT"], os.X_OK):
        pytest.fail(f"{env['HPMKIT']} is missing: scripts/setup.sh installs hpmkit in .venv")
    p = run([hpm, "report", "-i", rec, "-g", "none", "--no-children"], env=env)
    assert p.returncode == 0, p.stderr
    assert body(p.stdout) == body(perf_report(rec, "-g", "none", "--no-children"))
    # without HPMKIT, from the build tree: the checkout's .venv
    p = run([hpm, "report", "-i", rec, "-g", "none", "--no-children"])
    assert p.returncode == 0 and body(p.stdout) == body(perf_report(rec, "-g", "none", "--no-children"))
    # a copy of hpm where nothing runs hpmkit says what to install
    lone = tmp_path / "hpm"
    shutil.copy(hpm, lone)
    p = run([lone, "report", "-i", rec], env={"PATH": "/usr/bin:/bin", "HPMKIT": ""})
    assert p.returncode == 127 and p.stdout == ""
    assert "needs the hpmkit Python package" in p.stderr and len(p.stderr.splitlines()) == 1
    p = run([hpm, "report"], env={"HPMKIT": str(tmp_path / "nope")})
    assert p.returncode == 127 and "is not an executable file" in p.stderr


def test_tracepoint_recording(tmp_path):
    """A tracepoint-only recording: perf report's default is its 'Trace output' column, which
    hpmkit does not format (docs/report.md); it reports the same samples by command, object
    and symbol, and `--sort trace` is one line naming perf's command."""
    data = tmp_path / "tp.data"
    p = subprocess.run([perf(), "record", "-q", "-e", "sched:sched_switch", "-o", str(data),
                        "--", "sh", "-c", "for i in 1 2 3 4 5; do sleep 0.001; done"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.skip(f"perf cannot record sched:sched_switch here: {p.stderr.strip()[-200:]}")
    theirs = perf_report(data, "--sort", "comm", "-n")
    ours = hpmkit("report", "-i", data, "--stdio", "--sort", "comm", "-n")
    assert ours.returncode == 0, ours.stderr
    assert body(ours.stdout) == body(theirs)
    bad = hpmkit("report", "-i", data, "--stdio", "--sort", "trace")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "perf report --sort trace" in bad.stderr


def test_script_text_without_dso_keeps_kernel_and_user_symbols_of_one_name_apart(tmp_path):
    """-F comm,tid,ip,sym has no DSO column: the kernel's strlen (a kernel address) and libc's
    are two entries, as perf report has them on the recording (found on a fork/exec run)."""
    t = tmp_path / "s.txt"
    t.write_text("sh 100 ffffffff81234567 strlen\nsh 100     7f1234567890 strlen\n"
                 "sh 100     7f1234567899 strlen\n")
    p = hpmkit("report", "-i", t, "--sort", "comm,sym", "-n", "--no-children", "-g", "none")
    assert p.returncode == 0, p.stderr
    rows = [l.split() for l in p.stdout.splitlines() if l.strip() and not l.startswith("#")]
    assert rows == [["66.67%", "2", "sh", "[.]", "strlen"], ["33.33%", "1", "sh", "[k]", "strlen"]]
