"""Disassembly for the SPE annotate view: binutils' objdump over one function of an ELF.

Names and source lines come from hpmkit.profile.symbols (the one symboliser); this module only
turns a run-time address range into instructions. Addresses are run-time: `bias` (the load
address of a PIE) is taken off before objdump sees them and added back to what it prints.
"""
from __future__ import annotations

import shutil
import subprocess

from ..errors import InputError


def tool(name: str) -> str:
    # the aarch64 cross binutils first: SPE PCs are Arm code, the host's objdump may be x86-only
    for cand in (f"aarch64-linux-gnu-{name}", name):
        p = shutil.which(cand)
        if p:
            return p
    raise InputError(name, "is not installed", "install binutils (apt-get install binutils-aarch64-linux-gnu)")


def disassemble(elf: str, start: int, end: int, bias: int = 0) -> list[tuple[int, str]]:
    """[(run-time address, 'mnemonic operands')] of [start, end) with objdump."""
    exe = tool("objdump")
    r = subprocess.run([exe, "-d", "--no-show-raw-insn", f"--start-address={start - bias:#x}",
                        f"--stop-address={end - bias:#x}", elf], capture_output=True, text=True, check=False)
    out = []
    for line in r.stdout.splitlines():
        head, sep, rest = line.partition(":\t")
        if not sep:
            continue
        try:
            a = int(head.strip(), 16)
        except ValueError:
            continue
        out.append((a + bias, " ".join(rest.split())))
    return out
