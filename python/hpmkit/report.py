"""The reports behind `hpmkit stat-report` and `hpmkit regions`, as text tables or CSV."""

from __future__ import annotations

import csv
import os
import shlex
import string
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TypeVar

from . import table
from .errors import UsageError
from .formats import RegionReport, StatEvent, StatReport

T = TypeVar("T")


def _target(r: StatReport) -> str:
    """What was counted, as the user would have typed it."""
    parts = []
    if r.all_cpus:
        parts.append("all CPUs")
    if r.pid:
        parts.append(f"pid {r.pid}")
    if r.command:
        parts.append(shlex.join(r.command))
    return ", ".join(parts) or "-"


def _summary(r: StatReport) -> tuple[str, str]:
    """Two lines: what ran and how, then where."""
    runs = f"{r.runs} run" + ("s" if r.runs != 1 else "")
    return (
        f"{_target(r)}  ({runs}, exit status {r.exit_status}, {r.elapsed_s:.6f} s per run)",
        f"pmu {r.pmu or 'none'}, cpu {r.cpu_id}",
    )


def _stddev(r: StatReport, e: StatEvent) -> str:
    # with one run the core writes 0: there is no spread to show
    return f"±{e.stddev_pct:.2f}%" if r.runs > 1 and e.counted else "-"


def _scaled(e: StatEvent) -> str:
    return f"{e.running_pct:.2f}%" if e.scaled and e.running_pct is not None else "-"


def _value(e: StatEvent) -> str:
    return table.count(e.value) if e.counted else "not counted"


def stat_text(r: StatReport) -> str:
    rows = [[e.name, _value(e), _stddev(r, e), _scaled(e), e.read_path] for e in r.events]
    rows += [[name, "not supported", "", "", ""] for name in r.not_supported]
    what, where = _summary(r)
    out = [f"{r.path}: {what}", where, ""]
    out.append(table.render(["event", "value", "±stddev", "scaled", "read path"], rows, "lrrrl"))
    if r.metrics:
        mrows = [[m.name, table.metric(m.value), m.unit] for m in r.metrics]
        out += ["", table.render(["metric", "value", "unit"], mrows, "lrl")]
    return "\n".join(out) + "\n"


def stat_csv(r: StatReport, f: IO[str]) -> None:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["kind", "name", "value", "unit", "stddev_pct", "running_pct", "scaled",
                "counted", "group", "read_path", "read_path_reason"])
    for e in r.events:
        w.writerow(["event", e.name, e.value, "", e.stddev_pct, _opt(e.running_pct), _b(e.scaled),
                    _b(e.counted), e.group, e.read_path, e.read_path_reason])
    for name in r.not_supported:
        w.writerow(["not_supported", name] + [""] * 9)
    for m in r.metrics:
        w.writerow(["metric", m.name, _opt(m.value), m.unit] + [""] * 7)


def _opt(v: float | None) -> float | str:
    return "" if v is None else v


def _b(v: bool) -> str:
    return "true" if v else "false"


def _keyed(items: Iterable[T], name: Callable[[T], str]) -> dict[tuple[str, int], T]:
    """Items by (name, occurrence): an event listed twice stays two rows, not one."""
    seen: dict[str, int] = {}
    out = {}
    for it in items:
        n = seen[name(it)] = seen.get(name(it), 0) + 1
        out[(name(it), n)] = it
    return out


def _union(maps: Sequence[dict]) -> list:
    """Keys of all maps, in first-seen order (file A's order, then what later files add)."""
    return list(dict.fromkeys(k for m in maps for k in m))


def _row_name(key: tuple[str, int]) -> str:
    return key[0] if key[1] == 1 else f"{key[0]} #{key[1]}"


def _labels(reps: Sequence[StatReport]) -> list[str]:
    """Column names for CSV: file names, or the paths as given when two names collide."""
    names = [os.path.basename(r.path) for r in reps]
    return names if len(set(names)) == len(names) else [r.path for r in reps]


def _meeting_name(r: StatReport) -> Callable[[str], str]:
    """Events of different tables meet on one name (eventnames: generic name or PAPI preset),
    so `instructions` on riscv64 and `INST_RETIRED` on Arm are one row."""
    from .eventnames import common_name
    return lambda name: common_name(name, r.pmu)


def _event_label(key: tuple[str, int], written: list[str | None], tags: Sequence[str]) -> str:
    """The row's name, with each file's own name beside it where that differs:
    `instructions (B: INST_RETIRED)` (tags: the files' letters, or their names in CSV)."""
    own = [f"{k}: {w}" for k, w in zip(tags, written) if w is not None and w != key[0]]
    return _row_name(key) + (f" ({', '.join(own)})" if own else "")


def _compare_rows(reps: Sequence[StatReport], tags: Sequence[str] = string.ascii_uppercase):
    """Yield (kind, name, values per file, display cells per file) for every compared item."""
    yield "run", "elapsed_s", [r.elapsed_s for r in reps], [f"{r.elapsed_s:.6f}" for r in reps]
    meet = [_meeting_name(r) for r in reps]
    events = [_keyed(r.events, lambda e, m=m: m(e.name)) for r, m in zip(reps, meet)]
    unsupported = [{m(n): n for n in r.not_supported} for r, m in zip(reps, meet)]
    for key in _union(events):
        written = [evs[key].name if key in evs else ns.get(key[0]) if key[1] == 1 else None
                   for evs, ns in zip(events, unsupported)]
        values, cells = [], []
        for r, evs, ns in zip(reps, events, unsupported):
            e = evs.get(key)
            if e is None or not e.counted:
                values.append(None)
                missing = "not supported" if key[0] in ns else "absent"
                cells.append("not counted" if e else missing)
                continue
            values.append(e.value)
            cell = table.count(e.value) + ("*" if e.scaled else "")
            cells.append(cell + (f" ±{e.stddev_pct:.2f}%" if r.runs > 1 else ""))
        yield "event", _event_label(key, written, tags), values, cells
    # events every file lacks: listed so nothing the files say is dropped
    for name in dict.fromkeys(n for ns in unsupported for n in ns):
        if all((name, 1) not in evs for evs in events):
            cells = ["not supported" if name in ns else "absent" for ns in unsupported]
            yield "not_supported", _event_label((name, 1), [ns.get(name) for ns in unsupported], tags), \
                [None] * len(reps), cells
    metrics = [_keyed(r.metrics, lambda m: m.name) for r in reps]
    for key in _union(metrics):
        ms = [m.get(key) for m in metrics]
        values = [m.value if m else None for m in ms]
        cells = [table.metric(m.value) if m else "absent" for m in ms]
        yield "metric", _row_name(key), values, cells


def compare_text(reps: Sequence[StatReport]) -> str:
    letters = string.ascii_uppercase[: len(reps)]  # the CLI accepts at most 26 files
    out = []
    for k, r in zip(letters, reps):
        what, where = _summary(r)
        out += [f"{k}: {r.path}: {what}", f"   {where}"]
    header = ["", *letters, *(f"{k}/{letters[0]}" for k in letters[1:])]
    sections: dict[str, list[list[str]]] = {"event": [], "metric": []}
    for kind, name, values, cells in _compare_rows(reps):
        ratios = [table.ratio_text(table.ratio(values[0], v)) for v in values[1:]]
        sections["metric" if kind == "metric" else "event"].append([name, *cells, *ratios])
    align = "l" + "r" * (len(header) - 1)
    out += ["", table.render(["event", *header[1:]], sections["event"], align)]
    if sections["metric"]:
        out += ["", table.render(["metric", *header[1:]], sections["metric"], align)]
    notes = []
    if any(e.scaled for r in reps for e in r.events):
        notes.append("* scaled: the event shared a counter; the value is an estimate")
    if len({r.command for r in reps}) > 1:
        notes.append("note: the files count different commands (see the lines above)")
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"


def compare_csv(reps: Sequence[StatReport], f: IO[str]) -> None:
    labels = _labels(reps)
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["kind", "name", *labels, *(f"{k}/{labels[0]}" for k in labels[1:])])
    for kind, name, values, _ in _compare_rows(reps, labels):
        ratios = [_opt(table.ratio(values[0], v)) for v in values[1:]]
        w.writerow([kind, name, *map(_opt, values), *ratios])


def regions_text(r: RegionReport, sort: str | None = None) -> str:
    regions = list(r.regions)
    if sort is not None:
        if sort not in r.events:
            have = ", ".join(r.events) or "none"
            raise UsageError(f"--sort {sort}: {r.path} has no such event (it has: {have})")
        regions.sort(key=lambda g: g.values[sort], reverse=True)
    header = ["region", "calls"]
    for ev in r.events:
        header += [ev, f"{ev}/call"]
    rows = []
    for g in regions:
        row = [g.name, table.count(g.calls)]
        for ev in r.events:
            row += [table.count(g.values[ev]), table.count(g.per_call(ev))]
        rows.append(row)
    out = [f"{r.path}: regions of pid {r.pid}", ""]
    out.append(table.render(header, rows, "l" + "r" * (len(header) - 1)) if rows else "(no regions recorded)")
    # problems the core recorded: always shown, since they mean the table is incomplete
    if r.unmatched_markers or r.dropped_regions or r.error:
        out.append("")
    if r.unmatched_markers:
        out.append(f"unmatched markers: {r.unmatched_markers} (an end without its begin, or nesting "
                   "too deep; those calls are not in the table)")
    if r.dropped_regions:
        out.append(f"dropped regions: {r.dropped_regions} (more region names than the core keeps; "
                   "their counts are lost)")
    if r.error:
        out.append(f"error: {r.error} (region counting was disabled)")
    return "\n".join(out) + "\n"
