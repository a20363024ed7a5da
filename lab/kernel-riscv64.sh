#!/usr/bin/env bash
# Build (once) a small riscv64 Linux kernel Image for the QEMU perf lab.
#
# Source: Debian's linux-source-6.1 package, configured as
#   make ARCH=riscv tinyconfig  +  lab/riscv64.config (a kconfig fragment)
# and cross-built with riscv64-linux-gnu-gcc.  The result is cached as
#   .cache/lab/riscv64/Image-<package version>-<sha256(fragment):12>
# and reused while both stay the same.  Idempotent: a second run does nothing
# but print the path.
#
# stdout: last (and only) line is the absolute path of the kernel Image.
# stderr: progress lines "lab: ..."; on error one "lab: error: ..." line
#         (plus the tail of the build log when the build itself failed).
#
# Boot it with (QEMU 7.2, OpenSBI from qemu-system-data via -bios default):
#   qemu-system-riscv64 -M virt -cpu rv64,sscofpmf=true -m 256M -smp 1 \
#     -nographic -icount shift=0,sleep=off -rtc base=utc,clock=vm \
#     -kernel IMAGE -initrd init.cpio -no-reboot \
#     -append "console=hvc0 earlycon=sbi panic=-1 quiet"
# The initramfs is an uncompressed newc cpio with /init; reboot(RB_POWER_OFF)
# in the guest makes QEMU exit (SBI SRST).
set -euo pipefail

die() { echo "lab: error: $*" >&2; exit 1; }
say() { echo "lab: $*" >&2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FRAG=$ROOT/lab/riscv64.config
CACHE=$ROOT/.cache/lab/riscv64
SRCPKG=linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz
CROSS=riscv64-linux-gnu-
FIRMWARE=/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin
# Options that must be =y or the lab is pointless; checked after the build
# (every other =y / "is not set" line of the fragment is checked too).
KEY_OPTS="PERF_EVENTS RISCV_PMU_SBI BLK_DEV_INITRD FRAME_POINTER KALLSYMS HVC_RISCV_SBI"

[ -r "$FRAG" ] || die "kconfig fragment $FRAG not found"

# ---- host packages (installed only when missing) -------------------------
# libssl-dev / libelf-dev are not needed: no modules, no module signing, no
# trusted keyrings, no objtool/BTF in this config.
PKGS="$SRCPKG gcc-riscv64-linux-gnu gcc libc6-dev make flex bison bc perl cpio xz-utils qemu-system-misc"
missing=
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing$missing"
    SUDO=
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install$missing"
        SUDO=sudo
    fi
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
        $SUDO apt-get update -qq >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 \
            || die "apt-get install$missing failed"
    fi
fi
[ -r "$TARBALL" ] || die "$TARBALL missing although $SRCPKG is installed"
[ -r "$FIRMWARE" ] || die "OpenSBI firmware $FIRMWARE missing (qemu-system-data); QEMU -bios default will not boot"

VERSION=$(dpkg-query -W -f='${Version}' "$SRCPKG") || die "cannot read the version of $SRCPKG"
[ -n "$VERSION" ] || die "empty version for $SRCPKG"
HASH=$(sha256sum "$FRAG" | cut -c1-12)
TAG=$VERSION-$HASH
OUT=$CACHE/Image-$TAG

mkdir -p "$CACHE"
# Serialise concurrent runs (two test jobs asking for the kernel at once).
exec 9>"$CACHE/.lock"
flock 9

if [ -s "$OUT" ]; then
    echo "$OUT"
    exit 0
fi

# ---- source tree ---------------------------------------------------------
SRC=$CACHE/linux-$VERSION
if [ ! -e "$SRC/.lab-extracted" ]; then
    # A new package version replaces the trees of older ones (1.5 GB each).
    for old in "$CACHE"/linux-* "$CACHE"/build-*; do
        if [ -d "$old" ]; then rm -rf "$old"; fi
    done
    say "extracting $SRCPKG $VERSION into $SRC ..."
    mkdir -p "$SRC.tmp"
    tar -xJf "$TARBALL" -C "$SRC.tmp" --strip-components=1 \
        || { rm -rf "$SRC.tmp"; die "extracting $TARBALL failed"; }
    [ -e "$SRC.tmp/Makefile" ] || { rm -rf "$SRC.tmp"; die "$TARBALL did not hold a kernel tree"; }
    touch "$SRC.tmp/.lab-extracted"
    mv "$SRC.tmp" "$SRC"
fi

# ---- configure + build (out of tree, the source stays pristine) ----------
BUILD=$CACHE/build-$VERSION
LOG=$CACHE/build-$TAG.log
mkdir -p "$BUILD"
: >"$LOG"
KMAKE=(make -C "$SRC" O="$BUILD" ARCH=riscv CROSS_COMPILE="$CROSS"
       KBUILD_BUILD_USER=lab KBUILD_BUILD_HOST=hpmkit)

fail_build() {
    echo "lab: error: $1 (log: $LOG); last 20 lines:" >&2
    tail -n 20 "$LOG" >&2
    exit 1
}

# Every "CONFIG_X=y" of the fragment (and KEY_OPTS) must be =y in .config,
# every "# CONFIG_X is not set" must not be set; kconfig drops what fails a
# dependency without a word, so say which ones did.
check_config() {
    local cfg=$BUILD/.config bad='' want='' line opt
    want=$(for opt in $KEY_OPTS; do echo "CONFIG_$opt=y"; done; grep -E '^CONFIG_[A-Za-z0-9_]+=y$' "$FRAG")
    for line in $(echo "$want" | sort -u); do
        grep -qx "$line" "$cfg" || bad="$bad ${line%%=*}=n"
    done
    while IFS= read -r line; do
        case $line in
            "# CONFIG_"*" is not set")
                opt=${line#\# }; opt=${opt%% *}
                if grep -q "^$opt=" "$cfg"; then bad="$bad $opt=y"; fi ;;
        esac
    done <"$FRAG"
    [ -z "$bad" ] || die "kernel .config does not honour lab/riscv64.config (got:$bad; see $cfg)"
}

say "configuring riscv64 kernel $VERSION (tinyconfig + lab/riscv64.config) ..."
rm -f "$BUILD/.config"
"${KMAKE[@]}" tinyconfig >>"$LOG" 2>&1 || fail_build "make tinyconfig failed"
( cd "$SRC" && ARCH=riscv CROSS_COMPILE=$CROSS \
    scripts/kconfig/merge_config.sh -m -O "$BUILD" "$BUILD/.config" "$FRAG" ) >>"$LOG" 2>&1 \
    || fail_build "merge_config.sh failed"
"${KMAKE[@]}" olddefconfig >>"$LOG" 2>&1 || fail_build "make olddefconfig failed"
check_config

say "building riscv64 kernel (about 2 minutes on 2 cores) ..."
"${KMAKE[@]}" -j"$(nproc)" Image >>"$LOG" 2>&1 || fail_build "kernel build failed"
[ -s "$BUILD/arch/riscv/boot/Image" ] || fail_build "build produced no arch/riscv/boot/Image"
check_config

cp "$BUILD/arch/riscv/boot/Image" "$OUT.tmp"
cp "$BUILD/.config" "$CACHE/config-$TAG"
mv "$OUT.tmp" "$OUT"
say "kernel ready: $OUT"
echo "$OUT"
