"""perf.data side of the SPE decode (read by the one perf.data reader, hpmkit.perfdata):
AUXTRACE_INFO v1/v2, TIME_CONV, per-CPU buffers, pipe mode, bad files."""
import struct

import numpy as np
import pytest

from hpmkit.errors import FormatError, ReadError
from hpmkit.perfdata import PerfData
from hpmkit.spe import decode, perfmeta, perfwrite, synth
from hpmkit.spe.perfmeta import TimeConv


def _write(tmp_path, bufs, **kw):
    p = tmp_path / "perf.data"
    perfwrite.write_perf_data(p, bufs, **kw)
    return p


def test_v1_info_and_per_cpu_buffers(tmp_path):
    g0, g1 = synth.RecordGen(1), synth.RecordGen(2)
    p = _write(tmp_path, [(0, -1, g0.stream(10)), (3, -1, g1.stream(7)), (0, -1, g0.stream(5))], pmu_type=11)
    recs, src = decode.decode_all(p)
    assert src.info.version == 1 and src.info.pmu_type == 11 and src.info.per_cpu_mmaps == 1
    assert src.aux_buffers == 3 and src.cpus == {0, 3}
    assert (recs["cpu"] == 0).sum() == 15 and (recs["cpu"] == 3).sum() == 7
    assert src.problems() == []


def test_v2_info_per_cpu_metadata(tmp_path):
    p = _write(tmp_path, [(2, -1, synth.RecordGen(1).stream(3)), (5, -1, synth.RecordGen(2).stream(3))],
               info_version=2, pmu_type=13)
    _recs, src = decode.decode_all(p)
    info = src.info
    assert info.version == 2 and info.pmu_type == 13
    assert [(c.cpu, c.midr, c.pmu_type, c.min_interval) for c in info.cpus] == [
        (2, 0x410FD0C0, 13, 1024), (5, 0x410FD0C0, 13, 1024)]


def test_v2_info_parsing_of_negative_pmu_type():
    # the layout of Linux's v2 metadata: 4-word header, per CPU magic, cpu, nr params, params
    priv = [2, 4, 13, 2, perfmeta.V2_CPU_MAGIC, 0, 3, 0x410FD801, (1 << 64) - 1, 0,
            perfmeta.V2_CPU_MAGIC, 1, 3, 0x410FD870, 13, 1024]
    body = struct.pack("<II", 4, 0) + struct.pack(f"<{len(priv)}Q", *priv)
    info = perfmeta.parse_auxtrace_info("x", 0, body)
    assert [(c.cpu, c.pmu_type, c.min_interval) for c in info.cpus] == [(0, -1, 0), (1, 13, 1024)]
    bad = struct.pack("<II", 4, 0) + struct.pack("<6Q", 2, 4, 13, 1, 0x1234, 0)
    with pytest.raises(FormatError, match="magic"):
        perfmeta.parse_auxtrace_info("x", 0x40, bad)


def test_time_conv_converts_timestamps():
    tc = TimeConv(time_shift=10, time_mult=40 << 10, time_zero=1000)  # 25 MHz timer: 40 ns per tick
    assert tc.to_perf_time(np.array([0, 1, 100], dtype=np.uint64)).tolist() == [1000, 1040, 5000]
    short = TimeConv(10, 1 << 10, 0, time_cycles=0x1000, time_mask=0xFF, cap_user_time_short=True)
    assert int(short.to_perf_time(np.uint64(0x1005))) == 0x1005


def test_time_conv_record_is_read(tmp_path):
    p = _write(tmp_path, [(0, -1, synth.RecordGen(1).stream(2))], time_conv=TimeConv(10, 40 << 10, 7))
    _recs, src = decode.decode_all(p)
    assert (src.time_conv.time_shift, src.time_conv.time_mult, src.time_conv.time_zero) == (10, 40 << 10, 7)


def test_not_perf_data_and_missing(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"\x01" * 64)
    with pytest.raises(FormatError, match="not a perf.data file.*--raw"):
        decode.decode_all(f)
    with pytest.raises(ReadError, match="no such file"):
        decode.decode_all(tmp_path / "nope")


def test_truncated_file_is_an_error_or_a_counted_skip(tmp_path):
    data = synth.RecordGen(4).stream(20)
    p = _write(tmp_path, [(0, -1, data)])
    raw = p.read_bytes()
    cut = tmp_path / "cut.data"
    cut.write_bytes(raw[:-300])
    with pytest.raises(FormatError, match=r"data section ends at offset 0x[0-9a-f]+ .*truncated.*--truncated-ok"):
        decode.decode_all(cut)
    recs, src = decode.decode_all(cut, truncated_ok=True)
    assert src.truncated_bytes == 300
    assert 0 < len(recs) < 20
    assert any("missing" in p for p in src.problems())


def test_wrong_aux_size_is_reported_with_offset(tmp_path):
    data = synth.RecordGen(4).stream(4)
    p = _write(tmp_path, [(0, -1, data)])
    raw = bytearray(p.read_bytes())
    i = raw.find(struct.pack("<IHH", perfwrite.REC_AUXTRACE, 0, 48))
    struct.pack_into("<Q", raw, i + 8, len(data) + 4096)  # announces more than the file holds
    bad = tmp_path / "bad.data"
    bad.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match=rf"AUXTRACE record at offset {i:#x} announces {len(data) + 4096} bytes"):
        decode.decode_all(bad)


def test_damaged_record_header(tmp_path):
    p = _write(tmp_path, [(0, -1, synth.RecordGen(4).stream(2))])
    raw = bytearray(p.read_bytes())
    i = raw.find(struct.pack("<IHH", perfwrite.REC_TIME_CONV, 0, 56))
    struct.pack_into("<H", raw, i + 6, 4)  # size 4 < 8
    bad = tmp_path / "bad.data"
    bad.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match=rf"record at offset {i:#x} .*size 4 < 8"):
        decode.decode_all(bad)


def test_other_auxtrace_kind_is_refused(tmp_path):
    p = _write(tmp_path, [(0, -1, b"\x01" * 16)])
    raw = bytearray(p.read_bytes())
    i = raw.find(struct.pack("<IHH", perfwrite.REC_AUXTRACE_INFO, 0, 32))
    struct.pack_into("<I", raw, i + 8, 1)  # Intel PT
    bad = tmp_path / "pt.data"
    bad.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="Intel PT trace, not Arm SPE"):
        decode.decode_all(bad)


def test_big_files_stream_in_chunks(tmp_path):
    """A small chunk size forces many reads per buffer: same records as one big read."""
    g = synth.RecordGen(9)
    p = _write(tmp_path, [(0, -1, g.stream(300)), (1, -1, g.stream(300))])
    whole, _ = decode.decode_all(p)
    src = decode.Source(str(p), "")
    parts = list(decode.batches(p, chunk=100, src=src))
    assert np.concatenate(parts).tobytes() == whole.tobytes()
    assert src.stats.bytes == src.aux_bytes and src.aux_buffers == 2


def test_pipe_mode_file(tmp_path):
    """`perf record -o -` output: a 16-byte header, the attributes as HEADER_ATTR records, data to EOF.
    Built from a normal file's records. (perf 6.1's own `report -D -i -` stops after the first
    AUX buffer of such a stream, so it is no reference here.)"""
    data = synth.RecordGen(6).stream(20)
    p = _write(tmp_path, [(0, -1, data), (1, -1, synth.RecordGen(7).stream(10))])
    raw = p.read_bytes()
    _magic, _hsize, attr_size, a_off, _a_size, d_off, d_size = struct.unpack_from("<8sQQQQQQ", raw, 0)
    attr = raw[a_off:a_off + attr_size - 16]
    hdr_attr = struct.pack("<IHH", perfwrite.REC_HEADER_ATTR, 0, 8 + len(attr) + 8) + attr + struct.pack("<Q", 1)
    pipe = tmp_path / "pipe.data"
    pipe.write_bytes(perfwrite.MAGIC + struct.pack("<Q", 16) + hdr_attr + raw[d_off:d_off + d_size])
    whole, _ = decode.decode_all(p)
    recs, src = decode.decode_all(pipe)
    assert recs.tobytes() == whole.tobytes() and src.info.pmu_type == 8
    with PerfData(pipe) as pd:
        assert pd.pipe and pd.attrs[0].type == 8
    # read from a real pipe (standard input): the same records
    import subprocess
    import sys
    code = ("import sys; from hpmkit.spe import decode; r, s = decode.decode_all('-'); "
            "sys.stdout.buffer.write(r.tobytes())")
    from pathlib import Path
    env = {**__import__("os").environ, "PYTHONPATH": str(Path(decode.__file__).parents[2])}
    out = subprocess.run([sys.executable, "-c", code], input=pipe.read_bytes(), capture_output=True,
                         check=True, env=env)
    assert out.stdout == whole.tobytes()


def test_mutated_files_give_errors_not_crashes(tmp_path):
    """Random damage anywhere in a perf.data (headers, records, AUX data, cut ends): either a
    decode with counted skips or one HpmkitError; never another exception."""
    import random

    from hpmkit.errors import HpmkitError
    p = _write(tmp_path, [(0, -1, synth.RecordGen(3).stream(30)), (1, -1, synth.any_stream(2, 100, 0.1))],
               info_version=2)
    good = p.read_bytes()
    r = random.Random(0)
    bad = tmp_path / "m.data"
    outcomes = {"ok": 0, "error": 0}
    for i in range(300):
        b = bytearray(good)
        for _ in range(r.randrange(1, 6)):
            pos = r.randrange(len(b)) if r.random() < 0.5 else r.randrange(min(400, len(b)))
            b[pos] = r.getrandbits(8)
        if r.random() < 0.2:
            del b[r.randrange(len(b)):]
        bad.write_bytes(bytes(b))
        try:
            decode.decode_all(bad, truncated_ok=bool(i % 2))
            outcomes["ok"] += 1
        except HpmkitError as e:
            assert "\n" not in str(e)
            outcomes["error"] += 1
    assert outcomes["ok"] > 50 and outcomes["error"] > 50
