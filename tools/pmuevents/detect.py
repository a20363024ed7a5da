"""Mapfile identifiers -> hpm `detect` lines (docs/formats/event-tables.md).

arm64 rows hold a MIDR_EL1 value with variant and revision zero: implementer bits 31:24,
part number bits 15:4 -> `arm midr=0xII:0xPPP`.

riscv rows hold MVENDORID-MARCHID-MIMPID as a POSIX regular expression. hpm's detect
lines compare exact values, so a field is taken when it is a plain number, dropped when it
matches any hex number (`0x[[:xdigit:]]+`), and expanded into every value when it holds
bracket sets of single characters (`0x80000000db0000[89]0` -> two lines). Anything else
cannot be said in a detect line: an error naming the row, never a silently wider rule.
"""
from __future__ import annotations

import itertools
import re

from tree import MapRow, TreeError

ANY_HEX = "0x[[:xdigit:]]+"
MAX_EXPANSION = 64


def _split_fields(ident: str) -> list[str]:
    """Split on '-' outside bracket expressions ([1-9a-e] holds a '-')."""
    out, cur, depth = [], "", 0
    for ch in ident:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "-" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _bracket_chars(body: str, where: str) -> list[str]:
    if body.startswith("[:") or body.startswith("^"):
        raise TreeError(f"{where}: class [{body}] cannot be expanded into values")
    chars, i = [], 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            lo, hi = body[i], body[i + 2]
            chars += [chr(c) for c in range(ord(lo), ord(hi) + 1)]
            i += 3
        else:
            chars.append(body[i])
            i += 1
    return chars


def _expand(field: str, where: str) -> list[str] | None:
    """Every value the field matches, or None for any value."""
    if field == ANY_HEX:
        return None
    if re.fullmatch(r"0x[0-9a-fA-F]+", field):
        return [field]
    parts, i = [], 0
    while i < len(field):
        if field[i] == "[":
            j = field.find("]", i + 1)
            if j < 0:
                raise TreeError(f"{where}: unclosed '[' in {field!r}")
            parts.append(_bracket_chars(field[i + 1:j], where))
            i = j + 1
        elif re.match(r"[0-9a-fA-Fx]", field[i]):
            parts.append([field[i]])
            i += 1
        else:
            raise TreeError(f"{where}: {field!r} is not exact values (hpm detect lines compare "
                            "whole numbers); extend tools/pmuevents/detect.py")
    values = ["".join(p) for p in itertools.product(*parts)]
    if len(values) > MAX_EXPANSION:
        raise TreeError(f"{where}: {field!r} stands for {len(values)} values (at most "
                        f"{MAX_EXPANSION} detect lines per row)")
    for v in values:
        if not re.fullmatch(r"0x[0-9a-fA-F]+", v):
            raise TreeError(f"{where}: {field!r} expands to {v!r}, not a number")
    return values


def _hex(text: str) -> str:
    return f"{int(text, 16):#x}"


def detect_lines(row: MapRow) -> list[str]:
    """The detect lines (without the keyword) that recognise the row's cores."""
    where = f"{row.isa_dir}/mapfile.csv row {row.ident}"
    if row.isa_dir == "arm64":
        try:
            midr = int(row.ident, 16)
        except ValueError:
            raise TreeError(f"{where}: MIDR is not a hex number") from None
        if midr & 0xf0000f:
            raise TreeError(f"{where}: variant/revision bits set (the mapfile says they are 0)")
        return [f"arm midr={(midr >> 24) & 0xff:#x}:{(midr >> 4) & 0xfff:#x}"]
    fields = _split_fields(row.ident)
    if len(fields) != 3:
        raise TreeError(f"{where}: expected MVENDORID-MARCHID-MIMPID")
    keys = ("mvendorid", "marchid", "mimpid")
    choices = []
    for key, f in zip(keys, fields):
        vals = _expand(f, where)
        choices.append([None] if vals is None else [f"{key}={_hex(v)}" for v in vals])
    if choices[0] == [None]:
        raise TreeError(f"{where}: any mvendorid would match every RISC-V core")
    lines = []
    for combo in itertools.product(*choices):
        lines.append("riscv " + " ".join(c for c in combo if c))
    return lines


def normalise(line: str) -> str:
    """A detect line with numbers in one spelling, for comparing with hand-written ones."""
    words = line.split()
    out = [words[0]]
    for w in words[1:]:
        k, _, v = w.partition("=")
        if words[0] == "arm" and k == "midr":
            a, _, b = v.partition(":")
            v = f"{int(a, 16):#x}:{int(b, 16):#x}"
        elif words[0] == "riscv":
            v = f"{int(v, 0):#x}"
        out.append(f"{k}={v}")
    return " ".join(out)
