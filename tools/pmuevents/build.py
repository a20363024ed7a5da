"""From the kernel's lists to the text of every table file (nothing is written here).

For each core folder a mapfile names:
  - rows whose cores a hand-written table detects  -> that table's generated block: the
    kernel's names as aliases of the hand-written events with the same code, and events the
    hand-written part lacks; a name both sides use with different codes stops the run;
  - the other rows -> a generated table (events, PAPI presets, detect lines) and, where the
    kernel has metrics hpm's expressions can say, a generated metric file.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from detect import detect_lines
from handtables import BLOCK, GENERATED, HandTable, HandTables
from metrics import Skip, Translator
from tree import ISAS, CoreList, MapRow, Tree, TreeError

HERE = Path(__file__).resolve().parent
GENERIC = {"cycles", "instructions", "cache-references", "cache-misses", "branches",
           "branch-misses", "bus-cycles", "ref-cycles"}
REGEN = "python3 tools/pmuevents <linux-source tree or linux-source-*.tar.xz>"
# events Linux's lists leave out on purpose: CHAIN only links two counters into one
# 64-bit counter (the arm_pmuv3 driver uses it itself), it counts nothing on its own
NOT_LISTED_BY_LINUX = {"chain"}


def _tsv(name: str) -> list[list[str]]:
    rows = []
    with open(HERE / name, newline="") as f:
        for r in csv.reader(f, delimiter="\t"):
            if r and not r[0].startswith("#"):
                rows.append(r)
    return rows


@dataclass
class Report:
    """What the run produced, for the summary printed by the command."""
    lines: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.lines.append(text)


class Builder:
    def __init__(self, tree: Tree, data: Path):
        self.tree = tree
        self.data = data
        self.hand = HandTables(data / "events")
        self.cores = {(r[0], r[1]): (r[2], r[3]) for r in _tsv("cores.tsv")}
        self.presets = [(r[0], r[1].split()) for r in _tsv("presets.tsv")]
        self.fork: dict[str, list[tuple[str, int]]] = {}
        for r in _tsv("papi_fork_names.tsv"):
            self.fork.setdefault(r[0], []).append((r[1], int(r[2], 0)))
        self.groups = {r[0]: r[1] for r in _tsv("groups.tsv")}
        self.out: dict[Path, str] = {}
        self.report = Report()
        self.linux = f"Linux {tree.version}"

    # ---- helpers -------------------------------------------------------------------
    def fail(self, where: str, text: str):
        raise TreeError(f"{where}: {text}")

    def _folder(self, cl: CoreList) -> str:
        return f"{self.tree.rel(self.tree.arch / cl.isa_dir / cl.core_dir)}"

    def _rows_text(self, rows: list[MapRow]) -> str:
        return ", ".join(r.ident for r in rows)

    # ---- the run ---------------------------------------------------------------------
    def run(self) -> dict[Path, str]:
        blocks: dict[str, list[str]] = {}
        for isa_dir in ISAS:
            by_dir: dict[str, list[MapRow]] = {}
            for row in self.tree.map_rows(isa_dir):
                by_dir.setdefault(row.core_dir, []).append(row)
            for core_dir, rows in by_dir.items():
                cl = self.tree.core(isa_dir, core_dir)
                owned: dict[str, list[MapRow]] = {}
                free: list[MapRow] = []
                for row in rows:
                    t = self.hand.owner_of(detect_lines(row))
                    if t:
                        owned.setdefault(t.pmu, []).append(row)
                    else:
                        free.append(row)
                for pmu, orows in owned.items():
                    blocks.setdefault(pmu, []).append(self.merge(self.hand.tables[pmu], cl, orows))
                if free:
                    self.generate(cl, free)
        for pmu, parts in blocks.items():
            t = self.hand.tables[pmu]
            self.out[t.path] = t.hand_text.rstrip("\n") + "\n\n" + "\n".join(parts)
        # generated files no run makes any more go away
        for sub in ("events", "metrics"):
            for f in sorted((self.data / sub).glob("*")):
                if f not in self.out and f.read_text(errors="replace").startswith(GENERATED):
                    self.out[f] = None
        return self.out

    # ---- hand-written tables: the generated block --------------------------------------
    def merge(self, t: HandTable, cl: CoreList, rows: list[MapRow]) -> str:
        where = f"{t.path.name} vs {self._folder(cl)}"
        vis = self.hand.visible(t.pmu)
        lacked = self.hand.lacked(t.pmu)
        # a code's name here: the table's own event first, else the included table's
        by_code: dict[int, str] = {}
        for own_first in (True, False):
            for name, code, _desc, owner in vis.values():
                if (owner == t.pmu) == own_first:
                    by_code.setdefault(code, name)
        aliases: list[tuple[str, str, int]] = []
        events: list[tuple[str, int, str]] = []
        names_here = set(vis) | set(t.aliases)
        kernel_codes = {e.code for e in cl.events}
        shared = 0
        for ev in cl.events:
            low = ev.name.lower()
            if low in vis:
                if vis[low][1] != ev.code:
                    self.fail(where, f"{ev.name} is {vis[low][1]:#x} here but {ev.code:#x} "
                              "in Linux's list")
                shared += 1
            elif low in lacked:
                self.fail(where, f"Linux lists {ev.name} ({ev.code:#x}) for this core but "
                          f"{t.pmu} says it lacks it")
            elif low in t.aliases:
                target = t.aliases[low][1].lower()
                if target in vis and vis[target][1] != ev.code:
                    self.fail(where, f"alias {ev.name} -> {t.aliases[low][1]} "
                              f"({vis[target][1]:#x}), Linux says {ev.code:#x}")
            elif ev.code in by_code:
                aliases.append((ev.name, by_code[ev.code], ev.code))
                names_here.add(low)
            else:
                events.append((ev.name, ev.code, self._desc(cl, ev.name, ev.code, ev.topic)))
                names_here.add(low)
        for name, code, _desc, _owner in lacked.values():
            if code in kernel_codes:
                self.fail(where, f"{t.pmu} lacks {name} but Linux lists code {code:#x}")
        not_listed = sorted((v[1], v[0]) for k, v in vis.items()
                            if v[3] != t.pmu and v[1] not in kernel_codes and k not in
                            NOT_LISTED_BY_LINUX and cl.isa_dir == "arm64")
        if not_listed:
            self.fail(where, "events visible here but not in Linux's list (add them to "
                      f"'lacks' or explain): {', '.join(n for _, n in not_listed)}")
        fork = []
        for name, code in self.fork.get(t.pmu, []):
            low = name.lower()
            if low in vis:
                if vis[low][1] != code:
                    self.fail(where, f"PAPI fork name {name} is {code:#x}, here {vis[low][1]:#x}")
            elif low in names_here:
                continue
            elif code in by_code:
                fork.append((name, by_code[code], code))
                names_here.add(low)
            else:
                self.fail(where, f"PAPI fork name {name} ({code:#x}) has no event here")
        src = self.tree.rel(self.tree.arch / cl.isa_dir / cl.core_dir)
        lines = [
            f"{BLOCK} from {self.linux} {src}; do not edit below this line ----",
            f"# Linux's names for this table's events ({shared} the same, {len(aliases)} "
            "spelled differently: aliases below)" + (f", {len(events)} events the hand-written "
                                                     "part does not have" if events else "") + ".",
        ]
        nfork = len(self.fork.get(t.pmu, []))
        if nfork:
            lines.append(f"# The RISC-V PAPI fork's {nfork} names for them (tools/pmuevents/"
                         "papi_fork_names.tsv) checked: " + (
                             f"{len(fork)} spelled unlike both, aliases below." if fork else
                             "each is spelled as Linux or hpm spells it."))
        if cl.metrics:
            lines.append(f"# Linux's {len(cl.metrics)} metrics for this core are not merged: "
                         f"metrics/{t.pmu}.mg is the reference.")
        lines.append(f"# Regenerate: {REGEN}")
        lines.append(f"source   {self.linux} {src}/*.json and {cl.isa_dir}/mapfile.csv row "
                     f"{self._rows_text(rows)}: event names and codes")
        if fork:
            lines.append("source   RISC-V PAPI fork (github.com/hpc-ulisboa/RISC-V-PAPI), libpfm4 "
                         "event tables: event names")
        for name, target, code in aliases + fork:
            lines.append(f"alias    {name:<34} {target:<30} # {code:#x}")
        for name, code, desc in events:
            lines.append(f"event    {name:<34} {self._code(cl, code):<8} {desc}")
        self.report.add(f"{t.pmu}: {len(aliases)} kernel aliases, {len(fork)} PAPI-fork aliases, "
                        f"{len(events)} events added, {shared} shared names ({src})")
        return "\n".join(lines) + "\n"

    # ---- generated tables --------------------------------------------------------------
    def _code(self, cl: CoreList, code: int) -> str:
        return f"{code:#06x}" if cl.isa_dir == "arm64" else f"{code:#x}"

    def _desc(self, cl: CoreList, name: str, code: int, topic: str) -> str:
        ours = self.hand.descriptions(ISAS[cl.isa_dir]).get((name.lower(), code))
        return ours or f"(Linux perf topic {topic}; see the core's manual)"

    def generate(self, cl: CoreList, rows: list[MapRow]) -> None:
        key = (cl.isa_dir, cl.core_dir)
        if key in self.cores:
            pmu, title = self.cores[key]
        else:
            pmu = cl.core_dir.replace("/", "_").replace("-", "_").lower()
            title = f"{cl.core_dir} (Linux perf pmu-events)"
        if pmu in self.hand.tables and not self.hand.tables[pmu].generated:
            self.fail(f"tools/pmuevents/cores.tsv {cl.core_dir}",
                      f"table name {pmu} is a hand-written table that does not detect "
                      f"{self._rows_text(rows)}")
        isa = ISAS[cl.isa_dir]
        src = self._folder(cl)
        # the architecture's table comes in by include, as for the hand-written tables:
        # Arm's common events (armv8_pmuv3), RISC-V's SBI firmware events (riscv_sbi)
        include = "armv8_pmuv3" if cl.isa_dir == "arm64" else "riscv_sbi"
        inc_vis = self.hand.visible(include)
        own, listed = [], set()
        for ev in cl.events:
            low = ev.name.lower()
            if low in inc_vis:
                if inc_vis[low][1] != ev.code:
                    self.fail(src, f"{ev.name} is {ev.code:#x} in Linux's list but "
                              f"{inc_vis[low][1]:#x} in {include}")
                listed.add(low)
                continue
            own.append(ev)
        # a list that names some of the common events names all the core has; one that
        # names none says nothing about them, and all stay offered (as for an unknown core)
        complete = cl.isa_dir == "arm64" and bool(listed)
        lacks = [v[0] for k, v in sorted(inc_vis.items(), key=lambda kv: kv[1][1])
                 if complete and k not in listed and k not in NOT_LISTED_BY_LINUX]
        have = {e.name.lower(): e.name for e in cl.events}
        for k, v in inc_vis.items():
            if k not in have and v[0] not in lacks:
                have[k] = v[0]
        lines = [
            f"{GENERATED} from {self.linux} {src}; do not edit.",
            f"# Regenerate: {REGEN}",
            "# Event names and codes are the kernel's; descriptions are hpm's own where a",
            "# hand-written table describes the same event, else they name the kernel's topic.",
        ]
        if cl.uncore:
            n = sum(cl.uncore.values())
            lines.append(f"# Left out: {n} uncore events of this folder (" + ", ".join(
                f"{u}: {k}" for u, k in sorted(cl.uncore.items())) + "); they belong to other PMUs.")
        if cl.isa_dir == "riscv":
            lines.append(f"# The SBI firmware events of the kernel's list come from table {include}.")
        elif complete:
            lines.append(f"# Common events (table {include}): the {len(listed)} Linux lists for this "
                         "core; 'lacks' hides the others.")
        else:
            lines.append(f"# Linux's list names none of the common events 0x00-0x3f for this core: "
                         f"all of {include} stays offered,")
            lines.append("# as for an unknown Arm core (PMCEID0/1_EL0 say which ones it counts).")
        lines.append("# counters 0: the kernel's lists do not say how many counters the core has.")
        lines += ["", "format   1", f"pmu      {pmu}", f"title    {title}",
                  f"source   {self.linux} {src}/*.json (EventName, EventCode/ConfigCode; "
                  f"ArchStdEvent entries from {self.tree.rel(self.tree.arch / cl.isa_dir)}/*.json)",
                  f"source   {self.linux} {self.tree.rel(self.tree.arch / cl.isa_dir)}/mapfile.csv, "
                  f"row{'s' if len(rows) > 1 else ''} {self._rows_text(rows)}",
                  f"isa      {isa}", f"include  {include}"]
        lines += _wrap("lacks   ", lacks)
        for row in rows:
            for d in detect_lines(row):
                lines.append(f"detect   {d}")
        lines.append("counters 0")
        lines.append("fixed    " + ("CPU_CYCLES" if cl.isa_dir == "arm64" else "cycles instructions"))
        lines.append("encoding raw")
        for topic in cl.topics:
            evs = sorted((e for e in own if e.topic == topic), key=lambda e: e.code)
            if not evs:
                continue
            lines += ["", f"# --- {topic} ---"]
            for e in evs:
                lines.append(f"event    {e.name:<34} {self._code(cl, e.code):<8} "
                             f"{self._desc(cl, e.name, e.code, topic)}")
        presets = self._presets(have, include, {l.lower() for l in lacks})
        if presets:
            lines += ["", "# --- PAPI presets (tools/pmuevents/presets.tsv: the first candidate this "
                      f"core has, where {include}'s differs) ---"]
            lines += [f"alias    {p:<14} {target}" for p, target in presets]
        self.out[self.data / "events" / f"{pmu}.evt"] = "\n".join(lines) + "\n"
        nmet, skipped = self._metrics(cl, pmu, have, src)
        self.report.add(f"{pmu}: {len(own)} events (+{len(listed)} of {include}), "
                        f"{len(lacks)} lacked, {len(presets)} own presets, {nmet} metrics"
                        + (f" ({len(skipped)} left out)" if skipped else "")
                        + (f", {sum(cl.uncore.values())} uncore events left out" if cl.uncore else "")
                        + f" ({src})")

    def _presets(self, have: dict[str, str], include: str, lacked: set[str]):
        """Presets whose target here differs from what the included table says."""
        inherited = {k: v[1].lower() for k, v in self.hand.tables[include].aliases.items()}
        out = []
        for preset, cands in self.presets:
            for c in cands:
                target = have.get(c.lower()) or (c if c in GENERIC else None)
                if target:
                    via = inherited.get(preset.lower())
                    if via != target.lower() or via in lacked:
                        out.append((preset, target))
                    break
        return out

    def _metrics(self, cl: CoreList, pmu: str, names: dict[str, str], src: str):
        path = self.data / "metrics" / f"{pmu}.mg"
        seen, done, skipped = {}, [], []
        for m in cl.metrics:
            seen.setdefault(m.name.lower(), m)
        tr = Translator(names, seen, GENERIC)
        for m in seen.values():
            try:
                done.append(tr.convert(m))
            except Skip as e:
                skipped.append(f"{m.name} ({e})")
        if not done:
            return 0, skipped
        lines = [f"{GENERATED} from {self.linux} {src}; do not edit.",
                 f"# Regenerate: {REGEN}",
                 "# Formulas, units and groups are the kernel's (each metric in its first group);",
                 "# group descriptions are ours (tools/pmuevents/groups.tsv)."]
        if skipped:
            lines.append(f"# Left out, {len(skipped)} metrics hpm's expressions cannot say:")
            lines += [f"#   {s}" for s in skipped]
        arch_rel = self.tree.rel(self.tree.arch / cl.isa_dir)
        lines += ["", "format  1", f"pmu     {pmu}",
                  f"source  {self.linux} {src}/metrics.json and {arch_rel}/*.json "
                  "(MetricName, MetricExpr, ScaleUnit, MetricGroup)"]
        order = []
        for c in done:
            if c.group not in order:
                order.append(c.group)
        for g in order:
            desc = self.groups.get(g, f"{g} (a Linux perf metric group)")
            lines += ["", f"group   {g}  {desc}"]
            for c in done:
                if c.group == g:
                    lines.append(f"metric  {c.name:<34} {c.unit:<6} {c.expr}")
        self.out[path] = "\n".join(lines) + "\n"
        return len(done), skipped


def _wrap(keyword: str, words: list[str], width: int = 92) -> list[str]:
    """keyword + words over as many lines as keep each under width."""
    lines, cur = [], []
    for w in words:
        if cur and len(keyword) + 1 + len(" ".join(cur + [w])) > width:
            lines.append(f"{keyword} " + " ".join(cur))
            cur = []
        cur.append(w)
    if cur:
        lines.append(f"{keyword} " + " ".join(cur))
    return lines
