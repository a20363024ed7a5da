"""Reading Linux perf's pmu-events lists (tools/perf/pmu-events/arch/{arm64,riscv}).

Two layouts are read the same way: a kernel source tree (version from its Makefile), and
the reduced copy under tests/data/pmu-events/ (a VERSION file, then arch/...), which keeps
only the fields this converter uses: names, codes, units, metric formulas. The kernel's
description texts are never read, so both layouts give the same tables.

What a core's list means follows perf's jevents: every *.json in a core's folder is one
topic (the file name); an entry with "ArchStdEvent" takes the architecture's entry of that
name (the *.json files directly under arch/<isa>/) and lets its own fields override it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

ISAS = {"arm64": "aarch64", "riscv": "riscv64"}

# the fields the converter reads; the reduced copy (write_facts) keeps exactly these
FACT_KEYS = ("ArchStdEvent", "EventName", "EventCode", "ConfigCode", "Unit",
             "MetricName", "MetricExpr", "MetricGroup", "ScaleUnit")


class TreeError(Exception):
    """Input the converter cannot use: one line for the user."""


@dataclass
class Event:
    name: str
    code: int
    topic: str          # the JSON file's stem (perf's topic)


@dataclass
class Metric:
    name: str
    expr: str
    groups: list[str]
    scale_unit: str | None
    topic: str


@dataclass
class MapRow:
    isa_dir: str        # "arm64" | "riscv"
    ident: str          # first column as written (MIDR, or MVENDORID-MARCHID-MIMPID pattern)
    core_dir: str       # "arm/neoverse-v1"


@dataclass
class CoreList:
    """One core folder's events and metrics, ArchStdEvent references resolved."""
    isa_dir: str
    core_dir: str
    events: list[Event] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    uncore: dict[str, int] = field(default_factory=dict)   # Unit -> events left out
    topics: list[str] = field(default_factory=list)


def _load_json(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TreeError(f"{path}: not a pmu-events JSON list ({e})") from None
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise TreeError(f"{path}: expected a JSON array of objects")
    return data


def parse_code(text: str, where: str) -> int:
    try:
        return int(str(text), 0)
    except ValueError:
        raise TreeError(f"{where}: event code {text!r} is not a number") from None


class Tree:
    def __init__(self, src: Path):
        src = Path(src)
        if (src / "tools/perf/pmu-events/arch").is_dir():
            self.arch = src / "tools/perf/pmu-events/arch"
            self.version = self._makefile_version(src / "Makefile")
        elif (src / "arch").is_dir() and (src / "VERSION").is_file():
            self.arch = src / "arch"
            self.version = (src / "VERSION").read_text().strip()
        else:
            raise TreeError(f"{src}: neither a Linux source tree (tools/perf/pmu-events/arch) "
                            "nor a reduced copy (VERSION + arch/)")
        for d in ISAS:
            if not (self.arch / d / "mapfile.csv").is_file():
                raise TreeError(f"{self.arch / d}: no mapfile.csv")
        self._std: dict[str, dict[str, dict]] = {}

    @staticmethod
    def _makefile_version(mk: Path) -> str:
        try:
            text = mk.read_text(errors="replace")
        except OSError:
            raise TreeError(f"{mk}: cannot read the kernel version") from None
        v = {k: re.search(rf"^{k}\s*=\s*(\S*)", text, re.M) for k in
             ("VERSION", "PATCHLEVEL", "SUBLEVEL")}
        if not all(v.values()):
            raise TreeError(f"{mk}: no VERSION/PATCHLEVEL/SUBLEVEL lines")
        return ".".join(v[k].group(1) for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))

    def rel(self, path: Path) -> str:
        """A path as the kernel names it: tools/perf/pmu-events/arch/..."""
        return "tools/perf/pmu-events/arch/" + str(path.relative_to(self.arch))

    def map_rows(self, isa_dir: str) -> list[MapRow]:
        rows = []
        path = self.arch / isa_dir / "mapfile.csv"
        for n, line in enumerate(path.read_text().splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cols = [c.strip() for c in line.split(",")]
            if len(cols) != 4:
                raise TreeError(f"{path}:{n}: expected 4 columns, found {len(cols)}")
            if cols[3] == "core":
                rows.append(MapRow(isa_dir, cols[0], cols[2]))
        return rows

    def std(self, isa_dir: str) -> dict[str, dict]:
        """The architecture's standard events and metrics by name (arch/<isa>/*.json)."""
        if isa_dir not in self._std:
            out: dict[str, dict] = {}
            for f in sorted((self.arch / isa_dir).glob("*.json")):
                for e in _load_json(f):
                    name = e.get("EventName") or e.get("MetricName")
                    if name:
                        out[name] = e
            self._std[isa_dir] = out
        return self._std[isa_dir]

    def core(self, isa_dir: str, core_dir: str) -> CoreList:
        folder = self.arch / isa_dir / core_dir
        if not folder.is_dir():
            raise TreeError(f"{folder}: named by mapfile.csv but missing")
        std = self.std(isa_dir)
        out = CoreList(isa_dir, core_dir)
        seen: dict[str, Event] = {}
        for f in sorted(folder.glob("*.json")):   # sys/ subfolders are uncore: not read
            topic = f.stem
            out.topics.append(topic)
            for raw in _load_json(f):
                e = dict(raw)
                if "ArchStdEvent" in raw:
                    ref = raw["ArchStdEvent"]
                    base = std.get(ref) or std.get(ref.lower()) or std.get(ref.upper())
                    if base is None:
                        raise TreeError(f"{self.rel(f)}: ArchStdEvent {ref!r} is not defined "
                                        f"in {self.rel(self.arch / isa_dir)}/*.json")
                    e = {**base, **{k: v for k, v in raw.items() if k != "ArchStdEvent"}}
                where = f"{self.rel(f)}: {e.get('EventName') or e.get('MetricName')}"
                if "MetricExpr" in e or "MetricName" in e:
                    if "MetricName" not in e or "MetricExpr" not in e:
                        raise TreeError(f"{where}: metric without name or expression")
                    groups = [g for g in str(e.get("MetricGroup", "")).split(";") if g]
                    out.metrics.append(Metric(e["MetricName"], e["MetricExpr"], groups,
                                              e.get("ScaleUnit"), topic))
                    continue
                if "EventName" not in e:
                    raise TreeError(f"{self.rel(f)}: entry without EventName: {sorted(raw)}")
                unit = e.get("Unit")
                if unit and unit.lower() != "cpu":
                    # an uncore PMU's event: its code means nothing to the core PMU
                    out.uncore[unit] = out.uncore.get(unit, 0) + 1
                    continue
                code_text = e.get("EventCode", e.get("ConfigCode"))
                if code_text is None:
                    raise TreeError(f"{where}: no EventCode or ConfigCode")
                ev = Event(e["EventName"], parse_code(code_text, where), topic)
                prev = seen.get(ev.name.lower())
                if prev:
                    if prev.code != ev.code:
                        raise TreeError(f"{where}: listed twice with codes {prev.code:#x} "
                                        f"and {ev.code:#x}")
                    continue
                seen[ev.name.lower()] = ev
                out.events.append(ev)
        return out

    def write_facts(self, out: Path) -> int:
        """The reduced copy: mapfiles' rows, the architecture files and every core folder a
        mapfile names, with FACT_KEYS only. Returns the number of files written."""
        n = 0
        out.mkdir(parents=True, exist_ok=True)
        (out / "VERSION").write_text(self.version + "\n")
        for isa_dir in ISAS:
            src = self.arch / isa_dir
            dst = out / "arch" / isa_dir
            dst.mkdir(parents=True, exist_ok=True)
            rows = [l for l in (src / "mapfile.csv").read_text().splitlines()
                    if l.strip() and not l.startswith("#")]
            (dst / "mapfile.csv").write_text("\n".join(rows) + "\n")
            files = sorted(src.glob("*.json"))
            for d in sorted({r.core_dir for r in self.map_rows(isa_dir)}):
                files += sorted((src / d).glob("*.json"))
            for f in files:
                entries = [{k: e[k] for k in FACT_KEYS if k in e} for e in _load_json(f)]
                entries = [e for e in entries if e]
                target = dst / f.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                body = ",\n".join(json.dumps(e, sort_keys=True) for e in entries)
                target.write_text("[\n" + body + "\n]\n" if entries else "[]\n")
                n += 1
        return n
