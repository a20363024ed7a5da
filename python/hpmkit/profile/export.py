"""Exports of a Profile: folded stacks, a self-contained flame graph SVG, speedscope JSON.
All writers return text; the CLI writes it to a temp file and renames it into place."""
from __future__ import annotations

import hashlib
import json
import os
from html import escape

from .model import Profile


def frame_labels(p: Profile) -> dict[int, str]:
    """frame_id -> display name, stackcollapse-perf style: the symbol, else '[dso file name]',
    else '[unknown]' (the model keeps the address; flame graphs merge such frames per DSO)."""
    out = {}
    for fid, sym, dso in zip(p.frames["frame_id"].to_pylist(), p.frames["symbol"].to_pylist(),
                             p.frames["dso"].to_pylist()):
        out[fid] = sym if sym is not None else \
            f"[{os.path.basename(dso)}]" if dso and dso != "[unknown]" else "[unknown]"
    return out


def _stack_labels(p: Profile) -> dict[int, list[str]]:
    lab = frame_labels(p)
    return {sid: [lab[f] for f in fr] for sid, fr in
            zip(p.stacks["stack_id"].to_pylist(), p.stacks["frame_ids"].to_pylist())}


def _weighted_stacks(p: Profile, by: str, comm: bool) -> list[tuple[list[str], int]]:
    """(root-first names, weight) per distinct (comm, stack), heaviest first."""
    w = p.weights(by) if not comm else None
    syms = _stack_labels(p)
    out: dict[tuple, int] = {}
    if comm:
        import pyarrow as pa
        import pyarrow.compute as pc
        s = p.samples
        if by == "samples":
            wcol = p.sample_counts()    # 1 a row, but a folded line's count
            t = pa.table({"comm": s["comm"], "stack_id": s["stack_id"], "w": wcol})
        elif "value:" + by in s.column_names:
            t = pa.table({"comm": s["comm"], "stack_id": s["stack_id"],
                          "w": pc.cast(s["value:" + by], pa.int64())})
        else:
            p.weights(by)   # raises the usage error for an unknown name
            sub = s.filter(pc.equal(s["event"], by))
            t = pa.table({"comm": sub["comm"], "stack_id": sub["stack_id"],
                          "w": pc.cast(sub["period"], pa.int64())})
        g = t.group_by(["comm", "stack_id"]).aggregate([("w", "sum")])
        for c, sid, v in zip(g["comm"].to_pylist(), g["stack_id"].to_pylist(),
                             g["w_sum"].to_pylist()):
            if v:
                key = (c or "?", *reversed(syms[sid]))
                out[key] = out.get(key, 0) + v
    else:
        for sid, v in zip(w["stack_id"].to_pylist(), w["weight"].to_pylist()):
            if v:
                key = tuple(reversed(syms[sid]))
                out[key] = out.get(key, 0) + v
    return sorted(((list(k), v) for k, v in out.items()), key=lambda kv: (-kv[1], kv[0]))


def folded(p: Profile, by: str = "samples", comm: bool = True) -> str:
    """'comm;root;...;leaf WEIGHT' lines (Brendan Gregg's folded format), sorted by stack."""
    rows = _weighted_stacks(p, by, comm)
    rows.sort(key=lambda kv: kv[0])
    return "".join(f"{';'.join(n.replace(';', ':') for n in names)} {v}\n" for names, v in rows)


class _Node:
    __slots__ = ("name", "value", "children")

    def __init__(self, name: str):
        self.name, self.value, self.children = name, 0, {}


def _tree(rows: list[tuple[list[str], int]]) -> _Node:
    root = _Node("all")
    for names, v in rows:
        root.value += v
        n = root
        for nm in names:
            n = n.children.setdefault(nm, _Node(nm))
            n.value += v
    return root


def _colour(name: str) -> str:
    h = hashlib.md5(name.encode()).digest()
    return f"rgb({205 + h[0] % 50},{60 + h[1] % 130},{h[2] % 55})"


def flamegraph_svg(p: Profile, by: str = "samples", comm: bool = True, title: str | None = None,
                   width: int = 1200, min_px: float = 0.3) -> str:
    """An icicle-free, root-at-bottom flame graph; hover shows name, weight and share.
    Frames narrower than min_px are merged away (their weight stays in the parent). Static,
    as an SVG file is: the interactive one (search, zoom, differential) is flamehtml's."""
    root = _tree(_weighted_stacks(p, by, comm))
    row_h, pad_top, pad_bot = 16, 34, 10
    total = root.value or 1
    xs = (width - 20) / total
    rects: list[tuple[float, int, float, _Node]] = []
    depth_max = 0

    def walk(n: _Node, x: float, d: int) -> None:
        nonlocal depth_max
        depth_max = max(depth_max, d)
        rects.append((x, d, n.value * xs, n))
        cx = x
        for c in sorted(n.children.values(), key=lambda c: c.name):
            if c.value * xs >= min_px:
                walk(c, cx, d + 1)
            cx += c.value * xs

    walk(root, 10.0, 0)
    height = pad_top + pad_bot + (depth_max + 1) * row_h
    unit = "samples" if by == "samples" else by
    t = title or f"{p.meta['source']['path']} ({unit})"
    out = [f'<?xml version="1.0" standalone="no"?>\n'
           f'<svg version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'xmlns="http://www.w3.org/2000/svg" font-family="Verdana,sans-serif" font-size="12">\n'
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f8f8f0"/>\n'
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{escape(t)}</text>\n']
    for x, d, w, n in rects:
        y = height - pad_bot - (d + 1) * row_h
        share = 100.0 * n.value / total
        label = escape(n.name)
        out.append(f'<g><title>{label} ({n.value} {escape(unit)}, {share:.2f}%)</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{max(w - 0.5, 0.1):.2f}" height="{row_h - 1}" '
                   f'fill="{_colour(n.name) if d else "rgb(200,200,200)"}" rx="2"/>')
        chars = int((w - 6) / 7)
        if chars >= 3:
            txt = n.name if len(n.name) <= chars else n.name[:chars - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + row_h - 4}">{escape(txt)}</text>')
        out.append("</g>\n")
    out.append("</svg>\n")
    return "".join(out)


def speedscope(p: Profile, by: str = "samples") -> str:
    """speedscope file format (https://www.speedscope.app/file-format-schema.json): one
    'sampled' profile per event, frames shared; sample stacks are root first."""
    frames_tbl = p.frames
    fid_list = frames_tbl["frame_id"].to_pylist()
    names = dict(zip(fid_list, (s if s is not None else f"0x{a:x}" for s, a in
                                zip(frames_tbl["symbol"].to_pylist(), frames_tbl["addr"].to_pylist()))))
    dsos = dict(zip(fid_list, frames_tbl["dso"].to_pylist()))
    srcl = dict(zip(fid_list, frames_tbl["srcline"].to_pylist()))
    shared, index = [], {}
    for fid in fid_list:
        index[fid] = len(shared)
        fr = {"name": names[fid]}
        if srcl[fid]:
            f, _, ln = srcl[fid].rpartition(":")
            fr["file"] = f
            if ln.isdigit():
                fr["line"] = int(ln)
        elif dsos[fid]:
            fr["file"] = dsos[fid]
        shared.append(fr)
    stack_frames = dict(zip(p.stacks["stack_id"].to_pylist(), p.stacks["frame_ids"].to_pylist()))
    profiles = []
    s = p.samples
    events = [by] if by != "samples" else sorted(set(s["event"].to_pylist()))
    for ev in events:
        import pyarrow.compute as pc
        if by == "samples":
            keep = pc.equal(s["event"], ev)
            sub = s.filter(keep)
            weights = p.sample_counts().filter(keep).to_pylist()
            unit = "none"
        elif "value:" + by in s.column_names:
            sub = s.filter(pc.is_valid(s["value:" + by]))
            weights = sub["value:" + by].to_pylist()
            unit = "none"
        else:
            p.weights(by)
            sub = s.filter(pc.equal(s["event"], ev))
            weights = [w or 0 for w in sub["period"].to_pylist()]
            unit = "nanoseconds" if ev.split(":")[0] in ("cpu-clock", "task-clock") else "none"
        samples = [[index[f] for f in reversed(stack_frames[sid])] for sid in sub["stack_id"].to_pylist()]
        profiles.append({"type": "sampled", "name": f"{ev}" + (" (samples)" if by == "samples" else ""),
                         "unit": unit, "startValue": 0, "endValue": int(sum(weights)),
                         "samples": samples, "weights": weights})
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "shared": {"frames": shared}, "profiles": profiles,
           "name": p.meta["source"]["path"], "activeProfileIndex": 0, "exporter": "hpmkit"}
    return json.dumps(doc, separators=(",", ":"))
