"""Every CLI subcommand, `hpmkit ...` and `hpm ...`, on broken inputs (issue 18): a file of junk,
an empty file, a missing file, a folder where a file belongs, bad option values. Each must
end with a nonzero exit and exactly one line on stderr, and no Python traceback.

The lists of subcommands are read from the programs themselves (argparse's tree, `hpm
--help`), so a new subcommand without cases here fails test_every_subcommand_has_cases."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import HPM, require

HPMKIT = Path(sys.executable).parent / "hpmkit"
JUNK = bytes(range(256)) * 8 + b"\x00garbage\xff" * 50

# leaf command -> argument lists; {junk} a file of binary junk, {empty} an empty file, {missing}
# a path that does not exist, {dir} a folder, {text} a text file that is no known format,
# {out} a fresh output path, {blocked} a path under a regular file
FILE_CASES = ["{junk}", "{empty}", "{missing}", "{dir}", "{text}"]
HPMKIT_CASES: dict[str, list[list[str]]] = {
    "stat-report": [[f] for f in FILE_CASES] + [["{junk}", "{text}"]],
    "regions": [[f] for f in FILE_CASES],
    **{f"spe {c}": [[f] for f in FILE_CASES] + [["--raw", "{dir}"]]
       for c in ("info", "dump", "hotspots", "latency", "sources", "events", "c2c")},
    "spe decode": [[f, "-o", "{out}"] for f in FILE_CASES] + [["{junk}", "--raw", "-o", "{blocked}"]],
    "spe estimate": [[f] for f in FILE_CASES],
    "spe quality": [["--stat", f] for f in FILE_CASES] + [["--counts", "SAMPLE_POP=x"]],
    "spe interval": [["--period", "lots"], ["--jitter", "2"]],
    "spe synth": [["{blocked}"], ["{out}", "--records", "0"]],
    # outputs under a regular file are refused before a guest boots (no kernel needed)
    "lab run": [["--arch", "nosuch", "--", "true"], ["--arch", "riscv64", "--out", "{blocked}", "--", "true"]],
    "lab record": [["--arch", "nosuch", "-o", "{out}", "--", "true"],
                   ["--arch", "riscv64", "-o", "{blocked}", "--", "true"]],
    "lab suite": [["--arch", "nosuch", "--out", "{out}"],
                  ["--arch", "riscv64", "--out", "{blocked}", "--workload", "path"],
                  ["--arch", "riscv64", "--out", "{out}", "--raw", "{blocked}", "--workload", "path"],
                  ["--suite", "{junk}", "--arch", "riscv64", "--out", "{out}"]],
    "lab prepare": [["--arch", "nosuch"]],
    "compare": [[f, "--vs", f] for f in FILE_CASES] + [["{text}", "--vs", "{text}", "--truth", "{junk}"]],
    "profile import": [[f, "-o", "{out}"] for f in FILE_CASES],
    "profile show": [[f] for f in FILE_CASES],
    "profile export": [[f, "--format", "folded"] for f in FILE_CASES],
    "profile kallsyms": [[f] for f in FILE_CASES],
    "report": [["-i", f] for f in FILE_CASES],
}
HPM_CASES: dict[str, list[list[str]]] = {
    "list": [["--pmu", "nosuch_table"], ["--no-such-option"]],
    "stat": [["-e", "no_such_event", "--", "true"], ["-r", "zero", "--", "true"], ["-o", "{blocked}", "--", "true"]],
    "record": [["-e", "no_such_event", "--", "true"], ["-o", "{blocked}", "--", "true"], ["-m", "3", "--", "true"]],
    "top": [["-b", "-e", "no_such_event"], ["-b", "-d", "soon"]],
    "report": [["-i", f] for f in FILE_CASES],
    "bench": [["run", "-b", "no_such_bench"], ["compare", "{junk}", "{junk}"], ["compare", "{text}", "{empty}"]],
    "papi-avail": [["--no-such-option"]],
}


def hpmkit_leaves() -> list[str]:
    from hpmkit.cli import _parser
    out = []

    def walk(p: argparse.ArgumentParser, path: list[str]) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append(" ".join(path))
            return
        for name, sp in subs[0].choices.items():
            walk(sp, [*path, name])

    walk(_parser([]), [])
    return out


def hpm_commands() -> list[str]:
    text = subprocess.run([str(require(HPM)), "--help"], capture_output=True, text=True).stdout
    block = text.split("commands:")[1].split("\n\n")[0]
    return re.findall(r"^  (\S+)\s", block, re.M)


def test_every_subcommand_has_cases():
    assert set(hpmkit_leaves()) <= set(HPMKIT_CASES), set(hpmkit_leaves()) - set(HPMKIT_CASES)
    assert set(hpm_commands()) <= set(HPM_CASES), set(hpm_commands()) - set(HPM_CASES)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("broken")
    (d / "junk").write_bytes(JUNK)
    (d / "empty").write_bytes(b"")
    (d / "dir").mkdir()
    (d / "text").write_text("this is neither a recording nor a report\nsecond line {\n")
    (d / "regular").write_text("x")
    return d


def fill(args: list[str], d: Path, n: int) -> list[str]:
    subst = {"{junk}": d / "junk", "{empty}": d / "empty", "{missing}": d / "no-such-file", "{dir}": d / "dir",
             "{text}": d / "text", "{out}": d / f"out{n}" / "o", "{blocked}": d / "regular" / "o"}
    return [str(subst.get(a, a)) for a in args]


def one(cmd: list[str]) -> tuple[list[str], int, str]:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    return cmd, p.returncode, p.stderr


def check_all(runs: list[list[str]]) -> None:
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, runs))
    bad = []
    for cmd, rc, err in results:
        why = ("Traceback" in err and "a traceback") or (rc == 0 and "exit 0") or \
              (err.count("\n") != 1 and f"{err.count(chr(10))} lines on stderr")
        if why:
            bad.append(f"{' '.join(cmd[1:])}: {why}: {err[-600:]!r}")
    assert not bad, "\n".join(bad)


def test_hpmkit_subcommands_on_broken_inputs(files):
    runs, n = [], 0
    for leaf in hpmkit_leaves():
        for args in HPMKIT_CASES[leaf]:
            n += 1
            runs.append([str(HPMKIT), *leaf.split(), *fill(args, files, n)])
    check_all(runs)


def test_hpm_subcommands_on_broken_inputs(files):
    runs, n = [], 0
    for c in hpm_commands():
        for args in HPM_CASES[c]:
            n += 1
            runs.append([str(require(HPM)), c, *fill(args, files, n)])
    check_all(runs)
