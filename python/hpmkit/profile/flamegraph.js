/* hpmkit's interactive flame graph (python/hpmkit/profile/flamehtml.py writes the data).
 *
 * Every element with class "hpm-flame" and a data-src attribute naming a
 * <script type="application/json"> element becomes a flame graph: root at the bottom,
 * callers below callees, width proportional to weight. Click a frame to zoom to it (its
 * callers stay below, dimmed; click one of them or "Reset zoom" to go back), type in the
 * search box to highlight frames whose name matches (a regular expression, or plain text
 * when it is not one), hover for the numbers. Kernel and user frames have their own
 * colours. A differential graph (two profiles, A and B) colours each frame by how its
 * share of all samples changed from A to B: red where B spends more, blue where less; its
 * "colour" selector switches to the kernel and user colours and back.
 *
 * A box with a data-lazy attribute (a graph in a hidden panel) is left alone until the page
 * calls hpmFlameInit(box) once it is shown; box.hpmFlame.redraw() fits a drawn graph to its
 * box again (after it was hidden).
 *
 * No network, no other script: the page works from a file:// URL. The state a test needs
 * is kept in data- attributes (data-zoom, data-matched, data-rendered on the <svg>).
 */
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const ROW = 17, PAD_TOP = 6, PAD_BOTTOM = 6, MIN_PX = 0.3, CHAR_PX = 7;

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }

  // kind: 0 root or thread name, 1 user frame, 2 kernel frame
  function baseColour(name, kind) {
    const h = hash(name);
    const a = (h & 255) / 255, b = ((h >>> 8) & 255) / 255;
    if (kind === 2) // kernel: cool (teal to blue)
      return "rgb(" + Math.round(60 + 50 * a) + "," + Math.round(150 + 60 * b) + "," + Math.round(200 + 45 * a) + ")";
    if (kind === 1) // user: warm (yellow to red)
      return "rgb(" + Math.round(225 + 30 * a) + "," + Math.round(90 + 120 * b) + "," + Math.round(40 * a) + ")";
    return "rgb(200,200,195)";
  }

  function diffColour(delta, maxAbs) {
    if (!maxAbs || Math.abs(delta) < 1e-12) return "rgb(245,245,245)";
    const t = Math.min(1, Math.abs(delta) / maxAbs);
    const fade = Math.round(245 - 190 * t);
    return delta > 0 ? "rgb(245," + fade + "," + fade + ")" : "rgb(" + fade + "," + fade + ",245)";
  }

  function fmt(v) {
    return Math.round(v).toLocaleString("en-US");
  }

  function pct(v, total) {
    return total ? (100 * v / total).toFixed(2) + "%" : "0.00%";
  }

  // [nameIndex, kind, value, children] or, differential, [nameIndex, kind, a, b, children]
  function decode(data) {
    const names = data.names, diff = !!data.diff;
    function build(arr, parent, depth) {
      const n = {name: names[arr[0]], kind: arr[1], parent: parent, depth: depth, children: []};
      let kids;
      if (diff) { n.a = arr[2]; n.b = arr[3]; kids = arr[4]; }
      else { n.v = arr[2]; kids = arr[3]; }
      if (kids) for (const k of kids) n.children.push(build(k, n, depth + 1));
      return n;
    }
    const root = build(data.tree, null, 0);
    return {root: root};
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function init(box) {
    const src = document.getElementById(box.dataset.src);
    if (!src) throw new Error("flame graph: no data element '" + box.dataset.src + "'");
    const data = JSON.parse(src.textContent);
    const diff = !!data.diff;
    const root = decode(data).root;
    const totA = diff ? data.total[0] : data.total;
    const totB = diff ? data.total[1] : 0;
    const unit = data.unit || "samples";
    const labels = data.labels || ["A", "B"];
    let sizeBy = diff ? "b" : "v";
    let colourBy = diff ? "change" : "kind";
    let zoomed = root;
    let query = null;

    // shares make profiles of different lengths comparable
    function share(n, side) {
      if (!diff) return totA ? n.v / totA : 0;
      const t = side === "a" ? totA : totB;
      return t ? n[side] / t : 0;
    }
    function weight(n) {
      if (!diff) return n.v;
      if (sizeBy === "a") return share(n, "a");
      if (sizeBy === "mean") return (share(n, "a") + share(n, "b")) / 2;
      return share(n, "b");
    }
    let maxAbs = 0;
    if (diff) {
      (function walk(n) {
        const d = share(n, "b") - share(n, "a");
        if (n.parent && Math.abs(d) > maxAbs) maxAbs = Math.abs(d);
        n.children.forEach(walk);
      })(root);
    }

    box.textContent = "";
    const bar = document.createElement("div");
    bar.className = "hpm-flame-bar";
    box.appendChild(bar);
    const search = document.createElement("input");
    search.type = "search";
    search.placeholder = "search (regular expression)";
    search.className = "hpm-flame-search";
    bar.appendChild(search);
    const reset = document.createElement("button");
    reset.type = "button";
    reset.textContent = "Reset zoom";
    reset.className = "hpm-flame-reset";
    bar.appendChild(reset);
    let sizeSel = null;
    if (diff) {
      sizeSel = document.createElement("select");
      sizeSel.className = "hpm-flame-size";
      for (const [v, t] of [["b", "width: " + labels[1]], ["a", "width: " + labels[0]], ["mean", "width: mean of both"]]) {
        const o = document.createElement("option");
        o.value = v;
        o.textContent = t;
        sizeSel.appendChild(o);
      }
      bar.appendChild(sizeSel);
    }
    let colourSel = null;
    if (diff) {
      colourSel = document.createElement("select");
      colourSel.className = "hpm-flame-colour";
      for (const [v, t] of [["change", "colour: change " + labels[0] + " \u2192 " + labels[1]], ["kind", "colour: kernel / user"]]) {
        const o = document.createElement("option");
        o.value = v;
        o.textContent = t;
        colourSel.appendChild(o);
      }
      bar.appendChild(colourSel);
    }
    const matched = document.createElement("span");
    matched.className = "hpm-flame-matched";
    bar.appendChild(matched);
    const legend = document.createElement("span");
    legend.className = "hpm-flame-legend";
    function showLegend() {
      legend.innerHTML = colourBy === "change"
        ? '<i style="background:rgb(245,55,55)"></i>more in ' + esc(labels[1]) + ' <i style="background:rgb(55,55,245)"></i>less in ' + esc(labels[1])
        : '<i style="background:' + baseColour("x", 1) + '"></i>user <i style="background:' + baseColour("x", 2) + '"></i>kernel';
    }
    showLegend();
    bar.appendChild(legend);

    const svg = el("svg", {class: "hpm-flame-svg", "font-family": "Verdana, sans-serif", "font-size": "11"}, null);
    box.appendChild(svg);
    const details = document.createElement("div");
    details.className = "hpm-flame-details";
    details.textContent = " ";
    box.appendChild(details);
    if (data.note) {
      const note = document.createElement("div");
      note.className = "hpm-flame-note";
      note.textContent = data.note;
      box.appendChild(note);
    }

    function esc(s) {
      return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
    }

    function describe(n) {
      const where = n.kind === 2 ? "kernel" : n.kind === 1 ? "user" : "";
      let s = n.name + (where ? " [" + where + "]" : "");
      if (diff) {
        const d = 100 * (share(n, "b") - share(n, "a"));
        s += " — " + labels[0] + ": " + fmt(n.a) + " " + unit + " (" + pct(n.a, totA) + "), " +
          labels[1] + ": " + fmt(n.b) + " " + unit + " (" + pct(n.b, totB) + "), change " +
          (d >= 0 ? "+" : "") + d.toFixed(2) + " points";
      } else {
        s += " — " + fmt(n.v) + " " + unit + " (" + pct(n.v, totA) + " of all";
        if (n.parent && n.parent.v) s += ", " + pct(n.v, n.parent.v) + " of " + n.parent.name;
        s += ")";
      }
      return s;
    }

    function matches(n) {
      return query !== null && query.test(n.name);
    }

    function render() {
      const width = Math.max(200, box.clientWidth || 1200);
      const scale = weight(zoomed) > 0 ? width / weight(zoomed) : 0;
      // lay out first: the graph is as tall as its deepest frame wide enough to draw
      const todo = [];
      for (let a = zoomed.parent; a; a = a.parent) todo.push([a, 0, width, true]);
      let deepest = zoomed.depth;
      (function walk(n, x) {
        const w = weight(n) * scale;
        if (w < MIN_PX) return;
        todo.push([n, x, w, false]);
        if (n.depth > deepest) deepest = n.depth;
        let cx = x;
        for (const c of n.children) {
          walk(c, cx);
          cx += weight(c) * scale;
        }
      })(zoomed, 0);
      const height = PAD_TOP + PAD_BOTTOM + (deepest + 1) * ROW;
      svg.setAttribute("width", width);
      svg.setAttribute("height", height);
      svg.setAttribute("viewBox", "0 0 " + width + " " + height);
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      for (const [n, x, w, dim] of todo) {
        const y = height - PAD_BOTTOM - (n.depth + 1) * ROW;
        const g = el("g", {class: "hpm-frame" + (dim ? " hpm-dim" : ""), "data-name": n.name, "data-kind": n.kind}, svg);
        g.__node = n;
        el("title", {}, g).textContent = describe(n);
        let fill = colourBy === "change" && n.parent ? diffColour(share(n, "b") - share(n, "a"), maxAbs) : baseColour(n.name, n.kind);
        if (matches(n)) fill = "rgb(230,0,230)";
        el("rect", {x: x.toFixed(2), y: y, width: Math.max(0.1, w - 0.5).toFixed(2), height: ROW - 1, rx: 2, fill: fill,
                    "fill-opacity": dim ? 0.45 : 1}, g);
        const chars = Math.floor((w - 6) / CHAR_PX);
        if (chars >= 3) {
          const t = n.name.length <= chars ? n.name : n.name.slice(0, chars - 2) + "..";
          el("text", {x: (x + 3).toFixed(2), y: y + ROW - 5}, g).textContent = t;
        }
      }
      svg.dataset.zoom = zoomed.name;
      svg.dataset.zoomDepth = zoomed.depth;
      svg.dataset.rendered = todo.length;
      svg.dataset.colour = colourBy;
      updateMatched();
    }

    function updateMatched() {
      if (query === null) {
        matched.textContent = "";
        svg.dataset.matched = "";
        return;
      }
      // each sample once: a match inside a matching frame is not added again
      let a = 0, b = 0;
      (function walk(n) {
        if (n.parent && matches(n)) {
          if (diff) { a += n.a; b += n.b; } else a += n.v;
          return;
        }
        n.children.forEach(walk);
      })(root);
      const text = diff
        ? "matched: " + labels[0] + " " + pct(a, totA) + ", " + labels[1] + " " + pct(b, totB)
        : "matched: " + pct(a, totA) + " (" + fmt(a) + " " + unit + ")";
      matched.textContent = text;
      svg.dataset.matched = diff ? pct(a, totA) + " " + pct(b, totB) : pct(a, totA);
    }

    svg.addEventListener("click", ev => {
      const g = ev.target.closest && ev.target.closest("g.hpm-frame");
      if (!g || !g.__node) return;
      zoomed = g.__node;
      render();
    });
    svg.addEventListener("mousemove", ev => {
      const g = ev.target.closest && ev.target.closest("g.hpm-frame");
      details.textContent = g && g.__node ? describe(g.__node) : " ";
    });
    reset.addEventListener("click", () => { zoomed = root; render(); });
    search.addEventListener("input", () => {
      const q = search.value;
      if (!q) query = null;
      else {
        try { query = new RegExp(q, "i"); }
        catch (e) { query = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
      }
      render();
    });
    if (sizeSel) sizeSel.addEventListener("change", () => { sizeBy = sizeSel.value; render(); });
    if (colourSel) colourSel.addEventListener("change", () => { colourBy = colourSel.value; showLegend(); render(); });
    search.addEventListener("keydown", ev => { if (ev.key === "Escape") { search.value = ""; query = null; render(); } });
    let pending = null;
    window.addEventListener("resize", () => {
      if (pending) cancelAnimationFrame(pending);
      pending = requestAnimationFrame(render);
    });
    render();
    box.hpmFlame = {
      zoom: name => {
        let found = null;
        (function walk(n) { if (!found && n.name === name) found = n; n.children.forEach(walk); })(root);
        if (found) { zoomed = found; render(); }
        return !!found;
      },
      search: q => { search.value = q; search.dispatchEvent(new Event("input")); },
      reset: () => { zoomed = root; render(); },
      redraw: () => render(),
    };
  }

  // every graph not drawn yet, except lazy ones; or the one box given (lazy or not)
  function initAll(one) {
    if (one && one.nodeType === 1) {
      if (!one.hpmFlame) init(one);
      return;
    }
    document.querySelectorAll(".hpm-flame[data-src]").forEach(box => {
      if (!box.hpmFlame && !box.hasAttribute("data-lazy")) init(box);
    });
  }
  window.hpmFlameInit = initAll;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
