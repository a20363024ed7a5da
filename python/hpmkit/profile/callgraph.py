"""The call graph under a report entry, built and printed as perf report 6.1 does (-g).

The chains that reached an entry are merged into a tree whose nodes hold runs of frames
(a node ends where chains part or where one ends), siblings ordered by their weight. Modes:
graph (percentages of the event's total), fractal (of the parent), flat (every chain from
the root), folded (one line per chain); values as percent, period or sample count; branches
under the threshold are left out (fractal mode says how much with a '[...]' line).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .hist import Frames

MODES = ("graph", "fractal", "flat", "folded", "none")
VALUES = ("percent", "period", "count")


@dataclass
class GraphOptions:
    mode: str = "graph"
    threshold: float = 0.5          # percent
    value: str = "percent"
    skip_first: bool = False        # perf: the single chain's first frame is the entry itself
    limit: int = 0                  # perf's print_limit: branches per level (0: all)


class Node:
    __slots__ = ("val", "hit", "count", "kids", "children_hit", "children_count", "parent",
                 "sorted", "tied")

    def __init__(self, parent: "Node | None"):
        self.val: list[int] = []        # frame ids of this run
        self.hit = 0                    # period of chains that end here
        self.count = 0                  # samples of chains that end here
        self.kids: dict = {}            # function key of the first frame -> node
        self.children_hit = 0
        self.children_count = 0
        self.parent = parent
        self.sorted: list[Node] = []       # children shown, in print order
        self.tied: list[Node] = []         # every child, in perf's insertion order

    @property
    def cumul(self) -> int:
        return self.hit + self.children_hit

    @property
    def cumul_count(self) -> int:
        return self.count + self.children_count


class _Trie:
    __slots__ = ("fid", "hit", "count", "kids")

    def __init__(self, fid):
        self.fid, self.hit, self.count, self.kids = fid, 0, 0, {}


def build(chains, frames: Frames) -> Node:
    """The tree of (chain, start, period, samples) contributions."""
    func = frames.func
    root = _Trie(None)
    for chain, start, period, count in chains:
        n = root
        for fid in chain[start:]:
            k = func[fid]
            c = n.kids.get(k)
            if c is None:
                c = n.kids[k] = _Trie(fid)
            n = c
        if n is not root:
            n.hit += period
            n.count += count
    out = Node(None)
    _compress(root, out)
    return out


def _compress(t: _Trie, node: Node) -> None:
    """Runs of single-child frames where no chain ends become one node (perf's node
    splitting gives the same tree whatever order the chains came in)."""
    for key, c in t.kids.items():
        n = Node(node)
        n.val.append(c.fid)
        while c.count == 0 and c.hit == 0 and len(c.kids) == 1:
            c = next(iter(c.kids.values()))
            n.val.append(c.fid)
        n.hit, n.count = c.hit, c.count
        node.kids[key] = n
        _compress(c, n)
        node.children_hit += n.cumul
        node.children_count += n.cumul_count


def sort(root: Node, frames: Frames, dso_rank: dict, mode: str, min_hit: int,
         min_percent: float) -> None:
    """Siblings by weight, heaviest first; below the threshold left out. Equal weights keep
    perf's insertion order: the later DSO, then the higher address, first."""
    def tie(n: Node):
        f = n.val[0]
        return (dso_rank.get(frames.dso[f], 0), frames.start[f])

    def walk(n: Node) -> None:
        lim = math.ceil(n.children_hit * min_percent / 100.0) if mode == "fractal" else min_hit
        kids = []
        n.tied = sorted(n.kids.values(), key=tie, reverse=True)
        for c in n.tied:
            walk(c)
            if c.cumul >= lim:
                kids.append(c)
        kids.sort(key=lambda c: -c.cumul)       # stable: ties keep the order above
        n.sorted = kids
    walk(root)


def _value(n: Node, total: int, value: str, folded: bool = False) -> str:
    period = n.hit if folded else n.cumul
    count = n.count if folded else n.cumul_count
    if value == "period":
        return str(period)
    if value == "count":
        return str(count)
    pct = period * 100.0 / total if total else 0.0
    return f"{pct:.2f}%"


def _margin(left: int) -> str:
    return " " * (12 + left)


def render(root: Node, frames: Frames, total: int, parent_samples: int,
           opts: GraphOptions, min_hit: int = 0) -> str:
    """The graph text printed under an entry (empty when there is nothing to show)."""
    if opts.mode in ("graph", "fractal"):
        return _graph(root, frames, total, parent_samples, opts)
    if opts.mode == "flat":
        return _flat(root, frames, total, opts, min_hit)
    if opts.mode == "folded":
        return _folded(root, frames, total, opts, min_hit)
    return ""


def _graph(root: Node, frames: Frames, total: int, parent_samples: int,
           opts: GraphOptions) -> str:
    out: list[str] = []
    left = 0
    nodes = root.sorted
    if nodes and not (len(nodes) > 1 or nodes[0].cumul != parent_samples):
        # one chain carries the whole entry: printed once, without a percentage
        c = nodes[0]
        printed = False
        for i, fid in enumerate(c.val):
            if i == 0 and opts.skip_first:
                continue
            if not printed:
                out.append(_margin(left) + "|\n")
                out.append(_margin(left) + "---")
                left += 3
                printed = True
            else:
                out.append(_margin(left))
            out.append(frames.label(fid) + "\n")
            if opts.limit and i + 1 == opts.limit:
                break
        nodes = c.sorted
    if opts.mode == "fractal":
        total = parent_samples
    _branches(out, nodes, frames, total, 1, 1, left, opts)
    if out:
        out.append("\n")
    return "".join(out)


def _line(depth: int, mask: int, left: int) -> str:
    return _margin(left) + "".join("|          " if mask & (1 << i) else "           "
                                   for i in range(depth)) + "\n"


def _entry(node: Node, label: str, depth: int, mask: int, period: int, total: int, left: int,
           opts: GraphOptions, value: str | None = None) -> str:
    s = [_margin(left)]
    for i in range(depth):
        s.append("|" if mask & (1 << i) else " ")
        if not period and i == depth - 1:
            s.append("--" + (value if value is not None else _value(node, total, opts.value)) + "--")
        else:
            s.append(" " * 10)
    s.append(label + "\n")
    return "".join(s)


def _branches(out: list[str], nodes: list[Node], frames: Frames, total: int, depth: int,
              mask: int, left: int, opts: GraphOptions) -> None:
    fractal = opts.mode == "fractal"
    remaining = total
    new_mask = mask
    cumul_count = 0
    for i, c in enumerate(nodes):
        remaining -= c.cumul
        cumul_count += c.cumul_count
        if i == len(nodes) - 1 and (not fractal or not remaining):
            new_mask &= ~(1 << (depth - 1))
        out.append(_line(depth, mask, left))
        for j, fid in enumerate(c.val):
            out.append(_entry(c, frames.label(fid), depth, new_mask, j, total, left, opts))
        _branches(out, c.sorted, frames, c.children_hit if fractal else total, depth + 1,
                  new_mask | (1 << depth), left, opts)
        if opts.limit and i + 1 == opts.limit:
            break
    if fractal and remaining and remaining != total and nodes:
        rem = Node(None)
        rem.hit = remaining
        if opts.value == "count":
            parent = nodes[-1].parent
            rem.count = (parent.children_count if parent else 0) - cumul_count
            if rem.count <= 0:
                return
        new_mask &= ~(1 << (depth - 1))
        out.append(_entry(rem, "[...]", depth, new_mask, 0, total, left, opts))


def _flat_nodes(root: Node, min_hit: int) -> list[Node]:
    """Every node where chains end, heaviest first (perf's flat and folded order)."""
    got: list[Node] = []

    def walk(n: Node) -> None:
        for c in (n.tied or n.kids.values()):
            walk(c)
        if n.hit and n.hit >= min_hit:
            got.append(n)
    walk(root)
    got.sort(key=lambda n: -n.hit)
    return got


def _path(n: Node) -> list[int]:
    runs = []
    while n is not None and n.val:
        runs.append(n.val)
        n = n.parent
    return [f for run in reversed(runs) for f in run]


def _flat(root: Node, frames: Frames, total: int, opts: GraphOptions, min_hit: int) -> str:
    out = []
    for n in _flat_nodes(root, min_hit)[:opts.limit or None]:
        out.append("           " + _value(n, total, opts.value) + "\n")
        out.extend(f"                {frames.label(f)}\n" for f in _path(n))
        out.append("\n")
    return "".join(out)


def _folded(root: Node, frames: Frames, total: int, opts: GraphOptions, min_hit: int) -> str:
    out = []
    for n in _flat_nodes(root, min_hit)[:opts.limit or None]:
        out.append(_value(n, total, opts.value, folded=True) + " " +
                   ";".join(frames.label(f) for f in _path(n)) + "\n")
    return "".join(out)
