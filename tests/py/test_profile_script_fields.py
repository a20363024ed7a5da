"""perf script text of any field set: imported samples per event, per comm and per (comm, leaf
symbol) equal `perf report` on the same recording, for perf's default fields without -g, with
-g, and the -F sets users choose (no time, no event, no period, tid only, srcline lines)."""
import collections
import importlib.util
import lzma
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

from hpmkit.errors import FormatError
from hpmkit.profile import ingest

PERF = shutil.which("perf")
CORPUS = ROOT / "tests" / "data" / "perfdata" / "own"
FIELD_SETS = [
    [],                                                   # perf's defaults
    ["-F", "comm,tid,time,ip,sym"],
    ["-F", "comm,tid,ip,sym"],                            # no time
    ["-F", "tid,ip,sym"],                                 # no comm
    ["-F", "comm,pid,tid,time,period,event,ip,sym,symoff,dso"],
    ["-F", "comm,tid,time,ip,sym,srcline"],               # a srcline line after each sample
    ["-F", "comm,tid,time,event"],                        # no ip at all
    ["-F", "comm,pid,tid,time,event,ip,sym,dso,period", "-G"],   # -G: no callchains
]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    d = tmp_path_factory.mktemp("scriptfields")
    out = {}
    nog = d / "nog.data"
    p = subprocess.run([PERF, "record", "-q", "-e", "task-clock", "-c", "100000", "-o", nog, "--",
                        "sh", "-c", "for i in $(seq 1 100000); do :; done"], capture_output=True)
    assert p.returncode == 0, p.stderr
    out["nog"] = nog
    for name in ("taskclock-g", "taskclock-g-zstd", "two-events", "forkexec-pagefaults"):
        f = d / f"{name}.data"
        f.write_bytes(lzma.decompress((CORPUS / f"{name}.data.xz").read_bytes()))
        out[name] = f
    return out


def perf_report(path: Path, sort: str) -> dict[str, collections.Counter]:
    """Samples per sort key, per event, from `perf report --stdio -F sample,<sort>`."""
    p = subprocess.run([PERF, "report", "--stdio", "-g", "none", "--no-children", "-i", path,
                        "--sort", sort, "-F",
                        f"sample,{sort}", "-t", "|"], capture_output=True, text=True, check=True)
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    ev = None
    for line in p.stdout.splitlines():
        m = re.match(r"^# Samples: .* of event '(.*)'", line)
        if m:
            ev = m.group(1)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("|")
        n = int(parts[0])
        key = tuple(x.strip() for x in parts[1:])
        if len(key) == 2:   # comm, "[k] sym": unresolved symbols are addresses, counted as one
            sym = key[1][4:]
            key = (key[0], None if sym.startswith("0x") else sym)
        if n:
            out[ev][key if len(key) > 1 else key[0]] += n
    return out


def merge(d: dict) -> dict:
    total: collections.Counter = collections.Counter()
    for c in d.values():
        total.update(c)
    return {"all": total}


def drop_comm(d: dict) -> dict:
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for ev, c in d.items():
        for k, n in c.items():
            out[ev][k[1] if isinstance(k, tuple) else None] += n
    return out


def ours(prof, key: str) -> dict[str, collections.Counter]:
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    s = prof.samples
    syms = prof.all_stack_symbols()
    for ev, comm, sid in zip(s["event"].to_pylist(), s["comm"].to_pylist(),
                             s["stack_id"].to_pylist()):
        if key == "comm":
            out[ev][comm] += 1
        else:
            leaf = syms[sid][0] if syms[sid] else None
            out[ev][(comm, None if leaf is None or leaf.startswith("0x") else leaf)] += 1
    return out


def same_events(a: dict, b: dict) -> None:
    """The same counters per event; event names may differ (perf's name vs the text's)."""
    def norm(d):
        return sorted(sorted(((str(k), n) for k, n in c.items()), key=str) for c in d.values())
    assert norm(a) == norm(b)


@pytest.mark.parametrize("fields", FIELD_SETS, ids=lambda f: " ".join(f) or "default")
@pytest.mark.parametrize("rec", ["nog", "taskclock-g", "taskclock-g-zstd", "two-events",
                                 "forkexec-pagefaults"])
def test_field_set_totals_equal_perf_report(recordings, tmp_path, rec, fields):
    data = recordings[rec]
    text = tmp_path / "out.txt"
    with open(text, "w") as f:
        p = subprocess.run([PERF, "script", "-i", data, *fields], stdout=f,
                           stderr=subprocess.PIPE, text=True)
    if p.returncode:
        pytest.skip(f"perf script refuses {fields} here: {p.stderr.strip()[:80]}")
    prof = ingest(text)
    ref_comm = perf_report(data, "comm")
    assert prof.samples.num_rows == sum(sum(c.values()) for c in ref_comm.values())
    has_comm = "comm" in ",".join(fields) or not fields
    # without the event field the text cannot tell events apart: compare all together
    fold = merge if fields and "event" not in ",".join(fields) else (lambda d: d)
    if has_comm:
        same_events(fold(ours(prof, "comm")), fold(ref_comm))
    if "sym" in ",".join(fields) or not fields:
        mine, ref = fold(ours(prof, "comm,sym")), fold(perf_report(data, "comm,sym"))
        same_events(mine, ref) if has_comm else same_events(drop_comm(mine), drop_comm(ref))
    skipped = prof.meta["skipped"]
    if "srcline" in ",".join(fields):
        assert sum(skipped.values()) > 0          # counted, not fatal
    # the binary import of the same recording: the same threads sample by sample
    binary = ingest(data, srcline="none")
    assert binary.samples["tid"].to_pylist() == prof.samples["tid"].to_pylist()
    if has_comm:
        assert binary.samples["comm"].to_pylist() == prof.samples["comm"].to_pylist()


def test_two_events_units(recordings):
    """task-clock named with its terms (task-clock/call-graph=fp/) is still a clock: ns."""
    prof = ingest(recordings["two-events"])
    units = {e["name"]: e["unit"] for e in prof.meta["events"]}
    assert units == {"task-clock/call-graph=fp/": "ns", "page-faults/period=1/": "events"}


def test_foreign_text_is_refused_at_its_first_line(tmp_path):
    f = tmp_path / "report.txt"
    f.write_text("# comment\n    99.93%     0.00%  java  [unknown]  [.] 0x00007f\n")
    with pytest.raises(FormatError, match=r"report.txt: line 2: not a perf script sample"):
        ingest(f)


@pytest.fixture(scope="module")
def live_forkexec(tmp_path_factory):
    """The fork + exec workload recorded now (tests/data/perfdata/own/forkexec.c)."""
    d = tmp_path_factory.mktemp("forkexec")
    exe = d / "forkexec"
    subprocess.run(["gcc", "-O1", "-o", exe, CORPUS / "forkexec.c"], check=True)
    data = d / "fe.data"
    subprocess.run([PERF, "record", "-q", "-e", "page-faults/period=1/", "-o", data, "--", exe],
                   check=True, capture_output=True)
    return data


@pytest.mark.parametrize("rec", ["nog", "forkexec"])
def test_binary_import_totals_equal_perf_report(recordings, live_forkexec, rec):
    """`hpmkit profile show` of the perf.data itself: samples per comm and per (comm, symbol)
    as perf report counts them (symbols from this machine's kernel and ELF files)."""
    data = recordings["nog"] if rec == "nog" else live_forkexec
    prof = ingest(data)
    same_events(ours(prof, "comm"), perf_report(data, "comm"))
    # PLT slots ("memcpy@plt") are compared by name; where perf 6.1 misnames one (libc's own
    # slots: perf takes relocation i for slot i, but x86 ld writes IRELATIVE relocations
    # last) the name is objdump's for that address (test_symbols_plt.py)
    same_events(ours(prof, "comm,sym"), plt_names_fixed(data, perf_report(data, "comm,sym")))


def plt_names_fixed(path: Path, ref: dict[str, collections.Counter]) -> dict:
    """`ref` (perf_report(path, "comm,sym")) with each sample perf 6.1 puts in a PLT slot
    named as objdump and readelf name the slot holding its address (make_golden.py)."""
    spec = importlib.util.spec_from_file_location(
        "make_golden", ROOT / "tests" / "data" / "plt" / "make_golden.py")
    golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(golden)
    p = subprocess.run([PERF, "report", "--stdio", "-g", "none", "--no-children", "-v", "-i",
                        path, "--sort", "comm,dso,sym", "-F", "sample,comm,dso,sym", "-t", "|"],
                       capture_output=True, text=True, check=True)
    slots: dict[str, list] = {}
    ev = None
    for line in p.stdout.splitlines():
        m = re.match(r"^# Samples: .* of event '(.*)'", line)
        if m:
            ev = m.group(1)
            continue
        parts = [x.strip() for x in line.split("|")]
        m = re.match(r"(0x[0-9a-f]+)\s+\S\s+\[\.\] (.*@plt)$", parts[-1]) if len(parts) == 4 \
            else None
        if not m or line.startswith("#"):
            continue
        n, comm, dso, ip, theirs = int(parts[0]), parts[1], parts[2], int(m[1], 16), m[2]
        if dso not in slots:
            slots[dso] = [(a, name) for a, name, _ in golden.golden(dso, "objdump")]
        at = [name for (a, name), nxt in zip(slots[dso], slots[dso][1:] + [(1 << 64, "")])
              if a <= ip < min(nxt[0], a + 24)]
        right = at[0] if at else None
        if right != theirs:
            ref[ev][(comm, theirs)] -= n
            ref[ev][(comm, right)] += n
    return {e: +c for e, c in ref.items()}
