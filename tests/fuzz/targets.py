"""The Python fuzz targets: each takes the bytes of one input and runs them through a reader a
user reaches with `hpmkit ...`, the way the command does (reading, then the report built on
what was read). A target may end in an HpmkitError (the one-line message a user sees) and in
nothing else; any other exception, a message of more than one line, or a hang is a finding.

Used by tests/fuzz/run_py.py (atheris, coverage-guided) and tests/py/test_fuzz_corpora.py
(replays the kept corpora tests/data/fuzz/<target>/ on every test run).
"""
from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Workdir:
    """One scratch folder per process, emptied before each input."""

    def __init__(self):
        import atexit
        import os
        # libFuzzer ends a process with _exit (no atexit): folders of processes gone are removed
        for old in Path(tempfile.gettempdir()).glob("hpmkit-fuzz-*-*"):
            pid = old.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(old, ignore_errors=True)
        self.path = Path(tempfile.mkdtemp(prefix=f"hpmkit-fuzz-{os.getpid()}-"))
        atexit.register(shutil.rmtree, self.path, True)

    def fresh(self) -> Path:
        for p in self.path.iterdir():
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        return self.path


_WD: Workdir | None = None


def workdir() -> Path:
    global _WD
    if _WD is None:
        _WD = Workdir()
    return _WD.fresh()


def _file(data: bytes, name: str) -> Path:
    p = workdir() / name
    p.write_bytes(data)
    return p


def _profile_report(prof) -> None:
    """What `profile show` and `profile export --format folded` compute from a profile."""
    from hpmkit.profile import export
    for by in ["samples", *prof.event_names()[:2]]:
        w = prof.weights(by)
        syms = prof.all_stack_symbols()
        for sid in w["stack_id"].to_pylist():
            syms[sid]
    export.folded(prof)
    export.speedscope(prof)


class _OtherKernel:
    """os for perfdata_ingest, on a machine whose kernel release no input names: a recording
    of this machine's kernel would otherwise be symbolised from /proc/kallsyms, which is not
    input, and takes 40 s under atheris' instrumentation (a timeout on the first seed)."""

    def __getattr__(self, name):
        import os
        return getattr(os, name)

    def uname(self):
        import os
        return os.uname_result(("Linux", "fuzz", "0.0-fuzz-no-such-release", "", "x86_64"))


def perfdata(data: bytes) -> None:
    """perf.data (file or pipe mode) through the whole reader: header, attrs, features, the C
    scanner, delivery order, COMM/MMAP/FORK handling, stacks, symbols, profile queries."""
    from hpmkit.profile import ingest, perfdata_ingest
    real = perfdata_ingest.os
    perfdata_ingest.os = _OtherKernel()   # for this input only: the test suite shares the module
    try:
        prof = ingest(_file(data, "in.data"))
    finally:
        perfdata_ingest.os = real
    _profile_report(prof)


def script(data: bytes) -> None:
    """perf script text (any -F fields) or folded stacks."""
    from hpmkit.profile import ingest
    prof = ingest(_file(data, "in.txt"))
    _profile_report(prof)


def stat_json(data: bytes) -> None:
    """`hpm stat --json` files: load, then the text and CSV reports and a comparison."""
    from hpmkit import formats, report
    p = _file(data, "stat.json")
    rep = formats.load_stat(p)
    report.stat_text(rep)
    report.stat_csv(rep, io.StringIO())
    report.compare_text([rep, rep])
    report.compare_csv([rep, rep], io.StringIO())


def regions_json(data: bytes) -> None:
    """hpm-regions files (HPM_REGION_OUT): load and the report, sorted by each event."""
    from hpmkit import formats, report
    rep = formats.load_regions(_file(data, "regions.json"))
    report.regions_text(rep, None)
    for ev in rep.events[:3]:
        report.regions_text(rep, ev)


def truth(data: bytes) -> None:
    """`hpmkit compare --truth` lists (plain and rich TSV)."""
    from hpmkit.compare import truth as T
    T.load(_file(data, "truth.tsv"))


def exact(data: bytes) -> None:
    """The lab's exact tables (per function, per kernel call path) as `hpmkit compare`
    reads them beside a profile: the first byte picks the table."""
    from types import SimpleNamespace

    from hpmkit.compare import exact as E
    from hpmkit.compare.names import Normaliser
    body = data[1:]
    if data[:1] and data[0] & 1:
        E.read_paths(_file(body, "w.exact-paths.tsv"), "w", SimpleNamespace(isa="riscv64", kernel=None))
    else:
        E.read_table(_file(body, "w.exact.tsv"), Normaliser.load())


def protocol(data: bytes) -> None:
    """What lab/init.c prints on a guest console (python/hpmkit/lab/protocol.py)."""
    from hpmkit.lab import protocol as P
    P.parse(data.decode("utf-8", errors="replace"), "riscv64")


# ---- .hpmprof folders: meta.json and three Parquet tables ------------------------------------
#
# Byte mutation of Parquet mostly exercises pyarrow's own checks; what hpmkit must survive is a
# folder whose files are valid but wrong: meta.json with other types or keys missing, tables
# with columns missing, of another type, or null. The input is meta.json's text, then a line
# "%%", then operation bytes applied to the tables of a small real profile (BASE_PROFILE):
# each pair (op, arg) drops, retypes, nulls, truncates or empties a column or table.

BASE_PROFILE = ROOT / "examples" / "lab-suite" / "riscv64" / "ctxswitch.hpmprof"
_TABLES = ("samples", "stacks", "frames")
_base = None


def _base_tables():
    global _base
    if _base is None:
        import pyarrow.parquet as pq
        _base = {t: pq.read_table(BASE_PROFILE / f"{t}.parquet") for t in _TABLES}
    return _base


def _mutate(tab, op: int, arg: int):
    import pyarrow as pa
    if tab.num_columns == 0:
        return tab
    k = arg % tab.num_columns
    name = tab.column_names[k]
    col = tab.column(k)
    kind = op % 7
    if kind == 0:
        return tab.remove_column(k)
    if kind == 1:   # as strings
        return tab.set_column(k, name, pa.array([None if v is None else str(v) for v in col.to_pylist()],
                                                pa.string()))
    if kind == 2:   # all null
        return tab.set_column(k, name, pa.nulls(tab.num_rows, col.type))
    if kind == 3:   # fewer rows
        return tab.slice(0, arg % (tab.num_rows + 1))
    if kind == 4:   # as float
        try:
            return tab.set_column(k, name, col.cast(pa.float64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return tab
    if kind == 5:   # values out of range: negative or huge ids
        try:
            vals = [(-1 if arg & 1 else 2**31 - 1) if v is not None else None for v in col.to_pylist()]
            return tab.set_column(k, name, pa.array(vals).cast(col.type, safe=False))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError, OverflowError):
            return tab
    return tab.rename_columns([c + "_x" if i == k else c for i, c in enumerate(tab.column_names)])


def hpmprof(data: bytes) -> None:
    import pyarrow.parquet as pq

    from hpmkit.profile.model import Profile
    meta, _sep, ops = data.partition(b"\n%%\n")
    d = workdir() / "p.hpmprof"
    d.mkdir()
    (d / "meta.json").write_bytes(meta)
    tabs = dict(_base_tables())
    for i in range(0, len(ops) - 1, 2):
        t = _TABLES[ops[i] % 3]
        tabs[t] = _mutate(tabs[t], ops[i] >> 2, ops[i + 1])
    for t, tab in tabs.items():
        pq.write_table(tab, d / f"{t}.parquet")
    if len(ops) % 2:   # a last odd byte cuts one file short
        f = d / f"{_TABLES[ops[-1] % 3]}.parquet"
        f.write_bytes(f.read_bytes()[: ops[-1] * 16])
    _profile_report(Profile.load(d))


TARGETS = {
    "perfdata": perfdata,
    "script": script,
    "hpmprof": hpmprof,
    "stat_json": stat_json,
    "regions_json": regions_json,
    "truth": truth,
    "exact": exact,
    "protocol": protocol,
}


def check(target: str, data: bytes) -> str | None:
    """Run one input; None when it was read or refused properly, else what went wrong."""
    from hpmkit.errors import HpmkitError
    try:
        TARGETS[target](data)
    except HpmkitError as e:
        text = str(e)
        if "\n" in text or not text.strip():
            return f"HpmkitError message is not one line: {text!r}"
    except Exception as e:  # noqa: BLE001 - any other exception is the finding
        import traceback
        return "".join(traceback.format_exception(e))
    return None


if __name__ == "__main__":   # python tests/fuzz/targets.py TARGET FILE...: replay by hand
    import sys
    bad = 0
    for f in sys.argv[2:]:
        why = check(sys.argv[1], Path(f).read_bytes())
        if why:
            bad += 1
            print(f"{f}: {why}")
    print(f"{len(sys.argv) - 2 - bad} ok, {bad} finding(s)")
    sys.exit(1 if bad else 0)
