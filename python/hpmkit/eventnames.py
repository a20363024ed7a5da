"""One name for one event across PMU tables, so reports of two machines line up.

`hpm stat` on riscv64 counts `instructions`; on an Arm board a user writes `INST_RETIRED`
or `PAPI_TOT_INS`. All three are one event. The event tables (data/events/*.evt, the same
files libhpm embeds) say so through their PAPI preset aliases: armv8_pmuv3 has
`alias PAPI_TOT_INS INST_RETIRED`, riscv_sbi and the x86 tables `alias PAPI_TOT_INS
instructions`. So a name meets the others on

    the generic perf name   when its preset is an alias of a generic name in some table
    the PAPI preset         when no table names a generic event for it
    the name as written     otherwise (an event only one table has)

with perf's modifiers (`:u`, `:k`...) kept, since `instructions:u` and `instructions` are
different counts. A table's other aliases (Linux perf's spelling of its events, issue 16)
are read as the event they name, and an event the table `lacks` is not the core's.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

# perf's synonyms of the generic events (`perf list` prints both names with one code)
GENERIC_SYNONYMS = {"cpu-cycles": "cycles", "branch-instructions": "branches", "faults": "page-faults",
                    "cs": "context-switches", "migrations": "cpu-migrations"}


def _tables_dir() -> Path | None:
    """HPM_DATA_DIR/events when set (as for hpm itself), else the source tree's data/events."""
    env = os.environ.get("HPM_DATA_DIR")
    for d in ([Path(env) / "events"] if env else []) + [Path(__file__).resolve().parents[2] / "data" / "events"]:
        if d.is_dir():
            return d
    return None


class Tables:
    """The event tables' names: events, includes and aliases per table."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.events: dict[str, dict[str, str]] = {}     # table -> lower name -> name as written
        self.aliases: dict[str, list[tuple[str, str]]] = {}   # table -> [(ALIAS, target)] in file order
        self.includes: dict[str, list[str]] = {}
        self.lacks: dict[str, set[str]] = {}                  # table -> lower names
        if folder is None:
            return
        for f in sorted(folder.glob("*.evt")):
            self._read(f)

    def _read(self, f: Path) -> None:
        table = f.stem
        ev, al, inc, lacks = {}, [], [], set()
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split("#", 1)[0].split() if not line.lstrip().startswith("event") else line.split()
            if len(words) < 2:
                continue
            if words[0] == "pmu":
                table = words[1]
            elif words[0] == "event":
                ev[words[1].lower()] = words[1]
            elif words[0] == "alias" and len(words) >= 3:
                al.append((words[1].upper(), words[2]))
            elif words[0] == "include":
                inc.append(words[1])
            elif words[0] == "lacks":
                lacks |= {w.lower() for w in words[1:]}
        self.events[table], self.aliases[table], self.includes[table] = ev, al, inc
        self.lacks[table] = lacks

    def chain(self, table: str) -> list[str]:
        """The table and what it includes, own table first (its aliases win)."""
        out, todo = [], [table]
        while todo:
            t = todo.pop(0)
            if t in self.events and t not in out:
                out.append(t)
                todo += self.includes.get(t, [])
        return out

    def is_native(self, table: str, name: str) -> bool:
        low = name.lower()
        if low in self.events.get(table, {}):
            return True
        return low not in self.lacks.get(table, set()) and any(
            low in self.events[t] for t in self.chain(table)[1:])

    def native_alias(self, table: str, name: str) -> str | None:
        """The event a non-preset alias (a kernel's spelling) stands for in this table."""
        for t in self.chain(table):
            for alias, target in self.aliases.get(t, []):
                if alias == name.upper() and not alias.startswith("PAPI_"):
                    return target
        return None

    def preset_targets(self, table: str) -> dict[str, str]:
        """PAPI preset -> the event it stands for in this table (own alias wins); a preset
        whose event the table lacks stands for nothing here."""
        out: dict[str, str] = {}
        lacks = self.lacks.get(table, set())
        for t in self.chain(table):
            for alias, target in self.aliases.get(t, []):
                if alias.startswith("PAPI_") and alias not in out:
                    out[alias] = target
        return {a: x for a, x in out.items() if x.lower() not in lacks}

    @lru_cache(maxsize=None)
    def generic_of_preset(self) -> dict[str, str]:
        """Presets that some table defines as a generic perf event (PAPI_TOT_INS -> instructions)."""
        out: dict[str, str] = {}
        for t in self.events:
            for alias, target in self.preset_targets(t).items():
                if not self.is_native(t, target):
                    out.setdefault(alias, GENERIC_SYNONYMS.get(target, target))
        return out

    @lru_cache(maxsize=None)
    def generic_names(self) -> dict[str, str]:
        """Lower generic name -> as perf spells it, for the generic names the tables alias."""
        return {v.lower(): v for v in self.generic_of_preset().values()}

    @lru_cache(maxsize=None)
    def presets_of(self, table: str) -> dict[str, str]:
        """Lower native (or generic) name -> its preset in this table; a preset with a generic
        name is preferred when one event has several."""
        gen = self.generic_of_preset()
        out: dict[str, str] = {}
        for alias, target in self.preset_targets(table).items():
            k = target.lower()
            if k not in out or (alias in gen and out[k] not in gen):
                out[k] = alias
        return out


@lru_cache(maxsize=1)
def tables() -> Tables:
    return Tables(_tables_dir())


_PMU_PREFIX = re.compile(r"^([a-z0-9_]+)::(.+)$", re.I)


def split_modifiers(name: str) -> tuple[str, str]:
    """("INST_RETIRED", ":u") from "INST_RETIRED:u"; a `pmu::EVENT` prefix is kept in the base."""
    m = _PMU_PREFIX.match(name)
    prefix, rest = (m.group(1) + "::", m.group(2)) if m else ("", name)
    base, sep, mods = rest.partition(":")
    return prefix + base, (sep + mods if sep else "")


def common_name(name: str, table: str | None) -> str:
    """The name an event of `table` meets other tables' events on (see the module text)."""
    t = tables()
    base, mods = split_modifiers(name)
    m = _PMU_PREFIX.match(base)
    if m:                               # pmu::EVENT names its table itself
        table, base = m.group(1), m.group(2)
    if table and not base.lower().startswith("papi_") and not t.is_native(table, base):
        base = t.native_alias(table, base) or base    # Linux's spelling -> the table's event
    low = base.lower()
    gen = t.generic_of_preset()
    if low.startswith("papi_"):
        preset = base.upper()
    elif low in GENERIC_SYNONYMS:
        return GENERIC_SYNONYMS[low] + mods
    elif low in t.generic_names():
        return t.generic_names()[low] + mods
    elif table and t.is_native(table, base):
        preset = t.presets_of(table).get(low)
        if preset is None:
            return base + mods
    else:
        return name
    return gen.get(preset, preset) + mods
