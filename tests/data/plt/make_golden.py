#!/usr/bin/env python3
"""The PLT slots of an ELF file as binutils shows them, independently of hpmkit: one line
per slot, `ADDRESS NAME OBJDUMP_NAME`.

Where each slot starts and which GOT word it loads come from objdump's disassembly of the
PLT sections (x86-64: the `jmp *ADDR(%rip)` comment, after an optional endbr64; aarch64:
`adrp x16, PAGE` + `ldr x17, [x16, #OFF]`, after an optional `bti`; riscv64: the `ld t3`
comment after `auipc t3`), which relocation owns that word from `readelf -r`, and the
IFUNC an IRELATIVE relocation's addend points at from `readelf -s` (perf >= 6.3's name;
among IFUNC aliases the one perf's rules choose: strong, global, fewer leading
underscores, longer). OBJDUMP_NAME is objdump's own label for such a slot
(`*ABS*+0xADDEND@plt`), NAME otherwise.

Usage: make_golden.py FILE [OBJDUMP] (OBJDUMP: the binutils objdump for FILE's machine;
readelf is machine-independent)."""
from __future__ import annotations

import re
import subprocess
import sys

OBJDUMP = {62: "x86_64-linux-gnu-objdump", 183: "aarch64-linux-gnu-objdump",
           243: "riscv64-linux-gnu-objdump"}
SECTIONS = (".plt", ".plt.sec", ".plt.bnd", ".plt.got")


def zeroed_plt(src, dst):
    """A copy of src at dst with its .plt section's bytes zeroed (stubs that do not decode:
    the fallback to binutils' rule); returns dst."""
    from elftools.elf.elffile import ELFFile
    raw = bytearray(open(src, "rb").read())
    with open(src, "rb") as fh:
        plt = ELFFile(fh).get_section_by_name(".plt")
        off, size = plt["sh_offset"], plt["sh_size"]
    raw[off:off + size] = bytes(size)
    with open(dst, "wb") as out:
        out.write(bytes(raw))
    return dst


def machine(path: str) -> int:
    with open(path, "rb") as f:
        return int.from_bytes(f.read(20)[18:20], "little")


def tool_out(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def instructions(path: str, objdump: str) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands and comment) of the PLT sections' instructions."""
    have = set(re.findall(r"\]\s+(\.\S+)", tool_out("readelf", "-SW", path)))
    args = [a for s in SECTIONS if s in have for a in ("-j", s)]
    out = []
    for line in tool_out(objdump, "-d", "-w", *args, path).splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\t(?:[0-9a-f]{2,8} ?)+\s*\t(\S+)\s*(.*)$", line)
        if m:
            out.append((int(m[1], 16), m[2], m[3]))
    return out


def slots(mach: int, ins: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """(slot start, GOT word) from the disassembly."""
    out = []
    for k, (addr, mn, ops) in enumerate(ins):
        prev = ins[k - 1] if k else (None, "", "")
        if mach == 62:
            # "jmp *0x2fe2(%rip)        # 4018 <x>"; IBT/BND stubs: "bnd jmp *..."
            m = re.match(r"(?:jmp\s+)?\*0x[0-9a-f]+\(%rip\)\s+# (?:0x)?([0-9a-f]+)", ops)
            if (mn == "jmp" or (mn == "bnd" and ops.startswith("jmp"))) and m:
                start = prev[0] if prev[1] == "endbr64" and prev[0] == addr - 4 else addr
                out.append((start, int(m[1], 16)))
        elif mach == 183:
            nxt = ins[k + 1] if k + 1 < len(ins) else (None, "", "")
            if mn == "adrp" and ops.startswith("x16,") and nxt[1] == "ldr" \
                    and re.match(r"[xw]17, \[x16", nxt[2]):
                page = int(re.match(r"x16, ([0-9a-f]+)", ops)[1], 16)
                off = re.search(r"#(\d+)\]", nxt[2])
                start = prev[0] if prev[1] == "bti" and prev[0] == addr - 4 else addr
                out.append((start, page + (int(off[1]) if off else 0)))
        elif mach == 243:
            m = re.match(r"t3,-?\d+\(t3\)\s+# (?:0x)?([0-9a-f]+)", ops)
            if mn in ("ld", "lw") and m and prev[1] == "auipc" and prev[2].startswith("t3,"):
                out.append((prev[0], int(m[1], 16)))
    return out


def relocs(path: str) -> dict[int, tuple[str, str, int]]:
    """GOT word -> (type, symbol, addend) of .rela.plt (first) and .rela.dyn."""
    out: dict[int, tuple[str, str, int]] = {}
    sec = None
    for line in tool_out("readelf", "-rW", path).splitlines():
        m = re.match(r"Relocation section '(\S+)'", line)
        if m:
            sec = m[1]
            continue
        f = line.split()
        if len(f) < 3 or not re.fullmatch(r"[0-9a-f]{8,16}", f[0]) or sec is None:
            continue
        typ = f[2]
        if len(f) >= 7 and f[5] == "+":             # value name + addend
            name, addend = f[4].split("@")[0], int(f[6], 16)
        else:                                       # no symbol: addend only
            name, addend = "", int(f[-1], 16) if len(f) >= 4 else 0
        off = int(f[0], 16)
        if sec.endswith(".plt") or off not in out:
            out[off] = (typ, name, addend)
    return out


def ifuncs(path: str) -> dict[int, str]:
    """address -> IFUNC name, the one perf's alias rules choose."""
    best: dict[int, tuple[tuple, str]] = {}
    for line in tool_out("readelf", "-sW", path).splitlines():
        f = line.split()
        if len(f) < 8 or f[3] != "IFUNC" or f[6] == "UND":
            continue
        name, bind = f[7].split("@")[0], f[4]
        rank = (bind == "WEAK", bind != "GLOBAL", len(name) - len(name.lstrip("_")), -len(name))
        v = int(f[1], 16)
        if v not in best or rank < best[v][0]:
            best[v] = (rank, name)
    return {v: n for v, (_, n) in best.items()}


def golden(path: str, objdump: str | None = None) -> list[tuple[int, str, str]]:
    mach = machine(path)
    rel, ifn = relocs(path), ifuncs(path)
    out = {}
    for start, got in slots(mach, instructions(path, objdump or OBJDUMP[mach])):
        if got not in rel or start in out:
            continue
        typ, name, addend = rel[got]
        if typ.endswith("IRELATIVE"):
            absname = f"*ABS*+{addend:#x}@plt"
            out[start] = (f"{ifn[addend]}@plt" if addend in ifn else absname, absname)
        elif typ.endswith(("JUMP_SLOT", "GLOB_DAT")) and name:
            out[start] = (f"{name}@plt", f"{name}@plt")
    return [(a, n, o) for a, (n, o) in sorted(out.items())]


if __name__ == "__main__":
    for a, n, o in golden(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None):
        print(f"{a:#x} {n} {o}")
