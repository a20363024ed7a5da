#!/bin/sh
# Record the busybox loops of data/lab/busybox-loops on both lab ISAs into OUT/<arch>/, then
# compare: the held-out check of docs/compare.md. Needs the lab (hpmkit lab prepare); about
# 4 minutes on two cores.
#   tools/busybox_loops.sh OUT [LAB-SUITE-OPTIONS...]     (e.g. -c 2000: another sampling period)
set -eu
out=${1:?usage: tools/busybox_loops.sh OUT [LAB-SUITE-OPTIONS...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for arch in riscv64 aarch64; do
    bb="$here/.cache/lab/busybox/$arch/bin/busybox"
    [ -x "$bb" ] || { echo "busybox_loops: $bb is missing: run 'hpmkit lab prepare --arch both'" >&2; exit 1; }
    mkdir -p "$root/$arch/bin" "$root/$arch/ho"
    cp "$bb" "$root/$arch/bin/busybox"
    cp "$here"/data/lab/busybox-loops/*.sh "$root/$arch/ho/"
done
hpmkit=${HPMKIT:-$here/.venv/bin/hpmkit}
"$hpmkit" lab suite --suite "$here/data/lab/busybox-loops.tsv" --root "$root" --arch both --out "$out" "$@"
"$hpmkit" compare "$out/riscv64" --vs "$out/aarch64"
