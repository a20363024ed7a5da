#!/usr/bin/env bash
# Set up, then run hpm on the bundled workloads and report with hpmkit.
# (When `hpmkit compare` lands, this becomes the cross-ISA report on the
# bundled riscv64/aarch64 recordings.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=demo-out
mkdir -p "$out"
echo
echo "== what this machine can count =="
build/bin/hpm list --pmus
echo
echo "== hpm stat, 5 runs, software metric group, on a workload touching 20000 pages =="
build/bin/hpm stat -r 5 -M software -e page-faults -- build/bin/touch-pages 20000
build/bin/hpm stat --json -o "$out/touch-20000.json" -r 5 -M software -- build/bin/touch-pages 20000
build/bin/hpm stat --json -o "$out/touch-40000.json" -r 5 -M software -- build/bin/touch-pages 40000
echo "== hpmkit: the two runs side by side =="
.venv/bin/hpmkit stat-report "$out/touch-20000.json" "$out/touch-40000.json"
echo
echo "== region markers (tests/regions_demo.c) =="
HPM_REGION_OUT="$out/regions.json" build/tests/regions_demo 256
.venv/bin/hpmkit regions "$out/regions.json"
