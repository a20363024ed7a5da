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


def histogram(values: np.ndarray, title: str, bins: int = 40, log: bool = True, weights=None) -> str:
    """Histogram of integer latencies (log-count bars: tails stay visible); `weights` gives a
    count per value when `values` are the distinct values of a distribution."""
    if len(values) == 0:
        return f'<p class="note">{esc(title)}: no values</p>'
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        hi = lo + 1
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi), weights=weights)
    counts = counts.astype(np.int64)
    w, h, pad = 760, 220, 40
    top = max(math.log10(c + 1) if log else c for c in counts) or 1
    bw = (w - 2 * pad) / bins
    out = [f'<svg width="{w}" height="{h}" role="img"><title>{esc(title)}</title>',
           f'<text x="4" y="14" font-size="12" font-weight="bold">{esc(title)}</text>']
    for i, c in enumerate(counts):
        v = math.log10(c + 1) if log else c
        bh = (h - 2 * pad) * v / top
        out.append(f'<rect x="{pad + i * bw:.1f}" y="{h - pad - bh:.1f}" width="{max(bw - 1, 1):.1f}" '
                   f'height="{bh:.1f}" fill="#c0504d"><title>[{edges[i]:.0f}, {edges[i + 1]:.0f}): {c}</title></rect>')
    out.append(f'<text x="{pad}" y="{h - pad + 14}" font-size="11">{lo:.0f}</text>')
    out.append(f'<text x="{w - pad}" y="{h - pad + 14}" font-size="11" text-anchor="end">{hi:.0f} cycles</text>')
    out.append(f'<text x="{pad}" y="{pad - 8}" font-size="10">count ({"log scale" if log else "linear"})</text></svg>')
    return "".join(out)


def page(title: str, sections: list[str]) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1>{''.join(sections)}</body></html>\n")


def write(path: str, text: str) -> None:
    """The whole page or nothing (spe/outfiles.py); errors are one-line OutputErrors."""
    from .outfiles import write_text
    write_text(path, text, "give another --html FILE")
