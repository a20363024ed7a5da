"""Checks of the commands and figures in README.md and docs/ (used by test_docs.py).

A Markdown file marks what is checked with one-line HTML comments, invisible when rendered:

    <!-- check: run [lab] [setup=NAME] [timeout=S] -->
        the next fenced block is a shell script: every line runs (bash -e -o pipefail) in a
        scratch folder that links the repository's top-level folders and .venv, with build/bin
        and .venv/bin first on PATH; it must exit 0.
    <!-- check: output [lab] [tolerance=P%] [cmd="COMMAND"] -->
        the next fenced block is output: each of its lines ("..." skips) must be found, in
        order, in the output of COMMAND, or else of the file's last `run` block.
    <!-- check: [lab] [tolerance=P%] cmd="COMMAND" expect="TEXT" [expect="TEXT"...] -->
        a figure in the prose: each TEXT must be found in a line of COMMAND's output.

Text is compared token by token (whitespace-separated); tokens that are numbers (1,234
5.6% x1.43 0.80) are compared as numbers, within the tolerance (default 0: exact as
printed); a TEXT may be part of a line. `lab` marks what runs in (or was recorded in) the lab
guests: checked with HPMKIT_DOC_LAB=1 (exact for one build of the guest binaries: relinking hpm
moves the guest's memory layout and so the figures a little; refresh them with the build). setup=NAME runs a preparation from SETUPS first (a program ./app, recordings).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = re.compile(r"^<!--\s*check:(.*?)-->\s*$")
FENCE = re.compile(r"^(```|~~~)")
NUMBER = re.compile(r"^[(\[]?[×x]?[-+]?\d[\d,]*(\.\d+)?(%|x|×)?[)\],;:]?$")


@dataclass
class Check:
    file: str
    line: int                       # of the marker
    kind: str                       # run | output | expect
    lab: bool = False
    tolerance: float = 0.0          # relative
    setup: str | None = None
    timeout: int = 300
    cmd: str | None = None
    body: list[str] = field(default_factory=list)   # script lines, or expected lines / texts

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def parse(path: Path) -> list[Check]:
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = str(path.relative_to(ROOT))
    out: list[Check] = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if not m:
            i += 1
            continue
        words = shlex.split(m.group(1))
        c = Check(rel, i + 1, "expect")
        expects = []
        for w in words:
            k, eq, v = w.partition("=")
            if not eq:
                if w in ("run", "output"):
                    c.kind = w
                elif w == "lab":
                    c.lab = True
                else:
                    raise ValueError(f"{rel}:{i + 1}: unknown check word '{w}'")
            elif k == "tolerance":
                c.tolerance = float(v.rstrip("%")) / (100 if v.endswith("%") else 1)
            elif k == "setup":
                c.setup = v
            elif k == "timeout":
                c.timeout = int(v)
            elif k == "cmd":
                c.cmd = v
            elif k == "expect":
                expects.append(v)
            else:
                raise ValueError(f"{rel}:{i + 1}: unknown check key '{k}'")
        if c.kind == "expect":
            if not (c.cmd and expects):
                raise ValueError(f"{rel}:{i + 1}: a figure check needs cmd=... and expect=...")
            c.body = expects
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not FENCE.match(lines[j]):
            raise ValueError(f"{rel}:{i + 1}: 'check: {c.kind}' must be followed by a fenced block")
        k = j + 1
        while k < len(lines) and not FENCE.match(lines[k]):
            k += 1
        c.body = lines[j + 1:k]
        out.append(c)
        i = k + 1
    return out


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


# --- running ---------------------------------------------------------------------------

APP_C = r"""
#include <stdlib.h>
/* a small workload with a call stack to sample: ./app [N] */
__attribute__((noinline)) static unsigned long leaf(unsigned long x) { return x * 2654435761u + 1; }
__attribute__((noinline)) static unsigned long middle(unsigned long n) {
    unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += leaf(i ^ s); return s; }
int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 30000000;
    volatile unsigned long r = middle(n); (void)r; return 0; }
"""

PAPI_APP_C = r"""
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
/* a PAPI program: the page faults of touching 16 MB of fresh memory */
int main(void) {
    int set = PAPI_NULL; long long n = 0;
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_create_eventset(&set) != PAPI_OK
        || PAPI_add_named_event(set, "perf::PAGE-FAULTS") != PAPI_OK || PAPI_start(set) != PAPI_OK)
        return 1;
    volatile char *p = malloc(16 << 20);
    for (long i = 0; i < (16 << 20); i += 4096) p[i] = 1;
    if (PAPI_stop(set, &n) != PAPI_OK) return 1;
    printf("page faults: %lld\n", n); return 0; }
"""

SETUPS = {
    # ./app, a perf.data of it with call stacks, and that recording as perf script text
    "recording": "gcc -O1 -fno-omit-frame-pointer -o app app.c && "
                 "perf record -q -e cpu-clock -g -o perf.data -- ./app 2>/dev/null && "
                 "perf script -i perf.data > out.perf-script.txt 2>/dev/null",
    # the names the docs use for two sides: six workloads of the bundled lab recordings (the
    # whole suite is what examples/lab-suite/ names; six keep the test within CI time)
    "sides": "mkdir rv arm && for w in pipe futex fd-alloc sendfile signals mmap; do "
             "ln -s ../examples/lab-suite/riscv64/$w.hpmprof rv/ && "
             "ln -s ../examples/lab-suite/aarch64/$w.hpmprof arm/; done",
    "app": "gcc -O1 -fno-omit-frame-pointer -o app app.c",
    # app.c as a PAPI program (docs/papi.md builds it against libhpm-papi and Debian's libpapi)
    "papi-app": "cat > app.c <<'EOF'" + PAPI_APP_C + "EOF",
}


def scratch(d: Path) -> Path:
    """A folder where the docs' relative paths (examples/, data/, build/...) resolve and
    whatever the commands write stays out of the checkout."""
    for entry in ROOT.iterdir():
        if (not entry.name.startswith(".") or entry.name == ".venv") and not (d / entry.name).exists():
            (d / entry.name).symlink_to(entry)
    (d / "app.c").write_text(APP_C)
    return d


def shell(script: str, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / 'build' / 'bin'}:{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}"
    env.pop("HPM_PMU", None)
    # standard output is a file, not a pipe, as at a terminal: 'perf record' and 'hpm record'
    # without -o write a pipe-mode stream to a pipe instead of perf.data
    with tempfile.TemporaryFile() as out:
        p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                           stdout=out, stderr=subprocess.PIPE, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        out.seek(0)
        p.stdout = out.read().decode(errors="replace")
    return p


def run_setup(name: str | None, cwd: Path) -> None:
    if name is None:
        return
    if name not in SETUPS:
        raise AssertionError(f"unknown setup '{name}' (known: {', '.join(SETUPS)})")
    if (cwd / f".setup-{name}").exists():   # once per scratch folder
        return
    p = shell(SETUPS[name], cwd, 300)
    assert p.returncode == 0, f"setup {name} failed: {p.stderr[-2000:]}"
    (cwd / f".setup-{name}").touch()


# --- comparing -------------------------------------------------------------------------

def _num(tok: str) -> float | None:
    if not NUMBER.match(tok):
        return None
    t = tok.strip("()[],;:").lstrip("×x").rstrip("%x×").replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def _tok_eq(want: str, got: str, tol: float) -> bool:
    if want == got:
        return True
    a, b = _num(want), _num(got)
    if a is None or b is None:
        return False
    # same kind of figure (percent, times, plain) and within the tolerance
    if want.rstrip(")],;:")[-1:] != got.rstrip(")],;:")[-1:] and not (want[-1:].isdigit() and got[-1:].isdigit()):
        return False
    return abs(a - b) <= tol * max(abs(a), abs(b)) if tol else a == b


def found_in(want: str, line: str, tol: float) -> bool:
    """`want`'s tokens appear consecutively in `line`'s tokens."""
    w, g = want.split(), line.split()
    if not w:
        return True
    return any(all(_tok_eq(x, y, tol) for x, y in zip(w, g[i:i + len(w)])) for i in range(len(g) - len(w) + 1))


def missing_lines(expected: list[str], output: str, tol: float) -> list[str]:
    """Expected lines not found in order in the output ('...' and blank lines skip)."""
    got = output.splitlines()
    pos, missing = 0, []
    for want in expected:
        if not want.strip() or want.strip() == "...":
            continue
        for k in range(pos, len(got)):
            if found_in(want, got[k], tol):
                pos = k + 1
                break
        else:
            missing.append(want)
    return missing
