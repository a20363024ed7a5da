#!/usr/bin/env bash
# Install everything hpmkit needs on a fresh Debian 12 machine, then build.
# Idempotent: packages already present are not reinstalled; the venv is reused.
# Needs root for apt-get (or sudo). Nothing here changes kernel settings.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential pkg-config file util-linux cpio  # C core, tests (setpriv, setarch)
  gcc-riscv64-linux-gnu libc6-dev-riscv64-cross  # static hpm for riscv64
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross    # static hpm for aarch64
  qemu-user-static                             # cross-built unit tests
  gdb-multiarch                                # independent unwinder for the lab's user stacks
  linux-perf                                   # reference for hpm stat tests
  libpapi-dev papi-tools                       # overhead benchmark against PAPI 7
  python3 python3-venv python3-pip             # hpmkit analysis package
  chromium                                     # headless check of the hpmkit compare HTML report
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The lab: QEMU 10 (riscv64 and aarch64 system emulators) from bookworm-backports. Its TCG
# plugin API (v4) reads guest registers and memory, which the lab's precise sampler
# (lab/pes) needs; 7.2 from bookworm cannot. One QEMU version only: QEMU 10 aborts when
# 7.2's accelerator modules share its module folder.
QEMU_PKGS=(qemu-system-riscv qemu-system-arm qemu-system-common qemu-system-data opensbi)
qemu_ok=1
for p in "${QEMU_PKGS[@]}"; do
  v=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)
  case "$v" in "install ok installed 1:10."*|"install ok installed 1.5"*) ;; *) qemu_ok=0 ;; esac
done
if [ "$qemu_ok" = 0 ]; then
  echo "setup: installing QEMU 10 from bookworm-backports"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" \
      | $SUDO tee /etc/apt/sources.list.d/hpmkit-backports.list >/dev/null
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports "${QEMU_PKGS[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q -e '.[analysis,test]'

echo "setup: building (native + riscv64 + aarch64)"
make -s -j"$(nproc)" all >/dev/null
make -s -j"$(nproc)" cross >/dev/null
echo "setup: done: build/bin/hpm, build/lib/libhpm.{a,so}, .venv/bin/hpmkit"
