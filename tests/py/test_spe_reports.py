"""`hpmkit spe` reports as a user meets them (issue 24): the --help example into a folder that
does not exist, `| head` keeping the --html page, --annotate refused before the work, the c2c
page with the terminal's per-line summary and verdict, latency histograms with tick labels
(checked in headless Chromium: labels inside the plot's box, no console message)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hpmkit.spe import synth
from hpmkit.spe.perfwrite import write_perf_data
from test_compare_html import html_unescape, load

HPMKIT = Path(sys.executable).parent / "hpmkit"
LINE_VA = 0xAAAAB2632080


def hpmkit(*args, **kw):
    return subprocess.run([str(HPMKIT), *map(str, args)], capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def spe_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("in") / "in.data"
    write_perf_data(p, [(0, -1, synth.RecordGen(1).stream(4000)), (1, -1, synth.RecordGen(2).stream(3000))])
    return p


def access(pc, va, store, ctx, ds=None, lat=9):
    b = synth.addr(0, pc) + synth.context(ctx) + synth.op(1, 1 if store else 0)
    b += synth.events(0x16, 2) + synth.counter(1, 5) + synth.counter(0, lat)
    b += synth.addr(2, va) + synth.counter(2, 1)
    if ds is not None:
        b += synth.data_source(ds, 1)
    return b + synth.END


@pytest.fixture(scope="module")
def many_pcs(tmp_path_factory):
    """Loads at 4000 code addresses: `hotspots --top 100000` prints more than a pipe holds."""
    p = tmp_path_factory.mktemp("pcs") / "pcs.data"
    write_perf_data(p, [(0, -1, b"".join(access(0x400000 + 4 * i, LINE_VA + 8 * (i % 8), False, 100, ds=0)
                                         for i in range(4000)))])
    return p


@pytest.fixture(scope="module")
def c2c_file(tmp_path_factory):
    """Thread 100 on CPU 0 writes offset 8, thread 200 on CPU 1 reads offset 0x18 through
    peer snoops (false sharing); on a second line both threads use offset 0 (true sharing)."""
    per_cpu: dict[int, list[bytes]] = {0: [], 1: []}
    for _ in range(6):
        per_cpu[0].append(access(0x400100, LINE_VA + 8, True, 100))
        per_cpu[0].append(access(0x400104, LINE_VA + 8, False, 100, ds=0))
        per_cpu[1].append(access(0x400200, LINE_VA + 0x18, False, 200, ds=9, lat=60))
    other = LINE_VA + 0x1000
    for t, cpu in ((300, 0), (400, 1)):
        per_cpu[cpu].append(access(0x400100, other, True, t))
        per_cpu[cpu].append(access(0x400104, other, False, t, ds=9, lat=80))
    p = tmp_path_factory.mktemp("c2c") / "c2c.data"
    write_perf_data(p, [(c, -1, b"".join(v)) for c, v in per_cpu.items()], cpuid="0x00000000410fd0c0")
    return p


def test_decode_help_example_into_a_missing_folder(tmp_path, spe_file):
    r = hpmkit("spe", "decode", spe_file, "-o", "out/run", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run-branch.csv", "run-ldst.csv", "run-other.csv"]
    assert "out/run-ldst.csv:" in r.stdout


@pytest.mark.parametrize("cmd", [["hotspots", "--top", "100000"], ["latency"], ["sources"], ["events", "--top", "100000"],
                                 ["c2c", "--top", "100000"]])
def test_head_closing_stdout_keeps_the_html_page(tmp_path, spe_file, c2c_file, many_pcs, cmd):
    """`hpmkit spe hotspots perf.data --html h.html | head -1`: the page is written, the command
    ends quietly. The reader closes the pipe after one line, before the command has finished."""
    page = tmp_path / "h.html"
    src = {"c2c": c2c_file, "hotspots": many_pcs}.get(cmd[0], spe_file)
    p = subprocess.Popen([str(HPMKIT), "spe", cmd[0], str(src), *cmd[1:], "--html", str(page)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    rc = p.wait(timeout=120)
    assert first.startswith(str(src)), first
    assert rc == 0 and "Traceback" not in err and "Broken pipe" not in err, (rc, err)
    assert page.read_text().endswith("</html>\n")
    assert [q.name for q in tmp_path.iterdir()] == ["h.html"]   # no temporary file left


def test_head_on_a_long_report(tmp_path, many_pcs):
    """The same through a shell pipeline, with a report longer than a pipe's buffer."""
    r = subprocess.run(f'"{HPMKIT}" spe hotspots "{many_pcs}" --top 100000 --html "{tmp_path}/h.html" | head -1',
                       shell=True, capture_output=True, text=True, timeout=120)
    full = hpmkit("spe", "hotspots", many_pcs, "--top", "100000")
    assert len(full.stdout) > 1 << 16, len(full.stdout)   # would fill the pipe before the page
    assert r.stdout.count("\n") == 1 and r.stderr == ""
    assert (tmp_path / "h.html").stat().st_size > 1000


def test_annotate_without_symbols_fails_before_the_work(tmp_path):
    # an input that would fail to decode: the argument error must come first
    junk = tmp_path / "junk.data"
    junk.write_bytes(b"not a perf.data file" * 10)
    r = hpmkit("spe", "hotspots", junk, "--annotate", "--html", tmp_path / "h.html")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "--annotate needs --symbols" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.data"]


def test_annotate_with_a_kallsyms_list_fails_before_the_work(tmp_path, spe_file):
    k = tmp_path / "kallsyms"
    k.write_text("ffff800008010000 T _stext\n")
    r = hpmkit("spe", "hotspots", spe_file, "--symbols", k, "--annotate")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "ELF" in r.stderr and "kallsyms" in r.stderr


def test_c2c_page_has_the_terminal_summary_and_verdict(tmp_path, c2c_file):
    page = tmp_path / "c2c.html"
    r = hpmkit("spe", "c2c", c2c_file, "--html", page)
    assert r.returncode == 0, r.stderr
    verdict = next(line for line in r.stdout.splitlines() if "sharing" in line and ":" in line
                   and not line.lstrip().startswith("#"))
    assert verdict.startswith("false sharing in 1 of 2 contended line(s) (0xaaaab2632080)"), verdict
    # the terminal's summary rows: #, line, peer, rmt, lcl, loads, stores, L1hit, thr, cpu, verdict
    term = [line.split() for line in r.stdout.splitlines() if re.match(r"\s+\d+ 0x0000", line)]
    assert [row[-1] for row in term] == ["yes", "no"]
    dom, console = load(page)
    assert console == [], console
    assert verdict in html_unescape(dom)
    table = dom.split("<h2>cache lines</h2>")[1].split("</table>")[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table)]
    cells = [c for c in cells if c]
    assert [[int(c[0]), int(c[1], 16), *c[2:]] for c in cells] == \
        [[int(t[0]), int(t[1], 16), *t[2:]] for t in term]
    assert "<h2>offsets per line</h2>" in dom and "Pareto" in dom


def test_c2c_page_without_contention_says_so(tmp_path, spe_file):
    page = tmp_path / "c2c.html"
    one = tmp_path / "one.data"
    write_perf_data(one, [(0, -1, b"".join(access(0x400100, LINE_VA + 8 * i, i % 2 == 1, 100, ds=0 if i % 2 == 0
                                                   else None) for i in range(8)))])
    r = hpmkit("spe", "c2c", one, "--html", page)
    assert r.returncode == 0
    assert "no cache line has both peer-snoop loads and stores" in r.stdout
    assert "no cache line has both peer-snoop loads and stores" in page.read_text()


# Appended to a copy of a page: each SVG's texts measured against its box, and its tick lines
# and tick labels counted; the result lands in the DOM that --dump-dom prints.
MEASURE = r"""<script>
(function(){
  const out = {outside: [], plots: []};
  document.querySelectorAll('svg.histogram').forEach(svg => {
    const box = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.outside.push([t.textContent, r.left - box.left, r.top - box.top, r.right - box.left, r.bottom - box.top]);
    });
    out.plots.push([svg.querySelectorAll('line.tick').length,
                    Array.from(svg.querySelectorAll('text.tick-label')).map(t => t.textContent)]);
  });
  const pre = document.createElement('pre');
  pre.id = 'measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def test_latency_histograms_have_tick_labels_inside_the_plot(tmp_path, spe_file):
    page = tmp_path / "lat.html"
    r = hpmkit("spe", "latency", spe_file, "--html", page)
    assert r.returncode == 0, r.stderr
    copy = tmp_path / "measured.html"
    copy.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dom, console = load(copy)
    assert console == [], console
    m = json.loads(html_unescape(re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S).group(1)))
    sources = [line.split(":")[0] for line in r.stdout.splitlines() if re.match(r"^\S.*: \d+ records$", line)]
    assert len(m["plots"]) == len(sources) >= 2, (m, sources)
    assert m["outside"] == [], m["outside"]
    for n_ticks, labels in m["plots"]:
        assert n_ticks == len(labels) >= 5, labels
        nums = [float(t.replace(",", "")) for t in labels]
        assert 0 in nums or 1 in nums          # the count axis starts at the bottom
        assert max(nums) >= 10, labels         # and the latency axis reaches into the data


def test_nice_ticks():
    from hpmkit.spe.html import nice_ticks
    assert nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(3, 4095) == [1000, 2000, 3000, 4000]
    assert nice_ticks(-7, 7, 4) == [-5, 0, 5]
