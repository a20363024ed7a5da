#!/usr/bin/env bash
# lab/kernel-aarch64.sh: get an aarch64 Linux kernel that qemu-system-aarch64
# can boot (-M virt -cpu max, emulated PMUv3), for testing hpm's hardware
# counters under QEMU with exact instruction counts (-icount shift=0).
#
# What it does, each step only when needed (idempotent):
#   - installs qemu-system-arm (provides qemu-system-aarch64) if missing;
#   - adds the arm64 dpkg architecture and runs apt-get update if not added;
#   - resolves the kernel package that Debian 12's metapackage
#     linux-image-arm64:arm64 currently depends on (linux-image-6.1.0-NN-arm64);
#   - apt-get downloads that .deb into .cache/lab/aarch64/ (never installs it);
#   - extracts boot/vmlinuz-*, System.map-* and config-* with dpkg-deb -x;
#   - checks the config for what a module-less initramfs boot needs;
#   - uses the vmlinuz as it is when QEMU can load it (a raw arm64 Image, which
#     is what Debian 12 ships for arm64, or a gzip'd Image up to 64 MiB);
#     otherwise decompresses it (an over-size gzip'd Image, or the payload of
#     an EFI zboot image) to Image-<pkgversion>.
#
# Progress and problems go to stderr. The last line of stdout is the absolute
# path to pass to qemu-system-aarch64 -kernel. Exit status is nonzero on error.
#
# Boot it with (console is the PL011 UART, ttyAMA0; the guest's poweroff
# (PSCI SYSTEM_OFF) ends QEMU with status 0, a panic reboots and -no-reboot
# ends it too):
#   qemu-system-aarch64 -M virt -cpu max,pauth=off -m 512M -smp 1 -nographic \
#     -nic none -icount shift=0,sleep=off -rtc base=utc,clock=vm -no-reboot \
#     -kernel "$(lab/kernel-aarch64.sh)" -initrd init.cpio \
#     -append "console=ttyAMA0 panic=-1 nokaslr norandmaps cryptomgr.notests quiet"
# -nic none: without it virt adds a virtio NIC whose boot ROM (efi-virtio.rom,
# package ipxe-qemu, a Recommends not installed here) QEMU refuses to start
# without. pauth=off: QEMU's emulated pointer authentication (QARMA) makes this
# kernel, which signs every return address, boot 4x slower (6.5 s vs 1.6 s);
# counts of user code are unchanged. cryptomgr.notests skips the crypto
# self-tests (0.25 s; 2.6 s with pauth on). norandmaps: with address-space
# randomisation a static glibc program's user instruction count is now and
# then 2 higher. nokaslr also reaches /init as argv[1] (the kernel parses it
# early and leaves it unclaimed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="$ROOT/.cache/lab/aarch64"
META="linux-image-arm64:arm64"

say() { echo "lab: $*" >&2; }
die() { echo "lab: error: $*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot run apt-get/dpkg"
  SUDO="sudo"
fi

apt_update() {
  say "apt-get update"
  # A failing third-party source must not stop us; whether what we need is
  # now known is checked by the caller.
  $SUDO apt-get update -qq >/dev/null 2>&1 || say "warning: apt-get update reported errors"
}

# --- QEMU -------------------------------------------------------------------
if ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
  say "installing qemu-system-arm"
  if ! apt-cache show qemu-system-arm >/dev/null 2>&1; then apt_update; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    qemu-system-arm >/dev/null 2>&1 || die "apt-get install qemu-system-arm failed"
  command -v qemu-system-aarch64 >/dev/null 2>&1 || die "qemu-system-aarch64 not found after installing qemu-system-arm"
fi

# --- arm64 package lists ----------------------------------------------------
updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  say "adding dpkg architecture arm64"
  $SUDO dpkg --add-architecture arm64 || die "dpkg --add-architecture arm64 failed"
  apt_update; updated=1
fi

# The kernel package the metapackage depends on, e.g. linux-image-6.1.0-37-arm64.
resolve() {
  PKG=$(apt-cache depends "$META" 2>/dev/null |
        sed -n 's/^ *|\{0,1\}Depends: \(linux-image-[0-9][^ ]*-arm64\)\(:arm64\)\{0,1\}$/\1/p' | head -n1)
  [ -n "$PKG" ] || return 1
  VER=$(apt-cache policy "$PKG:arm64" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  [ -n "$VER" ] && [ "$VER" != "(none)" ]
}

# apt-cache rebuilds its cache from the lists on every call here (pkgcache is
# disabled), about 2 s; reuse the last answer while the arm64 lists are the same.
lists_stamp() {
  local f=(/var/lib/apt/lists/*_binary-arm64_Packages*)
  [ -e "${f[0]}" ] || return 0
  stat -c '%n %s %Y' "${f[@]}" | md5sum | cut -d' ' -f1
}
STAMP=$(lists_stamp)
PKG="" VER=""
if [ -n "$STAMP" ] && [ -f "$CACHE/resolved" ]; then
  read -r st p v <"$CACHE/resolved" || true
  if [ "${st:-}" = "$STAMP" ] && [ -n "${p:-}" ] && [ -n "${v:-}" ]; then PKG=$p VER=$v; fi
fi

if [ -z "$VER" ] && ! resolve; then
  if [ "$updated" -eq 0 ]; then apt_update; STAMP=$(lists_stamp); fi
  if ! resolve; then
    # Offline with a kernel already cached: keep using it.
    if [ -f "$CACHE/current" ] && [ -f "$(cat "$CACHE/current")" ]; then
      say "warning: cannot resolve $META from the package lists; using the cached kernel"
      cat "$CACHE/current"
      exit 0
    fi
    die "cannot resolve the kernel package that $META depends on (apt-cache depends/policy found nothing)"
  fi
fi

V=${VER//:/%3a}        # no epoch in Debian kernel versions, but be safe in file names
mkdir -p "$CACHE"
[ -z "$STAMP" ] || echo "$STAMP $PKG $VER" >"$CACHE/resolved"

# --- config check -----------------------------------------------------------
# We boot with an initramfs that holds no modules: what the lab needs must be
# =y. On failure: one error line naming each offending option.
check_config() {
  local cfg=$1 verbose=$2 opt val pmu="" mods=""
  local -a bad=()
  cfgval() { sed -n "s/^CONFIG_$1=\(.*\)$/\1/p" "$cfg" | head -n1; }
  for opt in PERF_EVENTS HW_PERF_EVENTS BLK_DEV_INITRD SERIAL_AMBA_PL011 SERIAL_AMBA_PL011_CONSOLE; do
    val=$(cfgval "$opt")
    if [ "$val" = m ]; then bad+=("CONFIG_$opt=m (a module; the initramfs has none)")
    elif [ "$val" != y ]; then bad+=("CONFIG_$opt is not set"); fi
  done
  # The PMU driver: ARM_PMU in 6.1; ARM_PMUV3 is split out of it from 6.4 on.
  for opt in ARM_PMUV3 ARM_PMU; do
    val=$(cfgval "$opt")
    if [ "$val" = m ]; then bad+=("CONFIG_$opt=m (a module; the initramfs has none)"); fi
    if [ "$val" = y ]; then pmu="${pmu:+$pmu }$opt=y"; fi
  done
  [ -n "$pmu" ] || ((${#bad[@]})) || bad+=("neither CONFIG_ARM_PMUV3 nor CONFIG_ARM_PMU is set")
  if ((${#bad[@]})); then
    local msg=${bad[0]} i
    for ((i = 1; i < ${#bad[@]}; i++)); do msg+="; ${bad[i]}"; done
    die "kernel config unfit for a module-less lab boot: $msg"
  fi
  if [ "$verbose" -eq 1 ]; then
    for opt in VIRTIO_MMIO VIRTIO_PCI VIRTIO_BLK VIRTIO_CONSOLE 9P_FS ARM_SPE_PMU; do
      [ "$(cfgval "$opt")" != m ] || mods="${mods:+$mods }$opt"
    done
    say "config: PERF_EVENTS HW_PERF_EVENTS $pmu BLK_DEV_INITRD SERIAL_AMBA_PL011_CONSOLE all =y;" \
        "RELOCATABLE=$(cfgval RELOCATABLE) RANDOMIZE_BASE=$(cfgval RANDOMIZE_BASE) (pass nokaslr)"
    [ -z "$mods" ] || say "config: modules, so absent in a module-less boot: $mods"
  fi
}

# --- already done? ------------------------------------------------------------
if [ -L "$CACHE/kernel-$V" ] && [ -f "$CACHE/kernel-$V" ] && [ -f "$CACHE/config-$V" ]; then
  check_config "$CACHE/config-$V" 0
  kernel=$(readlink -f "$CACHE/kernel-$V")
  [ "$(cat "$CACHE/current" 2>/dev/null)" = "$kernel" ] || echo "$kernel" >"$CACHE/current"
  echo "$kernel"
  exit 0
fi

# --- download -----------------------------------------------------------------
DEB="$CACHE/${PKG}_${V}_arm64.deb"
if [ ! -s "$DEB" ]; then
  size=$(apt-cache show --no-all-versions "$PKG:arm64=$VER" 2>/dev/null | sed -n 's/^Size: //p' | head -n1) || true
  say "downloading $PKG $VER (arm64, about $(( (${size:-0} + 524288) / 1048576 )) MB)"
  tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # apt-get download writes into the current directory; as root it cannot drop
  # to the _apt sandbox user for a root-owned directory, so say so explicitly.
  if ! (cd "$tmp" && $SUDO apt-get download -qq -o APT::Sandbox::User=root "$PKG:arm64=$VER" >/dev/null 2>"$tmp/err"); then
    die "apt-get download $PKG:arm64=$VER failed: $(grep -m1 -E '^(E|W):' "$tmp/err" || tail -n1 "$tmp/err")"
  fi
  got=$(find "$tmp" -maxdepth 1 -name '*.deb' | head -n1) || true
  [ -n "$got" ] || die "apt-get download left no .deb"
  mv "$got" "$DEB"
  rm -rf "$tmp"; trap - EXIT
fi

# --- extract ------------------------------------------------------------------
say "extracting boot/ from $(basename "$DEB")"
tmp=$(mktemp -d "$CACHE/x.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$DEB" "$tmp" || die "dpkg-deb -x $(basename "$DEB") failed"
vmlinuz=$(find "$tmp/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -n1) || true
[ -n "$vmlinuz" ] || die "$(basename "$DEB") has no boot/vmlinuz-*"
kver=${vmlinuz##*/vmlinuz-}
for f in vmlinuz System.map config; do
  [ -f "$tmp/boot/$f-$kver" ] || die "$(basename "$DEB") has no boot/$f-$kver"
  cp "$tmp/boot/$f-$kver" "$CACHE/$f-$V.tmp"
  mv "$CACHE/$f-$V.tmp" "$CACHE/$f-$V"
done
rm -rf "$tmp"; trap - EXIT        # the modules tree is large and not needed
if [ "$(stat -c %s "$CACHE/System.map-$V")" -lt 4096 ]; then
  # Debian ships a one-line placeholder; the real map is in the -dbg package.
  say "note: System.map-$V is Debian's placeholder (real one: $PKG-dbg); use /proc/kallsyms in the guest"
fi

check_config "$CACHE/config-$V" 1

# --- a form QEMU loads ------------------------------------------------------
# QEMU's -kernel for aarch64 takes a raw arm64 Image ("ARM\x64" at 0x38; with
# an EFI stub it also starts with "MZ") and a gzip'd Image of at most 64 MiB
# unpacked. Debian 12's QEMU 7.2 has no EFI zboot loader ("MZ", "zimg" at 4),
# and QEMU cannot be asked: anything else it copies into guest memory as a raw
# blob without complaint, and the guest then hangs silently. So decide by format.
magic_at() { dd if="$1" bs=1 skip="$2" count="$3" 2>/dev/null | od -An -tx1 | tr -d ' \n'; }
le32_at() { local h; h=$(magic_at "$1" "$2" 4); echo $(( 0x${h:6:2}${h:4:2}${h:2:2}${h:0:2} )); }
is_image() { [ "$(magic_at "$1" 56 4)" = 41524d64 ]; }

kernel="$CACHE/vmlinuz-$V"
img="$CACHE/Image-$V"
size=$(stat -c %s "$kernel")
if is_image "$kernel"; then
  say "vmlinuz is an uncompressed arm64 Image: qemu loads it as it is"
elif [ "$(magic_at "$kernel" 0 2)" = 1f8b ] && [ "$(le32_at "$kernel" $((size - 4)))" -le $((64 << 20)) ] &&
     [ "$(gzip -dc <"$kernel" 2>/dev/null | head -c 64 | tail -c 8 | od -An -tx1 | tr -d ' \n' | cut -c1-8)" = 41524d64 ]; then
  say "vmlinuz is a gzip'd arm64 Image under 64 MiB: qemu unpacks it itself"
else
  if [ "$(magic_at "$kernel" 0 2)" = 1f8b ]; then
    say "vmlinuz is gzip'd (over qemu's 64 MiB unpack limit); decompressing to $(basename "$img")"
    gzip -dc <"$kernel" >"$img.tmp" || die "gunzip of vmlinuz-$V failed"
  elif [ "$(magic_at "$kernel" 0 2)" = 4d5a ] && [ "$(magic_at "$kernel" 4 4)" = 7a696d67 ]; then
    # EFI zboot header: u32 payload offset at 8, u32 payload size at 12,
    # compression name at 0x18.
    off=$(le32_at "$kernel" 8); len=$(le32_at "$kernel" 12)
    comp=$(dd if="$kernel" bs=1 skip=24 count=32 2>/dev/null | tr -d '\0')
    say "vmlinuz is an EFI zboot image ($comp payload), which qemu 7.2 cannot load; decompressing to $(basename "$img")"
    case "$comp" in
      gzip) dec=(gzip -dc) ;;
      zstd) command -v zstd >/dev/null 2>&1 || die "zboot payload is zstd and zstd is not installed (apt-get install zstd)"
            dec=(zstd -dc) ;;
      xz|lzma) dec=(xz -dc) ;;
      *) die "EFI zboot payload compression '$comp' is not handled" ;;
    esac
    dd if="$kernel" bs=1M iflag=skip_bytes,count_bytes skip="$off" count="$len" 2>/dev/null |
      "${dec[@]}" >"$img.tmp" ||
      die "decompressing the zboot payload of vmlinuz-$V failed"
  else
    die "vmlinuz-$V is not an arm64 Image, a gzip'd Image nor an EFI zboot image (magic $(magic_at "$kernel" 0 8))"
  fi
  is_image "$img.tmp" || { rm -f "$img.tmp"; die "decompressed vmlinuz-$V lacks the arm64 Image magic"; }
  mv "$img.tmp" "$img"
  kernel=$img
fi

ln -sfn "$(basename "$kernel")" "$CACHE/kernel-$V"
echo "$kernel" >"$CACHE/current"
# Older kernels (an apt-get update moved the metapackage on) are not needed.
find "$CACHE" -maxdepth 1 \( -name 'linux-image-*.deb' -o -name 'vmlinuz-*' -o -name 'Image-*' \
  -o -name 'System.map-*' -o -name 'config-*' -o -name 'kernel-*' \) \
  ! -name "*-$V" ! -name "$(basename "$DEB")" -exec rm -f {} + 2>/dev/null || true
say "kernel ready: $PKG $VER"
echo "$kernel"
