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


def load(path: Path, normalise: Normaliser | None = None) -> list[Truth]:
    normalise = normalise or Normaliser.load()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReadError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    out, header = [], False
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
    return [i for i, t in enumerate(truth)
            if t.function in names and (t.workload is None or t.workload == row.workload)]


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
