"""Load and validate the JSON files the hpm C core writes.

hpm-stat v1     written by `hpm stat --json` (src/cli/cmd_stat.c, report_json)
hpm-regions v1  written by region markers at exit (src/lib/region.c, hpm_region__flush)

Every field the core writes is required and type-checked, so a truncated or hand-edited
file fails here with its name and the offending field instead of deep inside a report.
Unknown extra fields are ignored: a version may grow fields without breaking readers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from .errors import FormatError, ReadError

STAT_FORMAT = "hpm-stat"
REGIONS_FORMAT = "hpm-regions"
SUPPORTED_VERSIONS = {STAT_FORMAT: 1, REGIONS_FORMAT: 1}
# how each format is produced, for messages that tell the user what to run instead
_PRODUCER = {STAT_FORMAT: "hpm stat --json", REGIONS_FORMAT: "region markers (HPM_REGION_OUT)"}
_COMMAND = {STAT_FORMAT: "hpmkit stat-report", REGIONS_FORMAT: "hpmkit regions"}


@dataclass(frozen=True, slots=True)
class StatEvent:
    name: str
    value: float  # mean over the runs, scaled when multiplexed
    stddev_pct: float  # stddev of the mean, % of the mean (0 with one run)
    raw: int  # last run, unscaled
    enabled_ns: int
    running_ns: int
    scaled: bool  # the event shared a counter: value is an estimate
    group: int
    read_path: str  # "mmap", "read" or "none"
    read_path_reason: str
    counted: bool  # False: enabled but never got a counter, value is meaningless

    @property
    def running_pct(self) -> float | None:
        """Share of the enabled time the event was really counted (perf's "% scaled")."""
        return 100.0 * self.running_ns / self.enabled_ns if self.enabled_ns else None


@dataclass(frozen=True, slots=True)
class StatMetric:
    name: str
    unit: str
    value: float | None  # None: not computable in every run (e.g. a division by zero)


@dataclass(frozen=True, slots=True)
class StatReport:
    path: str
    command: tuple[str, ...]
    pid: int  # attached process, 0 when hpm started the command
    all_cpus: bool
    pmu: str | None
    cpu_id: str
    runs: int
    exit_status: int
    elapsed_s: float  # mean wall time of one run
    events: tuple[StatEvent, ...]
    not_supported: tuple[str, ...]
    metrics: tuple[StatMetric, ...]


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    calls: int
    values: dict[str, float]  # event name -> total over all calls

    def per_call(self, event: str) -> float | None:
        return self.values[event] / self.calls if self.calls else None


@dataclass(frozen=True, slots=True)
class RegionReport:
    path: str
    pid: int
    events: tuple[str, ...]
    unmatched_markers: int  # ends without a matching begin: those calls are not counted
    dropped_regions: int  # region names beyond the library's table: their counts are lost
    error: str | None  # set when counting could not start; then there are no regions
    regions: tuple[Region, ...]


class _Obj:
    """Typed access to one JSON object; errors name the field path, e.g. events[2].value."""

    def __init__(self, raw: Any, where: str, path: str):
        self.path, self.where = path, where
        if not isinstance(raw, dict):
            raise self.fail(f"{where or 'the top level'} must be a JSON object, got {_kind(raw)}")
        self.raw = raw

    def fail(self, detail: str) -> FormatError:
        return FormatError(self.path, detail)

    def name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, types: tuple[type, ...], what: str, nullable: bool = False) -> Any:
        if key not in self.raw:
            raise self.fail(f'missing field "{self.name(key)}"')
        v = self.raw[key]
        if v is None and nullable:
            return None
        # bool is an int subclass in Python, but JSON true/false is never a number here
        if isinstance(v, bool) != (bool in types) or not isinstance(v, types):
            raise self.fail(f'field "{self.name(key)}" must be {what}, got {_kind(v)}')
        return v

    def text(self, key: str, nullable: bool = False) -> str | None:
        return self.get(key, (str,), "a string" + (" or null" if nullable else ""), nullable)

    def integer(self, key: str, minimum: int | None = None) -> int:
        v = self.get(key, (int,), "an integer")
        if minimum is not None and v < minimum:
            raise self.fail(f'field "{self.name(key)}" must be >= {minimum}, got {v}')
        return v

    def number(self, key: str, nullable: bool = False) -> float | None:
        v = self.get(key, (int, float), "a number" + (" or null" if nullable else ""), nullable)
        return None if v is None else float(v)

    def flag(self, key: str) -> bool:
        return self.get(key, (bool,), "true or false")

    def texts(self, key: str) -> tuple[str, ...]:
        items = self.get(key, (list,), "a list")
        for i, v in enumerate(items):
            if not isinstance(v, str):
                raise self.fail(f'field "{self.name(key)}[{i}]" must be a string, got {_kind(v)}')
        return tuple(items)

    def objects(self, key: str) -> list[_Obj]:
        items = self.get(key, (list,), "a list")
        return [_Obj(v, f"{self.name(key)}[{i}]", self.path) for i, v in enumerate(items)]

    def child(self, key: str) -> _Obj:
        return _Obj(self.get(key, (dict,), "an object"), self.name(key), self.path)


def _kind(v: Any) -> str:
    """A short, one-line description of a JSON value for error messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        text = json.dumps(v)  # quotes and escapes newlines, keeping the message on one line
        return "the string " + (text if len(text) <= 42 else text[:40] + '..."')
    return {list: "a list", dict: "an object"}.get(type(v), type(v).__name__)


def read_json(path: str | os.PathLike) -> Any:
    """Parse a file as JSON; syntax errors become FormatError with line and column."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ReadError(path, f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise FormatError(path, "the file is empty")
    # the core copies argv bytes into strings verbatim; a non-UTF-8 byte must not make
    # the whole file unreadable, so it is shown as U+FFFD instead
    text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # json's messages end in " at" / " starting at" because it appends the position itself
        msg = e.msg.removesuffix(" starting at").removesuffix(" at")
        detail = f"invalid JSON at line {e.lineno}, column {e.colno}: {msg}"
        # every hpm file is one JSON object: a file that does not even begin like one is some
        # other file, and "truncated" would be the wrong advice
        if not text.lstrip().startswith("{"):
            what = "a binary file" if b"\0" in data[:4096] or "\ufffd" in text[:4096] \
                else "text"
            raise FormatError(path, f"not JSON ({what}); hpm's files are JSON objects",
                              "pass a file written by hpm stat --json or an hpm-regions file") from None
        # the core always ends its files with a closing brace; anything else was cut short
        if not text.rstrip().endswith("}"):
            raise FormatError(path, detail + " (the file ends early)",
                              "it looks truncated: copy it from the target again, or re-run hpm") from None
        raise FormatError(path, detail) from None


def _header(raw: Any, path: str, expected: str | None) -> tuple[_Obj, str]:
    """Check "format" and "version"; return the top object and its format name."""
    top = _Obj(raw, "", path)
    fmt = top.get("format", (str,), "a string") if "format" in top.raw else None
    if fmt not in SUPPORTED_VERSIONS:
        known = [expected] if expected else list(SUPPORTED_VERSIONS)
        got = _kind(fmt) if "format" in top.raw else "missing"
        raise FormatError(
            path,
            f'not an hpm file: "format" is {got}, expected ' + " or ".join(f'"{k}"' for k in known),
            f"pass a file written by {_PRODUCER[expected]}" if expected else None,
        )
    if expected and fmt != expected:
        raise FormatError(
            path, f"this is an {fmt} file, not {expected}", f"read it with '{_COMMAND[fmt]}'"
        )
    version = top.integer("version")
    if version != SUPPORTED_VERSIONS[fmt]:
        from . import __version__

        raise FormatError(
            path,
            f"{fmt} version {version} is not supported "
            f"(hpmkit {__version__} reads version {SUPPORTED_VERSIONS[fmt]})",
            "use an hpmkit release that matches the hpm core that wrote the file",
        )
    return top, fmt


def _stat(top: _Obj) -> StatReport:
    events = tuple(
        StatEvent(
            name=e.text("name"),
            value=e.number("value"),
            stddev_pct=e.number("stddev_pct"),
            raw=e.integer("raw", 0),
            enabled_ns=e.integer("enabled_ns", 0),
            running_ns=e.integer("running_ns", 0),
            scaled=e.flag("scaled"),
            group=e.integer("group"),
            read_path=e.text("read_path"),
            read_path_reason=e.text("read_path_reason"),
            counted=e.flag("counted"),
        )
        for e in top.objects("events")
    )
    metrics = tuple(
        StatMetric(m.text("name"), m.text("unit"), m.number("value", nullable=True))
        for m in top.objects("metrics")
    )
    return StatReport(
        path=top.path,
        command=top.texts("command"),
        pid=top.integer("pid", 0),
        all_cpus=top.flag("all_cpus"),
        pmu=top.text("pmu", nullable=True),
        cpu_id=top.text("cpu_id"),
        runs=top.integer("runs", 1),
        exit_status=top.integer("exit_status"),
        elapsed_s=top.number("elapsed_s"),
        events=events,
        not_supported=top.texts("not_supported"),
        metrics=metrics,
    )


def _regions(top: _Obj) -> RegionReport:
    events = top.texts("events")
    regions = []
    for r in top.objects("regions"):
        values = r.child("values")
        # every region carries one total per listed event; anything else is a damaged file
        if set(values.raw) != set(events):
            raise top.fail(
                f'"{values.where}" has events {sorted(values.raw)} but "events" lists {list(events)}'
            )
        totals = {ev: values.number(ev) for ev in events}
        regions.append(Region(r.text("name"), r.integer("calls", 0), totals))
    return RegionReport(
        path=top.path,
        pid=top.integer("pid", 0),
        events=events,
        unmatched_markers=top.integer("unmatched_markers", 0),
        dropped_regions=top.integer("dropped_regions", 0),
        error=top.text("error", nullable=True),
        regions=tuple(regions),
    )


_PARSERS = {STAT_FORMAT: _stat, REGIONS_FORMAT: _regions}


def load(path: str | os.PathLike, expected: str | None = None) -> StatReport | RegionReport:
    """Load an hpm file of any known format (or only `expected`), fully validated."""
    top, fmt = _header(read_json(path), os.fspath(path), expected)
    return _PARSERS[fmt](top)


def load_stat(path: str | os.PathLike) -> StatReport:
    return load(path, STAT_FORMAT)


def load_regions(path: str | os.PathLike) -> RegionReport:
    return load(path, REGIONS_FORMAT)
