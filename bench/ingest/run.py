#!/usr/bin/env python3
"""Ingest speed: hpmkit's perf.data reader against `perf script` on the same file.

Records (or reuses) a perf.data with >= 1M samples and call stacks:
    perf record -e cpu-clock:u -c 10000 -g -- calltree N
(cpu-clock every 10 us of user time; the workload from tests/data/profile/calltree.c), then
times, in the same run:
    perf script -i FILE > /dev/null          (the anchor)
    hpmkit.profile.ingest(FILE)               (native scan + symbols + Arrow tables)
and prints the ratio. Usage: .venv/bin/python bench/ingest/run.py [--samples N] [--keep DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000, help="samples to record (>=)")
    ap.add_argument("--keep", metavar="DIR", help="keep/reuse the recording in DIR")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each side (best kept)")
    a = ap.parse_args()
    d = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="hpmkit-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    exe, data = d / "calltree", d / "big.data"
    if not data.exists():
        subprocess.run(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", exe,
                        ROOT / "tests/data/profile/calltree.c"], check=True)
        # measured on the dev VM: N = 275e6 gave 1.93M samples (sampling every 10 us slows
        # the loop ~20x), so ~150 per sample leaves a margin on faster machines
        n = a.samples * 150
        print(f"recording {data} (about {a.samples} samples, ~{a.samples / 50000:.0f} s)...",
              file=sys.stderr)
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock:u", "-c", "10000", "-g",
                        "-m", "8M", "-o", data, "--", exe, str(n)], check=True)
    from hpmkit.profile import ingest

    def t_perf():
        t = time.perf_counter()
        subprocess.run(["perf", "script", "-i", data], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t

    def t_ours():
        t = time.perf_counter()
        p = ingest(data)
        return time.perf_counter() - t, p

    tp = min(t_perf() for _ in range(a.repeat))
    runs = [t_ours() for _ in range(a.repeat)]
    to = min(r[0] for r in runs)
    p = runs[0][1]
    print(f"file: {data} ({os.path.getsize(data) / 1e6:.1f} MB), {p.samples.num_rows} samples, "
          f"{p.stacks.num_rows} stacks, {p.frames.num_rows} frames, lost {p.meta['lost']}")
    print(f"perf script > /dev/null : {tp:8.3f} s")
    print(f"hpmkit ingest           : {to:8.3f} s")
    print(f"ratio perf/hpmkit       : {tp / to:8.1f}x  (target >= 10x)")
    if p.samples.num_rows < 1_000_000:
        print("note: fewer than 1M samples (lost or throttled samples?)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
