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


@pytest.mark.parametrize("frac", [0.0005, 0.01, 0.3, 0.6, 0.97])
def test_truncated(good, tmp_path, frac):
    cut = max(1, int(len(good) * frac))
    f = write(tmp_path, "cut.data", good[:cut])
    with pytest.raises(FormatError) as e:
        ingest(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: ") and ("byte " in msg or "shorter" in msg)


def test_truncated_inside_a_record(good, tmp_path):
    """A data section that ends inside a record (header readable, body cut)."""
    with PerfData(write(tmp_path, "g.data", good)) as pd:
        recs = [r.offset for r in pd.records()]
        mid = recs[len(recs) // 2]
        with pytest.raises(FormatError, match=rf"byte {mid}: .*past the end of the data section"):
            list(pd.records(pd.data_offset, mid + 12))
        with pytest.raises(FormatError, match=rf"byte {mid}: truncated record header"):
            list(pd.records(pd.data_offset, mid + 4))


def test_bad_magic_and_pipe_mode(good, tmp_path):
    with pytest.raises(FormatError, match="byte 0: not a perf.data file"):
        PerfData(write(tmp_path, "m.data", b"PERFILE3" + good[8:]))
    pipe = b"PERFILE2" + struct.pack("<Q", 16) + b"\0" * 64
    with pytest.raises(FormatError, match="pipe-mode perf.data"):
        ingest(write(tmp_path, "pipe.data", pipe))


@pytest.mark.parametrize("field,off,value,pattern", [
    ("attr_size", 16, 7, "attr size 7"),
    ("attrs.size", 32, 13, "not a multiple of the attr size"),
    ("data.offset", 40, 10, "lies inside the header"),
    ("data.size", 48, 1 << 40, "runs past the end of the file"),
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


def test_cli_error_is_one_line_and_writes_nothing(good, tmp_path):
    f = write(tmp_path, "cut.data", good[: len(good) // 2])
    out = tmp_path / "cut.hpmprof"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "import", str(f),
                        "-o", str(out)], capture_output=True, text=True)
    assert p.returncode == 1 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "byte " in p.stderr
    assert not out.exists() and not [x for x in tmp_path.iterdir() if x.name.startswith(".")]
