#!/usr/bin/env bash
# Build (once) the riscv64 Linux kernel Image for the QEMU perf lab.
#
# Same source and same ISA-neutral configuration as the aarch64 guest
# (lab/kernel-source.sh): Debian's linux-source-6.1,
#   make ARCH=riscv tinyconfig  +  lab/common.config  +  lab/riscv64.config
# cross-built with riscv64-linux-gnu-gcc, so that profiles of the two guests
# differ by ISA rather than by kernel configuration.  The result is cached as
#   .cache/lab/riscv64/Image-<package version>-<sha256(fragments):12>
# and reused while both stay the same.  Idempotent: a second run does nothing
# but print the path.
#
# stdout: last (and only) line is the absolute path of the kernel Image.
# stderr: progress lines "lab: ..."; on error one "lab: error: ..." line
#         (plus the tail of the build log when the build itself failed).
#
# Boot it with (QEMU 10, OpenSBI from the opensbi package via -bios default):
#   qemu-system-riscv64 -M virt -cpu rv64,sscofpmf=true -m 256M -smp 1 \
#     -nographic -icount shift=0,sleep=off -rtc base=utc,clock=vm \
#     -kernel IMAGE -initrd init.cpio -no-reboot \
#     -append "console=hvc0 earlycon=sbi panic=-1 norandmaps quiet"
# The initramfs is an uncompressed newc cpio with /init; reboot(RB_POWER_OFF)
# in the guest makes QEMU exit (SBI SRST).
set -euo pipefail
# shellcheck source=lab/kernel-source.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernel-source.sh"

CROSS=riscv64-linux-gnu-
FIRMWARE=/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin
# Options that must be =y or the lab is pointless (the fragments' own lines
# are all checked too).
KEY_OPTS="PERF_EVENTS RISCV_PMU_SBI BLK_DEV_INITRD FRAME_POINTER KALLSYMS HVC_RISCV_SBI"

lab_install gcc-riscv64-linux-gnu qemu-system-riscv
[ -r "$FIRMWARE" ] || die "OpenSBI firmware $FIRMWARE missing (package opensbi); QEMU -bios default will not boot"
lab_source
lab_build riscv64 riscv "$CROSS" arch/riscv/boot/Image "$KEY_OPTS" \
    "$LAB_ROOT/lab/common.config" "$LAB_ROOT/lab/riscv64.config"
