"""hpmkit report on inputs that are not a whole, ordinary perf.data file: cut short, a FIFO,
perf's --threads folder, no samples, --call-graph dwarf. perf report beside it where it
decides (a cut file: perf refuses; a cut stream: perf reads up to the cut)."""
from __future__ import annotations

import lzma
import os
import shutil
import subprocess
import sys
import threading

import pytest

from conftest import ROOT

OWN = ROOT / "tests" / "data" / "perfdata" / "own"


def hpmkit(*args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300, **kw)


def unpack(tmp_path, name):
    f = tmp_path / name.removesuffix(".xz")
    f.write_bytes(lzma.decompress((OWN / name).read_bytes()))
    return f


def perf() -> str:
    p = shutil.which("perf")
    assert p, "perf is not installed: scripts/setup.sh installs linux-perf"
    return p


def test_cut_file_is_refused_like_perf(tmp_path):
    f = unpack(tmp_path, "taskclock-g.data.xz")
    cut = tmp_path / "cut.data"
    cut.write_bytes(f.read_bytes()[: f.stat().st_size * 2 // 3])
    p = subprocess.run([perf(), "report", "--stdio", "-i", str(cut)], capture_output=True, text=True)
    assert "# Samples" not in p.stdout          # perf prints no table for it either
    r = hpmkit("report", "-i", cut)
    assert r.returncode == 1 and r.stdout == ""
    line, = r.stderr.strip().splitlines()
    assert "the file is cut short at byte" in line and "hpmkit profile import" in line


def test_cut_stream_is_read_to_the_cut_with_a_note(tmp_path):
    f = unpack(tmp_path, "taskclock-g-pipe.data.xz")
    cut = tmp_path / "cut.pipe"
    cut.write_bytes(f.read_bytes()[: f.stat().st_size * 2 // 3])
    r = hpmkit("report", "-i", cut)
    assert r.returncode == 0 and "# Samples" in r.stdout
    assert "hpmkit report: note: the file is cut short at byte" in r.stderr


def test_fifo_reads_like_the_file(tmp_path):
    f = unpack(tmp_path, "taskclock-g.data.xz")
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as w:
            w.write(f.read_bytes())
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    r = hpmkit("report", "-q", "-i", fifo, "--stdio")
    t.join(10)
    ref = hpmkit("report", "-q", "-i", f, "--stdio")
    assert r.returncode == 0, r.stderr
    body = lambda s: s.splitlines()[1:]   # noqa: E731  (line 1 names the input)
    assert body(r.stdout) == body(ref.stdout) and "# Samples" in r.stdout


def test_empty_fifo_is_one_line(tmp_path):
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    t = threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True)
    t.start()
    r = hpmkit("report", "-i", fifo)
    assert r.returncode == 1 and "the stream is empty" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_perf_threads_folder_is_named(tmp_path):
    d = tmp_path / "thr.data"
    d.mkdir()
    (d / "data").write_bytes(b"PERFILE2" + bytes(96))
    (d / "data.0").write_bytes(b"")
    for cmd in (("report", "-i", d), ("profile", "import", d, "-o", tmp_path / "x.hpmprof")):
        r = hpmkit(*cmd)
        assert r.returncode == 1
        assert r.stderr.strip() == (f"hpmkit: {d}: perf's directory format (perf record --threads) is "
                                    f"not read; record without --threads, or give the text of "
                                    f"'perf script -i {d}'")


def test_no_samples_says_so_as_perf(tmp_path):
    data = tmp_path / "none.data"
    p = subprocess.run([perf(), "record", "-q", "-e", "page-faults", "-c", "1000000000", "-o", str(data),
                        "--", "true"], capture_output=True, text=True)
    if p.returncode:
        pytest.skip(f"perf record cannot run here: {p.stderr.strip()[:120]}")
    perf_err = subprocess.run([perf(), "report", "--stdio", "-i", str(data)], capture_output=True,
                              text=True).stderr
    assert "has no samples" in perf_err
    r = hpmkit("report", "-i", data)
    assert r.returncode == 0 and f"hpmkit report: {data} has no samples" in r.stderr


def test_dwarf_call_graphs_are_not_dropped_silently(tmp_path):
    data = tmp_path / "dw.data"
    p = subprocess.run([perf(), "record", "-q", "--call-graph", "dwarf", "-e", "task-clock", "-c", "100000",
                        "-o", str(data), "--", sys.executable, "-c", "sum(range(300000))"],
                       capture_output=True, text=True)
    if p.returncode:
        pytest.skip(f"perf record cannot run here: {p.stderr.strip()[:120]}")
    r = hpmkit("report", "-i", data, "-g", "none")
    assert r.returncode == 0, r.stderr
    assert "carry user stack copies (perf record --call-graph dwarf), which hpmkit does not unwind" in r.stderr
    assert "note" not in r.stdout      # stdout holds perf report's lines only
