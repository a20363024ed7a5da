#!/usr/bin/env bash
# Build (once) the aarch64 Linux kernel Image for the QEMU perf lab.
#
# Same source and same ISA-neutral configuration as the riscv64 guest
# (lab/kernel-source.sh): Debian's linux-source-6.1,
#   make ARCH=arm64 tinyconfig  +  lab/common.config  +  lab/aarch64.config
# cross-built with aarch64-linux-gnu-gcc, so that profiles of the two guests
# differ by ISA rather than by kernel configuration.  The result is cached as
#   .cache/lab/aarch64/Image-<package version>-<sha256(fragments):12>
# and reused while both stay the same.  Idempotent: a second run does nothing
# but print the path.
#
# stdout: last (and only) line is the absolute path of the kernel Image.
# stderr: progress lines "lab: ..."; on error one "lab: error: ..." line
#         (plus the tail of the build log when the build itself failed).
#
# Boot it with (QEMU 7.2; the console is the PL011 UART ttyAMA0; the guest's
# poweroff (PSCI SYSTEM_OFF) ends QEMU with status 0, a panic reboots and
# -no-reboot ends it too):
#   qemu-system-aarch64 -M virt -cpu max,pauth=off -m 512M -smp 1 -nographic \
#     -nic none -icount shift=0,sleep=off -rtc base=utc,clock=vm -no-reboot \
#     -kernel IMAGE -initrd init.cpio \
#     -append "console=ttyAMA0 panic=-1 nokaslr norandmaps quiet"
# -nic none: without it virt adds a virtio NIC whose boot ROM (efi-virtio.rom,
# package ipxe-qemu, a Recommends not installed here) QEMU refuses to start
# without.  pauth=off: QEMU's emulated pointer authentication (QARMA) is slow,
# and the kernel is built without it (lab/aarch64.config).  norandmaps: with
# address-space randomisation a static glibc program's user instruction count
# is now and then 2 higher.
set -euo pipefail
# shellcheck source=lab/kernel-source.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernel-source.sh"

CROSS=aarch64-linux-gnu-
# Options that must be =y or the lab is pointless (the fragments' own lines
# are all checked too).
KEY_OPTS="PERF_EVENTS ARM_PMU HW_PERF_EVENTS BLK_DEV_INITRD FRAME_POINTER KALLSYMS SERIAL_AMBA_PL011_CONSOLE ARM_PSCI_FW"

lab_install gcc-aarch64-linux-gnu qemu-system-arm
command -v qemu-system-aarch64 >/dev/null 2>&1 || die "qemu-system-aarch64 not found although qemu-system-arm is installed"
lab_source
# Files of the earlier recipe, which booted Debian's packaged linux-image-*-arm64
# (a 57 MB .deb and what was extracted from it): no longer used.
rm -f "$LAB_ROOT"/.cache/lab/aarch64/linux-image-*.deb "$LAB_ROOT"/.cache/lab/aarch64/vmlinuz-* \
      "$LAB_ROOT"/.cache/lab/aarch64/kernel-* "$LAB_ROOT"/.cache/lab/aarch64/current \
      "$LAB_ROOT"/.cache/lab/aarch64/resolved "$LAB_ROOT/.cache/lab/aarch64/config-$LAB_VERSION" \
      "$LAB_ROOT/.cache/lab/aarch64/System.map-$LAB_VERSION"
lab_build aarch64 arm64 "$CROSS" arch/arm64/boot/Image "$KEY_OPTS" \
    "$LAB_ROOT/lab/common.config" "$LAB_ROOT/lab/aarch64.config"
