#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite: C unit tests on the
# real kernel, hpm CLI tests against perf stat, cross builds under qemu-user,
# and the hpmkit Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q tests/py "$@"
