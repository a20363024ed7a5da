"""hpm record on this host (software events only; we run as root, and as 'nobody' through
setpriv for the unprivileged paths). Linux perf is the independent reader of our files."""
import os
import re
import struct
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, HPM, require, run

PERF = "perf"


def feature_sections(path):
    """{bit: bytes} of a perf.data file's header feature sections (read independently of
    hpmkit: the layout is perf's)."""
    d = open(path, "rb").read()
    magic, size, attr_size = struct.unpack_from("<8sQQ", d, 0)
    assert magic == b"PERFILE2" and size == 104
    doff, dsize = struct.unpack_from("<QQ", d, 40)
    feats = struct.unpack_from("<4Q", d, 72)
    bits = [b for b in range(256) if feats[b // 64] >> (b % 64) & 1]
    out = {}
    for i, b in enumerate(bits):
        o, s = struct.unpack_from("<QQ", d, doff + dsize + 16 * i)
        out[b] = d[o:o + s]
    return out


def perf_script(path, *args, kallsyms=None):
    extra = ["--kallsyms", kallsyms] if kallsyms else []
    p = run([PERF, "script", "-i", path, *extra, *args])
    assert p.returncode == 0, p.stderr
    return p.stdout


def samples_written(stderr):
    m = re.search(r"hpm record: (\d+) samples in", stderr)
    assert m, stderr
    return int(m.group(1))


def record(tmp_path, *args, name="r.data", rc=0):
    out = tmp_path / name
    p = run([require(HPM), "record", "-o", out, *args], cwd=tmp_path)
    assert p.returncode == rc, (p.returncode, p.stderr)
    return out, p


TOUCH = BUILD / "bin" / "touch-pages"


def test_perf_reads_our_file_and_agrees_on_samples_and_stacks(tmp_path):
    out, p = record(tmp_path, "-e", "cpu-clock", "-c", "200000", "-g", "--", TOUCH, "20000")
    n = samples_written(p.stderr)
    assert n >= 5
    text = perf_script(out, "-F", "comm,tid,event,period,ip,sym")
    heads = [l for l in text.splitlines() if l and not l[0].isspace()]
    assert len(heads) == n
    assert all(h.split()[0] == "touch-pages" for h in heads)
    # page faults of touch-pages: kernel frames under the user frame 'main'
    stacks = text.split("\n\n")
    assert any("exc_page_fault" in s and re.search(r"\bmain\b", s) for s in stacks), text[:2000]


def test_group_samples_carry_member_deltas_and_final_counts(tmp_path):
    out, p = record(tmp_path, "-e", "{cpu-clock,page-faults}", "-c", "500000", "--",
                    TOUCH, "20000")
    n = samples_written(p.stderr)
    text = perf_script(out, "-F", "event,period")
    per_event = {}
    for line in text.splitlines():
        period, event = line.split()
        per_event.setdefault(event.rstrip(":"), []).append(int(period))
    # perf splits each group sample into one line per member, period = the member's delta
    assert len(per_event["cpu-clock"]) == n and len(per_event["page-faults"]) == n
    dump = run([PERF, "report", "-D", "-i", out]).stdout
    reads = re.findall(r"PERF_RECORD_READ: \d+ \d+ (\S+) (\d+)", dump)
    totals = {}
    for ev, v in reads:
        totals[ev] = totals.get(ev, 0) + int(v)
    # touch-pages 20000 faults in at least 20000 pages; the deltas add up to at most the total
    assert totals["page-faults"] >= 20000
    assert sum(per_event["page-faults"]) <= totals["page-faults"]
    assert totals["page-faults"] - sum(per_event["page-faults"]) < 5000


def test_kallsyms_copy_holds_the_sampled_kernel_functions(tmp_path):
    out, p = record(tmp_path, "-e", "cpu-clock", "-c", "200000", "-g", "--", TOUCH, "20000")
    ks = feature_sections(out)[250].decode()
    names = {l.split()[2] for l in ks.splitlines()}
    assert "_text" in names or "_stext" in names
    m = re.search(r"(\d+) kernel symbols", p.stderr)
    assert m and int(m.group(1)) == len(ks.splitlines())
    assert len(names) < 5000  # the used part, not the whole table
    (tmp_path / "ks").write_text(ks)
    text = perf_script(out, "-F", "ip,sym", kallsyms=str(tmp_path / "ks"))
    kernel_syms = set(re.findall(r"^\s+ffff[0-9a-f]+ (\S+)", text, re.M))
    assert kernel_syms and "[unknown]" not in kernel_syms
    assert kernel_syms <= names


def test_header_says_where_it_was_recorded(tmp_path):
    out, _ = record(tmp_path, "-e", "cpu-clock", "-c", "1000000", "--", "true")
    f = feature_sections(out)
    assert os.uname().release.encode() in f[4] and os.uname().machine.encode() in f[6]
    hdr = run([PERF, "report", "--header-only", "-i", out]).stdout
    assert "cmdline : hpm record" in hdr and "cpu-clock" in hdr


def test_exit_status_is_the_commands(tmp_path):
    out, p = record(tmp_path, "-e", "cpu-clock", "--", "sh", "-c", "exit 7", rc=7)
    assert out.exists()


def test_unknown_event_is_one_line_and_no_file(tmp_path):
    out, p = record(tmp_path, "-e", "cpu-clok", "--", "true", rc=2)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cpu-clok" in lines[0] and "cpu-clock" in lines[0]
    assert not out.exists() and not list(tmp_path.iterdir())


def test_missing_command_is_127_and_no_file(tmp_path):
    out, p = record(tmp_path, "-e", "cpu-clock", "--", "/no/such/cmd", rc=127)
    assert "cannot run '/no/such/cmd'" in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args,msg", [
    (["-c", "10", "-F", "10", "--", "true"], "either -c"),
    (["--call-graph", "dwarf", "--", "true"], "frame-pointer"),
    (["-m", "3", "--", "true"], "power of 2"),
    (["-e", "{cpu-clock,page-faults", "--", "true"], "missing '}'"),
    ([], "nothing to record"),
])
def test_bad_options(tmp_path, args, msg):
    _, p = record(tmp_path, *args, rc=2)
    assert msg in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_unprivileged_user_falls_back_to_user_space_and_says_so():
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    tmp_path = Path(tempfile.mkdtemp(prefix="hpm-rec-"))  # pytest's tmp is private to root
    os.chmod(tmp_path, 0o777)
    p = run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
             require(HPM), "record", "-e", "cpu-clock", "-c", "100000", "-o", tmp_path / "u.data",
             "--", TOUCH, "5000"])
    assert p.returncode == 0, p.stderr
    if paranoid >= 2:
        assert "recording user space only (:u)" in p.stderr
        assert "kernel symbol addresses are hidden" in p.stderr or "kernel symbols" not in p.stderr
        text = perf_script(tmp_path / "u.data", "-f", "-F", "event")
        assert "cpu-clock:u" in text
    shutil.rmtree(tmp_path)
    assert open("/proc/sys/kernel/perf_event_paranoid").read().strip() == str(paranoid)


def test_help_has_examples():
    p = run([require(HPM), "record", "--help"])
    assert p.returncode == 0 and "examples:" in p.stdout and "perf script" in p.stdout
