"""spe-parser tables from hpmkit's C writer (src/native/spe_tab.c) against pyarrow's own CSV and
Parquet writers fed by the numpy reference columns (spe_tables_ref.py): identical CSV bytes and
identical Parquet tables (schema and every value), on realistic and on random damaged streams,
with and without the symbol and time columns, in one and in many row groups."""
import csv
import io

import numpy as np
import pyarrow.parquet as pq
import pytest

import spe_tables_ref as ref
from hpmkit.spe import native, synth, tables
from hpmkit.spe.native import HAS, decode_bytes
from hpmkit.spe.perfmeta import TimeConv
from hpmkit.profile.symbols import SymbolMap


def records(seed: int) -> np.ndarray:
    """Realistic records (every table, kernel PCs, contexts, PBT) and random packets (any
    operation byte, events payload and data source, cut records)."""
    data = synth.RecordGen(seed, pbt=True).stream(300) + synth.any_stream(seed, 3000, corrupt=0.05)
    recs, _ = decode_bytes(data, cpu=seed % 3)
    return recs


def symtab() -> SymbolMap:
    return SymbolMap("syms", [0xAAAAD0001000, 0xAAAAD0003000, 0xFFFF800008010000],
                     [0xAAAAD0003000, 0xAAAAD0005000, 0xFFFF800008110000],
                     ["main", "work,with \"odd\" name", "_stext"])


def c_write(recs, prefix, fmt, symbols=None, time_conv=None, rows=tables.ROWS, batch=1000):
    old = tables.ROWS
    tables.ROWS = rows
    try:
        res, no_op = tables.write_tables((recs[i:i + batch] for i in range(0, len(recs), batch)), str(prefix), fmt,
                                         symbols=symbols, time_conv=(lambda: time_conv) if time_conv else None)
    finally:
        tables.ROWS = old
    return res, no_op


@pytest.mark.parametrize("seed", range(4))
def test_csv_equals_pyarrow_writer(tmp_path, seed):
    recs = records(seed)
    tc = TimeConv(10, 40 << 10, 10**9)
    res, no_op = c_write(recs, tmp_path / "c", "csv", time_conv=tc)
    parts = tables.split(recs)
    assert no_op == len(parts["none"])
    for kind in ("ldst", "branch", "other"):
        assert len(parts[kind]) > 20
        ref.write(parts[kind], tmp_path / f"r-{kind}.csv", kind, "csv", time_conv=tc)
        assert res[kind][1] == len(parts[kind])
        mine = (tmp_path / f"c-{kind}.csv").read_bytes()
        assert mine == (tmp_path / f"r-{kind}.csv").read_bytes()


@pytest.mark.parametrize("rows", [1 << 18, 77])
@pytest.mark.parametrize("seed", range(3))
def test_parquet_equals_pyarrow_writer(tmp_path, seed, rows):
    recs = records(seed)
    tc = TimeConv(10, 40 << 10, 10**9)
    syms = symtab()
    c_write(recs, tmp_path / "c", "parquet", symbols=syms, time_conv=tc, rows=rows)
    parts = tables.split(recs)
    for kind in ("ldst", "branch", "other"):
        ref.write(parts[kind], tmp_path / f"r-{kind}.parquet", kind, "parquet", symbols=syms, time_conv=tc)
        f = pq.ParquetFile(tmp_path / f"c-{kind}.parquet")
        if rows == 77:
            assert f.metadata.num_row_groups == -(-len(parts[kind]) // 77)
        mine = f.read()
        theirs = pq.read_table(tmp_path / f"r-{kind}.parquet")
        assert mine.schema.equals(theirs.schema, check_metadata=False)
        assert mine.equals(theirs)
        assert "_stext" in mine.column("symbol").to_pylist()


def test_empty_tables(tmp_path):
    recs = np.zeros(0, dtype=native.RECORD_DTYPE)
    res, no_op = c_write(recs, tmp_path / "e", "parquet")
    assert no_op == 0
    for kind, cols in tables.KINDS.items():
        t = pq.read_table(tmp_path / f"e-{kind}.parquet")
        assert t.num_rows == 0 and t.column_names == cols
        ref.write(recs, tmp_path / f"r-{kind}.parquet", kind, "parquet")
        assert t.schema.equals(pq.read_table(tmp_path / f"r-{kind}.parquet").schema, check_metadata=False)
    c_write(recs, tmp_path / "e", "csv")
    assert (tmp_path / "e-ldst.csv").read_text() == ",".join(f'"{c}"' for c in tables.LDST_COLS) + "\n"


def test_csv_symbol_names_are_quoted_when_needed(tmp_path):
    recs = records(1)
    c_write(recs, tmp_path / "s", "csv", symbols=symtab())
    rows = list(csv.reader(io.StringIO((tmp_path / "s-ldst.csv").read_text())))
    assert rows[0][-1] == "symbol" and all(len(r) == len(rows[0]) for r in rows)
    names = {r[-1] for r in rows[1:]}
    assert 'work,with "odd" name' in names and "main" in names
    ld = tables.split(recs)["ldst"]
    assert [r[-1] for r in rows[1:]] == [symtab().name(pc) or "" for pc in ld["pc"].tolist()]


def test_event_names_one_per_bit():
    names = list(tables.EVENT_NAMES.values())
    assert len(names) == len(set(names)), "two events bits share a name"
    assert all(0 <= b < 64 for b in tables.EVENT_NAMES)
    assert "EV" not in "".join(n[:2] for n in names)  # no clash with the EVn form of unnamed bits
    r = np.random.default_rng(5)
    for v in [0, 1 << 13, 1 << 23, (1 << 13) | (1 << 23), (1 << 64) - 1] + r.integers(0, 1 << 63, 200).tolist():
        assert tables.event_bits(tables.event_string(int(v))) == int(v)
    assert tables.event_string(1 << 13) == "EV13" and tables.event_string(1 << 23) == "DATA-SNOOPED"


def test_bit_13_and_23_stay_apart_in_the_tables(tmp_path):
    """Two records that differ only in event bit 13 vs 23 give different event strings."""
    data = b"".join(synth.addr(0, 0x1000) + synth.op(1, 0) + synth.events(ev, 4) + synth.END
                    for ev in (1 << 13, 1 << 23))
    recs, _ = decode_bytes(data)
    c_write(recs, tmp_path / "e", "csv")
    lines = (tmp_path / "e-ldst.csv").read_text().splitlines()[1:]
    ev = [ln.split(",")[8] for ln in lines]
    assert ev == ["EV13", "DATA-SNOOPED"]
    c_write(recs, tmp_path / "e", "parquet")
    assert pq.read_table(tmp_path / "e-ldst.parquet").column("event").to_pylist() == ev


def test_cut_records_go_to_their_table():
    """A record a bad byte cut short is kept in the table of its operation type."""
    data = (synth.addr(0, 0x1000) + synth.op(2, 0) + synth.END + synth.addr(0, 0x2000) + synth.op(1, 1)
            + synth.addr(2, 0x3000) + b"\xff" + synth.addr(0, 0x4000) + synth.op(0, 0) + synth.END)
    recs, st = decode_bytes(data)
    parts = tables.split(recs)
    assert st.cut_records == 1
    assert parts["ldst"]["pc"].tolist() == [0x2000] and parts["ldst"]["present"][0] & HAS["cut"]
    assert parts["branch"]["pc"].tolist() == [0x1000] and parts["other"]["pc"].tolist() == [0x4000]


def test_raw_batches_write_the_same_tables(tmp_path):
    """decode without filters hands the writer raw record buffers (no numpy): same bytes."""
    from hpmkit.spe import decode
    from hpmkit.spe.native import RawBatch
    from hpmkit.spe.perfwrite import write_perf_data
    p = tmp_path / "r.data"
    write_perf_data(p, [(0, -1, synth.RecordGen(3).stream(2000)), (1, -1, synth.any_stream(3, 2000, corrupt=0.1))])
    for fmt in ("csv", "parquet"):
        raw = list(decode.batches(p, arrays=False))
        assert raw and all(isinstance(b, RawBatch) for b in raw)
        tables.write_tables(iter(raw), str(tmp_path / "raw"), fmt)
        assert all(len(b) == 0 for b in raw)  # written, then handed back to the decoder
        tables.write_tables(decode.batches(p), str(tmp_path / "arr"), fmt)
        for kind in tables.KINDS:
            ext = "csv" if fmt == "csv" else "parquet"
            assert (tmp_path / f"raw-{kind}.{ext}").read_bytes() == (tmp_path / f"arr-{kind}.{ext}").read_bytes()


def test_decode_command_starts_without_numpy(tmp_path):
    """Start-up is part of the command's time: decode without filters loads neither numpy nor
    pyarrow (analyses and --symbols/--perf-time do)."""
    import subprocess
    import sys
    from hpmkit.spe.perfwrite import write_perf_data
    p = tmp_path / "s.data"
    write_perf_data(p, [(0, -1, synth.RecordGen(4).stream(500))])
    code = ("import sys; from hpmkit.cli import main; rc = main(sys.argv[1:]); "
            "print(rc, sorted(m for m in ('numpy', 'pyarrow', 'pandas') if m in sys.modules))")
    for fmt in ("csv", "parquet"):
        r = subprocess.run([sys.executable, "-c", code, "spe", "decode", str(p), "-o", str(tmp_path / fmt),
                            "--format", fmt], capture_output=True, text=True, timeout=120)
        assert r.stdout.splitlines()[-1] == "0 []", r.stdout + r.stderr
