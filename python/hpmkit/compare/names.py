"""Frame names across ISAs: normalisation rules and kernel-entry frames, both read from data/compare.

The rules are data (data/compare/normalise.tsv, data/compare/kernel-entry.tsv) so that a new
kernel version or compiler spelling is one line in a table, not a code change.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FormatError, ReadError

DATA_DIR = Path(__file__).resolve().parents[3] / "data" / "compare"
ISAS = ("riscv64", "aarch64", "x86_64")
# spellings of the ISA found in perf headers (uname -m / perf's ARCH feature) and the profile
ISA_ALIASES = {"riscv64": "riscv64", "riscv": "riscv64", "aarch64": "aarch64", "arm64": "aarch64",
               "x86_64": "x86_64", "x86": "x86_64", "amd64": "x86_64"}
UNKNOWN = "[unknown]"          # any unresolved frame: addresses never match across ISAs
ENTRY_ONLY = "[kernel-entry]"  # a sample taken in the entry code itself


def _read_tsv(path: Path, columns: list[str]) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ReadError(path, f"cannot read: {e.strerror}", "reinstall hpmkit or pass the file") from None
    rows, header = [], None
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            if cells[:len(columns)] != columns:
                raise FormatError(path, f"line {no}: header must start with {'<TAB>'.join(columns)}",
                                  "keep the documented columns")
            header = cells
            continue
        if len(cells) < len(columns):
            raise FormatError(path, f"line {no}: {len(cells)} tab-separated cells, need {len(columns)}",
                              "separate the columns with single tabs")
        rows.append(dict(zip(columns, cells)) | {"_line": str(no)})
    if header is None:
        raise FormatError(path, "no header line", "keep the documented columns")
    return rows


def _version(text: str | None) -> tuple[int, int] | None:
    """'6.1.0-13-arm64' -> (6, 1); None when there is no leading major.minor."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(m[1]), int(m[2])) if m else None


def canonical_isa(isa: str | None) -> str | None:
    return ISA_ALIASES.get(isa.lower()) if isa else None


@dataclass
class Normaliser:
    """Turns one frame name into its ISA-neutral spelling; memoised (a profile repeats names)."""

    suffixes: list[re.Pattern]
    prefixes: list[tuple[re.Pattern, str]]
    aliases: dict[str, str]
    _memo: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> "Normaliser":
        path = path or DATA_DIR / "normalise.tsv"
        suffixes, prefixes, aliases = [], [], {}
        for r in _read_tsv(path, ["kind", "pattern", "to"]):
            to = "" if r["to"] == "-" else r["to"]
            try:
                if r["kind"] == "suffix":
                    suffixes.append(re.compile(f"(?:{r['pattern']})$"))
                elif r["kind"] == "prefix":
                    prefixes.append((re.compile(f"^(?:{r['pattern']})"), to))
                elif r["kind"] == "alias":
                    aliases[r["pattern"]] = to
                else:
                    raise FormatError(path, f"line {r['_line']}: kind '{r['kind']}' is not suffix, prefix or alias",
                                      "fix the kind column")
            except re.error as e:
                raise FormatError(path, f"line {r['_line']}: bad regular expression: {e}", "fix the pattern") from None
        return cls(suffixes, prefixes, aliases)

    def __call__(self, name: str | None) -> str:
        if name is None:
            return UNKNOWN
        got = self._memo.get(name)
        if got is not None:
            return got
        out = name.strip()
        if not out or out.startswith("0x") or out == UNKNOWN or out == "[unknown]":
            out = UNKNOWN
        else:
            changed = True
            while changed:  # clones of clones: foo.isra.0.cold.1
                changed = False
                for rx in self.suffixes:
                    new = rx.sub("", out)
                    if new != out and new:
                        out, changed = new, True
            for rx, to in self.prefixes:
                out = rx.sub(to, out, count=1)
            out = self.aliases.get(out, out)
        self._memo[name] = out
        return out


def _kernel_rows(path: Path, columns: list[str], isa: str | None, kernel: str | None) -> list[dict[str, str]]:
    """Rows of a per-ISA, per-kernel-version table (columns start isa, from, before) that apply
    to this ISA and kernel: an unknown ISA takes every ISA's rows, an unknown version every
    version's."""
    isa = canonical_isa(isa)
    ver = _version(kernel)
    out = []
    for r in _read_tsv(path, columns):
        if r["isa"] not in ISAS:
            raise FormatError(path, f"line {r['_line']}: isa '{r['isa']}' is not one of {', '.join(ISAS)}",
                              "fix the isa column")
        if isa is not None and r["isa"] != isa:
            continue
        lo, hi = (None if r[k] == "-" else _version(r[k]) for k in ("from", "before"))
        if (r["from"] != "-" and lo is None) or (r["before"] != "-" and hi is None):
            raise FormatError(path, f"line {r['_line']}: versions must be major.minor or '-'",
                              "fix the from/before columns")
        if ver is not None and ((lo and ver < lo) or (hi and ver >= hi)):
            continue
        out.append(r)
    return out


@dataclass
class EntryFrames:
    """Kernel-entry frames of one ISA and kernel version: {frame: role}."""

    isa: str | None
    kernel: str | None
    roles: dict[str, str]

    @classmethod
    def load(cls, isa: str | None, kernel: str | None, path: Path | None = None) -> "EntryFrames":
        # an unknown ISA takes every ISA's frames: the names do not collide across ISAs
        rows = _kernel_rows(path or DATA_DIR / "kernel-entry.tsv",
                            ["isa", "from", "before", "frame", "role"], isa, kernel)
        return cls(canonical_isa(isa), kernel, {r["frame"]: r["role"] for r in rows})


KERNEL_SYMBOL_RULES = ("marker", "syscall", "memcpy")


@dataclass
class KernelSymbols:
    """Kernel frame names that a recording's symbol copy got wrong, per ISA and kernel version:
    {name as recorded (normalised): name hpmkit gives that code (normalised)}.

    `hpm record` stores, for each sampled address, the one kallsyms name perf would show, so a
    profile made from it names __schedule `__sched_text_start` (riscv64 6.1). These renames
    (data/compare/kernel-symbols.tsv) restore the names hpmkit.profile.symbols.choose_alias
    picks from a full kallsyms; they apply to kernel frames only, and only when the ISA is
    known (memmove is its own function on riscv64)."""

    isa: str | None
    kernel: str | None
    rename: dict[str, str]
    rules: dict[str, str] = field(default_factory=dict)    # name -> rule

    @classmethod
    def load(cls, isa: str | None, kernel: str | None, path: Path | None = None) -> "KernelSymbols":
        path = path or DATA_DIR / "kernel-symbols.tsv"
        if canonical_isa(isa) is None:
            return cls(None, kernel, {})
        rename, rules = {}, {}
        for r in _kernel_rows(path, ["isa", "from", "before", "name", "to", "rule"], isa, kernel):
            if r["rule"] not in KERNEL_SYMBOL_RULES:
                raise FormatError(path, f"line {r['_line']}: rule '{r['rule']}' is not one of "
                                  f"{', '.join(KERNEL_SYMBOL_RULES)}", "fix the rule column")
            rename[r["name"]] = r["to"]
            rules[r["name"]] = r["rule"]
        return cls(canonical_isa(isa), kernel, rename, rules)


def same_work(isa: str | None, kernel: str | None, path: Path | None = None) -> dict[str, str]:
    """{routine: function whose work it does on a kernel without it} for one ISA and kernel
    (data/compare/same-work.tsv: arm64's clear_page is riscv64's memset). Empty when the ISA
    is unknown: the names would be guesses."""
    if canonical_isa(isa) is None:
        return {}
    rows = _kernel_rows(path or DATA_DIR / "same-work.tsv",
                        ["isa", "from", "before", "name", "same_as"], isa, kernel)
    return {r["name"]: r["same_as"] for r in rows}
