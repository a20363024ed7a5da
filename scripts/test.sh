#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite: C unit tests on the
# real kernel, hpm CLI tests against perf stat, cross builds under qemu-user,
# and the hpmkit Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the lab's kernels: riscv64 and aarch64 built from one linux-source-6.1 tree with matched
# configs (first time ~6 min each on 2 cores), cached in .cache/lab
.venv/bin/hpmkit lab prepare --arch both
exec .venv/bin/python -m pytest -q tests/py "$@"
