"""Bad perf.data: truncated at several offsets, broken header fields, pipe mode, an unknown
record type (skipped and counted). Every failure is a FormatError naming file and byte."""
import shutil
import struct
import subprocess

import pytest

from conftest import BUILD, ROOT, perf_record_calltree, require, run

from hpmkit.errors import FormatError
from hpmkit.perfdata import PerfData
from hpmkit.profile import ingest


PERF = shutil.which("perf")


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    _, data = perf_record_calltree(tmp_path_factory.mktemp("corrupt"), 200000, 10000000)
    return data.read_bytes()


def write(tmp_path, name, blob):
    p = tmp_path / name
    p.write_bytes(blob)
    return p


def test_good_file_reads(good, tmp_path):
    p = ingest(write(tmp_path, "ok.data", good))
    assert p.samples.num_rows > 50 and p.meta["skipped"] == {}


def _sample_ends(blob: bytes, tmp_path) -> tuple[int, int, list[tuple[int, int, str]]]:
    """(data offset, data end, [(record offset, record end, type name)]) of a good file."""
    with PerfData(write(tmp_path, "ref.data", blob)) as pd:
        recs = [(r.offset, r.offset + r.size, r.name) for r in pd.records()]
        return pd.data_offset, pd.data_offset + pd.data_size, recs


def test_truncated_inside_the_header(good, tmp_path):
    for cut in (12, 60, 100, 200):
        f = write(tmp_path, "cut.data", good[:cut])
        with pytest.raises(FormatError) as e:
            ingest(f)
        msg = str(e.value)
        assert msg.startswith(f"{f}: ") and ("byte " in msg or "shorter" in msg or "empty" in msg)


@pytest.mark.parametrize("frac", [0.01, 0.3, 0.6, 0.97])
def test_truncated_keeps_every_complete_record(good, tmp_path, frac):
    """A cut file: every record that ends before the cut is used, the lost bytes are counted
    (from the first incomplete record to the end the header declares)."""
    d_off, d_end, recs = _sample_ends(good, tmp_path)
    cut = d_off + int((d_end - d_off) * frac)
    f = write(tmp_path, "cut.data", good[:cut])
    p = ingest(f)
    complete = [r for r in recs if r[1] <= cut]
    assert p.samples.num_rows == sum(1 for r in complete if r[2] == "SAMPLE")
    first_cut = min((r[0] for r in recs if r[1] > cut), default=cut)
    note = next(n for n in p.meta["notes"] if "cut short" in n)
    assert f"cut short at byte {first_cut} " in note
    assert f"{d_end - first_cut} bytes lost ({d_end - cut} missing, {cut - first_cut} of an " \
        "incomplete record)" in note


def test_bad_magic_and_pipe_mode(good, tmp_path):
    with pytest.raises(FormatError, match="byte 0: not a perf.data file"):
        PerfData(write(tmp_path, "m.data", b"PERFILE3" + good[8:]))
    pipe = b"PERFILE2" + struct.pack("<Q", 16) + b"\0" * 64
    with pytest.raises(FormatError, match=r"byte 16: record at offset 0x10 \(type 0\) has size 0 < 8"):
        ingest(write(tmp_path, "pipe.data", pipe))


def test_legacy_magic_is_perf_data(good, tmp_path):
    """The 'PERFFILE' magic of the first perf.data header is a perf.data file, not text; with
    an attr larger than that format knew, perf refuses it, and so does hpmkit, in one line."""
    f = write(tmp_path, "v1.data", b"PERFFILE" + good[8:])
    perf = subprocess.run([PERF, "script", "-i", f], capture_output=True, text=True)
    assert perf.returncode != 0 and "incompatible file format" in perf.stderr
    with pytest.raises(FormatError, match=r"byte 16: legacy 'PERFFILE' header with attr size"):
        ingest(f)


@pytest.mark.parametrize("field,off,value,pattern", [
    ("attr_size", 16, 7, "attr size 7"),
    ("attrs.size", 32, 13, "not a multiple of the attr size"),
    ("data.offset", 40, 10, "lies inside the header"),
    ("data.offset", 40, 1 << 40, "lies past the end of the file"),
])
def test_flipped_header_fields(good, tmp_path, field, off, value, pattern):
    blob = bytearray(good)
    struct.pack_into("<Q", blob, off, value)
    with pytest.raises(FormatError, match=pattern):
        ingest(write(tmp_path, f"{field}.data", bytes(blob)))


def test_unknown_sample_type_bit(good, tmp_path):
    blob = bytearray(good)
    attrs_off = struct.unpack_from("<Q", good, 24)[0]
    st = struct.unpack_from("<Q", blob, attrs_off + 24)[0]
    struct.pack_into("<Q", blob, attrs_off + 24, st | (1 << 40))
    with pytest.raises(FormatError, match=rf"byte {attrs_off + 24}: sample_type"):
        ingest(write(tmp_path, "st.data", bytes(blob)))


def test_unknown_record_type_is_skipped_and_counted(good, tmp_path):
    with PerfData(write(tmp_path, "g.data", good)) as pd:
        target = next(r for r in pd.records() if r.name == "EXIT")
    blob = bytearray(good)
    struct.pack_into("<I", blob, target.offset, 200)
    p = ingest(write(tmp_path, "unk.data", bytes(blob)))
    assert p.meta["skipped"] == {"unknown record type 200": 1}
    ref = ingest(write(tmp_path, "g2.data", good))
    assert p.samples.num_rows == ref.samples.num_rows


def test_sample_shorter_than_its_type(good, tmp_path):
    with PerfData(write(tmp_path, "g.data", good)) as pd:
        s = next(r for r in pd.records() if r.name == "SAMPLE")
    blob = bytearray(good)
    # a callchain length far beyond the record
    st_fields = 3   # IP, TID, TIME precede CALLCHAIN in this recording
    struct.pack_into("<Q", blob, s.offset + 8 + 8 * st_fields, 1 << 20)
    with pytest.raises(FormatError, match=rf"byte {s.offset}: callchain longer than its record"):
        ingest(write(tmp_path, "cc.data", bytes(blob)))


def test_data_size_past_the_end_is_a_cut_file(good, tmp_path):
    d_off, d_size = struct.unpack_from("<QQ", good, 40)
    blob = bytearray(good[:d_off + d_size])       # the features are gone too
    struct.pack_into("<Q", blob, 48, d_size + 1000)
    p = ingest(write(tmp_path, "big.data", bytes(blob)))
    ref = ingest(write(tmp_path, "g.data", good))
    assert p.samples.num_rows == ref.samples.num_rows
    assert (f"cut short at byte {d_off + d_size} inside the data section (at a record "
            f"boundary): 1000 bytes lost") in " ".join(p.meta["notes"])


def test_cli_error_is_one_line_and_writes_nothing(good, tmp_path):
    f = write(tmp_path, "cut.data", good[:60])
    out = tmp_path / "cut.hpmprof"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", str(f),
                        "-o", str(out)], capture_output=True, text=True)
    assert p.returncode == 1 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "byte " in p.stderr
    assert not out.exists() and not [x for x in tmp_path.iterdir() if x.name.startswith(".")]


def test_cli_cut_file_imports_with_a_note(good, tmp_path):
    f = write(tmp_path, "cut.data", good[: len(good) // 2])
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", str(f),
                        "-o", str(tmp_path / "cut.hpmprof")], capture_output=True, text=True)
    assert p.returncode == 0 and "samples" in p.stdout
    assert "note: the file is cut short at byte" in p.stderr and "bytes lost" in p.stderr


@pytest.mark.parametrize("frac", [0.5, 0.7, 0.95])
def test_cut_pipe_stream_keeps_what_perf_keeps(tmp_path, frac):
    """A pipe-mode stream cut short: perf reads up to the last complete record ("unexpected
    end of event stream") and so does hpmkit, sample for sample."""
    import lzma
    blob = lzma.decompress((ROOT / "tests/data/perfdata/own/taskclock-g-pipe.data.xz").read_bytes())
    f = write(tmp_path, "cut.data", blob[:int(len(blob) * frac)])
    p = subprocess.run([PERF, "script", "-F", "tid,time", "--ns", "-i", f], capture_output=True,
                       text=True)
    ref = [int(line.split()[1].rstrip(":").replace(".", "")) for line in p.stdout.splitlines()
           if line.strip() and not line.startswith("\t")]     # (pipe mode prints chains)
    prof = ingest(f)
    assert prof.samples["time"].to_pylist() == ref and len(ref) > 0
    assert any("cut short" in n for n in prof.meta["notes"])


def test_recording_without_samples_imports_empty(tmp_path):
    """perf record of a command too short for one sample: an empty profile and a note, not
    advice about perf script text."""
    data = tmp_path / "empty.data"
    run([PERF, "record", "-q", "-e", "task-clock", "-c", "1000000000", "-o", data, "--", "true"],
        check_rc=0)
    out = tmp_path / "empty.hpmprof"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", str(data),
                        "-o", str(out)], capture_output=True, text=True)
    assert p.returncode == 0 and "0 samples" in p.stdout
    assert p.stderr.strip() == "note: the recording holds no samples"
    prof = ingest(data)
    assert prof.samples.num_rows == 0 and prof.meta["events"][0]["name"] == "task-clock"


def test_mutated_corpus_files_give_errors_not_crashes(tmp_path):
    """Random bytes changed (headers, attrs, records, features, compressed and pipe-mode
    streams) and random cuts: an import, or one HpmkitError of one line; never another
    exception, never a crash of the C scanner."""
    import lzma
    import random

    from hpmkit.errors import HpmkitError
    corpus = sorted((ROOT / "tests/data/perfdata").glob("*/*.xz"))
    blobs = [b for b in (lzma.decompress(f.read_bytes()) for f in corpus) if len(b) < 300000]
    r = random.Random(7)
    outcomes = {"ok": 0, "error": 0}
    f = tmp_path / "m.data"
    for _ in range(150):
        b = bytearray(r.choice(blobs))
        for _ in range(r.randrange(1, 8)):
            pos = r.randrange(len(b)) if r.random() < 0.7 else r.randrange(min(600, len(b)))
            b[pos] = r.getrandbits(8)
        if r.random() < 0.3:
            del b[r.randrange(len(b)):]
        f.write_bytes(bytes(b))
        try:
            ingest(f, srcline="none")
            outcomes["ok"] += 1
        except HpmkitError as e:
            assert "\n" not in str(e)
            outcomes["error"] += 1
    assert outcomes["ok"] > 30 and outcomes["error"] > 10
