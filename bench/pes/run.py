#!/usr/bin/env python3
"""Cost of hpmpes (the lab's precise event sampler, docs/pes.md): guest instructions per host
second with and without the plugin.

For each ISA and workload, boots the lab guest (QEMU 10, -icount shift=0) with the same
initramfs: without a plugin, with hpmpes sampling instructions every --period (default
10,000; `hpmkit lab suite` samples every 2,000) (the fast mode: inline counters), and with hpmpes also counting exactly (the full mode: a callback per
block). QEMU's CPU time (user + system) is measured; boot is taken out by also timing a
run of `hpm-loop 0`; the workload's guest instructions come from the plugin's own exact
count. The best of --repeat runs is kept.
Not a test: on a shared 2-core VM the numbers move with the other jobs.

    .venv/bin/python bench/pes/run.py [--arch riscv64|aarch64|both] [--repeat 3] [--period N] [--json F]
"""
import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from hpmkit.lab import cpio, guest  # noqa: E402

PLUGIN = ROOT / "build" / "lab" / "libhpmpes.so"
WORKLOADS = {
    "hpm-loop": ["hpm-loop", "1000000000"],        # one 2-instruction block, user mode
    "ksuite-syscalls": ["ksuite", "syscalls", "150000"],  # entry/exit, small syscalls
    "ksuite-pipe": ["ksuite", "pipe", "60000"],     # context switches through pipes
}
TOTAL = re.compile(r"hpmpes: \w+: (\d+) instructions")


class Lab:
    def __init__(self, arch, tmp):
        self.arch, self.tmp = arch, tmp
        self.image = guest.kernel(arch)
        tag = self.image.name.split("Image-", 1)[1]
        self.smap = self.image.parent / f"System.map-{tag}"
        self.offs = self.image.parent / f"offsets-{tag}"
        self.files = guest.guest_binaries(arch)
        self.bins = tmp / f"bins-{arch}"
        self.bins.mkdir(exist_ok=True)
        for name, data in self.files.items():
            if name.startswith("bin/"):
                (self.bins / name[4:]).write_bytes(data)

    def initramfs(self, argv):
        files = dict(self.files)
        files["lab/argv"] = b"".join(a.encode() + b"\0" for a in argv)
        dirs = {str(Path(n).parent) for n in files if "/" in n}
        rd = self.tmp / f"rd-{self.arch}-{'-'.join(argv)}.cpio"
        rd.write_bytes(cpio.build(files, ["proc", "sys", "dev", "tmp", "out", *sorted(dirs)]))
        return rd

    def boot(self, rd, plugin_args=None):
        m = guest.MACHINES[self.arch]
        cmd = [m.qemu, *m.args, *guest.COMMON, "-kernel", str(self.image), "-initrd", str(rd),
               "-append", f"{m.console} panic=-1 quiet loglevel=1 rdinit=/init"]
        if plugin_args is not None:
            args = {"arch": self.arch, "kernel": self.smap, "offsets": self.offs,
                    "bins": self.bins, **plugin_args}
            cmd += ["-plugin", ",".join([str(PLUGIN)] + [f"{k}={v}" for k, v in args.items()])]
        # QEMU's CPU time (user + system, all its threads): steadier than wall time when
        # other jobs share the machine
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        dt = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if p.returncode:
            raise SystemExit(f"{self.arch}: QEMU failed: {p.stderr.decode()[-500:]}")
        res = guest.parse(p.stdout.decode(errors="replace"), self.arch)
        if res.status != 0:
            raise SystemExit(f"{self.arch}: the workload failed: {res.stderr.decode()[-300:]}")
        m = TOTAL.search(p.stderr.decode())
        return dt, int(m.group(1)) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="both", choices=["riscv64", "aarch64", "both"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--period", type=int, default=10000, help="instructions between samples")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    if not PLUGIN.exists():
        raise SystemExit(f"{PLUGIN} is missing: run make")
    tmp = Path(tempfile.mkdtemp(prefix="hpmpes-bench-"))
    configs = {"none": None,
               "sampling": {"out": tmp / "s.data", "period": a.period},
               "sampling+exact": {"out": tmp / "s.data", "exact": tmp / "x.tsv", "period": a.period}}
    results = []
    arches = ["riscv64", "aarch64"] if a.arch == "both" else [a.arch]
    print(f"{'arch':8} {'workload':16} {'guest insns':>12} {'no plugin':>12} {'sampling':>12} "
          f"{'slowdown':>8} {'+exact':>12} {'slowdown':>8}")
    for arch in arches:
        lab = Lab(arch, tmp)
        base_rd = lab.initramfs(["hpm-loop", "0"])
        for wname, argv in WORKLOADS.items():
            rd = lab.initramfs(argv)
            row = {"arch": arch, "workload": " ".join(argv)}
            insns = None
            for cname, cfg in configs.items():
                best_w = best_b = None
                for _ in range(a.repeat):
                    tb, ib = lab.boot(base_rd, cfg)
                    tw, iw = lab.boot(rd, cfg)
                    best_b = tb if best_b is None else min(best_b, tb)
                    best_w = tw if best_w is None else min(best_w, tw)
                    if cname == "sampling+exact":
                        insns = iw - ib
                row[cname] = best_w - best_b
            row["guest_insns"] = insns
            for cname in configs:
                row[f"{cname}_rate"] = insns / row[cname] if row[cname] > 0 else None
            row["slowdown_sampling"] = row["sampling"] / row["none"]
            row["slowdown_exact"] = row["sampling+exact"] / row["none"]
            results.append(row)
            print(f"{arch:8} {wname:16} {insns:12.3e} {row['none_rate']:10.3e}/s "
                  f"{row['sampling_rate']:10.3e}/s {row['slowdown_sampling']:7.2f}x "
                  f"{row['sampling+exact_rate']:10.3e}/s {row['slowdown_exact']:7.2f}x", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
