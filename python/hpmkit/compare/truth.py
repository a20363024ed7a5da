"""Labelled truth lists and precision@k / recall@k of a ranking against them.

Format (TSV, '#' comments, header required):

    function<TAB>workload<TAB>reason<TAB>evidence
    raw_copy_from_user<TAB>*<TAB>byte-wise copy of mutually misaligned buffers<TAB>arch/riscv/lib/uaccess.S

function  ISA-neutral kernel function name, spelled as hpmkit normalises it
          (data/compare/normalise.tsv: memcpy not __memcpy, raw_copy_to_user not
          __asm_copy_to_user, sys_read not __riscv_sys_read, no .isra.N suffixes).
workload  the workload the issue shows in, or '*' / empty for any.
reason, evidence  free text (shown in the report).

A ranked context hits an entry when the workloads agree and the entry's function is the
context's function (the anchor's leaf) or the leaf that carries most of A's samples among the
contexts merged into it (a partial match can hide the deeper function under its caller).
precision@k = hits among the top k / k; recall@k = entries hit by the top k / entries.

The richer list of data/compare/known-riscv64-slower.tsv is read too (header starting
`function<TAB>aliases<TAB>label`): an entry matches its function or any of its aliases, in
any of its comma-separated workloads; only rows labelled `slower` that apply to the lab
kernels (`lab_applies` not `no`) are truth entries — `not-slower` controls and `config`
rows are not issues a port should fix, so ranking them counts against precision.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError, ReadError
from .names import Normaliser

COLUMNS = ["function", "workload", "reason", "evidence"]


@dataclass
class Truth:
    function: str
    workload: str | None
    reason: str
    evidence: str
    line: int
    aliases: frozenset = frozenset()
    workloads: frozenset | None = None  # several workloads (rich format); None = any

    def names(self) -> frozenset:
        return self.aliases | {self.function}

    def in_workload(self, wl: str) -> bool:
        if self.workloads is not None:
            return wl in self.workloads
        return self.workload is None or self.workload == wl


RICH = ["function", "aliases", "label"]


def _load_rich(path: Path, lines: list[tuple[int, list[str]]], header: list[str],
               normalise: Normaliser) -> list[Truth]:
    col = {name: i for i, name in enumerate(header)}
    missing = [c for c in ("function", "aliases", "label", "workloads", "reason") if c not in col]
    if missing:
        raise FormatError(path, f"header lacks column(s) {', '.join(missing)}",
                          "see the comment block of data/compare/known-riscv64-slower.tsv")
    out = []
    for no, cells in lines:
        cells = cells + [""] * (len(header) - len(cells))
        get = lambda c: cells[col[c]].strip() if c in col else ""  # noqa: E731
        if get("label") != "slower" or get("lab_applies") == "no":
            continue
        if not get("function"):
            raise FormatError(path, f"line {no}: empty function name", "fill in the function column")
        wls = frozenset(w.strip() for w in get("workloads").split(",") if w.strip()) or None
        ev = "; ".join(x for x in (get("riscv64_evidence"), get("arm64_evidence")) if x)
        out.append(Truth(normalise(get("function")), None, get("reason"), ev, no,
                         frozenset(normalise(a.strip()) for a in get("aliases").split(",") if a.strip()),
                         wls))
    return out


def load(path: Path, normalise: Normaliser | None = None) -> list[Truth]:
    normalise = normalise or Normaliser.load()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReadError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    out, header = [], False
    rows = [(no, line.split("\t")) for no, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.startswith("#")]
    if rows and rows[0][1][:3] == RICH:
        out = _load_rich(Path(path), rows[1:], [c.strip() for c in rows[0][1]], normalise)
        if not out:
            raise FormatError(path, "no entries labelled 'slower' that apply to the lab",
                              "list at least one known issue")
        return out
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if not header:
            if cells[:2] != COLUMNS[:2]:
                raise FormatError(path, f"line {no}: header must be {'<TAB>'.join(COLUMNS)}",
                                  "see docs/compare.md, 'Truth lists'")
            header = True
            continue
        cells += [""] * (4 - len(cells))
        if not cells[0].strip():
            raise FormatError(path, f"line {no}: empty function name", "see docs/compare.md, 'Truth lists'")
        wl = cells[1].strip()
        out.append(Truth(normalise(cells[0].strip()), None if wl in ("", "*") else wl,
                         cells[2].strip(), cells[3].strip(), no))
    if not header:
        raise FormatError(path, "no header line", "see docs/compare.md, 'Truth lists'")
    if not out:
        raise FormatError(path, "no entries", "list at least one known issue")
    return out


def hits(row, truth: list[Truth], costs_a: dict) -> list[int]:
    """Indices of truth entries this ranked row hits."""
    names = {row.function, row.dominant_leaf(0, costs_a)}
    return [i for i, t in enumerate(truth) if t.names() & names and t.in_workload(row.workload)]


def evaluate(ranked, truth: list[Truth], costs_a_of, ks=(5, 10, 15, 20, 25)) -> dict:
    """precision@k and recall@k; costs_a_of(row) -> {path: cost} of side A for that row."""
    per_row = [hits(r, truth, costs_a_of(r)) for r in ranked]
    table = []
    for k in ks:
        top = per_row[:k]
        n = len(top)
        hit_rows = sum(1 for h in top if h)
        covered = {i for h in top for i in h}
        table.append({"k": k, "ranked": n, "hits": hit_rows,
                      "precision": hit_rows / n if n else None,
                      "recall": len(covered) / len(truth)})
    found = sorted({i for h in per_row for i in h})
    return {"k": table, "rows": per_row, "found": found,
            "missed": [i for i in range(len(truth)) if i not in set(found)]}
