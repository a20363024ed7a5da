"""Regenerate hpm's event tables from Linux perf's pmu-events lists.

usage: python3 tools/pmuevents SRC [--data DIR] [--check] [--facts DIR] [-q]

SRC is a Linux source tree, a linux-source-*.tar.* (Debian's linux-source-6.12 package puts
one in /usr/src; only tools/perf/pmu-events/arch/{arm64,riscv} and the top Makefile are
extracted, into .cache/pmu-events/), or the reduced copy in tests/data/pmu-events/.

  --data DIR    the data folder to write (default: this checkout's data/)
  --check       write nothing; exit 1 and name the files that would change
  --facts DIR   also write the reduced copy of SRC (names, codes, formulas) to DIR
  -q            no summary

Every table is computed before any file is written: an error leaves data/ as it was.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import Builder  # noqa: E402
from tree import Tree, TreeError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WANTED = ("tools/perf/pmu-events/arch/arm64", "tools/perf/pmu-events/arch/riscv", "Makefile")


def extract(tarball: Path) -> Path:
    """The pmu-events part of a kernel tarball, extracted once into .cache/pmu-events/."""
    name = tarball.name.split(".tar")[0]
    dest = ROOT / ".cache" / "pmu-events"
    stamp = dest / f".{name}.done"
    top = dest / name
    if stamp.exists() and stamp.read_text() == f"{tarball.stat().st_size}\n":
        return top
    dest.mkdir(parents=True, exist_ok=True)
    members = [f"{name}/{w}" for w in WANTED]
    p = subprocess.run(["tar", "-xf", str(tarball), "-C", str(dest), *members],
                       capture_output=True, text=True)
    if p.returncode:
        msg = (p.stderr.strip().splitlines() or ["tar failed"])[-1]
        raise TreeError(f"{tarball}: cannot extract the pmu-events lists ({msg})")
    stamp.write_text(f"{tarball.stat().st_size}\n")
    return top


def write_all(files: dict[Path, str | None]) -> None:
    """Each file through a temporary file in its folder, renamed over the old one."""
    for path, text in files.items():
        if text is None:
            path.unlink()
            continue
        if path.exists() and path.read_text() == text:
            continue
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 tools/pmuevents", description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--facts", type=Path)
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        src = a.src
        if not src.exists():
            raise TreeError(f"{src}: no such file or folder")
        if src.is_file():
            src = extract(src)
        tree = Tree(src)
        for sub in ("events", "metrics"):
            if not (a.data / sub).is_dir():
                raise TreeError(f"{a.data}: no {sub}/ folder (give --data the folder that holds "
                                "events/ and metrics/)")
        b = Builder(tree, a.data)
        files = b.run()
    except TreeError as e:
        print(f"pmuevents: {e}", file=sys.stderr)
        return 2
    changed = [p for p, t in sorted(files.items(), key=lambda x: str(x[0]))
               if t is None or not p.exists() or p.read_text() != t]
    if a.check:
        for p in changed:
            print(f"pmuevents: {p.relative_to(a.data)} is not what Linux {tree.version} gives "
                  f"({'stale' if files[p] is None else 'missing' if not p.exists() else 'differs'}); run without --check",
                  file=sys.stderr)
        return 1 if changed else 0
    write_all(files)
    if a.facts:
        n = tree.write_facts(a.facts)
        if not a.quiet:
            print(f"reduced copy: {n} JSON files in {a.facts}")
    if not a.quiet:
        for line in b.report.lines:
            print(line)
        print(f"{len(changed)} file(s) changed, from Linux {tree.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
