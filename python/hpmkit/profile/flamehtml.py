"""Interactive flame graphs as self-contained HTML: search, click-to-zoom, kernel and user
frames in their own colours, and a differential graph of two profiles.

The drawing is flamegraph.js (beside this file), inlined into the page: no network and no
other file at view time. Other pages embed graphs with assets() once and fragment() per
graph (compare's report does, one differential graph per workload); page() makes a whole
document.

    data = tree_data(profile, by="samples")          # or diff_data(a, b)
    html = page(data, title="pipe on riscv64")
    # a page of its own: assets() once, then fragment(from_paths(...), "id") per graph

Frames carry the names `profile export --format folded|svg` gives them; a frame is kernel
or user as the recording says. Frames narrower than min_share of the total are left out of
the file (they could not be seen without zooming far in); how much is left out is written
under the graph.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from .export import frame_labels
from .model import VALUE_PREFIX, Profile

ROOT_KIND, USER, KERNEL = 0, 1, 2
MIN_SHARE = 1e-5

CSS = """\
.hpm-flame{font:12px Verdana,sans-serif;margin:8px 0}
.hpm-flame-bar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin-bottom:4px}
.hpm-flame-search{width:18em}
.hpm-flame-matched{color:#a0a;font-weight:bold}
.hpm-flame-legend i{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;border:1px solid #999}
.hpm-flame-svg{display:block;background:#fafaf5;cursor:pointer}
.hpm-flame-svg text{pointer-events:none;fill:#000}
.hpm-flame-svg g.hpm-frame:hover rect{stroke:#000;stroke-width:0.6}
.hpm-flame-details{min-height:1.4em;margin-top:4px;font-family:monospace;white-space:pre-wrap}
.hpm-flame-note{color:#666;margin-top:2px}
"""


def _js() -> str:
    return (Path(__file__).with_name("flamegraph.js")).read_text(encoding="utf-8")


def _stack_weights(p: Profile, by: str, comm: bool) -> list[tuple[str | None, int, int]]:
    """(thread name or None, stack id, weight) with weight > 0, weighted as `profile show
    --by`: samples, a sampling event's periods, or a group member's deltas."""
    s = p.samples
    if by == "samples":
        t = pa.table({"comm": s["comm"], "stack_id": s["stack_id"],
                      "w": p.sample_counts()})
    elif VALUE_PREFIX + by in s.column_names:
        t = pa.table({"comm": s["comm"], "stack_id": s["stack_id"],
                      "w": pc.fill_null(pc.cast(s[VALUE_PREFIX + by], pa.int64()), 0)})
    else:
        p.weights(by)   # the usage error that names the choices, for an unknown name
        sub = s.filter(pc.equal(s["event"], by))
        t = pa.table({"comm": sub["comm"], "stack_id": sub["stack_id"],
                      "w": pc.fill_null(pc.cast(sub["period"], pa.int64()), 0)})
    keys = ["comm", "stack_id"] if comm else ["stack_id"]
    g = t.group_by(keys, use_threads=False).aggregate([("w", "sum")])
    comms = g["comm"].to_pylist() if comm else [None] * g.num_rows
    return [(c, sid, w) for c, sid, w in zip(comms, g["stack_id"].to_pylist(),
                                             g["w_sum"].to_pylist()) if w > 0]


def _paths(p: Profile, by: str, comm: bool):
    """(root-first [(name, kind)], weight) per distinct stack and thread name."""
    labels = frame_labels(p)
    kern = dict(zip(p.frames["frame_id"].to_pylist(), p.frames["kernel"].to_pylist()))
    stacks = dict(zip(p.stacks["stack_id"].to_pylist(), p.stacks["frame_ids"].to_pylist()))
    for c, sid, w in _stack_weights(p, by, comm):
        path = [(labels[f], KERNEL if kern.get(f) else USER) for f in reversed(stacks.get(sid) or [])]
        if comm:
            path.insert(0, (c or "?", ROOT_KIND))
        yield path, w


class _Node:
    __slots__ = ("name", "kind", "v", "kids")

    def __init__(self, name: str, kind: int, sides: int):
        self.name, self.kind, self.v, self.kids = name, kind, [0] * sides, {}


def _grow(root: _Node, paths, side: int) -> None:
    for path, w in paths:
        n = root
        n.v[side] += w
        for name, kind in path:
            k = (name, kind)
            c = n.kids.get(k)
            if c is None:
                c = n.kids[k] = _Node(name, kind, len(root.v))
            c.v[side] += w
            n = c


def _encode(root: _Node, totals: list[int], min_share: float):
    """Nested lists for the page (children by name, as flame graphs sort them), names in a
    table; frames under min_share of their side's total on every side are left out.
    Returns (tree, names, weight left out per side)."""
    names: list[str] = []
    index: dict[str, int] = {}
    dropped = [0] * len(totals)

    def name_id(s: str) -> int:
        i = index.get(s)
        if i is None:
            i = index[s] = len(names)
            names.append(s)
        return i

    def small(n: _Node) -> bool:
        return all((t == 0 or v / t < min_share) for v, t in zip(n.v, totals))

    def enc(n: _Node):
        kids = []
        for c in sorted(n.kids.values(), key=lambda c: (c.name, c.kind)):
            if small(c):
                for i, v in enumerate(c.v):
                    dropped[i] += v
                continue
            kids.append(enc(c))
        return [name_id(n.name), n.kind, *n.v, kids]

    return enc(root), names, dropped


def _unit(by: str) -> str:
    return "samples" if by == "samples" else by


def from_paths(paths, unit: str = "samples", title: str = "flame graph",
               min_share: float = MIN_SHARE) -> dict:
    """Graph data from (root-first path, weight) pairs; a path element is a name or a
    (name, kind) pair with kind ROOT_KIND (thread names), USER or KERNEL. For pages that
    have stacks of their own (compare's report)."""
    root = _Node("all", ROOT_KIND, 1)
    _grow(root, (([(e, USER) if isinstance(e, str) else e for e in path], w)
                 for path, w in paths), 0)
    total = root.v[0]
    tree, names, dropped = _encode(root, [total], min_share)
    data = {"names": names, "tree": tree, "total": total, "unit": unit, "title": title}
    if dropped[0]:
        data["note"] = (f"{dropped[0]:,} {unit} ({100 * dropped[0] / total:.3f}%) are in "
                        f"frames narrower than {100 * min_share:g}% of the total and not drawn")
    return data


def diff_from_paths(paths_a, paths_b, labels: tuple[str, str] = ("A", "B"),
                    unit: str = "samples", title: str = "differential flame graph",
                    min_share: float = MIN_SHARE) -> dict:
    """Differential graph data: each frame's weight in A and in B, compared as shares of
    each side's total (so recordings of different lengths compare)."""
    root = _Node("all", ROOT_KIND, 2)
    for side, paths in enumerate((paths_a, paths_b)):
        _grow(root, (([(e, USER) if isinstance(e, str) else e for e in path], w)
                     for path, w in paths), side)
    tree, names, dropped = _encode(root, list(root.v), min_share)
    data = {"names": names, "tree": tree, "total": list(root.v), "unit": unit, "diff": True,
            "labels": list(labels), "title": title}
    if any(dropped):
        data["note"] = (f"not drawn (frames narrower than {100 * min_share:g}% of the total in "
                        f"both): {labels[0]} {dropped[0]:,}, {labels[1]} {dropped[1]:,} {unit}")
    return data


def tree_data(p: Profile, by: str = "samples", comm: bool = True, title: str | None = None,
              min_share: float = MIN_SHARE) -> dict:
    """The data of one profile's flame graph."""
    return from_paths(_paths(p, by, comm), _unit(by),
                      title or f"{p.meta['source']['path']} ({_unit(by)})", min_share)


def diff_data(a: Profile, b: Profile, by: str = "samples", comm: bool = True,
              labels: tuple[str, str] = ("A", "B"), title: str | None = None,
              min_share: float = MIN_SHARE) -> dict:
    """The data of a differential flame graph of two profiles."""
    return diff_from_paths(_paths(a, by, comm), _paths(b, by, comm), labels, _unit(by),
                           title or f"{labels[0]}: {a.meta['source']['path']} vs "
                                    f"{labels[1]}: {b.meta['source']['path']} ({_unit(by)})",
                           min_share)


def _json(data: dict) -> str:
    # inside <script>: no "</" may end the element early
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False) \
        .replace("</", "<\\/").replace("<!--", "<\\!--")


def assets() -> str:
    """The style and script every page with flame graphs needs once."""
    return f"<style>{CSS}</style>\n<script>{_js()}</script>\n"


def fragment(data: dict, element_id: str, lazy: bool = False) -> str:
    """One graph to place in a page that includes assets() (before or after it). lazy: the
    page draws it itself with hpmFlameInit(box) once the box is shown (a graph in a hidden
    panel: drawn hidden, it would not know its width, and many graphs cost time)."""
    eid = escape(element_id, quote=True)
    return (f'<div class="hpm-flame" id="{eid}" data-src="{eid}-data"'
            f'{" data-lazy" if lazy else ""}></div>\n'
            f'<script type="application/json" id="{eid}-data">{_json(data)}</script>\n')


def page(data: dict, title: str | None = None) -> str:
    """A whole self-contained HTML document with one flame graph."""
    t = escape(title or data.get("title") or "flame graph")
    how = ("Click a frame to zoom, search to highlight; red: a larger share of samples in "
           f"{escape(data['labels'][1])} than in {escape(data['labels'][0])}, blue: smaller."
           if data.get("diff") else
           "Click a frame to zoom, search to highlight; kernel and user frames in their own colours.")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{t}</title>\n"
            "<style>body{font:13px Verdana,sans-serif;margin:12px 16px}h1{font-size:16px}</style>\n"
            f"{assets()}</head><body>\n<h1>{t}</h1>\n<p>{how}</p>\n"
            f"{fragment(data, 'flame')}</body></html>\n")


def flame_page(p: Profile, by: str = "samples", comm: bool = True,
               title: str | None = None) -> str:
    return page(tree_data(p, by, comm, title))


def diff_page(a: Profile, b: Profile, by: str = "samples", comm: bool = True,
              labels: tuple[str, str] = ("A", "B"), title: str | None = None) -> str:
    return page(diff_data(a, b, by, comm, labels, title))
