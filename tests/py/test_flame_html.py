"""`hpmkit profile export --format html` (issue 23 item 4): the interactive flame graph in
headless Chromium. Stacks come from folded text with known weights, so every number the page
shows is checked exactly: widths, the search's matched share, zoom, kernel and user colours,
and the differential page's colours for frames that grew and shrank."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from conftest import ROOT
from test_compare_html import chromium

# appended to a copy of the page: drives it as a user would (search, click, reset) and
# writes what the page shows into the DOM that --dump-dom prints
DRIVE = r"""<script>
window.addEventListener("load", () => {
  const out = {};
  const box = document.querySelector(".hpm-flame");
  const svg = box.querySelector("svg");
  const frames = () => Array.from(svg.querySelectorAll("g.hpm-frame")).map(g => {
    const r = g.querySelector("rect");
    return {name: g.dataset.name, kind: +g.dataset.kind, dim: g.classList.contains("hpm-dim"),
            x: +r.getAttribute("x"), w: +r.getAttribute("width"), fill: r.getAttribute("fill"),
            title: g.querySelector("title").textContent};
  });
  out.width = +svg.getAttribute("width");
  out.start = frames();
  out.zoom0 = svg.dataset.zoom;
  const input = box.querySelector("input.hpm-flame-search");
  input.value = "^spin$";
  input.dispatchEvent(new Event("input"));
  out.matched = svg.dataset.matched;
  out.matchedText = box.querySelector(".hpm-flame-matched").textContent;
  out.searched = frames().filter(f => f.fill === "rgb(230,0,230)").map(f => f.name);
  input.value = "";
  input.dispatchEvent(new Event("input"));
  const target = Array.from(svg.querySelectorAll("g.hpm-frame")).find(g => g.dataset.name === "work");
  target.querySelector("rect").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  out.zoom1 = svg.dataset.zoom;
  out.zoomed = frames();
  box.querySelector("button.hpm-flame-reset").click();
  out.zoom2 = svg.dataset.zoom;
  out.after = frames().length;
  const colour = box.querySelector("select.hpm-flame-colour");   // differential graphs only
  if (colour) {
    colour.value = "kind";
    colour.dispatchEvent(new Event("change"));
    out.kinds = frames();
    out.colour = svg.dataset.colour;
  }
  const pre = document.createElement("pre");
  pre.id = "result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

A = ("app;main;work;spin 60\n"
     "app;main;other;spin 20\n"
     "app;main;read;sys_read_[k];copy_to_user_[k] 20\n")
B = ("app;main;work;spin 20\n"
     "app;main;other;spin 60\n"
     "app;main;read;sys_read_[k];copy_to_user_[k] 20\n")


def hpmkit(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "hpmkit.cli", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def drive(page: Path) -> tuple[dict, list[str]]:
    copy = page.with_name("driven-" + page.name)
    copy.write_text(page.read_text().replace("</body>", DRIVE + "</body>"))
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={page.parent / 'chrome-profile'}", "--enable-logging=stderr",
                        "--v=0", "--window-size=1200,800", "--virtual-time-budget=3000", "--dump-dom",
                        copy.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
    assert m, (console, p.stdout[-2000:])
    return json.loads(unescape(m.group(1))), console


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    d = tmp_path_factory.mktemp("flame")
    (d / "a.folded").write_text(A)
    (d / "b.folded").write_text(B)
    for args in (["a.folded", "--format", "html", "-o", "one.html"],
                 ["a.folded", "--vs", "b.folded", "--format", "html", "-o", "diff.html"]):
        p = hpmkit("profile", "export", *args, cwd=d)
        assert p.returncode == 0, p.stderr
    return d


def by_name(frames, name):
    got = [f for f in frames if f["name"] == name]
    assert len(got) == 1, (name, frames)
    return got[0]


def test_page_is_self_contained(pages):
    for name in ("one.html", "diff.html"):
        text = (pages / name).read_text()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert '<div class="hpm-flame"' in text and "<script>" in text


def test_flame_graph_search_zoom_and_colours(pages):
    g, console = drive(pages / "one.html")
    assert console == [], console
    width = g["width"]
    start = g["start"]
    assert g["zoom0"] == "all"
    # widths are the weights: work 60 of 100, other 20, read 20
    for name, share in (("all", 1.0), ("app", 1.0), ("work", 0.6), ("other", 0.2), ("read", 0.2)):
        assert abs(by_name(start, name)["w"] + 0.5 - share * width) < 0.6, name
    assert "60 samples (60.00% of all, 60.00% of main)" in by_name(start, "work")["title"]
    # kernel frames are drawn in the kernel colours, user frames in the user ones
    kern = by_name(start, "sys_read")
    user = by_name(start, "read")
    assert kern["kind"] == 2 and user["kind"] == 1
    blue = lambda rgb: (lambda r, g_, b: b > r)(*map(int, re.findall(r"\d+", rgb)))
    assert blue(kern["fill"]) and blue(by_name(start, "copy_to_user")["fill"])
    assert not blue(user["fill"]) and not blue(by_name(start, "work")["fill"])
    assert "[kernel]" in kern["title"] and "[user]" in user["title"]
    # search: both spin frames highlighted, 80% of the samples matched
    assert sorted(g["searched"]) == ["spin", "spin"]
    assert g["matched"] == "80.00%" and g["matchedText"] == "matched: 80.00% (80 samples)"
    # click on work: it fills the width, its callers stay below dimmed, others are gone
    assert g["zoom1"] == "work"
    z = g["zoomed"]
    assert abs(by_name(z, "work")["w"] + 0.5 - width) < 0.6 and by_name(z, "work")["x"] == 0
    assert by_name(z, "main")["dim"] and by_name(z, "app")["dim"] and not by_name(z, "work")["dim"]
    assert by_name(z, "spin")["w"] == by_name(z, "work")["w"]
    assert not [f for f in z if f["name"] in ("other", "read", "sys_read")]
    # reset: the whole graph again
    assert g["zoom2"] == "all" and g["after"] == len(start)


def test_differential_colours(pages):
    g, console = drive(pages / "diff.html")
    assert console == [], console
    start = g["start"]
    rgb = lambda f: tuple(map(int, re.findall(r"\d+", f["fill"])))
    work, other, read = by_name(start, "work"), by_name(start, "other"), by_name(start, "read")
    # work: 60% -> 20% (bluer), other: 20% -> 60% (redder), read: 20% -> 20% (white)
    assert rgb(work)[2] > rgb(work)[0] and rgb(other)[0] > rgb(other)[2]
    assert rgb(read) == (245, 245, 245)
    assert "a.folded: 60 samples (60.00%), b.folded: 20 samples (20.00%), change -40.00 points" \
        in work["title"]
    # sized by B by default: other is three times work
    assert abs((other["w"] + 0.5) - 3 * (work["w"] + 0.5)) < 1.5
    assert g["matched"] == "80.00% 80.00%"
    # the colour selector: kernel and user colours instead of the change
    assert g["colour"] == "kind"
    k = rgb(by_name(g["kinds"], "sys_read"))
    u = rgb(by_name(g["kinds"], "read"))
    assert k[2] > k[0] and u[0] > u[2]


def test_lazy_graph_waits_for_the_page(tmp_path):
    """A lazy graph (compare's hidden workloads) is drawn only when the page asks."""
    from hpmkit.profile import flamehtml
    data = flamehtml.from_paths([(["main", ("sys_read", flamehtml.KERNEL)], 3)])
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'>" + flamehtml.assets() + "</head><body>"
            + flamehtml.fragment(data, "now") + flamehtml.fragment(data, "later", lazy=True)
            + flamehtml.fragment(data, "asked", lazy=True)
            + "<script>window.hpmFlameInit(document.getElementById('asked'));</script></body></html>")
    (tmp_path / "lazy.html").write_text(page)
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={tmp_path / 'chrome-profile'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=3000", "--dump-dom", (tmp_path / "lazy.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert [line for line in p.stderr.splitlines() if ":CONSOLE" in line] == []
    drawn = {m.group(1): "<svg" in m.group(2) for m in
             re.finditer(r'<div class="hpm-flame" id="(\w+)"[^>]*>(.*?)</div>\s*<script', p.stdout, re.S)}
    assert drawn == {"now": True, "later": False, "asked": True}, drawn


def test_export_errors(pages):
    p = hpmkit("profile", "export", "a.folded", "--vs", "b.folded", "--format", "svg", cwd=pages)
    assert p.returncode == 2 and "--vs makes a differential flame graph" in p.stderr
    p = hpmkit("profile", "export", "a.folded", "--format", "html", "--by", "cycles", cwd=pages)
    assert p.returncode == 2 and "no event 'cycles'" in p.stderr and len(p.stderr.splitlines()) == 1
    assert not (pages / "cycles.html").exists()


def test_embedding_api():
    """compare's page (or any other) places several graphs with one copy of the script,
    from stacks of its own."""
    from hpmkit.profile import flamehtml
    data = flamehtml.from_paths([(["main", ("sys_read", flamehtml.KERNEL)], 3), (["main"], 1)])
    assert data["total"] == 4
    names = data["names"]
    root = data["tree"]
    assert [names[root[0]], root[1], root[2]] == ["all", 0, 4]
    main = root[3][0]
    assert [names[main[0]], main[1], main[2]] == ["main", flamehtml.USER, 4]
    assert [names[main[3][0][0]], main[3][0][1], main[3][0][2]] == ["sys_read", flamehtml.KERNEL, 3]
    html = flamehtml.assets() + flamehtml.fragment(data, "g1") + flamehtml.fragment(data, "g2")
    assert html.count('class="hpm-flame" id=') == 2 and html.count("function init(box)") == 1
    evil = flamehtml.from_paths([(["</script><script>alert(1)</script>"], 1)])
    assert "</script><script>alert" not in flamehtml.fragment(evil, "g3")
    d = flamehtml.diff_from_paths([(["a"], 1)], [(["b"], 3)], labels=("old", "new"))
    assert d["total"] == [1, 3] and d["diff"] and d["labels"] == ["old", "new"]
