"""perf metric expressions -> hpm metric expressions (docs/formats/event-tables.md).

hpm's metric language has numbers, event names, + - * /, parentheses and `#slots` (the
core's issue width, which libhpm reads at run time from the core PMU's sysfs caps/slots, as
perf does). perf's has more: its other `#` literals (`#smt_on`, `#num_cores`, ...),
`if ... else`, functions (`min`, `d_ratio`, `strcmp_cpuid_str`, ...), `duration_time`, other
PMUs' `pmu@event@` terms. A metric that needs any of these is left out and counted, with
the reason, in the generated file's header. References to other metrics of the same core
are inlined in parentheses.

ScaleUnit ("100%", "1percent of cycles", "1MPKI", "1per cache access") becomes a factor
in front of the expression and one unit word.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree import Metric

TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<id>[A-Za-z_][A-Za-z0-9_.]*)"
                   r"|(?P<lit>#[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[-+*/()])|(?P<other>\S))")
# perf's `#` literals hpm's expressions know (src/lib/expr.c)
LITERALS = {"#slots"}
UNSUPPORTED_IDS = {"if", "else", "duration_time", "source_count", "has_event", "strcmp_cpuid_str",
                   "min", "max", "d_ratio", "not", "and", "or"}


class Skip(Exception):
    """This metric cannot be written in hpm's language (the message says why)."""


@dataclass
class Converted:
    name: str
    group: str
    unit: str
    expr: str


def tokens(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            raise Skip(f"cannot read {expr[pos:pos + 12]!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


def scale_unit(su: str | None) -> tuple[str, str]:
    """("100", "%") from "100%"; ("1", "MPKI") from "1MPKI"."""
    if not su:
        return "1", "-"
    m = re.fullmatch(r"([0-9.]+(?:[eE][-+]?\d+)?)\s*(.*)", su.strip())
    if not m:
        raise Skip(f"ScaleUnit {su!r} has no factor")
    factor, unit = m.group(1), m.group(2).strip()
    f = float(factor)
    factor = str(int(f)) if f == int(f) else repr(f)
    if unit == "%" or unit.startswith("percent"):
        unit = "%"
    elif unit == "per cycle":
        unit = "-"
    elif unit.startswith("per "):
        unit = "ratio"
    elif re.fullmatch(r"[A-Za-z/]+", unit):
        pass
    else:
        raise Skip(f"ScaleUnit {su!r}: unit is not one word")
    return factor, unit


class Translator:
    def __init__(self, events: dict[str, str], metrics: dict[str, Metric], generic: set[str]):
        self.events = events          # lower name -> table spelling
        self.metrics = {m.name.lower(): m for m in metrics.values()}
        self.generic = generic

    def expr(self, text: str, stack: tuple[str, ...] = ()) -> str:
        toks = tokens(text)
        out: list[str] = []
        for i, (kind, val) in enumerate(toks):
            if kind == "other":
                raise Skip(f"uses {val!r}, perf syntax hpm's expressions lack")
            if kind == "lit" and val not in LITERALS:
                raise Skip(f"uses {val}, a fact of the machine hpm does not read")
            if kind == "id":
                low = val.lower()
                nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
                if low in UNSUPPORTED_IDS or nxt == "(":
                    raise Skip(f"uses {val}")
                if low in self.events:
                    out.append(self.events[low])
                elif low in self.metrics:
                    if low in stack:
                        raise Skip(f"refers to itself through {val}")
                    out.append("(" + self.expr(self.metrics[low].expr, stack + (low,)) + ")")
                elif val in self.generic:
                    out.append(val)
                else:
                    raise Skip(f"uses {val}, not an event of this core")
            else:
                out.append(val)
        s = " ".join(out)
        return s.replace("( ", "(").replace(" )", ")")

    def convert(self, m: Metric) -> Converted:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", m.name):
            raise Skip(f"name {m.name!r} is not a metric name")
        if "@" in m.expr:
            raise Skip("counts through pmu@event@ terms")
        if re.search(r"\bif\b", m.expr):
            raise Skip("uses if/else")
        factor, unit = scale_unit(m.scale_unit)
        body = self.expr(m.expr, (m.name.lower(),))
        expr = body if factor == "1" else f"{factor} * ({body})"
        groups = [g for g in m.groups if g.lower() != "default"]
        return Converted(m.name, (groups[0] if groups else "General").lower(), unit, expr)
