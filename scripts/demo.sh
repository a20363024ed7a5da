#!/usr/bin/env bash
# The main job of hpmkit on bundled data: set up, then rank the kernel call-stack contexts
# where riscv64 does relatively more work than aarch64 for the same workloads.
#
# Data: examples/lab-suite/<arch>/<workload>.hpmprof, the 23 ksuite workloads recorded in
# the lab with the precise in-emulator sampler (Linux 6.1 from one source tree, riscv64 and
# aarch64 under QEMU, exact instruction counts); `hpmkit lab suite --arch both --out
# examples/lab-suite` records them again (about 20 minutes). examples/rt-tests holds seed
# 001's rt-tests workloads (`hpmkit lab suite --suite rt-tests --arch both --out
# examples/rt-tests`, about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=demo-out
mkdir -p "$out"
echo
echo "== hpmkit compare: riscv64 vs aarch64 on the bundled lab recordings =="
.venv/bin/hpmkit compare examples/lab-suite/riscv64 --vs examples/lab-suite/aarch64 \
  --truth data/compare/known-riscv64-slower.tsv \
  --html "$out/compare.html" --json "$out/compare.json"
echo
echo "report: $out/compare.html (open it in a browser); JSON: $out/compare.json"
echo
echo "== the same on seed 001's workloads (rt-tests from Debian's packages, examples/rt-tests) =="
.venv/bin/hpmkit compare examples/rt-tests/riscv64 --vs examples/rt-tests/aarch64 \
  --truth data/compare/known-riscv64-slower.tsv --top 10 \
  --html "$out/rt-tests.html" --json "$out/rt-tests.json"
echo "report: $out/rt-tests.html"
echo
echo "== the same recordings as flame graphs (sendfile: riscv64 copies misaligned data bytewise) =="
for arch in riscv64 aarch64; do
  .venv/bin/hpmkit profile export examples/lab-suite/$arch/sendfile.hpmprof \
    --format svg -o "$out/sendfile-$arch.svg"
done
echo "flame graphs: $out/sendfile-riscv64.svg, $out/sendfile-aarch64.svg"
