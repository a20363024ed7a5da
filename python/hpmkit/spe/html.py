"""Self-contained HTML pages (inline CSS and SVG plots, no scripts or network) for SPE reports."""
from __future__ import annotations

import html
import math

import numpy as np

CSS = """body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-family:monospace}
th{background:#eee}td.l,th.l{text-align:left}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}
.note{color:#666;font-size:.9em}svg{margin:.5em 0;background:#fafafa}"""


def esc(s) -> str:
    return html.escape(str(s))


def table(headers: list[str], rows: list[list], left: int = 0) -> str:
    """left: how many leading columns are text (left-aligned)."""
    h = "".join(f'<th class="{"l" if i < left else ""}">{esc(x)}</th>' for i, x in enumerate(headers))
    body = []
    for r in rows:
        body.append("<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{esc(x)}</td>'
                                     for i, x in enumerate(r)) + "</tr>")
    return f"<table><tr>{h}</tr>{''.join(body)}</table>"


def bars(labels: list[str], values: list[float], title: str, unit: str = "") -> str:
    """Horizontal bar chart."""
    if not values:
        return ""
    w, bh, lw = 760, 18, 260
    h = bh * len(values) + 30
    top = max(values) or 1
    out = [f'<svg width="{w}" height="{h}" role="img"><title>{esc(title)}</title>']
    for i, (lab, v) in enumerate(zip(labels, values)):
        y = 20 + i * bh
        bw = (w - lw - 90) * v / top
        out.append(f'<text x="{lw - 6}" y="{y + 13}" font-size="11" text-anchor="end">{esc(lab[:40])}</text>')
        out.append(f'<rect x="{lw}" y="{y + 2}" width="{bw:.1f}" height="{bh - 4}" fill="#4a7ab5"/>')
        out.append(f'<text x="{lw + bw + 4:.1f}" y="{y + 13}" font-size="11">{v:,.4g}{esc(unit)}</text>')
    out.append(f'<text x="4" y="13" font-size="12" font-weight="bold">{esc(title)}</text></svg>')
    return "".join(out)


def nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """About n round values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int(math.floor((hi - first) / step + 1e-9)) + 1)]


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1 or v == 0 else f"{v:g}"


def histogram(values: np.ndarray, title: str, bins: int = 40, log: bool = True, weights=None,
              unit: str = "cycles") -> str:
    """Histogram of integer latencies (log-count bars: tails stay visible); `weights` gives a
    count per value when `values` are the distinct values of a distribution. Both axes carry
    ticks with labels (class tick / tick-label), inside the SVG's box."""
    if len(values) == 0:
        return f'<p class="note">{esc(title)}: no values</p>'
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        hi = lo + 1
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi), weights=weights)
    counts = counts.astype(np.int64)
    w, h = 760, 240
    left, right, top_pad, bottom = 64, 24, 30, 44   # room for the count labels and the x labels
    pw, ph = w - left - right, h - top_pad - bottom
    ymax = max(math.log10(c + 1) if log else c for c in counts) or 1
    bw = pw / bins
    x_of = lambda v: left + pw * (v - lo) / (hi - lo)  # noqa: E731
    y_of = lambda c: top_pad + ph - ph * ((math.log10(c + 1) if log else c) / ymax)  # noqa: E731
    out = [f'<svg class="histogram" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img">'
           f'<title>{esc(title)}</title>',
           f'<text x="4" y="14" font-size="12" font-weight="bold">{esc(title)}</text>']
    for i, c in enumerate(counts):
        y = y_of(int(c))
        out.append(f'<rect x="{left + i * bw:.1f}" y="{y:.1f}" width="{max(bw - 1, 1):.1f}" '
                   f'height="{top_pad + ph - y:.1f}" fill="#c0504d"><title>[{edges[i]:.0f}, {edges[i + 1]:.0f}): {c}'
                   '</title></rect>')
    base = top_pad + ph
    out.append(f'<line x1="{left}" x2="{left + pw}" y1="{base}" y2="{base}" stroke="#444"/>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{top_pad}" y2="{base}" stroke="#444"/>')
    for v in nice_ticks(lo, hi):
        x = x_of(v)
        out.append(f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + 4}" stroke="#444"/>')
        out.append(f'<text class="tick-label" x="{x:.1f}" y="{base + 16}" font-size="10" '
                   f'text-anchor="middle">{_num(v)}</text>')
    cmax = int(counts.max())
    if log:  # counts 1, 10, 100...: the bars are log10(count + 1) high
        yt = [0] + [10 ** k for k in range(0, len(str(max(cmax, 1))))]
        yt = [c for c in yt if c <= max(cmax, 1)]
    else:
        yt = [c for c in nice_ticks(0, max(cmax, 1), 5) if c == int(c)]
    for c in yt:
        y = y_of(c)
        out.append(f'<line class="tick" x1="{left - 4}" x2="{left}" y1="{y:.1f}" y2="{y:.1f}" stroke="#444"/>')
        out.append(f'<text class="tick-label" x="{left - 6}" y="{y + 3.5:.1f}" font-size="10" '
                   f'text-anchor="end">{_num(c)}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{h - 6}" font-size="11" text-anchor="middle">'
               f'{esc(unit)}</text>')
    out.append(f'<text x="{left}" y="{top_pad - 6}" font-size="10">count ({"log scale" if log else "linear"})'
               '</text></svg>')
    return "".join(out)


def page(title: str, sections: list[str]) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1>{''.join(sections)}</body></html>\n")


def write(path: str, text: str) -> None:
    """The whole page or nothing (spe/outfiles.py); errors are one-line OutputErrors."""
    from .outfiles import write_text
    write_text(path, text, "give another --html FILE")
