"""hpmkit's perf.data reader against Linux perf 6.1 on a corpus of files written by other people's
perf (3.2 ... 6.12; x86-64, i686, armv7, aarch64; file and pipe mode; branch stacks, Intel PT,
lost samples, throttling) and by perf 6.1 here (pipe mode, -z, two sample types, fork + exec
across CPUs). tests/data/perfdata/README.md names each file's origin and licence.

For every file perf reads: the samples per event equal `perf report --stats` (or `perf script`
where perf's report cannot read the file), and sample by sample, in perf's order, the time,
pid, tid, comm, period and the DSO of the address equal `perf script`'s; callchain lengths and
branch-stack entries too. A file perf refuses gets one line from hpmkit, or is read to its exact end."""
import collections
import lzma
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

from hpmkit.errors import FormatError
from hpmkit.perfdata import PerfData
from hpmkit.perfdata import format as F
from hpmkit.perfdata.scan import scan
from hpmkit.profile import ingest

PERF = shutil.which("perf")
CORPUS = ROOT / "tests" / "data" / "perfdata"
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.xz"))
# files perf 6.1 refuses, and what hpmkit does with them
REFUSED = {
    "quipper/perf.data.piped.corrupted.zero_size_sample-3.2.xz":
        ("error", r"byte 49104: record .*size.* 8: the data section is damaged"),
    # perf 6.1 stops at the first AUXTRACE payload of a pipe ("bad event header size")
    "quipper/perf.data.piped.intel_pt-4.14.xz": ("read", [11]),
}


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    out = {}
    for name in FILES:
        dst = d / name.replace("/", "__")[:-3]
        dst.write_bytes(lzma.decompress((CORPUS / name).read_bytes()))
        out[name] = dst
    return out


def perf_counts(path: Path) -> list[int] | None:
    """Samples per event, in the file's event order, as perf reads them (None: refused)."""
    p = subprocess.run([PERF, "report", "--stats", "-i", path], capture_output=True, text=True)
    counts, cur = [], None
    for line in p.stdout.splitlines():
        m = re.match(r"^(\S.*) stats:$", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"^\s+SAMPLE events:\s+(\d+)$", line)
        if m and cur:
            counts.append(int(m.group(1)))
    if p.returncode == 0 and counts:
        return counts
    # perf 6.1's report cannot decompress a pipe-mode -z file; its script can
    s = subprocess.run([PERF, "script", "--no-itrace", "-F", "event", "-i", path],
                       capture_output=True, text=True)
    if s.returncode or "failed to process" in s.stderr or "bad event" in s.stderr:
        return None if p.returncode or not s.stdout else []
    return list(collections.Counter(s.stdout.split()).values())


def ours(path: Path) -> list[int]:
    with PerfData(path) as pd:
        res = scan(pd)
        n = collections.Counter(res.cols["attr"].tolist())
        return [n[i] for i in range(len(pd.attrs)) if n[i]]


def test_corpus_is_there():
    assert len(FILES) >= 55
    assert (CORPUS / "quipper" / "LICENSE").is_file()


@pytest.mark.parametrize("name", FILES)
def test_samples_per_event(unpacked, name):
    path = unpacked[name]
    ref = perf_counts(path)
    if name in REFUSED:
        assert ref is None or ref == [], "perf reads it now: move it out of REFUSED"
        kind, want = REFUSED[name]
        if kind == "error":
            with pytest.raises(FormatError, match=want) as e:
                ours(path)
            assert "\n" not in str(e.value)
        else:
            assert ours(path) == want
            with PerfData(path) as pd:      # every record and payload, to the last byte
                last = None
                for rec in pd.records():
                    last = rec
                assert pd.truncation is None
                assert last.offset + last.size + last.aux_size == pd.size
        return
    assert ref is not None, "perf refuses this file"
    mine = ours(path)
    if "zstd-pipe" in name:
        assert sorted(mine) == sorted(ref)
    else:
        assert mine == ref


SAMPLE_RE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+"
                       r"(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>\S.*?):\s*$")


def perf_samples(path: Path, attrs) -> tuple[list[tuple], bool, bool]:
    has_time = all(a.sample_type & F.SAMPLE_TIME for a in attrs)
    has_period = all(a.sample_type & F.SAMPLE_PERIOD for a in attrs)
    fields = "comm,pid,tid" + (",time" if has_time else "") + (",period" if has_period else "") \
        + ",event"
    p = subprocess.run([PERF, "script", "--no-itrace", "--ns", "-F", fields, "-i", path],
                       capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        if not line.strip() or line.startswith("\t"):
            continue        # perf 6.1 prints the callchains of pipe-mode files regardless
        m = SAMPLE_RE.match(line)
        assert m, line
        t = m.group("time")
        out.append((int(m.group("pid")), int(m.group("tid")), m.group("comm").strip(),
                    int(t.replace(".", "")) if t else None,
                    int(m.group("period")) if m.group("period") else None, m.group("event")))
    return out, has_time, has_period


@pytest.mark.parametrize("name", [n for n in FILES if n not in REFUSED])
def test_each_sample_as_perf_script(unpacked, name):
    """Sample by sample in perf's delivery order: pid, tid, comm (decided by the time
    order of COMM/FORK records), time and period; one event for each of perf's names."""
    path = unpacked[name]
    with PerfData(path) as pd:
        scan(pd)
        attrs = list(pd.attrs)
    ref, has_time, has_period = perf_samples(path, attrs)
    prof = ingest(path, srcline="none")
    s = prof.samples
    mine = list(zip(s["pid"].to_pylist(), s["tid"].to_pylist(), s["comm"].to_pylist(),
                    s["time"].to_pylist() if has_time else [None] * s.num_rows,
                    s["period"].to_pylist() if has_period else [None] * s.num_rows,
                    s["event"].to_pylist()))
    assert len(mine) == len(ref)
    pairs = {}
    for k, (a, b) in enumerate(zip(mine, ref)):
        assert a[:5] == b[:5], (k, a, b)
        assert pairs.setdefault(a[5], b[5]) == b[5], (k, a, b)
    assert len(set(pairs.values())) == len(pairs)
    # the DSO of each sample's address: module maps, JIT maps (/tmp/perf-PID.map), maps a
    # child copied from its parent at fork, addresses in no map ([unknown])
    theirs = perf_leaves(path)
    ours = leaves(prof)
    assert [l[0] for l in ours] == [l[0] for l in theirs]
    if name.startswith("own/"):
        # and its symbol+offset where perf names it from the recording and the files its
        # build-ids name (our own recordings; the others' programs are not here). Kernel
        # leaves are left out: perf names them from this machine's /proc/kallsyms whatever
        # boot recorded the file, hpmkit only from a kallsyms of that boot.
        bad = [(k, a, b) for k, (a, b) in enumerate(zip(ours, theirs))
               if not a[2] and not same_symbol(a[1], b[1])]
        assert not bad, bad[:10]


def same_symbol(ours: str | None, theirs: str | None) -> bool:
    """One leaf named alike; perf 6.1 names libc's own PLT slots '@plt' or one slot off where
    hpmkit names them as objdump does (docs/report.md, PLT slots)."""
    if ours == theirs:
        return True
    if ours is not None and theirs is not None and "@plt" in ours and "@plt" in theirs:
        return True
    return False


def perf_leaves(path: Path) -> list[tuple[str | None, str | None]]:
    """(dso, symbol+offset) of each sample's own address as perf script prints them."""
    p = subprocess.run([PERF, "script", "--no-itrace", "-F", "ip,sym,symoff,dso", "--max-stack",
                        "1", "-i", path], capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        s = line.strip()
        if not s:
            continue
        rest = s.split(None, 1)[1] if " " in s else ""
        if "(" in rest:
            sym, dso = rest[:rest.rindex("(")].strip(), rest[rest.rindex("(") + 1:-1]
        else:
            sym, dso = rest.strip(), None
        out.append((dso, None if sym in ("", "[unknown]") else sym))
    return out


def leaves(prof) -> list[tuple[str | None, str | None, bool]]:
    """(dso, symbol+offset as perf script prints it, kernel) of each sample's leaf frame."""
    frames = {r["frame_id"]: r for r in prof.frames.to_pylist()}
    stacks = dict(zip(prof.stacks["stack_id"].to_pylist(), prof.stacks["frame_ids"].to_pylist()))
    out = []
    for s in prof.samples["stack_id"].to_pylist():
        if not stacks[s]:
            out.append((None, None, False))
            continue
        f = frames[stacks[s][0]]
        sym = f"{f['symbol']}+{f['offset'] or 0:#x}" if f["symbol"] is not None else None
        out.append((f["dso"] or "[unknown]", sym, bool(f["kernel"])))
    return out


def _chains(path: Path):
    with PerfData(path) as pd:
        res = scan(pd, extra=True)
        c = res.cols
        order = np.argsort(c["dseq"], kind="stable")
        marker = c["chain"] >= np.uint64(F.CONTEXT_MAX)
        starts = c["stack_start"].astype(np.int64)
        lens = c["stack_len"].astype(np.int64)
        cum = np.concatenate([[0], np.cumsum(marker)])
        frames = lens - (cum[starts + lens] - cum[starts])
        return frames[c["stack"][order]], c["nbranch"][order], pd.attrs, c["attr"][order]


def perf_frames(path: Path) -> list[int]:
    """Frames per sample of `perf script -F event,ip`: a line naming the event (with the ip on
    it when the sample has no chain), then one tab-indented line per frame."""
    p = subprocess.run([PERF, "script", "--no-itrace", "-F", "event,ip", "-i", path],
                       capture_output=True, text=True, check=True)
    out: list[int] = []
    for line in p.stdout.splitlines():
        if line.startswith("\t"):
            out[-1] += 1
        elif line.strip():
            out.append(0)
    return out


WITH_CHAINS = ["quipper/perf.data.callgraph-3.4.xz", "quipper/perf.data.callgraph-3.8.xz",
               "quipper/perf.data.callgraph_and_branch-3.8.xz",
               "quipper/perf.data.raw_callgraph_branch-3.4.xz",
               "aperf/graviton3-cpuclock.perf.data.xz", "own/taskclock-g.data.xz",
               "own/taskclock-g-pipe.data.xz", "own/taskclock-g-zstd.data.xz",
               "own/two-events.data.xz"]


@pytest.mark.parametrize("name", WITH_CHAINS)
def test_callchain_lengths(unpacked, name):
    """Frames per sample (context markers left out) as perf script prints them; perf stops at
    127 frames (its scripting max-stack)."""
    path = unpacked[name]
    frames, _nb, attrs, sattr = _chains(path)
    with_cc = np.array([bool(a.sample_type & F.SAMPLE_CALLCHAIN) for a in attrs])
    assert with_cc.any()
    ref = perf_frames(path)
    # samples of an event without chains: perf prints their ip on the event's line
    assert np.where(with_cc[sattr], np.minimum(frames, 127), 0).tolist() == ref
    assert sum(ref) > 0


WITH_BRANCHES = [n for n in FILES if "branch" in n and n not in REFUSED]


@pytest.mark.parametrize("name", WITH_BRANCHES)
def test_branch_stack_entries(unpacked, name):
    path = unpacked[name]
    _frames, nbranch, attrs, _sattr = _chains(path)
    if not any(a.sample_type & F.SAMPLE_BRANCH_STACK for a in attrs):
        pytest.skip("no branch stacks in this file")
    p = subprocess.run([PERF, "script", "--no-itrace", "-F", "brstack", "-i", path],
                       capture_output=True, text=True, check=True)
    ref = [len(re.findall(r"0x[0-9a-f]+/0x[0-9a-f]+/", line)) for line in p.stdout.splitlines()]
    assert nbranch.tolist() == ref and sum(ref) > 0


def test_pipe_mode_from_standard_input(unpacked, tmp_path):
    """`perf record -o - | hpmkit profile import - -o X`: the same samples as the file."""
    path = unpacked["own/taskclock-g-pipe.data.xz"]
    out = tmp_path / "stdin.hpmprof"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", "-", "-o",
                        str(out)], input=path.read_bytes(), capture_output=True)
    assert p.returncode == 0, p.stderr
    from hpmkit.profile.model import Profile
    a, b = Profile.load(out), ingest(path)
    assert a.samples.num_rows == b.samples.num_rows > 50
    assert a.samples["time"].to_pylist() == b.samples["time"].to_pylist()
    assert a.samples["comm"].to_pylist() == b.samples["comm"].to_pylist()
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", "-"],
                       input="", capture_output=True, text=True)
    assert p.returncode == 2 and "give -o" in p.stderr and p.stderr.count("\n") == 1


@pytest.mark.parametrize("name", [n for n in FILES if n not in REFUSED])
def test_lost_and_throttled_as_perf(unpacked, name):
    """Lost samples (PERF_RECORD_LOST / LOST_SAMPLES) and throttling records as perf counts
    them (`perf report -D`, `perf report --stats`)."""
    path = unpacked[name]
    dump = subprocess.run([PERF, "report", "-D", "-i", path], capture_output=True, text=True).stdout
    lost = sum(int(n) for n in re.findall(r"PERF_RECORD_LOST_SAMPLES: .*lost samples :(\d+)", dump))
    lost += sum(int(n) for n in re.findall(r"PERF_RECORD_LOST lost (\d+)", dump))
    stats = subprocess.run([PERF, "report", "--stats", "-i", path], capture_output=True,
                           text=True).stdout
    thr: dict[str, int] = {}
    for k, v in re.findall(r"^\s+(THROTTLE|UNTHROTTLE) events:\s+(\d+)", stats, re.M):
        thr.setdefault(k.lower(), int(v))       # the aggregated block comes first
    prof = ingest(path, srcline="none")
    assert prof.meta["lost"] == lost
    if "zstd-pipe" not in name:             # perf 6.1's report cannot read that one
        assert prof.meta["throttle"] == {"throttle": thr.get("throttle", 0),
                                         "unthrottle": thr.get("unthrottle", 0)}
