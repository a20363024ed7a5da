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


def test_page_renders_ranking_without_console_errors(page):
    path, s = page
    dom, console = load(path)
    assert console == [], console
    n = len(s["ranking"])
    assert n >= 3
    assert f'<span id="rank-count">{n}</span>' in dom
    rows = re.findall(r'<tr data-i="(\d+)"[^>]*>(.*?)</tr>', dom, re.S)
    assert len(rows) == n
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
    if (svg.classList.contains('flame')) out.shown.push(svg.dataset.w);
  });
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
