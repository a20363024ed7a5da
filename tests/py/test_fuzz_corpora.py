"""The kept fuzzing corpora (tests/data/fuzz/<target>/, minimised; docs/fuzzing.md) replayed on
every run, fast: each input must be read or refused with one line, never crash.

C targets run through their harness built with gcc's ASan + UBSan (make fuzz-replay: no clang
needed), over the corpus and a few thousand seeded mutations of it. Python targets run in
this process through tests/fuzz/targets.py, which allows an HpmkitError with a one-line
message and nothing else. Inputs that once crashed are in the corpora under the name
`regress-<what>`, so every fix stays fixed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "tests" / "data" / "fuzz"
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import targets  # noqa: E402

C_TARGETS = ["perfdata_scan", "evtab", "cfi"]


def corpus(target: str) -> list[Path]:
    d = CORPORA / target
    files = sorted(p for p in d.iterdir() if p.is_file()) if d.is_dir() else []
    if not files:
        pytest.fail(f"{d} is empty: the kept corpus is missing (tests/fuzz/run.sh --merge {target})")
    return files


@pytest.fixture(scope="module")
def replay_bins():
    r = subprocess.run(["make", "-s", "fuzz-replay"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return ROOT / "build" / "fuzz"


@pytest.mark.parametrize("target", C_TARGETS)
def test_c_corpus_and_mutations(replay_bins, target):
    corpus(target)
    r = subprocess.run([str(replay_bins / f"{target}_replay"), str(CORPORA / target), "-n", "3000", "-s", "7"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "no finding" in r.stdout, (r.stdout + r.stderr)[-4000:]


@pytest.mark.parametrize("target", sorted(targets.TARGETS))
def test_python_corpus(target):
    bad = []
    for f in corpus(target):
        why = targets.check(target, f.read_bytes())
        if why:
            bad.append(f"{f.name}: {why}")
    assert not bad, "\n".join(bad[:3])


# Findings in code this work could not change (docs/fuzzing.md, "Open findings"): replayed as
# expected failures, strict, so the fix that makes one pass also moves it into the corpus.
OPEN = sorted((CORPORA / "open").glob("*/*")) if (CORPORA / "open").is_dir() else []


@pytest.mark.parametrize("path", OPEN, ids=[f"{p.parent.name}/{p.name}" for p in OPEN])
@pytest.mark.xfail(strict=True, reason="open fuzz finding (docs/fuzzing.md): fix it, then move the input "
                   "into tests/data/fuzz/<target>/")
def test_open_findings(path):
    assert targets.check(path.parent.name, path.read_bytes()) is None


def test_regressions_are_kept():
    """Each finding fixed in the campaign has its input in a corpus (docs/fuzzing.md lists them)."""
    kept = {p.name for d in CORPORA.iterdir() if d.is_dir() and d.name != "open" for p in d.iterdir()}
    assert any(n.startswith("regress-") for n in kept), sorted(kept)[:10]
