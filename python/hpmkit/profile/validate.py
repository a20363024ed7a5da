"""Checks of a profile folder read from disk (Profile.load): meta.json's fields and the three
tables' columns, types and references, so a damaged or hand-edited .hpmprof is refused with
one line naming the file and the field, instead of failing later inside a report (fuzzing
found `addr` stored as text ending `profile show` in a ValueError; issue 18).

Only what the readers rely on is checked: the types of the meta fields they read, the columns
of the contract's schemas (model.SAMPLES_SCHEMA ...) with their exact types, integer group
member columns (value:NAME), no null ids, and every id a row refers to existing.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError

HINT = "re-import the recording with 'hpmkit profile import'"
_STR, _INT, _NUM = (str,), (int,), (int, float)
# meta.json: key -> (accepted types, may be null); "events" and "source" are checked apart
_META = {
    "isa": (_STR, True), "kernel": (_STR, True), "hostname": (_STR, True), "cpudesc": (_STR, True),
    "cmdline": (_STR, True), "workload": (_STR, True), "nrcpus": (_INT, True),
    "totals": ((dict,), True), "skipped": ((dict,), True), "lost": (_INT, True),
    "notes": ((list,), True), "symbolisation": ((dict,), True), "records": ((dict,), True),
    "throttle": ((dict,), True),
}


def _typename(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(v), "a number" if isinstance(v, (int, float)) else type(v).__name__)


def _want(path: Path, where: str, v, types: tuple, null: bool, what: str) -> None:
    if v is None and null:
        return
    if isinstance(v, bool) or not isinstance(v, types):
        raise FormatError(path, f'"{where}" is {_typename(v)}, expected {what}', HINT)


def check_meta(meta, path: Path) -> None:
    if not isinstance(meta, dict):
        raise FormatError(path, f"holds {_typename(meta)}, expected an object", HINT)
    src = meta.get("source")
    _want(path, "source", src, (dict,), False, "an object")
    _want(path, "source.path", src.get("path"), _STR, False, "a string")
    _want(path, "source.format", src.get("format"), _STR, False, "a string")
    _want(path, "source.bytes", src.get("bytes"), _INT, True, "a number")
    events = meta.get("events")
    _want(path, "events", events, (list,), False, "a list")
    for i, e in enumerate(events):
        _want(path, f"events[{i}]", e, (dict,), False, "an object")
        _want(path, f"events[{i}].name", e.get("name"), _STR, False, "a string")
        _want(path, f"events[{i}].unit", e.get("unit"), _STR, True, "a string")
        for k in ("period", "freq"):
            if k in e:
                _want(path, f"events[{i}].{k}", e[k], _NUM, True, "a number")
    for key, (types, null) in _META.items():
        if key in meta:
            _want(path, key, meta[key], types, null, "a " + "/".join(t.__name__ for t in types))
    for key in ("totals", "skipped"):
        for k, v in (meta.get(key) or {}).items():
            _want(path, f"{key}.{k}", v, _NUM, key == "totals", "a number")
    for i, n in enumerate(meta.get("notes") or ()):
        _want(path, f"notes[{i}]", n, _STR, False, "a string")
    sym = meta.get("symbolisation") or {}
    _want(path, "symbolisation.kernel", sym.get("kernel"), _STR, True, "a string")
    _want(path, "symbolisation.unresolved_frames", sym.get("unresolved_frames"), _INT, True, "a number")


def _columns(t: pa.Table, schema: pa.Schema, path: Path, optional=("dso_addr",)) -> None:
    for f in schema:
        if f.name not in t.column_names:
            if f.name in optional:
                continue
            raise FormatError(path, f"column '{f.name}' is missing", HINT)
        got = t.schema.field(f.name).type
        if got != f.type:
            raise FormatError(path, f"column '{f.name}' is {got}, expected {f.type}", HINT)


def _no_nulls(col, name: str, path: Path) -> None:
    if col.null_count:
        raise FormatError(path, f"column '{name}' has {col.null_count} null value(s)", HINT)


def _refs(ids, known, what: str, path: Path) -> None:
    """Every value of `ids` is in `known`."""
    if len(ids) == 0:
        return
    bad = pc.invert(pc.is_in(ids, value_set=known))
    n = pc.sum(bad).as_py() or 0
    if n:
        first = pc.filter(ids, bad)[0].as_py()
        raise FormatError(path, f"{n} {what} refer to ids that do not exist (first: {first})", HINT)


def check_tables(samples: pa.Table, stacks: pa.Table, frames: pa.Table, d: Path) -> None:
    from .model import FRAMES_SCHEMA, SAMPLES_SCHEMA, STACKS_SCHEMA, VALUE_PREFIX
    sp, tp, fp = d / "samples.parquet", d / "stacks.parquet", d / "frames.parquet"
    _columns(samples, SAMPLES_SCHEMA, sp)
    _columns(stacks, STACKS_SCHEMA, tp)
    _columns(frames, FRAMES_SCHEMA, fp)
    for name in samples.column_names:
        if name.startswith(VALUE_PREFIX) and not pa.types.is_integer(samples.schema.field(name).type):
            raise FormatError(sp, f"column '{name}' is {samples.schema.field(name).type}, expected integers", HINT)
    _no_nulls(samples.column("stack_id"), "stack_id", sp)
    _no_nulls(stacks.column("stack_id"), "stack_id", tp)
    _no_nulls(stacks.column("frame_ids"), "frame_ids", tp)
    _no_nulls(frames.column("frame_id"), "frame_id", fp)
    _no_nulls(frames.column("addr"), "addr", fp)
    fid = frames.column("frame_id").combine_chunks()
    if len(fid) and pc.min(fid).as_py() < 0:
        raise FormatError(fp, "column 'frame_id' has negative ids", HINT)
    members = pc.list_flatten(stacks.column("frame_ids").combine_chunks())
    _no_nulls(members, "frame_ids (an element)", tp)
    _refs(members, fid, "frame_ids elements", tp)
    _refs(samples.column("stack_id").combine_chunks(), stacks.column("stack_id").combine_chunks(),
          "samples' stack_id values", sp)
