"""Self-contained HTML report: no network, everything inline (CSS, SVG, JS).

The ranking table, the stack panels and the truth table are rendered by the page's script from
the embedded summary JSON (so a headless browser check proves the script ran); the scatter
plots are SVG drawn here. The differential flame graphs are profile export's interactive ones
(profile/flamehtml.py and its flamegraph.js, inlined once): one per workload, its data embedded
as JSON and drawn in the browser when the selector shows that workload.
"""
from __future__ import annotations

import html
import json
import math

import numpy as np

from .analyse import Result, flat as analyse_flat
from .contexts import KERNEL

CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px}h2{font-size:15px;margin-top:24px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.sel{background:#fff3c4}#ranking tbody tr{cursor:pointer}
.warn{color:#a40}.stacks{display:flex;gap:16px}.stacks>div{flex:1;min-width:0}
.stack{font:12px monospace;white-space:pre;background:#f7f7f7;padding:6px;overflow:auto;margin:4px 0}
.deeper{color:#b00}.muted{color:#777}svg text{font:10px sans-serif;pointer-events:none}
.tabs button{margin-right:4px}
"""

JS = r"""
(function(){
  const S = JSON.parse(document.getElementById('summary').textContent);
  const fmt = (x, d) => (x === null || x === undefined) ? '-' : Number(x).toFixed(d === undefined ? 2 : d);
  const esc = s => String(s).replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
  const body = document.querySelector('#ranking tbody');
  const hits = S.truth ? S.truth.row_hits : null;
  const hasExact = !!(S.exact && S.exact.with_exact);
  S.ranking.forEach((r, i) => {
    const tr = document.createElement('tr');
    tr.dataset.i = i;
    const cells = [r.rank, Number(r.score).toPrecision(4), esc(r.function), esc(r.workload),
      r.kind + ' ' + r.depth, esc(r.partial_stack.join(' \u203a ')), r.anomalous.join(', ')]
      .concat(S.metrics.map(m => { const ci = (r.ci_fcr || r.ci95)[m];
        return (r.quoted === false ? '<span title="thin: the interval is too wide to quote the ratio">\u2265 ' + fmt(ci[0]) + '</span>' : fmt(r.ratio[m]))
        + ' <span class=muted>[' + fmt(ci[0]) + '\u2013' + fmt(ci[1]) + ']</span>'; }))
      .concat([fmt(r.samples[0], 0) + ' / ' + fmt(r.samples[1], 0)]);
    if (hasExact) cells.push(r.exact && r.exact.ratio ? '<span title="' + esc(r.exact.note) + '">' + fmt(r.exact.ratio) + '</span>'
                                     : '<span class=muted title="' + esc((r.exact || {}).note || '') + '">n/a</span>');
    const top = r.a_top_leaf;
    cells.push(top && top.function !== r.function ? esc(top.function) + ' ' + Math.round(100 * top.share) + ' %' : '');
    if (hits) cells.push(hits[i].length ? 'yes' : '');
    tr.innerHTML = cells.map((c, j) => '<td' + (j < 2 || j > 6 ? ' class=n' : '') + '>' + c + '</td>').join('');
    tr.addEventListener('click', () => show(i));
    body.appendChild(tr);
  });
  document.getElementById('rank-count').textContent = String(S.ranking.length);
  function stackHtml(list, anchorLen) {
    if (!list.length) return '<div class=muted>(none)</div>';
    return list.map(s => '<div class=stack>' + s.path.map((f, k) =>
      '  '.repeat(k) + (k >= anchorLen ? '<span class=deeper>' + esc(f) + '</span>' : esc(f))).join('\n') +
      '\n<span class=muted>' + fmt(s.samples, 0) + ' samples</span></div>').join('');
  }
  function show(i) {
    const r = S.ranking[i];
    document.querySelectorAll('#ranking tbody tr').forEach(t => t.classList.toggle('sel', Number(t.dataset.i) === i));
    const n = r.kind === 'top-name' ? 0 : r.anchor.length;
    document.getElementById('detail-title').textContent = '#' + r.rank + ' ' + r.function + ' (' + r.workload + ', ' + r.kind + ' match, depth ' + r.depth + ')';
    document.getElementById('stack-a').innerHTML = stackHtml(r.stacks_a, n);
    document.getElementById('stack-b').innerHTML = stackHtml(r.stacks_b, n);
    document.getElementById('detail-votes').textContent = S.metrics.map(m =>
      m + ': ratio ' + fmt(r.ratio[m]) + ', flagged by ' + (r.votes[m].join(', ') || 'none') + ', score ' + Number(r.score_parts[m]).toPrecision(3)).join('   |   ');
  }
  if (S.ranking.length) show(0);
  // one workload's flame graph at a time; each is drawn the first time it is shown
  const sel = document.getElementById('flame-select');
  if (sel) {
    const pick = () => document.querySelectorAll('div.flame').forEach(f => {
      const on = f.dataset.w === sel.value;
      f.style.display = on ? '' : 'none';
      const box = on && f.querySelector('.hpm-flame');
      if (!box) return;
      if (box.hpmFlame) box.hpmFlame.redraw(); else window.hpmFlameInit(box);
    });
    sel.addEventListener('change', pick); pick();
  }
})();
"""


def _e(s) -> str:
    return html.escape(str(s), quote=True)


# frames narrower than this share of both sides' run are left out of the page (0.01%: about
# a tenth of a pixel across the whole graph; the note under each graph says how much)
FLAME_MIN_SHARE = 1e-4


def flame_data(res: Result, wl: str, metric_i: int, min_share: float = FLAME_MIN_SHARE) -> dict:
    """Differential flame-graph data of one workload (flamehtml's format): every context of
    both sides, kernel paths (entry frames dropped, names normalised, as matched) under a
    "kernel" frame and user-only stacks under "user", weighted by the metric. B is the
    baseline and A the profile compared with it, so a frame is red where A spends a larger
    share of its run there than B, blue where smaller, and the width is A's by default."""
    from ..profile import flamehtml   # pyarrow: only when a report is written

    def paths(side):
        for (space, p), v in side.by_workload.get(wl, {}).items():
            w = int(round(float(v[metric_i])))
            if w <= 0:
                continue
            kind = flamehtml.KERNEL if space == KERNEL else flamehtml.USER
            yield [(space, flamehtml.ROOT_KIND)] + [(f, kind) for f in p], w
    unit = ("samples", "cycles", "instructions")[metric_i]
    la, lb = f"A {res.a.isa or '?'}", f"B {res.b.isa or '?'}"
    return flamehtml.diff_from_paths(paths(res.b), paths(res.a), labels=(lb, la), unit=unit,
                                     title=f"{wl}: {la} vs {lb} ({unit})", min_share=min_share)


def flat_metric(res: Result, metric: str) -> bool:
    """Every context has the same ratio of `metric` (CPI when cycles are counted as
    instructions, as under QEMU -icount): a plot of it would be noise around one value."""
    return analyse_flat([r.ratio.get(metric) for r in res.rows if not r.thin])


def _ticks(lo: float, hi: float, most: int = 7) -> list[int]:
    """Whole-number ticks of a log axis between lo and hi, thinned to at most `most`."""
    first, last = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
    step = max(1, math.ceil((last - first + 1) / most))
    first = -(-first // step) * step    # multiples of the step: x1 (2^0) is always a tick
    return list(range(first, last + 1, step))


def _ratio_label(k: int) -> str:
    return f"×{2 ** k:g}" if k >= 0 else f"×1/{2 ** -k:g}"


def _share_ticks(lo: float, hi: float) -> list[float]:
    """log10 positions of the share axis: whole decades, and 2x/5x marks when the range holds
    fewer than two decades."""
    ticks = [float(k) for k in _ticks(lo, hi)]
    if len(ticks) < 2:
        ticks = sorted(v for k in range(math.floor(lo), math.ceil(hi) + 1)
                       for v in (k, k + math.log10(2), k + math.log10(5)) if lo - 1e-9 <= v <= hi + 1e-9)
    return ticks


def _share_label(v: float) -> str:
    pct = 100 * 10.0 ** v
    return f"{pct:.3g}%" if pct >= 0.001 else f"{pct:.0e}%"


def scatter_svg(res: Result, metric: str, w: int = 440, h: int = 300, cap: int = 4000) -> str:
    """log2 ratio (y) against the context's share of A's work (x, log10), one dot per non-thin
    matched context; red: anomalous on this metric, orange: flagged but within noise. Both
    axes carry ticks at whole powers (of 10 for the share, of 2 for the ratio), labelled in
    the units a reader thinks in (percent, times); everything drawn stays in the viewBox."""
    live = [r for r in res.rows if not r.thin]
    if not live:
        return ""
    idx = "cycles" if metric == "cpi" else metric
    pts = []
    for r in live:
        share = r.share_a.get(idx)
        rat = r.ratio.get(metric)
        if not (share and share > 0 and rat and rat > 0):
            continue
        state = 2 if metric in r.anomalous else (1 if metric in r.noise else 0)
        pts.append((math.log10(share), math.log2(rat), state, r))
    if not pts:
        return ""
    # the median line of a log axis is the median of the plotted log values, of every point
    med = float(np.median([p[1] for p in pts]))
    if len(pts) > cap:  # keep every marked point and an even thinning of the rest
        marked = [p for p in pts if p[2]]
        rest = [p for p in pts if not p[2]]
        step = max(1, len(rest) // (cap - min(len(marked), cap // 2)))
        pts = rest[::step] + marked
    xs = np.array([p[0] for p in pts])
    ys = np.array([p[1] for p in pts])
    x0, x1 = float(xs.min()), float(xs.max())
    if x1 - x0 < 1:   # at least one decade, so the axis has a tick to read
        mid = (x0 + x1) / 2
        x0, x1 = mid - 0.5, mid + 0.5
    y0, y1 = float(min(ys.min(), -1.0)), float(max(ys.max(), 1.0))   # x1/2 .. x2 at least
    # a little room around the extreme points, so no dot sits on the frame
    dx, dy = (x1 - x0) * 0.03, (y1 - y0) * 0.04
    x0, x1, y0, y1 = x0 - dx, x1 + dx, y0 - dy, y1 + dy
    # plot area inside margins that hold tick labels (left, bottom) and point labels (top, right)
    left, right, top, bottom = 52, 26, 14, 40
    pw, ph = w - left - right, h - top - bottom
    sx = lambda v: left + (v - x0) / (x1 - x0) * pw  # noqa: E731
    sy = lambda v: top + ph - (v - y0) / (y1 - y0) * ph  # noqa: E731
    out = [f'<svg class="scatter" width="{w}" height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg" '
           f'role="img" aria-label="{_e(metric)} ratio scatter">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>']
    for k in _share_ticks(x0, x1):
        x = sx(k)
        out.append(f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{top + ph}" y2="{top + ph + 4}" stroke="#666"/>'
                   f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + ph}" stroke="#eee"/>'
                   f'<text class="tick-label" x="{x:.1f}" y="{top + ph + 14}" text-anchor="middle">{_share_label(k)}</text>')
    for k in _ticks(y0, y1):
        y = sy(k)
        out.append(f'<line class="tick" x1="{left - 4}" x2="{left}" y1="{y:.1f}" y2="{y:.1f}" stroke="#666"/>'
                   f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text class="tick-label" x="{left - 6}" y="{y + 3:.1f}" text-anchor="end">{_ratio_label(k)}</text>')
    out += [f'<line x1="{left}" x2="{left + pw}" y1="{sy(med):.1f}" y2="{sy(med):.1f}" stroke="#888" stroke-dasharray="3,3"/>',
            f'<text x="{left + pw - 2}" y="{max(sy(med) - 3, top + 9):.1f}" text-anchor="end">median ×{2 ** med:.2f}</text>',
            f'<text x="{left + pw / 2:.0f}" y="{h - 6}" text-anchor="middle">share of A\'s {_e(idx)} (log scale)</text>',
            f'<text x="11" y="{top + ph / 2:.0f}" text-anchor="middle" transform="rotate(-90 11 {top + ph / 2:.0f})">'
            f'{_e(metric)} ratio A/B (log scale)</text>']
    colors = ("#9aa", "#f90", "#d11")
    for x, y, st, r in sorted(pts, key=lambda p: p[2]):
        tip = f"{r.function} ({r.workload}) ratio {r.ratio[metric]:.2f}" + (f" rank {r.rank}" if r.rank else "")
        out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{3 if st else 2}" fill="{colors[st]}">'
                   f'<title>{_e(tip)}</title></circle>')
    for x, y, st, r in pts:
        if r.rank and r.rank <= 5 and metric in r.anomalous:
            # beside the dot, on the side with room; never past the edge of the picture
            px, py = sx(x), sy(y)
            lx, anchor = (px + 4, "start") if px < left + pw - 24 else (px - 4, "end")
            ly = min(max(py - 3, top + 9), top + ph - 2)
            out.append(f'<text class="point-label" x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}">#{r.rank}</text>')
    out.append("</svg>")
    return "".join(out)


def render(res: Result, summary: dict) -> str:
    from ..profile import flamehtml
    s = summary
    a, b = s["a"], s["b"]
    metric_i = 1 if "cycles" in res.metrics else 2 if "instructions" in res.metrics else 0
    metric_name = ("samples", "cycles", "instructions")[metric_i]
    H = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
         f"<title>hpmkit compare: {_e(a['isa'])} vs {_e(b['isa'])}</title><style>{CSS}</style>",
         flamehtml.assets() + "</head><body>",
         f"<h1>Where {_e(a['isa'])} does relatively worse than {_e(b['isa'])}</h1>",
         f"<p>A = {_e(a['isa'])} (kernel {_e(a['kernel'] or '?')}, {_e(a['label'])}) &nbsp; B = {_e(b['isa'])} "
         f"(kernel {_e(b['kernel'] or '?')}, {_e(b['label'])})<br>workloads: {_e(', '.join(s['workloads']))}; "
         f"metrics: {_e(', '.join(s['metrics']))}; detectors: {_e(', '.join(s['detectors']))}; "
         f"min samples {s['options']['min_samples']} per side; seed {s['options']['seed']}</p>"]
    for w_ in s["warnings"]:
        H.append(f'<p class="warn">warning: {_e(w_)}</p>')
    heads = "".join(f"<th>{_e(m)} A/B [{'FCR ' if s['options'].get('fcr') else ''}95%]</th>"
                    for m in s["metrics"])
    ex = s.get("exact") or {}
    known = ("<th>exact ins A/B</th>" if ex.get("with_exact") else "") + \
        ("<th title=\"the function most of A's samples of the context are in, when it is not the "
         "context's own\">A mostly in</th>") + ("<th>known</th>" if s.get("truth") else "")
    H.append(f'<h2>Ranking (<span id="rank-count">0</span> shown of {s["ranked"]} anomalous; '
             f'{s["matched_contexts"]} matched contexts, {s["too_thin"]} too thin)</h2>'
             f'<table id="ranking"><thead><tr><th>#</th><th>score</th><th>function</th><th>workload</th>'
             f'<th>match</th><th>partial stack</th><th>anomalous</th>{heads}<th>samples A / B</th>{known}'
             f'</tr></thead><tbody></tbody></table>')
    if ex.get("with_exact"):
        med = ex.get("median_abs_error")
        H.append(f"<p class='muted' id='exact-note'>exact ins A/B: exact instruction counts of the same runs, "
                 f"{ex['with_exact']} of {ex['rows']} ranked contexts ({ex.get('by_path', 0)} by call path)"
                 + (f"; sampled vs exact: median error {100 * med:.0f} %, largest "
                    f"{100 * ex['max_abs_error']:.0f} %; {ex['below_1_2']} with an exact ratio below 1.2"
                    if med is not None else "") + ".</p>")
        if ex.get("bounds") or ex.get("quoted"):
            from .text import _quote_line
            H.append(f"<p class='muted' id='quote-note'>"
                     f"{_e(_quote_line(ex, s['options']['quote_within'], s['options'].get('fcr')))}."
                     "</p>")
    from .samework import lines as same_work_lines
    same = same_work_lines(s)
    if same:
        H.append("<p class='muted' id='same-work'>Same work under another name (data/compare/same-work.tsv; "
                 "the ranking is by name):<br>" + "<br>".join(_e(x.strip()) for x in same) + "</p>")
    H.append('<h2 id="detail-title">Stacks</h2><p id="detail-votes" class="muted"></p><div class="stacks">'
             f'<div><b>A {_e(a["isa"])}</b><div id="stack-a"></div></div>'
             f'<div><b>B {_e(b["isa"])}</b><div id="stack-b"></div></div></div>'
             '<p class="muted">Kernel paths root → leaf after entry frames are dropped and names normalised; '
             'red frames lie deeper than the matched context and were merged into it.</p>')
    H.append(f"<h2>Differential flame graph ({metric_name})</h2>"
             "<p class='muted'>Both sides' stacks of the workload merged, kernel paths as they were matched "
             "(entry frames dropped, names normalised) under <i>kernel</i>, user-only stacks under <i>user</i>. "
             f"Colour: the change of each frame's share of its side's {metric_name} — red where A spends a larger "
             "share of its run than B, blue where smaller, white where equal; the colour selector switches to "
             "kernel (cool) and user (warm) colours. Width: A's share (the width selector: B's, or the mean). "
             "Click a frame to zoom, search to highlight (a regular expression), hover for numbers.</p>")
    # the selector opens on the workload of the first ranked context: the graph a reader wants first
    first = s["ranking"][0]["workload"] if s["ranking"] else None
    H.append('<select id="flame-select">' + "".join(
        f'<option value="{_e(w_)}"{" selected" if w_ == first else ""}>{_e(w_)}</option>' for w_ in res.workloads)
             + "</select><div>" + "".join(
                 f'<div class="flame" data-w="{_e(w_)}">'
                 + flamehtml.fragment(flame_data(res, w_, metric_i), f"flame-{i}", lazy=True) + "</div>"
                 for i, w_ in enumerate(res.workloads)) + "</div>")
    H.append("<h2>Ratio scatter plots</h2><p class='muted'>One dot per matched context with enough samples; "
             "red: anomalous (ranked), orange: flagged by the detectors but within sampling noise.</p><div>")
    for m in res.metrics:
        if flat_metric(res, m):
            # a plot of one constant value would read as a finding; say what it means instead
            H.append(f"<p class='muted' id='flat-{_e(m)}'>No {_e(m)} plot: {_e(m)} ratio is "
                     f"{res.medians.get(m, 1.0):.2f} in every context (within 0.1%)"
                     + (": cycles equal instructions in these recordings (as under QEMU -icount, which "
                        "counts instructions only); CPI differences need hardware counters" if m == "cpi" else "")
                     + ".</p>")
            continue
        H.append(f"<div style='display:inline-block;margin-right:12px'><b>{_e(m)}</b><br>{scatter_svg(res, m)}</div>")
    H.append("</div>")
    H += _one_sided(s)
    H += _by_function(s)
    c = s["coverage"]
    H.append("<h2>Context matching (tables 3 and 4)</h2><table><tr><th>side</th><th>kernel contexts</th><th>with stack</th>"
             "<th>matched</th><th>matched with stack</th>" + "".join(f"<th>{_e(k)}</th>" for k in c["by_kind"]) + "</tr>")
    for i, side in enumerate((a, b)):
        H.append(f"<tr><td>{'AB'[i]} {_e(side['isa'])}</td>" + "".join(
            f"<td class=n>{c[k][i]}</td>" for k in ("contexts", "with_stack", "matched", "matched_with_stack"))
            + "".join(f"<td class=n>{v[i]}</td>" for v in c["by_kind"].values()) + "</tr>")
    H.append("</table><p>depth difference of matched groups: " + _e(", ".join(f"{k}: {v}" for k, v in c["depth"].items()))
             + " (+n: B deeper, −n: A deeper)</p>")
    H.append("<table><tr><th>workload</th><th>kernel % (A, B)</th><th>matched % (A, B)</th><th>coverage % (A, B)</th>"
             "<th>unmatched contexts (A, B)</th></tr>")
    for wl, v in c["workloads"].items():
        um = s["unmatched"].get(wl, [0, 0])
        H.append(f"<tr><td>{_e(wl)}</td>" + "".join(
            f"<td class=n>{_f(v[k][0])}, {_f(v[k][1])}</td>" for k in ("kernel_pct", "matched_pct", "coverage_pct"))
            + f"<td class=n>{um[0]}, {um[1]}</td></tr>")
    H.append("</table>")
    H.append("<h2>Outlier detection (table 5: silhouette, * chosen)</h2><table><tr><th>metric</th><th>detector</th>"
             "<th>contexts</th><th>silhouette by contamination</th></tr>")
    for m, d in s["detection"].items():
        for det, sil in d["silhouette"].items():
            ch = d["contamination"].get(det)
            cells = " ".join(f"{_e(k)}: {_f(v, 3)}{'*' if ch is not None and k == f'{ch:.2f}' else ''}" for k, v in sil.items())
            H.append(f"<tr><td>{_e(m)}</td><td>{_e(det)}</td><td class=n>{d['n']}</td><td>{cells}</td></tr>")
    H.append("</table>")
    t = s.get("truth")
    if t:
        H.append(f"<h2>Against the truth list ({len(t['entries'])} known issues, {len(t['reached'])} reached: in A's "
                 "kernel contexts or hit)</h2><p>A hit needs the labelled function (or another name of its code) among the "
                 "ranked context's own frames, in any workload.</p><table><tr><th>k</th><th>ranked</th>"
                 "<th>hits</th><th>precision@k</th><th>recall@k</th><th>recall@k of reached</th></tr>")
        for x in t["at_k"]:
            H.append(f"<tr><td class=n>{x['k']}</td><td class=n>{x['ranked']}</td><td class=n>{x['hits']}</td>"
                     f"<td class=n>{_f(x['precision'], 2)}</td><td class=n>{_f(x['recall'], 2)}</td>"
                     f"<td class=n>{_f(x.get('recall_reached'), 2)}</td></tr>")
        H.append("</table><table><tr><th>function</th><th>expected in</th><th>reached</th><th>found</th><th>reason</th>"
                 "<th>evidence</th></tr>")
        for i, e in enumerate(t["entries"]):
            H.append(f"<tr><td>{_e(e['function'])}</td><td>{_e(e['workload'] or '*')}</td>"
                     f"<td>{'yes' if i in t['reached'] else 'no'}</td>"
                     f"<td>{_found_by(t, i)}</td><td>{_e(e['reason'])}</td><td>{_e(e['evidence'])}</td></tr>")
        H.append("</table>")
    data = json.dumps(s, separators=(",", ":")).replace("</", "<\\/")
    H.append(f'<script type="application/json" id="summary">{data}</script><script>{JS}</script></body></html>')
    return "\n".join(H)


def _f(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def _one_sided(s: dict) -> list[str]:
    """The functions only A runs in a workload (onesided.py), those of MIN_SHARE or more."""
    from .onesided import MIN_SHARE
    o = s.get("one_sided") or {}
    rows = [r for r in o.get("rows", []) if (r["share"][0] or 0) >= MIN_SHARE]
    if not rows:
        return []
    a, b = s["a"]["isa"] or "A", s["b"]["isa"] or "B"
    ex = any(r.get("exact") for r in rows)
    H = [f"<h2>Work only {_e(a)} does ({len(rows)} functions)</h2><p class='muted'>Kernel functions with "
         f"{o['min_samples']} or more samples on {_e(a)} and fewer on {_e(b)} in a workload, at least "
         f"{100 * MIN_SHARE:.1f} % of it: no ratio ranks them. * = {_e(b)} shows the function in no "
         "workload (inlined there, or not in its kernel).</p><table><tr><th>workload</th><th>function</th>"
         "<th>samples A / B</th><th>% of A</th>" + ("<th>exact % A</th><th>exact % B</th>" if ex else "")
         + "<th>mostly below</th></tr>"]
    pct = lambda x, nd=1: "-" if x is None else f"{100 * x:.{nd}f}"  # noqa: E731
    for r in rows:
        e = r.get("exact") or {}
        H.append(f"<tr><td>{_e(r['workload'])}</td><td>{_e(r['function'])}{'' if r['b_has_it'] else ' *'}</td>"
                 f"<td class=n>{r['samples'][0]:.0f} / {r['samples'][1]:.0f}</td><td class=n>{pct(r['share'][0])}</td>"
                 + (f"<td class=n>{pct(e.get('share_a'))}</td><td class=n>{pct(e.get('share_b'), 2)}</td>" if ex else "")
                 + f"<td>{_e(' > '.join(r['via']))}</td></tr>")
    H.append("</table>")
    return H


def _by_function(s: dict) -> list[str]:
    """The functions A spends a larger share of a workload in (byfunction.py)."""
    o = s.get("by_function") or {}
    rows = o.get("rows") or []
    if not rows:
        return []
    a, b = s["a"]["isa"] or "A", s["b"]["isa"] or "B"
    ex = any(r.get("exact") for r in rows)
    c = o.get("exact_check")
    H = [f"<h2>Functions {_e(a)} spends more of a workload in ({len(rows)} rows)</h2><p class='muted'>"
         f"{_e(o['metric'])} share of the sampled function (its callers aside), {_e(a)}/{_e(b)} at least "
         f"×{o['floor']:g} at the lower end of an interval widened for picking {len(rows)} of "
         f"{o['candidates']} (z {o['z']:.2f}); by the extra share of the workload."
         + (f" Exact counts of the same runs: ×{o['floor']:g} or more for {c['at_least_floor']} of "
            f"{c['with_exact']}, inside the interval for {c['inside_interval']}." if c else "")
         + "</p><table><tr><th>workload</th><th>function</th><th>samples A / B</th><th>% of A</th>"
         "<th>% of B</th><th>ratio [interval]</th>" + ("<th>exact</th>" if ex else "") + "<th>mostly below</th></tr>"]
    for r in rows:
        e = (r.get("exact") or {}).get("ratio")
        H.append(f"<tr><td>{_e(r['workload'])}</td><td>{_e(r['function'])}</td>"
                 f"<td class=n>{r['samples'][0]:.0f} / {r['samples'][1]:.0f}</td>"
                 f"<td class=n>{100 * r['share'][0]:.1f}</td><td class=n>{100 * r['share'][1]:.1f}</td>"
                 f"<td class=n>{r['ratio']:.2f} [{r['ci'][0]:.2f}–{r['ci'][1]:.2f}]</td>"
                 + (f"<td class=n>{'-' if e is None else f'{e:.2f}'}</td>" if ex else "")
                 + f"<td>{_e(' > '.join(r['via']))}</td></tr>")
    H.append("</table>")
    return H


def _found_by(t: dict, i: int) -> str:
    """Where the report shows truth entry i: the ranking, else one of the per-function tables."""
    if i in t["found"]:
        return "ranked"
    by = [name for key, name in (("one_sided", "work only A does"), ("by_function", "functions A spends more in"))
          if i in (t.get(key) or {})]
    return _e("; ".join(by)) if by else "no"
