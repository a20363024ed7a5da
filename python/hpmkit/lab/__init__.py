"""The lab: real riscv64 and aarch64 Linux guests under QEMU with exact instruction counts.

`hpmkit lab run --arch riscv64 -- hpm stat -e instructions:u -- hpm-loop 1000` boots a
kernel (prepared once, cached in .cache/lab/), runs the command as the guest's only job
and brings back its exit status, stdout, stderr and the files it wrote in its folder.
"""
