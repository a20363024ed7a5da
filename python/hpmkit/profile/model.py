"""The profile model (contract v1, notes/profile-model.md; docs/formats/profile.md).

A Profile is one recording: `meta` (JSON), `samples` (one row per sample), `stacks` (leaf-first
frame id lists) and `frames` (address, symbol, dso, srcline). Stored as a directory
NAME.hpmprof/ with meta.json and three Parquet files, written to a temporary directory first
and renamed into place, so a reader never sees half a profile.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import FormatError, InputError, ReadError, write_error

FORMAT = "hpmkit-profile"
VERSION = 1
VALUE_PREFIX = "value:"

SAMPLES_SCHEMA = pa.schema([
    ("time", pa.uint64()), ("cpu", pa.int32()), ("pid", pa.int32()), ("tid", pa.int32()),
    ("comm", pa.string()), ("event", pa.string()), ("period", pa.uint64()),
    ("stack_id", pa.int32()),
])
STACKS_SCHEMA = pa.schema([("stack_id", pa.int32()), ("frame_ids", pa.list_(pa.int32())),
                           ("nkernel", pa.int16())])
FRAMES_SCHEMA = pa.schema([
    ("frame_id", pa.int32()), ("addr", pa.uint64()), ("symbol", pa.string()),
    ("offset", pa.uint64()), ("dso", pa.string()), ("kernel", pa.bool_()),
    ("srcline", pa.string()),
    # extension of contract v1: the address in the DSO's own address space (what addr2line
    # and `perf script` print for a mapped user frame); null for kernel/unmapped frames
    ("dso_addr", pa.uint64()),
])


def new_meta(source_path: str, source_format: str, nbytes: int) -> dict:
    return {
        "format": FORMAT, "version": VERSION,
        "source": {"path": os.fspath(source_path), "format": source_format, "bytes": nbytes},
        "isa": None, "kernel": None, "hostname": None, "cmdline": None, "nrcpus": None,
        "workload": None, "events": [], "totals": None, "skipped": {}, "lost": 0,
    }


def normalise_isa(arch: str | None) -> str | None:
    """perf's HEADER_ARCH (uname -m) to the model's ISA names."""
    if not arch:
        return None
    a = arch.strip().lower()
    return {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64",
            "riscv64": "riscv64", "riscv": "riscv64"}.get(a, a)


# zstd rather than Parquet's default snappy: 18 % smaller profiles (24 lab recordings at the
# lab's default period: 36.0 -> 29.6 MB), and loading them took no longer (0.33-0.40 s
# against 0.40-0.44 s for the 24)
COMPRESSION = "zstd"


def write_samples(samples: pa.Table, path: Path) -> None:
    """samples.parquet with the time column delta-encoded: sample times (nearly) only grow, and
    dictionary encoding stored each of them whole (measured on a lab recording with 252 k
    samples: 2.35 MB -> 1.11 MB, 1.5 MB of it was time). Every Parquet reader decodes it."""
    delta = {c: "DELTA_BINARY_PACKED" for c in ("time",) if c in samples.column_names}
    pq.write_table(samples, path, compression=COMPRESSION, column_encoding=delta or None,
                   use_dictionary=[c for c in samples.column_names if c not in delta])


class Profile:
    def __init__(self, meta: dict, samples: pa.Table, stacks: pa.Table, frames: pa.Table):
        self.meta = meta
        self.samples = samples
        self.stacks = stacks
        self.frames = frames
        self._sym_cache: dict[int, list[str]] | None = None

    def __repr__(self) -> str:
        return (f"Profile({self.meta['source']['path']!r}: {self.samples.num_rows} samples, "
                f"{self.stacks.num_rows} stacks, {self.frames.num_rows} frames)")

    # -- persistence ---------------------------------------------------------------------
    def save(self, path: str | os.PathLike, option: str | None = None) -> Path:
        """Write the profile directory (NAME.hpmprof) atomically: temp dir, then rename.
        An existing profile at that path is replaced. A failed write is an OutputError naming
        `option` (the command's output option, e.g. "-o DIR") and leaves nothing behind."""
        dest = Path(path)
        tmp = None
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; a profile is an ordinary folder
            (tmp / "meta.json").write_text(json.dumps(self.meta, indent=1, sort_keys=False) + "\n")
            write_samples(self.samples, tmp / "samples.parquet")
            pq.write_table(self.stacks, tmp / "stacks.parquet", compression=COMPRESSION)
            pq.write_table(self.frames, tmp / "frames.parquet", compression=COMPRESSION)
            if dest.exists():
                if not (dest / "meta.json").is_file():
                    raise InputError(dest, "exists and is not a profile directory",
                                     "choose another output name")
                old = dest.with_name(f".{dest.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                dest.rename(old)
                tmp.rename(dest)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(dest)
        except OSError as e:   # a full disk, a folder that takes no files: one line, no traceback
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise write_error(dest, e, option) from None
        except BaseException:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        return dest

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Profile":
        d = Path(path)
        if not d.is_dir():
            raise ReadError(d, "no such profile directory", "create it with 'hpmkit profile import'")
        refuse_perf_directory(d)
        try:
            meta = json.loads((d / "meta.json").read_text())
        except FileNotFoundError as e:
            raise FormatError(d, "meta.json is missing: not a profile directory",
                              "create it with 'hpmkit profile import'") from e
        except json.JSONDecodeError as e:
            raise FormatError(d / "meta.json", f"line {e.lineno}: invalid JSON",
                              "re-import the recording") from e
        except (UnicodeDecodeError, RecursionError) as e:  # not UTF-8; nested too deep to parse
            raise FormatError(d / "meta.json", f"not a JSON text this reader takes ({type(e).__name__})",
                              "re-import the recording") from e
        except OSError as e:
            raise ReadError(d / "meta.json", f"cannot read: {e.strerror or e}") from e
        from .validate import check_meta, check_tables
        if not isinstance(meta, dict):
            raise FormatError(d / "meta.json", "is not a JSON object", "re-import the recording")
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise FormatError(d / "meta.json", f"format {meta.get('format')!r} version "
                              f"{meta.get('version')!r}, this hpmkit reads {FORMAT} {VERSION}",
                              "re-import the recording with this hpmkit")
        tables = []
        for name in ("samples", "stacks", "frames"):
            try:
                tables.append(pq.read_table(d / f"{name}.parquet"))
            except (OSError, pa.ArrowInvalid) as e:
                raise FormatError(d / f"{name}.parquet", f"cannot read: {e}",
                                  "re-import the recording") from e
        check_meta(meta, d / "meta.json")
        check_tables(*tables, d)
        return cls(meta, *tables)

    # -- queries -------------------------------------------------------------------------
    def _frame_names(self) -> list[str]:
        addrs = self.frames.column("addr").to_pylist()
        syms = self.frames.column("symbol").to_pylist()
        ids = self.frames.column("frame_id").to_pylist()
        names = [""] * (max(ids) + 1 if ids else 0)
        for i, a, s in zip(ids, addrs, syms):
            names[i] = s if s is not None else f"0x{a:x}"
        return names

    def all_stack_symbols(self) -> dict[int, list[str]]:
        """stack_id -> symbol names, leaf first (unresolved frames as 0x<hex>)."""
        if self._sym_cache is None:
            names = self._frame_names()
            ids = self.stacks.column("stack_id").to_pylist()
            fl = self.stacks.column("frame_ids").to_pylist()
            self._sym_cache = {s: [names[f] for f in fr] for s, fr in zip(ids, fl)}
        return self._sym_cache

    def stack_symbols(self, stack_id: int) -> list[str]:
        try:
            return self.all_stack_symbols()[stack_id]
        except KeyError:
            raise KeyError(f"no stack {stack_id} in {self!r}") from None

    def event_names(self) -> list[str]:
        return [e["name"] for e in self.meta["events"]]

    def weights(self, by: str = "samples") -> pa.Table:
        """Sum per stack: sample count (by="samples"), the sampling period of an event's
        samples (by=<sampling event name>), or a group member's deltas (by=<member name>)."""
        s = self.samples
        if by == "samples":
            t = pa.table({"stack_id": s.column("stack_id"), "weight": self.sample_counts()})
        elif VALUE_PREFIX + by in s.column_names:
            t = pa.table({"stack_id": s.column("stack_id"),
                          "weight": self._int64(s.column(VALUE_PREFIX + by), VALUE_PREFIX + by)})
        elif by in self.event_names():
            mask = pc.equal(s.column("event"), by)
            sub = s.filter(mask)
            t = pa.table({"stack_id": sub.column("stack_id"),
                          "weight": self._int64(sub.column("period"), "period")})
        else:
            from ..errors import UsageError
            have = ["samples", *self.event_names(),
                    *[c[len(VALUE_PREFIX):] for c in s.column_names if c.startswith(VALUE_PREFIX)]]
            raise UsageError(f"no event '{by}' in {self.meta['source']['path']}; "
                             f"choose one of: {', '.join(dict.fromkeys(have))}")
        g = t.group_by("stack_id").aggregate([("weight", "sum")])
        g = pa.table({"stack_id": g.column("stack_id"), "weight": g.column("weight_sum")})
        return g.sort_by("stack_id")

    def sample_counts(self):
        """How many samples each row stands for: 1, but for the rows of an event whose unit
        is "samples" (folded stacks), whose period is that count: a folded file of more
        samples than rows can hold has one row per line (script_ingest.MAX_FOLDED_ROWS)."""
        s = self.samples
        counted = [e.get("name") for e in self.meta.get("events") or ()
                   if isinstance(e, dict) and e.get("unit") == "samples"]
        if not counted or not s.num_rows:
            return pa.array([1] * s.num_rows, pa.int64())
        per = pc.fill_null(self._int64(s.column("period"), "period"), 1)
        return pc.if_else(pc.is_in(s.column("event"), value_set=pa.array(counted, pa.string())),
                          per, pa.scalar(1, pa.int64()))

    def _int64(self, col, name: str):
        """Weights as int64; a value above 2^63 - 1 (no real count or period is, a damaged
        recording's can be: found by fuzzing) is an error naming the column, not a crash."""
        try:
            return pc.cast(col, pa.int64())
        except pa.ArrowInvalid:
            big = pc.max(col).as_py()
            raise FormatError(self.meta["source"]["path"], f"column '{name}' holds {big}, above 2^63 - 1 "
                              "(a damaged recording)", "re-record, or weight by samples (--by samples)") from None

    def nkernel(self) -> dict[int, int]:
        return dict(zip(self.stacks.column("stack_id").to_pylist(),
                        self.stacks.column("nkernel").to_pylist()))


def refuse_perf_directory(path: str | os.PathLike) -> None:
    """perf record --threads writes a folder (data, data.0, data.1, ...): say so, instead of
    calling it a profile folder without meta.json."""
    d = Path(path)
    if d.is_dir() and not (d / "meta.json").exists() and (d / "data").is_file():
        raise FormatError(d, "perf's directory format (perf record --threads) is not read",
                          f"record without --threads, or give the text of 'perf script -i {d}'")
