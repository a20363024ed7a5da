"""Cross-ISA context matching (Wu et al. section 2.1.2), bottom-up over root->leaf paths.

Kinds, tried in this order on the contexts still unmatched:
  exact     the same path on both sides (the paper's return value 0).
  partial   one side's context continues deeper than a context of the other side; the deeper
            costs are merged into that caller (the anchor). The nearest anchor wins (fewest
            levels), and every deeper context that reaches the same anchor -- from either side
            -- is merged into one group ("several partial matches merged"). depth_b > 0: B is
            deeper (the paper's positive value, ARM deeper when B = ARM), depth_a > 0: A deeper
            (the paper's negative value).
  parent    no context at any caller, but both sides have unmatched contexts under the same
            parent path a few levels up (at most `parent_levels`, and the parent keeps at least
            `min_parent_len` frames, so a match never degenerates to "both are syscalls").
  top-name  only the sampled (leaf) function agrees: stacks truncated on one side.
  unmatched the rest (the paper's negative infinity).
Parent runs before top-name (the paper lists top-name first): it keeps more of the context,
and top-name then only collects what has no shared caller at all.

Contexts are processed deepest first so that a context which is itself an anchor for a deeper
context of the other side is never walked away from its own match.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

KINDS = ("exact", "partial", "parent", "top-name")
Path = tuple[str, ...]


@dataclass
class Group:
    """One matched context: an anchor path and the contexts of each side merged into it."""

    anchor: Path
    kind: str
    a: list[Path] = field(default_factory=list)
    b: list[Path] = field(default_factory=list)

    @property
    def depth_a(self) -> int:
        """Levels A's merged contexts go deeper than the anchor (paper: negative value)."""
        return self._deeper(self.a)

    @property
    def depth_b(self) -> int:
        return self._deeper(self.b)

    def _deeper(self, paths: list[Path]) -> int:
        if self.kind in ("exact", "top-name"):
            return 0
        return max(len(p) for p in paths) - len(self.anchor) if paths else 0

    @cached_property
    def depth(self) -> str:
        """The paper's signed depth difference; '+m/-n' when both sides were deeper somewhere."""
        da, db = self.depth_a, self.depth_b
        if da and db:
            return f"+{db}/-{da}"
        return f"+{db}" if db else (f"-{da}" if da else "0")


@dataclass
class MatchResult:
    groups: list[Group]
    unmatched_a: list[Path]
    unmatched_b: list[Path]


def match(a: Mapping[Path, object], b: Mapping[Path, object], *, max_partial: int = 3,
          parent_levels: int = 2, min_parent_len: int = 2) -> MatchResult:
    groups: dict[tuple[str, Path], Group] = {}
    owner: list[dict[Path, Group]] = [{}, {}]
    sides = (a, b)

    def join(g: Group, side: int, p: Path) -> None:
        (g.a if side == 0 else g.b).append(p)
        owner[side][p] = g

    # 1. exact
    for p in sorted(a.keys() & b.keys()):
        g = groups[("x", p)] = Group(p, "exact")
        join(g, 0, p)
        join(g, 1, p)

    # 2. partial: nearest caller that is a context of the other side
    order = sorted([(s, p) for s in (0, 1) for p in sides[s] if p not in owner[s]],
                   key=lambda sp: (-len(sp[1]), sp[0], sp[1]))
    for s, p in order:
        if p in owner[s]:
            continue  # became an anchor for a deeper context of the other side
        o = 1 - s
        for d in range(1, min(max_partial, len(p) - 1) + 1):
            q = p[:-d]
            if q not in sides[o]:
                continue
            g = owner[o].get(q)
            if g is None:
                g = groups[("x", q)] = Group(q, "partial")
                join(g, o, q)
            elif g.anchor != q:
                continue  # q merged elsewhere already (cannot happen deepest-first; kept safe)
            g.kind = "partial"
            g.__dict__.pop("depth", None)
            join(g, s, p)
            break

    # 3. parent: shared caller a few levels up, contexts of both sides beneath it
    under: dict[Path, list[list[Path]]] = {}
    for s in (0, 1):
        for p in sides[s]:
            if p in owner[s]:
                continue
            for d in range(1, parent_levels + 1):
                q = p[:-d]
                if len(q) < min_parent_len:
                    break
                under.setdefault(q, [[], []])[s].append(p)
    order = sorted([(s, p) for s in (0, 1) for p in sides[s] if p not in owner[s]],
                   key=lambda sp: (-len(sp[1]), sp[0], sp[1]))
    for s, p in order:
        if p in owner[s]:
            continue
        for d in range(1, parent_levels + 1):
            q = p[:-d]
            if len(q) < min_parent_len:
                break
            cand = under.get(q)
            if not cand:
                continue
            free = [[x for x in cand[t] if x not in owner[t]] for t in (0, 1)]
            if free[0] and free[1]:
                g = groups[("p", q)] = Group(q, "parent")
                for t in (0, 1):
                    for x in sorted(free[t]):
                        join(g, t, x)
                break

    # 4. top-name: only the leaf agrees
    leaves: dict[str, list[list[Path]]] = {}
    for s in (0, 1):
        for p in sides[s]:
            if p not in owner[s]:
                leaves.setdefault(p[-1], [[], []])[s].append(p)
    for leaf in sorted(leaves):
        pa, pb = leaves[leaf]
        if pa and pb:
            g = groups[("t", (leaf,))] = Group((leaf,), "top-name")
            for t, ps in ((0, pa), (1, pb)):
                for x in sorted(ps):
                    join(g, t, x)

    out = sorted(groups.values(), key=lambda g: (KINDS.index(g.kind), g.anchor))
    return MatchResult(out, sorted(p for p in a if p not in owner[0]),
                       sorted(p for p in b if p not in owner[1]))


def group_costs(g: Group, a: Mapping[Path, np.ndarray], b: Mapping[Path, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return sum((a[p] for p in g.a), np.zeros(3)), sum((b[p] for p in g.b), np.zeros(3))
