"""Labelled truth lists and precision@k / recall@k of a ranking against them.

Format (TSV, '#' comments, header required):

    function<TAB>workload<TAB>reason<TAB>evidence
    raw_copy_from_user<TAB>*<TAB>byte-wise copy of mutually misaligned buffers<TAB>arch/riscv/lib/uaccess.S

function  ISA-neutral kernel function name, spelled as hpmkit normalises it
          (data/compare/normalise.tsv: memcpy not __memcpy, raw_copy_to_user not
          __asm_copy_to_user, sys_read not __riscv_sys_read, no .isra.N suffixes).
workload  the only workload the entry counts in, or '*' / empty for any.
reason, evidence  free text (shown in the report).

A ranked context hits an entry when the entry's function (or an alias: another name of the
same code) is one of the context's **own frames**: its function (the anchor's leaf) and the
frames below it in the contexts merged into it, on either side -- never a caller above it, so
a context of `alloc_fd` does not hit `_find_next_zero_bit` unless the bit search is in it. The
context `[kernel-entry]` holds side A's entry code (data/compare/kernel-entry.tsv), so it
hits an entry naming one of A's entry frames (handle_exception on riscv64).
precision@k = hits among the top k / k; recall@k = entries hit by the top k / entries;
`reached` = entries whose function is in some kernel context of side A at all (a workload
that never runs the code cannot find it), or that a ranked context hits, with recall over
those; a last row, k = "all", scores the whole ranking.

The richer list of data/compare/known-riscv64-slower.tsv is read too (header starting
`function<TAB>aliases<TAB>label`): an entry matches its function or any of its aliases; its
`workloads` column says which ksuite workloads are expected to reach it, and the entry counts
in **any** workload (other suites reach the same code). Only rows labelled `slower` that
apply to the lab kernels (`lab_applies` not `no`) are truth entries -- `not-slower` controls
and `config` rows are not issues a port should fix, so ranking them counts against precision.
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
    workloads: frozenset | None = None  # where the rich list expects it (informational)

    def names(self) -> frozenset:
        return self.aliases | {self.function}

    def in_workload(self, wl: str) -> bool:
        """Only the simple format's workload column restricts an entry."""
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


def own_frames(row, entry_names: frozenset = frozenset()) -> set[str]:
    """The frames that are the ranked context itself: its function and, in every context
    merged into it (both sides), the frames below the anchor; not the callers above."""
    from .names import ENTRY_ONLY
    k = len(row.group.anchor) - 1
    own = {row.function}
    for p in (*row.group.a, *row.group.b):
        own.update(p[k:] if row.group.kind in ("partial", "parent") else p[-1:])
    if ENTRY_ONLY in own:
        own |= entry_names
    return own


def hits(row, truth: list[Truth], entry_names: frozenset = frozenset()) -> list[int]:
    """Indices of truth entries this ranked row hits."""
    own = own_frames(row, entry_names)
    return [i for i, t in enumerate(truth) if t.names() & own and t.in_workload(row.workload)]


def evaluate(ranked, truth: list[Truth], ks=(5, 10, 15, 20, 25), *, entry_names: frozenset = frozenset(),
             reached_names: set[str] | None = None) -> dict:
    """precision@k and recall@k. entry_names: side A's kernel-entry frames (what the context
    [kernel-entry] stands for); reached_names: every frame of side A's kernel contexts (None:
    not known, every entry counts as reached)."""
    per_row = [hits(r, truth, entry_names) for r in ranked]
    found = sorted({i for h in per_row for i in h})
    # an entry a ranked context hits is reached, even when A's frames never name it: the hit
    # can come from B's frames merged into the context (arm64's copy_page below wp_page_copy,
    # whose riscv64 work is memcpy) or from a second name of one address (riscv64's
    # copy_from_user is raw_copy_to_user); leaving them out would make such a hit count for
    # nothing in recall over reached
    reached = [i for i, t in enumerate(truth)
               if reached_names is None or t.names() & reached_names or i in found]
    table = []
    for k in (*ks, "all"):   # "all": the whole ranking, however long
        top = per_row if k == "all" else per_row[:k]
        n = len(top)
        hit_rows = sum(1 for h in top if h)
        covered = {i for h in top for i in h}
        table.append({"k": k, "ranked": n, "hits": hit_rows,
                      "precision": hit_rows / n if n else None,
                      "recall": len(covered) / len(truth),
                      "recall_reached": len(covered & set(reached)) / len(reached) if reached else None})
    return {"k": table, "rows": per_row, "found": found, "reached": reached,
            "missed": [i for i in range(len(truth)) if i not in set(found)]}


def reached_names(side, entry_names: frozenset = frozenset()) -> set[str]:
    """Every frame name of a side's kernel contexts (Contexts), entry code included."""
    from .contexts import KERNEL
    from .names import ENTRY_ONLY
    out: set[str] = set()
    for ctx in side.by_workload.values():
        for space, path in ctx:
            if space == KERNEL:
                out.update(path)
    if ENTRY_ONLY in out:
        out |= entry_names
    return out
