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
