"""The HTML report in headless Chromium: loads from file:// with no network, no console
messages, and the script renders the ranking from the embedded data."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpmkit.compare import html, summary
from hpmkit.compare.analyse import Options, run
from hpmkit.compare.contexts import contexts
from test_compare_support import tables


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:  # a missing browser is a failure with the fix, never a skip
        pytest.fail("chromium is missing: apt-get install -y chromium (scripts/setup.sh installs it)", pytrace=False)
    return exe


def load(page: Path) -> tuple[str, list[str]]:
    """DOM after the page's scripts ran, and the console lines Chromium logged."""
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={page.parent / 'chrome-profile'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=3000", "--dump-dom", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    return p.stdout, console


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0, "finish_task_switch.isra.0": 1.8})
    res = run(contexts(a), contexts(b), Options())
    s = summary.to_dict(res, 10)
    (d / "report.html").write_text(html.render(res, s))
    return d / "report.html", s


def test_page_is_self_contained(page):
    text = page[0].read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "<svg" in text and 'class="flame"' in text and 'class="scatter"' in text
    # the interactive flame graph: its script once, a lazily drawn graph per workload
    assert text.count("function init(box)") == 1
    assert text.count('class="hpm-flame"') == len(page[1]["workloads"]) == text.count(' data-lazy></div>')


def test_page_renders_ranking_without_console_errors(page):
    path, s = page
    dom, console = load(path)
    assert console == [], console
    n = len(s["ranking"])
    assert n >= 3
    assert f'<span id="rank-count">{n}</span>' in dom
    rows = re.findall(r'<tr data-i="(\d+)"[^>]*>(.*?)</tr>', dom, re.S)
    assert len(rows) == n
    # one cell per heading, "A mostly in" included
    head = re.search(r'<table id="ranking"><thead><tr>(.*?)</tr>', dom, re.S).group(1)
    assert "A mostly in</th>" in head
    assert all(r[1].count("<td") == head.count("<th") for r in rows), head
    assert "raw_copy_to_user" in rows[0][1] and ">1<" in rows[0][1]
    # the first context is selected: both stacks side by side, deeper frames marked
    assert '<h2 id="detail-title">#1 raw_copy_to_user (pipe, exact match, depth 0)</h2>' in dom
    stack_a = re.search(r'<div id="stack-a">(.*?)</div></div>', dom, re.S).group(1)
    assert "sys_read" in stack_a and "raw_copy_to_user" in stack_a


def test_the_check_fails_on_a_broken_page(page, tmp_path):
    # the same check must catch a script error: break the embedded data
    text = page[0].read_text().replace('"ranking":[', '"ranking":[null,', 1)
    bad = tmp_path / "bad.html"
    bad.write_text(text)
    dom, console = load(bad)
    assert any("Uncaught TypeError" in line for line in console), console
    assert '<span id="rank-count">0</span>' in dom


# --- plots as a reader sees them (issue 24) -------------------------------------------------

# Appended to a copy of the page: measures, in Chromium's layout, every text of every visible
# SVG against that SVG's box (transforms included), counts tick labels, and reads the flame
# graph the selector shows; the result lands in the DOM that --dump-dom prints.
GEOMETRY = r"""<script>
(function(){
  const out = {outside: [], ticks: [], shown: [], selected: null};
  document.querySelectorAll('svg').forEach((svg, i) => {
    if (svg.getClientRects().length === 0) return;   // a hidden flame graph
    const box = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.width === 0) return;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.outside.push([svg.getAttribute('class'), t.textContent, Math.round(r.left - box.left), Math.round(r.top - box.top),
                          Math.round(r.right - box.left), Math.round(r.bottom - box.top), box.width, box.height]);
    });
    if (svg.classList.contains('scatter'))
      out.ticks.push([svg.querySelectorAll('line.tick').length, Array.from(svg.querySelectorAll('text.tick-label')).map(t => t.textContent)]);
  });
  document.querySelectorAll('div.flame').forEach(f => { if (f.getClientRects().length) out.shown.push(f.dataset.w); });
  out.drawn = Array.from(document.querySelectorAll('div.flame')).filter(f => f.querySelector('svg')).map(f => f.dataset.w);
  const sel = document.getElementById('flame-select');
  out.selected = sel ? sel.value : null;
  const pre = document.createElement('pre');
  pre.id = 'geometry';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def geometry(page_path: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    import json
    copy = tmp_path / "measured.html"
    copy.write_text(page_path.read_text().replace("</body>", GEOMETRY + "</body>"))
    dom, console = load(copy)
    m = re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S)
    assert m, dom[-2000:]
    return json.loads(html_unescape(m.group(1))), console


def html_unescape(s: str) -> str:
    import html as h
    return h.unescape(s)


def test_plots_keep_labels_in_their_box_and_have_ticks(page, tmp_path):
    path, s = page
    g, console = geometry(path, tmp_path)
    assert console == [], console
    assert g["outside"] == [], g["outside"]          # labels of the top points, axis titles, ticks
    assert len(g["ticks"]) == 3                      # cycles, instructions, cpi
    for n_lines, labels in g["ticks"]:
        assert n_lines == len(labels) >= 4, labels
        assert any(t.endswith("%") for t in labels) and "×1" in labels, labels


def test_flame_graph_opens_on_the_first_contexts_workload(page, tmp_path):
    path, s = page
    first = s["ranking"][0]["workload"]
    assert first != sorted(s["workloads"])[0]        # the old behaviour would show another one
    g, _ = geometry(path, tmp_path)
    assert g["selected"] == first and g["shown"] == [first]
    assert g["drawn"] == [first]                     # the others are drawn when chosen


def test_median_line_is_the_median_of_the_log_values():
    # two contexts at x1 and x4: the median of the logs is x2, the linear median x2.5
    import math as m
    from types import SimpleNamespace as NS
    rows = [NS(thin=False, share_a={"cycles": sh}, ratio={"cycles": r}, anomalous=[], noise=[], rank=None,
               function=f, workload="w") for sh, r, f in ((0.01, 1.0, "f"), (0.1, 4.0, "g"))]
    res = NS(rows=rows, medians={"cycles": 2.5})
    svg = html.scatter_svg(res, "cycles")
    assert "median ×2.00" in svg
    y = [float(v) for v in re.findall(r'<line x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)" y2="[\d.]+" stroke="#888"', svg)]
    cy = sorted(float(v) for v in re.findall(r'cy="([\d.]+)"', svg))
    assert len(y) == 1 and y[0] == pytest.approx((cy[0] + cy[1]) / 2, abs=0.11), (y, cy)
    assert m.isfinite(y[0])


def test_no_cpi_plot_when_cycles_equal_instructions(tmp_path):
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    for t in (a, b):   # the lab under -icount: every cycle count is the instruction count
        t.costs = [(n, c, c) for n, c, _ in t.costs]
    res = run(contexts(a), contexts(b), Options())
    s = summary.to_dict(res, 10)
    page = html.render(res, s)
    assert page.count('class="scatter"') == 2 and 'aria-label="cpi ratio scatter"' not in page
    assert "No cpi plot: cpi ratio is 1.00 in every context" in page
    assert any(w.startswith("cpi: the ratio is 1.00 in every context") for w in res.warnings)
    (tmp_path / "flat.html").write_text(page)
    dom, console = load(tmp_path / "flat.html")
    assert console == [] and 'id="flat-cpi"' in dom


def test_pseudo_frames_are_never_ranked(tmp_path):
    from hpmkit.compare import explain
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    # samples in the entry code itself, many more on A: the strongest anomaly of the run
    a.add("pipe", ["_start", "main", "handle_exception", "ret_from_exception"], 2, samples=4000,
          cycles=4e7, instructions=2.5e7)
    b.add("pipe", ["_start", "main", "el0t_64_sync", "el0t_64_sync_handler"], 2, samples=200,
          cycles=2e6, instructions=1.6e6)
    res = run(contexts(a), contexts(b), Options())
    entry = [r for r in res.rows if r.function == "[kernel-entry]"]
    assert entry and entry[0].score > 0 and entry[0].anomalous        # anomalous, scored...
    assert all(not r.function.startswith("[") for r in res.ranked)     # ...never ranked
    assert res.ranked[0].function == "raw_copy_to_user"
    assert any("pseudo-frame ([kernel-entry]) not ranked" in w for w in res.warnings)
    why = [row for row in explain.rows(res) if "[kernel-entry]" in row]
    assert any("pseudo-frame that names no function" in " ".join(row) for row in why)


def test_truth_table_keeps_two_decimals_like_the_terminal(tmp_path):
    from hpmkit.compare import truth as truthmod
    from hpmkit.compare.names import EntryFrames
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0, "finish_task_switch.isra.0": 1.8})
    (tmp_path / "t.tsv").write_text("function\tworkload\treason\tevidence\n"
                                    "raw_copy_to_user\t*\tx\ty\nmemset\t*\tx\ty\nclear_page\t*\tx\ty\n")
    truth = truthmod.load(tmp_path / "t.tsv")
    ca, cb = contexts(a), contexts(b)
    res = run(ca, cb, Options())
    names = frozenset(EntryFrames.load(ca.isa, ca.kernel).roles)
    ev = truthmod.evaluate(res.ranked, truth, entry_names=names,
                           reached_names=truthmod.reached_names(res.a, names))
    s = summary.to_dict(res, 10, ev, truth)
    page = html.render(res, s)
    from hpmkit.compare import text
    term = text.render(s)
    k5 = s["truth"]["at_k"][0]
    want = f"{k5['recall']:.2f}"
    assert want in term and f"<td class=n>{want}</td>" in page


# --- the interactive differential flame graph on compare's page -------------------------------

# Appended to a copy of the page: uses the shown graph as a reader would (search, click, colour
# selector, another workload) and writes what it shows into the DOM that --dump-dom prints.
DRIVE = r"""<script>
window.addEventListener("load", () => {
  const out = {};
  const shown = () => Array.from(document.querySelectorAll("div.flame")).filter(f => f.getClientRects().length);
  const frames = svg => Array.from(svg.querySelectorAll("g.hpm-frame")).map(g => {
    const r = g.querySelector("rect");
    return {name: g.dataset.name, kind: +g.dataset.kind, x: +r.getAttribute("x"), w: +r.getAttribute("width"),
            fill: r.getAttribute("fill"), title: g.querySelector("title").textContent};
  });
  const outside = svg => {   // labels drawn past the graph's box (transforms included)
    const b = svg.getBoundingClientRect(), bad = [];
    svg.querySelectorAll("text").forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5))
        bad.push(t.textContent);
    });
    return bad;
  };
  out.shown = shown().map(f => f.dataset.w);
  const box = shown()[0].querySelector(".hpm-flame");
  const svg = box.querySelector("svg");
  out.width = +svg.getAttribute("width");
  out.boxWidth = box.clientWidth;
  out.viewBox = svg.getAttribute("viewBox");
  out.colour0 = svg.dataset.colour;
  out.legend0 = box.querySelector(".hpm-flame-legend").textContent;
  out.start = frames(svg);
  out.outside0 = outside(svg);
  const input = box.querySelector("input.hpm-flame-search");
  input.value = SEARCH;
  input.dispatchEvent(new Event("input"));
  out.searched = frames(svg).filter(f => f.fill === "rgb(230,0,230)").map(f => f.name);
  out.matchedText = box.querySelector(".hpm-flame-matched").textContent;
  input.value = "";
  input.dispatchEvent(new Event("input"));
  out.afterSearch = frames(svg).filter(f => f.fill === "rgb(230,0,230)").length;
  const target = Array.from(svg.querySelectorAll("g.hpm-frame")).find(g => g.dataset.name === ZOOM);
  target.querySelector("rect").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  out.zoom = svg.dataset.zoom;
  out.zoomed = frames(svg);
  out.outside1 = outside(svg);
  box.querySelector("button.hpm-flame-reset").click();
  out.zoomReset = svg.dataset.zoom;
  const colour = box.querySelector("select.hpm-flame-colour");
  colour.value = "kind";
  colour.dispatchEvent(new Event("change"));
  out.colour1 = svg.dataset.colour;
  out.legend1 = box.querySelector(".hpm-flame-legend").textContent;
  out.kinds = frames(svg);
  const sel = document.getElementById("flame-select");
  sel.value = OTHER;
  sel.dispatchEvent(new Event("change"));
  out.shown2 = shown().map(f => f.dataset.w);
  const svg2 = shown()[0].querySelector("svg");
  out.width2 = svg2 ? +svg2.getAttribute("width") : null;
  out.frames2 = svg2 ? svg2.querySelectorAll("g.hpm-frame").length : 0;
  out.outside2 = svg2 ? outside(svg2) : null;
  const pre = document.createElement("pre");
  pre.id = "result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def drive(page_path: Path, tmp_path: Path, search: str, zoom: str, other: str) -> tuple[dict, list[str]]:
    import json
    script = (DRIVE.replace("SEARCH", json.dumps(search)).replace("ZOOM", json.dumps(zoom))
              .replace("OTHER", json.dumps(other)))
    copy = tmp_path / "driven.html"
    copy.write_text(page_path.read_text().replace("</body>", script + "</body>"))
    dom, console = load(copy)
    m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert m, (console, dom[-2000:])
    return json.loads(html_unescape(m.group(1))), console


def rgb(f: dict) -> tuple[int, ...]:
    return tuple(map(int, re.findall(r"\d+", f["fill"])))


def named(frames: list[dict], name: str) -> dict:
    got = [f for f in frames if f["name"] == name]
    assert len(got) == 1, (name, [f["name"] for f in frames])
    return got[0]


def test_flame_graph_is_interactive_and_differential(page, tmp_path):
    path, s = page
    first = s["ranking"][0]["workload"]
    other = next(w for w in s["workloads"] if w != first)
    g, console = drive(path, tmp_path, "copy_to_user", "raw_copy_to_user", other)
    assert console == [], console
    assert g["shown"] == [first] and abs(g["width"] - g["boxWidth"]) < 1
    assert g["viewBox"] == f"0 0 {g['width']} " + g["viewBox"].split()[-1]
    assert g["outside0"] == [] and g["outside1"] == [], (g["outside0"], g["outside1"])
    start = g["start"]
    # kernel paths under "kernel", user-only stacks under "user", both sides merged
    assert named(start, "kernel")["kind"] == 0 and named(start, "user")["kind"] == 0
    assert {f["kind"] for f in start} == {0, 1, 2}
    # differential colours by default: A (riscv64) spends 3x on raw_copy_to_user -> red, and
    # so every other frame a smaller share of A's run -> blue
    assert g["colour0"] == "change" and "more in A riscv64" in g["legend0"]
    hot = named(start, "raw_copy_to_user")
    assert rgb(hot)[0] == 245 and rgb(hot)[2] < 150, hot
    assert "A riscv64:" in hot["title"] and "B aarch64:" in hot["title"] and "change +" in hot["title"]
    assert any(f["kind"] == 2 and rgb(f)[2] == 245 and rgb(f)[0] < 200 for f in start)
    # width: A's share; the hot frame is wider than B's share of it would make it
    a_share = float(re.search(r"A riscv64: [\d,]+ \w+ \(([\d.]+)%\)", hot["title"]).group(1))
    assert abs((hot["w"] + 0.5) / g["width"] - a_share / 100) < 0.01
    # search: the matching frames turn magenta, the bar says how much they cover on each side
    assert g["searched"] and all("copy_to_user" in n for n in g["searched"])
    assert "raw_copy_to_user" in g["searched"] and g["afterSearch"] == 0
    assert re.fullmatch(r"matched: B aarch64 [\d.]+%, A riscv64 [\d.]+%", g["matchedText"]), g["matchedText"]
    # a click zooms: the frame fills the width
    assert g["zoom"] == "raw_copy_to_user" and g["zoomReset"] == "all"
    z = named(g["zoomed"], "raw_copy_to_user")
    assert z["x"] == 0 and abs(z["w"] + 0.5 - g["width"]) < 0.6
    # the colour selector: kernel frames cool, user frames warm
    assert g["colour1"] == "kind" and "user" in g["legend1"] and "kernel" in g["legend1"]
    kern = [rgb(f) for f in g["kinds"] if f["kind"] == 2]
    user = [rgb(f) for f in g["kinds"] if f["kind"] == 1]
    assert kern and user
    assert all(c[2] > c[0] for c in kern) and all(c[0] > c[2] for c in user)
    # another workload: shown alone, drawn when chosen, to the width of the page
    assert g["shown2"] == [other] and g["frames2"] > 3 and abs(g["width2"] - g["width"]) < 1
    assert g["outside2"] == []


def test_flame_data_of_a_workload():
    """The data behind one graph: both sides' contexts as shares of their own run."""
    from hpmkit.profile import flamehtml
    a, b = tables(seed=1, slow={"__asm_copy_to_user": 3.0})
    res = run(contexts(a), contexts(b), Options())
    d = html.flame_data(res, "pipe", 1)
    assert d["diff"] and d["labels"] == ["B aarch64", "A riscv64"] and d["unit"] == "cycles"
    # totals: every sample of the workload, user and kernel (B first: the baseline)
    for got, side in zip(d["total"], (res.b, res.a)):   # each context's weight rounded
        assert abs(got - side.totals["pipe"][1]) <= len(side.by_workload["pipe"]) / 2
    names = d["names"]
    kids = {names[k[0]]: k for k in d["tree"][4]}
    assert set(kids) == {"kernel", "user"} and kids["kernel"][1] == flamehtml.ROOT_KIND
    assert kids["user"][4] and all(c[1] == flamehtml.USER for c in kids["user"][4])
    assert kids["kernel"][4] and all(c[1] == flamehtml.KERNEL for c in kids["kernel"][4])
    ka = sum(float(v[1]) for (sp, _), v in res.a.by_workload["pipe"].items() if sp == "kernel")
    assert abs(kids["kernel"][3] - ka) <= len(res.a.by_workload["pipe"])


@pytest.fixture(scope="module")
def lab_page(tmp_path_factory):
    """compare's report of two workloads of the bundled lab suite (real recordings)."""
    import os
    import sys
    d = tmp_path_factory.mktemp("lab-html")
    repo = Path(__file__).resolve().parents[2]
    for arch in ("riscv64", "aarch64"):
        (d / arch).mkdir()
        for wl in ("pipe", "sendfile"):
            shutil.copytree(repo / "examples" / "lab-suite" / arch / f"{wl}.hpmprof", d / arch / f"{wl}.hpmprof")
    env = dict(os.environ, PYTHONPATH=str(repo / "python"))
    p = subprocess.run([sys.executable, "-m", "hpmkit.cli", "compare", d / "riscv64", "--vs", d / "aarch64", "-q",
                        "--html", d / "c.html", "--json", d / "c.json"], cwd=d, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    import json
    return d / "c.html", json.loads((d / "c.json").read_text())


def test_lab_recordings_flame_graph(lab_page, tmp_path):
    path, s = lab_page
    text = path.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    # small enough for a suite of 20 workloads: frames under 0.01% of both runs stay out
    data = re.findall(r'<script type="application/json" id="flame-\d+-data">(.*?)</script>', text, re.S)
    assert len(data) == 2 and all(len(x) < 60_000 for x in data), [len(x) for x in data]
    first = s["ranking"][0]["workload"]
    other = next(w for w in s["workloads"] if w != first)
    g, console = drive(path, tmp_path, "^vfs_", "kernel", other)
    assert console == [], console
    assert g["shown"] == [first] and g["outside0"] == [] and g["outside1"] == [] and g["outside2"] == []
    assert g["searched"] and all(n.startswith("vfs_") for n in g["searched"]) and g["zoom"] == "kernel"
    assert named(g["zoomed"], "kernel")["x"] == 0
    kinds = {f["kind"] for f in g["start"]}
    assert kinds == {0, 1, 2}
    # differential colours: red and blue frames both present
    assert any(rgb(f)[0] == 245 and rgb(f)[2] < 245 for f in g["start"] if f["kind"])
    assert any(rgb(f)[2] == 245 and rgb(f)[0] < 245 for f in g["start"] if f["kind"])
    kern = {rgb(f) for f in g["kinds"] if f["kind"] == 2}
    user = {rgb(f) for f in g["kinds"] if f["kind"] == 1}
    assert kern and user and not kern & user
