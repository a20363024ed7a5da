"""hpm stat with perf users' options (-I, --per-thread, -d, -D, --no-big-num, -A,
--per-core/--per-socket, -C lists, -p/-t titles, <not supported>, tracepoints, PMU terms,
modifiers, SIGINT/SIGTERM), each run next to Debian's perf 6.1 on this host's software
events and tracepoints, and checked against perf's output conventions and counts."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BUILD, HPM, ROOT, hpm, hpm_json, require, run

TOUCH = BUILD / "bin" / "touch-pages"


def perf():
    p = shutil.which("perf")
    assert p, "perf is not installed: scripts/setup.sh installs linux-perf"
    return p


def csv_lines(text):
    return [l for l in text.splitlines() if l and not l.startswith("#")]


def one_line(p):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


# ---- <not supported> like perf (issue 23 item 1) ----

def test_unsupported_event_is_a_row_and_the_rest_counts_like_perf():
    ours = run([HPM, "stat", "-x,", "-e", "cycles,task-clock", "--", "true"])
    theirs = run([perf(), "stat", "-x,", "-e", "cycles,task-clock", "--", "true"])
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    o, t = csv_lines(ours.stderr), csv_lines(theirs.stderr)
    # perf's fields, then hpm's read path
    assert o[0] == t[0] + ",none" == "<not supported>,,cycles,0,100.00,,,none"
    assert o[1].split(",")[1:3] == t[1].split(",")[1:3] == ["msec", "task-clock"]
    text = hpm("stat", "-e", "cycles,task-clock", "--", "true", check_rc=0).stderr
    assert re.search(r"^\s+<not supported>\s+cycles\s*$", text, re.M), text
    assert "not supported: event 'cycles' cannot be counted" in text
    d = hpm_json("stat", "--json", "-e", "cycles,task-clock", "--", "true", check_rc=0)[1]
    assert d["not_supported"] == ["cycles"] and [e["name"] for e in d["events"]] == ["task-clock"]


def test_group_with_an_unsupported_member_is_not_counted_like_perf():
    ev = "{task-clock,cycles},page-faults"
    ours = run([HPM, "stat", "-x,", "-e", ev, "--", "true"])
    theirs = run([perf(), "stat", "-x,", "-e", ev, "--", "true"])
    assert ours.returncode == theirs.returncode == 0
    first = [l.split(",")[0] for l in csv_lines(ours.stderr)]
    assert first[:2] == [l.split(",")[0] for l in csv_lines(theirs.stderr)][:2] == [
        "<not counted>", "<not supported>"]
    assert int(first[2]) > 0
    # a leader perf cannot count takes its group down: an error in both
    p = hpm("stat", "-e", "{cycles,task-clock}", "--", "true")
    assert p.returncode == 1 and run([perf(), "stat", "-e", "{cycles,task-clock}", "--",
                                      "true"]).returncode != 0
    assert "it leads the group {cycles,task-clock}" in one_line(p)


# ---- -I ----

def test_interval_counts_add_up_to_perfs_total():
    n = 20000
    total = int(csv_lines(run(["setarch", "-R", perf(), "stat", "-x,", "-e", "page-faults", "--",
                               TOUCH, n], check_rc=0).stderr)[0].split(",")[0])
    p = run(["setarch", "-R", require(HPM), "stat", "-I", "10", "-x,", "-e", "page-faults", "--",
             TOUCH, n], check_rc=0)
    lines = csv_lines(p.stderr)
    assert lines, p.stderr
    fields = [l.split(",") for l in lines]
    # perf's interval CSV: time first, padded to 16 columns, then perf's fields (+ path)
    assert all(re.fullmatch(r" *\d+\.\d{9}", f[0]) and len(f[0]) == 16 for f in fields)
    assert all(f[3] == "page-faults" and len(f) == 9 for f in fields)
    counts = [int(f[1]) for f in fields if f[1] != "<not counted>"]
    # two separate runs of the same program: under load they differ by a page fault or two
    # (seen in CI: 20,050 vs 20,051), so exact equality would test the machine, not hpm
    assert abs(sum(counts) - total) <= 2, (counts, total)
    times = [float(f[0]) for f in fields]
    assert times == sorted(times)


def test_interval_text_header_and_json():
    p = hpm("stat", "-I", "100", "-e", "task-clock", "--", "sleep", "0.25", check_rc=0)
    lines = p.stderr.splitlines()
    assert lines[0] == "#           time             counts unit events"
    assert all(re.match(r"^ +\d+\.\d{9} +(\d+\.\d\d msec|<not counted> msec) task-clock", l)
               for l in lines[1:]), p.stderr
    # no summary table after the intervals, like perf
    assert "Performance counter stats" not in p.stderr
    d = hpm_json("stat", "--json", "-I", "50", "-e", "page-faults", "--", TOUCH, 3000,
                 check_rc=0)[1]
    assert d["interval_ms"] == 50 and d["intervals"]
    per = [iv["per"][0]["values"][0] for iv in d["intervals"]]
    assert sum(v for v in per if v is not None) == d["events"][0]["value"]


# ---- --per-thread ----

def threads_exe(tmp_path):
    exe = tmp_path / "threads"
    run(["gcc", "-O1", "-pthread", "-o", exe, ROOT / "tests" / "data" / "stat" / "threads.c"],
        check_rc=0)
    return exe


def per_thread_counts(tool_args, exe, tmp_path):
    go, done = tmp_path / "go", tmp_path / "done"
    for f in (go, done):
        if f.exists():
            f.unlink()
        os.mkfifo(f)
    proc = subprocess.Popen([str(exe), str(go), str(done), "1000", "2000"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        trigger = f"echo go > {go}; read y < {done}"
        p = run([*tool_args, "-p", proc.pid, "--", "sh", "-c", trigger], timeout=60)
        assert p.returncode == 0, p.stderr
        with open(go, "w") as f:
            f.write("end\n")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    rows = {}
    for l in csv_lines(p.stderr):
        f = l.split(",")
        comm, tid = f[0].rsplit("-", 1)
        rows[comm] = int(f[1])
        assert int(tid) >= proc.pid and f[3] == "page-faults"
    return rows


def test_per_thread_counts_equal_perfs(tmp_path):
    exe = threads_exe(tmp_path)
    ours = per_thread_counts([HPM, "stat", "--per-thread", "-x,", "-e", "page-faults"], exe,
                             tmp_path)
    theirs = per_thread_counts([perf(), "stat", "--per-thread", "-x,", "-e", "page-faults"], exe,
                               tmp_path)
    assert set(ours) == set(theirs) == {"threads", "worker1", "worker2"}
    # each worker faults its pages plus the few shared pages of the process that the
    # faster thread happens to touch first (0-3 here, in either tool)
    for counts in (ours, theirs):
        assert 1000 <= counts["worker1"] <= 1008 and 2000 <= counts["worker2"] <= 2008, counts
        assert counts["threads"] < 10, counts


def test_per_thread_of_a_command_where_perf_refuses():
    # perf 6.1 wants -p, -t or -a; hpm counts the command's threads (the exact counts:
    # test_stat_per_thread_command.py)
    assert run([perf(), "stat", "--per-thread", "-e", "task-clock", "--", "true"]).returncode != 0
    p = hpm("stat", "--per-thread", "-x,", "-e", "task-clock", "--", "true", check_rc=0)
    assert [l.split(",")[0].rsplit("-", 1)[0] for l in csv_lines(p.stderr)] == ["true"]
    p = hpm("stat", "--per-thread", "-I", "100", "-e", "task-clock", "--", "true")
    assert p.returncode == 2 and "-I with --per-thread needs -p PID, -t TID or -a" in one_line(p)


# ---- -d ----

def test_detailed_adds_perfs_cache_events_as_not_supported_here():
    for flag, n in (("-d", 4), ("-dd", 10), ("-ddd", 12)):
        ours = [l.split(",") for l in csv_lines(run([HPM, "stat", flag, "-x,", "--", "true"],
                                                    check_rc=0).stderr)]
        theirs = [l.split(",") for l in csv_lines(run([perf(), "stat", flag, "-x,", "--", "true"],
                                                      check_rc=0).stderr)]
        # same events in the same order, same supported/not supported
        assert [f[2] for f in ours] == [f[2] for f in theirs], flag
        assert [f[0] == "<not supported>" for f in ours] == \
            [f[0] == "<not supported>" for f in theirs]
        assert len(ours) == 8 + n
    # with -e: the detailed events come after the given ones, as in perf
    ours = [l.split(",")[2] for l in csv_lines(hpm("stat", "-e", "page-faults", "-d", "-x,",
                                                   "--", "true", check_rc=0).stderr)]
    assert ours == ["page-faults", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads",
                    "LLC-load-misses"]


# ---- -D ----

def test_delay_skips_the_start_like_perf():
    # 2000 pages, one second of sleep, 3000 pages: with a 400 ms delay only the last part counts
    cmd = ["sh", "-c", f"{TOUCH} 2000; sleep 1; exec {TOUCH} 3000"]
    ours = run(["setarch", "-R", HPM, "stat", "-D", "400", "-x,", "-e", "page-faults", "--", *cmd],
               check_rc=0)
    theirs = run(["setarch", "-R", perf(), "stat", "-D", "400", "-x,", "-e", "page-faults", "--",
                  *cmd], check_rc=0)
    assert ours.stderr.splitlines()[:2] == theirs.stderr.splitlines()[:2] == [
        "Events disabled", "Events enabled"]
    o = int(csv_lines(ours.stderr)[-1].split(",")[0])
    t = int(csv_lines(theirs.stderr)[-1].split(",")[0])
    # two separate runs of the shell: hpm's and perf's agree to a page or two (seen: 3050 vs
    # 3051, a fault of sleep's exit landing after the delay in one of them)
    assert abs(o - t) <= 2 and 3000 <= o < 3300


# ---- --no-big-num, -B ----

def test_big_num_switch():
    def count_text(*flags):
        p = hpm("stat", *flags, "-e", "page-faults", "--", TOUCH, 5000, check_rc=0)
        return re.search(r"^\s+([\d,]+)\s+page-faults", p.stderr, re.M).group(1)
    assert "," in count_text() and "," in count_text("-B")
    plain = count_text("--no-big-num")
    assert plain.isdigit() and int(plain) > 5000


# ---- per CPU, core, socket; CPU lists ----

def test_no_aggr_per_core_per_socket_labels_like_perf():
    ncpu = len(os.sched_getaffinity(0))
    events = "cpu-clock,context-switches"
    for flags, label in ((["-A"], r"CPU\d+"), (["--per-core"], r"S\d+-D\d+-C\d+"),
                         (["--per-socket"], r"S\d+")):
        ours = csv_lines(run([HPM, "stat", "-a", *flags, "-x,", "-e", events, "--", "sleep",
                              "0.1"], check_rc=0).stderr)
        theirs = csv_lines(run([perf(), "stat", "-a", *flags, "-x,", "-e", events, "--",
                                "sleep", "0.1"], check_rc=0).stderr)
        lead = 1 if flags == ["-A"] else 2
        ev = lead + 2   # label[,cpus],value,unit,event
        # two events: perf prints --per-core/--per-socket core-major (each bin's events),
        # -A event-major (each event's CPUs)
        assert [l.split(",")[:lead] + [l.split(",")[ev]] for l in ours] == \
            [l.split(",")[:lead] + [l.split(",")[ev]] for l in theirs]
        assert all(re.fullmatch(label, l.split(",")[0]) for l in ours)
        assert len(ours[0].split(",")) == len(theirs[0].split(",")) + 1
        # the text report in the same order
        row = re.compile(r"^(\S+)\s+(?:\d+\s+)?[\d.,]+\s+(?:msec\s+)?([\w-]+)", re.M)
        text = [run([cmd, "stat", "-a", *flags, "-e", events, "--", "sleep", "0.1"],
                    check_rc=0).stderr for cmd in (HPM, perf())]
        assert row.findall(text[0]) == row.findall(text[1]) and len(row.findall(text[0])) >= 2
    d = hpm_json("stat", "--json", "-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1",
                 check_rc=0)[1]
    assert d["aggregation"] == "cpu" and len(d["per"]) == ncpu
    assert sum(b["events"][0]["raw"] for b in d["per"]) == d["events"][0]["raw"]


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


# perf's derived "shadow" metric of each count (CPUs utilized, K/sec) is not computed by hpm
SHADOW = {"metric-value", "metric-unit"}
FIXED = ("cpu", "core", "socket", "aggregate-number", "unit", "event")


@pytest.mark.parametrize("flags", [
    ["-e", "task-clock,cycles,page-faults", "--", "true"],
    ["-e", "{task-clock,cycles},page-faults", "--", "true"],
    ["-r", "3", "-e", "task-clock", "--", "true"],
    ["-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"],
    ["-a", "--per-core", "-e", "cpu-clock,context-switches", "--", "sleep", "0.1"],
    ["-a", "--per-socket", "-e", "cpu-clock,cycles", "--", "sleep", "0.1"],
    ["-I", "100", "-e", "task-clock,page-faults", "--", "sleep", "0.35"],
], ids=["plain", "group", "repeat", "no-aggr", "per-core", "per-socket", "interval"])
def test_json_output_lines_like_perf(flags):
    """-j/--json-output: perf stat -j's lines, key for key and in perf's order, on stderr;
    the same rows, units, events, <not supported>/<not counted> and aggregation keys."""
    ours = run([HPM, "stat", "-j", *flags], check_rc=0)
    theirs = run([perf(), "stat", "-j", *flags], check_rc=0)
    assert ours.stdout == theirs.stdout == ""
    o, t = json_lines(ours.stderr), json_lines(theirs.stderr)
    if "-I" in flags:   # interval boundaries fall where they fall: compare one interval
        assert len(o) >= 6 and len(t) >= 6
        o, t = o[:2], t[:2]
    assert len(o) == len(t) and o, (ours.stderr, theirs.stderr)
    for a, b in zip(o, t):
        assert list(a) == [k for k in b if k not in SHADOW], (a, b)
        # (perf 6.1 gives a <not supported> row of a socket "aggregate-number" 1 whatever
        # its CPUs; hpm the socket's CPUs, as for its other rows)
        fixed = [k for k in FIXED if not (k == "aggregate-number" and
                                          b["counter-value"] == "<not supported>")]
        assert {k: a[k] for k in fixed if k in a} == {k: b[k] for k in fixed if k in b}
        for v in (a, b):
            assert v["counter-value"] in ("<not supported>", "<not counted>") or \
                float(v["counter-value"]) >= 0
        if b["counter-value"].startswith("<"):
            assert a["counter-value"] == b["counter-value"], (a, b)
            assert a["event-runtime"] == 0 and a["pcnt-running"] == 100.0
    if "page-faults" in flags[1] and "-I" not in flags:
        pf = [float(x["counter-value"]) for x in o if x["event"] == "page-faults"][0]
        pf_perf = [float(x["counter-value"]) for x in t if x["event"] == "page-faults"][0]
        assert abs(pf - pf_perf) <= 0.2 * pf_perf, (pf, pf_perf)


def test_json_output_per_thread_and_file(tmp_path):
    out = tmp_path / "j.txt"
    p = run([HPM, "stat", "-j", "--per-thread", "-o", out, "-e", "page-faults,cycles", "--",
             "sh", "-c", "/bin/true; /bin/true"], check_rc=0)
    assert "counter-value" not in p.stderr     # -o: the lines go to the file only
    lines = json_lines(out.read_text())
    assert len(lines) == 6, lines               # sh and its two children, two events each
    assert sorted(re.sub(r"-\d+$", "", l["thread"]) for l in lines[::2]) == ["sh", "true", "true"]
    assert all(float(l["counter-value"]) > 0 for l in lines if l["event"] == "page-faults")
    assert all(l["counter-value"] == "<not supported>" for l in lines if l["event"] == "cycles")
    bad = run([HPM, "stat", "-j", "--json", "--", "true"])
    assert bad.returncode == 2 and "choose one of --json, -j and -x" in bad.stderr


def test_cpu_lists_and_titles_like_perf():
    for arg in ("0", "0,1", "0-1"):
        ours = hpm("stat", "-C", arg, "-e", "cpu-clock", "--", "true", check_rc=0).stderr
        theirs = run([perf(), "stat", "-C", arg, "-e", "cpu-clock", "--", "true"],
                     check_rc=0).stderr
        title = f"Performance counter stats for 'CPU(s) {arg}':"
        assert title in ours and title in theirs
    d = hpm_json("stat", "--json", "-C", "1,0", "-e", "cpu-clock", "--", "true", check_rc=0)[1]
    assert d["cpus"] == [0, 1]
    p = hpm("stat", "-C", "0,x", "-e", "cpu-clock", "--", "true")
    assert p.returncode == 2 and one_line(p) == (
        "hpm stat: -C takes a CPU list like 0 or 0,2-3, got '0,x'")
    p = hpm("stat", "-C", "4096", "-e", "cpu-clock", "--", "true")
    assert p.returncode == 2 and "CPU 4096 is not online (online CPUs: " in one_line(p)
    p = hpm("stat", "-A", "-e", "task-clock", "--", "true")
    assert p.returncode == 2 and "add -a or -C CPUS" in one_line(p)


# ---- -p/-t titles ----

def test_attach_titles_name_the_pids_like_perf():
    a = subprocess.Popen(["sleep", "30"])
    b = subprocess.Popen(["sleep", "30"])
    try:
        for opt, ids, what in (("-p", f"{a.pid}", "process id"), ("-p", f"{a.pid},{b.pid}",
                                                                  "process id"),
                               ("-t", f"{b.pid}", "thread id")):
            ours = hpm("stat", opt, ids, "-e", "task-clock", "--", "sleep", "0.05", check_rc=0)
            theirs = run([perf(), "stat", opt, ids, "-e", "task-clock", "--", "sleep", "0.05"],
                         check_rc=0)
            title = f"Performance counter stats for {what} '{ids}':"
            assert title in ours.stderr and title in theirs.stderr
        d = hpm_json("stat", "--json", "-p", f"{a.pid},{b.pid}", "-e", "task-clock", "--",
                     "true", check_rc=0)[1]
        assert d["pids"] == sorted([a.pid, b.pid]) or d["pids"] == [a.pid, b.pid]
        assert d["title"] == f"process id '{a.pid},{b.pid}'"
    finally:
        a.kill()
        b.kill()
        a.wait()
        b.wait()
    p = hpm("stat", "-p", "1,x", "-e", "task-clock")
    assert p.returncode == 2 and "-p takes a process id or a list like 123,456" in one_line(p)


# ---- tracepoints, PMU terms, modifiers: the attr perf opens ----

ATTR_FIELDS = ("type", "config", "config1", "config2", "precise_ip", "exclude_user",
               "exclude_kernel", "exclude_hv", "exclude_idle", "exclude_host", "pinned",
               # perf stat opens a counting event without the period=/freq= of its terms
               "sample_period", "sample_freq", "freq")


def perf_attr(event):
    p = run([perf(), "stat", "-vv", "-e", event, "--", "true"])
    assert p.returncode == 0, p.stderr
    block = p.stderr.split("perf_event_attr:")[1].split("sys_perf_event_open")[0]
    got = {}
    for line in block.splitlines():
        # perf names some fields by their union: "{ bp_addr, kprobe_func, ..., config1 }"
        line = re.sub(r"\{ (?:\w+, )*(\w+) \}", r"\1", line)
        m = re.match(r"\s+(\w+)\s+(\S+)$", line)
        if m and m.group(1) in ATTR_FIELDS:
            got[m.group(1)] = int(m.group(2), 0)
    return got


def hpm_attr(event):
    p = hpm("stat", "-v", "-e", event, "--", "true", check_rc=0)
    line = [l for l in p.stderr.splitlines() if l.startswith(f"hpm stat: '{event}'")][0]
    got = {}
    for part in line.split("perf_event_attr ")[1].split(", "):
        k, v = part.split()
        if k in ATTR_FIELDS:
            got[k] = int(v, 0)
    return got


@pytest.mark.parametrize("event", [
    "sched:sched_switch", "sched:sched_switch:u", "task-clock:pp", "task-clock:ppp",
    "task-clock:ukh", "task-clock:k", "task-clock:G", "task-clock:H", "task-clock:I",
    "task-clock:D", "software/config=1/", "software/config=3,config1=7/", "page-faults:u",
    "software/config=1,period=1000/",
])
def test_attr_equals_perfs(event):
    ours, theirs = hpm_attr(event), perf_attr(event)
    # perf prints fields that are not zero; hpm too
    assert {k: v for k, v in ours.items() if v} == {k: v for k, v in theirs.items() if v}


def test_tracepoint_counts_equal_perfs():
    # sh runs, then execs true: two execs, exactly
    cmd = ["sh", "-c", "/bin/true; exec /bin/true"]
    ours = csv_lines(hpm("stat", "-x,", "-e", "sched:sched_process_exec,sched:sched_process_fork",
                         "--", *cmd, check_rc=0).stderr)
    theirs = csv_lines(run([perf(), "stat", "-x,", "-e",
                            "sched:sched_process_exec,sched:sched_process_fork", "--", *cmd],
                           check_rc=0).stderr)
    assert [l.split(",")[:3] for l in ours] == [l.split(",")[:3] for l in theirs]
    assert [int(l.split(",")[0]) for l in ours] == [3, 1]


def test_tracepoint_globs_expand_to_perfs_set():
    glob = "sched:sched_process_*"
    ours = {l.split(",")[2] for l in csv_lines(hpm("stat", "-x,", "-e", glob, "--", "true",
                                                   check_rc=0).stderr)}
    theirs = {l.split(",")[2] for l in csv_lines(run([perf(), "stat", "-x,", "-e", glob, "--",
                                                      "true"], check_rc=0).stderr)}
    assert ours == theirs and len(ours) >= 5


def test_hpm_list_tracepoint_matches_perf_list():
    ours = {l.split()[0] for l in hpm("list", "tracepoint", check_rc=0).stdout.splitlines()
            if l.startswith("  ")}
    theirs = {l.split()[0] for l in run([perf(), "list", "tracepoint"], check_rc=0).stdout
              .splitlines() if "[Tracepoint event]" in l}
    assert ours == theirs and len(ours) > 100
    d = json.loads(hpm("list", "--json", "tracepoint", "sched_switch", check_rc=0).stdout)
    assert [e["name"] for e in d] == ["sched:sched_switch"] and d[0]["type"] == 2
    assert d[0]["available"] is None  # not probed: each open costs the kernel ~40 ms


@pytest.mark.parametrize("event,msg", [
    ("sched:sched_swich", "unknown tracepoint 'sched:sched_swich'; did you mean: "
                          "sched:sched_switch? (hpm list tracepoint)"),
    ("cpu/event=0x3c,umask=0x0/", "no PMU 'cpu' on this machine"),
    ("armv8_pmuv3_0/event=0x11/", "no PMU 'armv8_pmuv3_0' on this machine"),
    ("software/foo=1/", "unknown term 'foo' for PMU 'software'"),
    ("task-clock:q", "bad modifier ':q'"),
    ("sched:nosuch_*", "no tracepoint matches 'sched:nosuch_*'"),
])
def test_grammar_errors_are_one_line(event, msg):
    p = hpm("stat", "-e", event, "--", "true")
    assert p.returncode == 1
    assert msg in one_line(p)
    # perf refuses them too
    assert run([perf(), "stat", "-e", event, "--", "true"]).returncode != 0


def test_an_event_refused_to_root_is_no_paranoid_advice():
    """tracepoint id 1 is refused with EPERM even to root: perf says 'No permission to enable
    tracepoint/config=1/ event.', and hpm must not blame paranoid or ptrace settings root
    already passes."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    theirs = run([perf(), "stat", "-e", "tracepoint/config=1/", "--", "true"])
    if "No permission to enable" not in theirs.stderr + theirs.stdout:
        pytest.skip("this kernel does not refuse tracepoint id 1 to root")
    p = hpm("stat", "-e", "tracepoint/config=1/", "--", "true")
    assert p.returncode == 1
    line = one_line(p)
    assert "no permission to enable 'tracepoint/config=1/'" in line and "root" in line
    assert "paranoid" not in line and "ptrace" not in line


def test_pmu_events_of_a_pmu_this_machine_has_are_not_supported_rows(tmp_path):
    # an imitated x86 machine with a core PMU: the encoding comes from its sysfs; opening
    # it here fails like on a PMU that cannot count it, and the rest is counted
    root = tmp_path / "root"
    fmt = root / "sys/bus/event_source/devices/cpu/format"
    fmt.mkdir(parents=True)
    (fmt.parent / "type").write_text("4\n")
    (fmt / "event").write_text("config:0-7\n")
    (fmt / "umask").write_text("config:8-15\n")
    sw = root / "sys/bus/event_source/devices/software"
    sw.mkdir(parents=True)
    (sw / "type").write_text("1\n")
    p = run([HPM, "stat", "-v", "-x,", "-e", "cpu/event=0x3c,umask=0x1/,task-clock", "--", "true"],
            env={"HPM_SYSROOT": str(root)})
    assert p.returncode == 0, p.stderr
    assert "'cpu/event=0x3c,umask=0x1/': perf_event_attr type 4, config 0x13c" in p.stderr
    lines = csv_lines(p.stderr)
    assert lines[-2].startswith("<not supported>,,cpu/event=0x3c,umask=0x1/,")
    assert lines[-1].split(",")[2] == "task-clock"


# ---- signals ----

def test_ctrl_c_ends_the_command_and_prints_at_once():
    proc = subprocess.Popen([str(require(HPM)), "stat", "-e", "task-clock", "--", "sleep", "30"],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal's SIGINT to hpm and sleep
    _, err = proc.communicate(timeout=10)
    # the command died of the SIGINT itself (perf's "sleep: Interrupt"), and hpm ended by
    # SIGINT once the counts were out (a shell sees 130); tests/py/test_stat_perfcompat2.py
    # runs perf beside hpm for each case
    assert proc.returncode == -signal.SIGINT, err
    assert err.startswith("sleep: Interrupt\n"), err
    assert "Performance counter stats for 'sleep 30'" in err and "task-clock" in err


def test_sigterm_on_an_attached_run_prints_and_ends_by_the_signal():
    target = subprocess.Popen(["sleep", "30"])
    try:
        proc = subprocess.Popen([str(require(HPM)), "stat", "-x,", "-e", "task-clock", "-p",
                                 str(target.pid)], stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        # like perf: the counts, then hpm ends by the signal it got
        assert proc.returncode == -signal.SIGTERM
        assert csv_lines(err)[0].split(",")[2] == "task-clock"
        assert target.poll() is None  # an attached process is not ours to stop
    finally:
        target.kill()
        target.wait()


# ---- usage errors and help ----

@pytest.mark.parametrize("args,msg", [
    (["-I", "5", "--", "true"], "-I must be a number from 10"),
    (["-I", "100", "-r", "2", "--", "true"], "-I cannot be combined with -r"),
    (["-A", "--per-core", "-a"], "choose one of -A, --per-core"),
    (["-p", "1", "-a"], "choose one target"),
    (["-D", "x", "--", "true"], "-D must be a number"),
    (["--json", "-x,", "--", "true"], "choose one of --json, -j and -x"),
])
def test_new_usage_errors(args, msg):
    p = hpm("stat", *args)
    assert p.returncode == 2
    assert msg in one_line(p)


def test_help_shows_every_new_option_with_an_example():
    h = hpm("stat", "--help", check_rc=0).stdout
    for opt in ("-I, --interval-print", "--per-thread", "-d, --detailed", "-D, --delay",
                "--no-big-num", "-A, --no-aggr", "--per-core", "--per-socket", "-t, --tid",
                "sched:sched_switch", "cpu/event=0x3c"):
        assert opt in h, opt
    for ex in ("hpm stat -I 100", "hpm stat -d", "hpm stat -a -A", "--per-thread -p",
               "hpm stat -D 500", "-C 0,2-3 --per-core"):
        assert ex in h, ex


def test_per_thread_system_wide_busiest_first_like_perf():
    ours = [l.split(",") for l in csv_lines(hpm("stat", "-a", "--per-thread", "-x,", "-e",
                                                 "context-switches", "--", "sleep", "0.2",
                                                 check_rc=0).stderr)]
    theirs = [l.split(",") for l in csv_lines(run([perf(), "stat", "-a", "--per-thread", "-x,",
                                                   "-e", "context-switches", "--", "sleep",
                                                   "0.2"], check_rc=0).stderr)]
    for rows_ in (ours, theirs):
        assert rows_ and all(re.fullmatch(r".+-\d+", f[0]) for f in rows_)
        counts = [int(f[1]) for f in rows_]
        assert counts == sorted(counts, reverse=True) and counts[-1] > 0


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting tracefs needs root")
def test_tracefs_is_mounted_on_demand_like_perf():
    """perf mounts tracefs at /sys/kernel/tracing when a command needs it and it is not
    mounted (a fresh Debian 12 VM has none); hpm does the same, as root."""
    def mounted():
        return any(l.split()[1] == "/sys/kernel/tracing" and l.split()[2] == "tracefs"
                   for l in open("/proc/mounts"))
    if mounted() and subprocess.run(["umount", "/sys/kernel/tracing"]).returncode != 0:
        pytest.skip("tracefs is busy: cannot unmount it to check")
    assert not mounted()
    out = hpm("list", "tracepoint", "sched_switch", check_rc=0).stdout
    assert "sched:sched_switch" in out and mounted()


# ---- perf's column widths, user/sys lines, named events with terms ----

def _count_rows(text, event):
    """(line up to the end of the count, the count) of each row of `event`."""
    out = []
    for line in text.splitlines():
        m = re.match(rf"^(.*?(\d[\d,.]*|<not supported>|<not counted>))( msec)?\s+{re.escape(event)}\b", line)
        if m:
            out.append(m.group(1))
    return out


@pytest.mark.parametrize("mode", [[], ["-I", "50"], ["-a", "-A"], ["-a", "-A", "-I", "50"],
                                  ["-a", "--per-core"], ["-a", "--per-socket"]])
def test_count_column_ends_where_perfs_does(mode):
    """The count's right edge is where perf 6.1 puts it in each aggregation: the labels are
    CPU%-7d, S%d-D%d-C%-8d and S%-5d with %4d units, one space, then the %18s count."""
    args = ["-e", "page-faults,cycles", *mode, "--", "sleep", "0.06"]
    ours, theirs = run([HPM, "stat", *args]), run([perf(), "stat", *args])
    for ev in ("page-faults", "cycles"):
        a, b = _count_rows(ours.stderr, ev), _count_rows(theirs.stderr, ev)
        assert a and len(a) == len(b), (ev, ours.stderr, theirs.stderr)
        # the timestamps and counts differ run to run; the widths do not
        assert [len(x) for x in a] == [len(x) for x in b], (ev, a, b)
        labels = [re.sub(r"^\s*[\d.]+ ", "", x) if "-I" in mode else x for x in a]
        assert [l[:12].split()[0] if l.strip()[0].isalpha() else "" for l in labels] == \
            [l[:12].split()[0] if l.strip()[0].isalpha() else "" for l in
             (re.sub(r"^\s*[\d.]+ ", "", x) if "-I" in mode else x for x in b)]


def test_thread_rows_put_comm_and_tid_where_perf_does():
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        args = ["-e", "page-faults", "--per-thread", "-p", str(sleeper.pid), "--", "sleep", "0.05"]
        ours, theirs = run([HPM, "stat", *args]), run([perf(), "stat", *args])
        a, b = _count_rows(ours.stderr, "page-faults"), _count_rows(theirs.stderr, "page-faults")
        assert len(a) == len(b) == 1 and len(a[0]) == len(b[0]), (a, b)
        assert a[0].index(f"sleep-{sleeper.pid}") == b[0].index(f"sleep-{sleeper.pid}") == 16 - len("sleep")
    finally:
        sleeper.kill()
        sleeper.wait()


def test_user_and_sys_lines_after_one_run_of_a_command():
    spin = ["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"]
    ours, theirs = run([HPM, "stat", "-e", "task-clock", "--", *spin]), \
        run([perf(), "stat", "-e", "task-clock", "--", *spin])
    pick = lambda t: [l for l in t.splitlines() if re.fullmatch(  # noqa: E731
        r" +\d+\.\d{9} seconds (time elapsed|user|sys)", l)]
    a, b = pick(ours.stderr), pick(theirs.stderr)
    assert [l.split()[-1] for l in a] == [l.split()[-1] for l in b] == ["elapsed", "user", "sys"]
    assert [len(l) for l in a] == [len(l) for l in b]
    # user + sys is the command's CPU time: most of its task-clock
    clock = float(re.search(r"([\d.]+) msec task-clock", ours.stderr).group(1)) / 1e3
    cpu = float(a[1].split()[0]) + float(a[2].split()[0])
    assert 0.5 * clock <= cpu <= 1.5 * clock + 0.01, (clock, cpu)
    # not with -r or -I, nor for a process attached with -p (as perf)
    for extra in (["-r", "2"], ["-I", "100"]):
        p = run([HPM, "stat", "-e", "task-clock", *extra, "--", "true"])
        assert "seconds user" not in p.stderr, extra


@pytest.mark.parametrize("event,name", [("task-clock/period=1000/", "task-clock/period=1000/"),
                                        ("page-faults/name=pf/", "pf"),
                                        ("cycles/period=1000/", "cycles/period=1000/")])
def test_named_event_with_terms_like_perf(event, name):
    """perf reads 'cycles/period=N/' as the named event with terms when no PMU is called
    'cycles': the row carries the spec (or name=) as perf shows it."""
    ours = run([HPM, "stat", "-x,", "-e", event, "--", "true"])
    theirs = run([perf(), "stat", "-x,", "-e", event, "--", "true"])
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert [l.split(",")[2] for l in csv_lines(ours.stderr)] == \
        [l.split(",")[2] for l in csv_lines(theirs.stderr)] == [name]


def test_named_event_takes_only_the_terms_perf_lets_it():
    p = run([HPM, "stat", "-e", "task-clock/umask=3/", "--", "true"])
    assert p.returncode == 1
    assert one_line(p) == ("hpm stat: unknown term 'umask' for event 'task-clock' in "
                           "'task-clock/umask=3/'; a named event takes period, freq and name")
    assert run([perf(), "stat", "-e", "task-clock/umask=3/", "--", "true"]).returncode != 0
    p = run([HPM, "record", "-q", "-o", "/dev/null", "-e", "task-clock/period=250000/", "--", "true"])
    assert p.returncode == 0, p.stderr
