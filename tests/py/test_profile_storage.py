"""How a profile folder stores its tables (docs/formats/profile.md): zstd-compressed Parquet,
the sample times delta-encoded (a lab recording's 252 k samples: 2.35 MB -> 1.11 MB), and
read back unchanged by pyarrow and by DuckDB."""
from pathlib import Path

import pyarrow.parquet as pq

from hpmkit.profile.model import Profile

ROOT = Path(__file__).resolve().parents[2]


def test_tables_are_zstd_and_times_delta_encoded_and_read_back_whole(tmp_path):
    src = Profile.load(ROOT / "examples" / "lab-suite" / "aarch64" / "pipe.hpmprof")
    out = src.save(tmp_path / "pipe.hpmprof")
    for name in ("samples", "stacks", "frames"):
        md = pq.ParquetFile(out / f"{name}.parquet").metadata
        for i in range(md.num_columns):
            assert md.row_group(0).column(i).compression == "ZSTD", (name, i)
    md = pq.ParquetFile(out / "samples.parquet").metadata
    cols = {md.row_group(0).column(i).path_in_schema: md.row_group(0).column(i) for i in range(md.num_columns)}
    assert "DELTA_BINARY_PACKED" in cols["time"].encodings
    assert "RLE_DICTIONARY" in cols["comm"].encodings
    back = Profile.load(out)
    assert back.samples.equals(src.samples) and back.stacks.equals(src.stacks) and back.frames.equals(src.frames)
    import duckdb
    n, last = duckdb.sql(f"select count(*), max(time) from '{out / 'samples.parquet'}'").fetchall()[0]
    assert n == src.samples.num_rows and last == max(src.samples.column("time").to_pylist())
