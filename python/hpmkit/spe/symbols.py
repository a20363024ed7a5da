"""Symbol names for SPE PCs: an ELF's function symbols (pyelftools) or /proc/kallsyms text,
source lines through binutils' addr2line, and objdump disassembly for annotation.

An ELF's addresses are link-time addresses; SPE PCs are run-time addresses. `bias` is added to
the ELF's addresses (the load address of a PIE; 0 for a non-PIE executable or a vmlinux); with
perf.data the bias can come from the MMAP records of the file (hpmkit.spe.perfmeta.mmaps).
"""
from __future__ import annotations

import bisect
import os
import shutil
import subprocess

from ..errors import FormatError, InputError, ReadError


class SymbolTable:
    def __init__(self, path: str = "", bias: int = 0):
        self.path = path
        self.bias = bias
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.names: list[str] = []
        self.is_elf = False

    def _finish(self, entries: list[tuple[int, int, str]]) -> None:
        entries.sort()
        for i, (start, size, name) in enumerate(entries):
            if size == 0:  # kallsyms: a symbol runs to the next one
                size = (entries[i + 1][0] - start) if i + 1 < len(entries) else 4096
            self.starts.append(start)
            self.ends.append(start + size)
            self.names.append(name)

    def lookup(self, pc: int) -> tuple[str, int, int] | None:
        """(name, start, end) in run-time addresses, or None."""
        a = pc - self.bias
        i = bisect.bisect_right(self.starts, a) - 1
        if i >= 0 and a < self.ends[i]:
            return self.names[i], self.starts[i] + self.bias, self.ends[i] + self.bias
        return None

    def name(self, pc: int) -> str | None:
        hit = self.lookup(int(pc))
        return hit[0] if hit else None

    def find(self, name: str) -> tuple[int, int]:
        """Run-time [start, end) of a symbol by name."""
        for s, e, n in zip(self.starts, self.ends, self.names):
            if n == name:
                return s + self.bias, e + self.bias
        raise InputError(self.path, f"has no symbol named {name!r}", "check the name with 'nm' or the hotspots list")


def load_elf(path: str, bias: int = 0) -> SymbolTable:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    with f:
        try:
            elf = ELFFile(f)
            entries = []
            for secname in (".symtab", ".dynsym"):
                sec = elf.get_section_by_name(secname)
                if sec is None:
                    continue
                for s in sec.iter_symbols():
                    if s["st_info"]["type"] == "STT_FUNC" and s["st_value"] and s.name:
                        entries.append((s["st_value"], s["st_size"], s.name))
                if entries:
                    break
        except ELFError as e:
            raise FormatError(path, f"is not a readable ELF file ({e})", "give the binary that ran") from e
    if not entries:
        raise FormatError(path, "has no function symbols (stripped?)", "give an unstripped build or its debug file")
    t = SymbolTable(path, bias)
    t.is_elf = True
    t._finish(list({(a, s, n) for a, s, n in entries}))
    return t


def load_kallsyms(path: str) -> SymbolTable:
    entries = []
    try:
        with open(path) as f:
            for ln, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) < 3:
                    continue
                try:
                    addr = int(parts[0], 16)
                except ValueError:
                    raise FormatError(path, f"line {ln}: {parts[0]!r} is not a hex address",
                                      "give a copy of /proc/kallsyms (read as root)") from None
                if parts[1] in "tTwW" and addr:
                    entries.append((addr, 0, parts[2]))
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    if not entries:
        raise FormatError(path, "has no text symbols with nonzero addresses",
                          "read /proc/kallsyms as root (kptr_restrict hides addresses otherwise)")
    t = SymbolTable(path)
    t._finish(entries)
    return t


def load(path: str, bias: int = 0) -> SymbolTable:
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    return load_elf(path, bias) if magic == b"\x7fELF" else load_kallsyms(path)


def _tool(name: str) -> str:
    for cand in (f"aarch64-linux-gnu-{name}", name):
        p = shutil.which(cand)
        if p:
            return p
    raise InputError(name, "is not installed", "install binutils (apt-get install binutils-aarch64-linux-gnu)")


def source_lines(elf: str, pcs: list[int], bias: int = 0) -> dict[int, str]:
    """pc -> 'file:line' from the ELF's DWARF line table (addr2line); '??:0' when unknown."""
    if not pcs:
        return {}
    exe = _tool("addr2line")
    args = [exe, "-e", elf] + [f"{pc - bias:#x}" for pc in pcs]
    out = subprocess.run(args, capture_output=True, text=True, check=False).stdout.splitlines()
    return {pc: (os.path.basename(line.split(" (")[0].rsplit(":", 1)[0]) + ":" + line.rsplit(":", 1)[-1].split()[0]
                 if ":" in line else "??:0") for pc, line in zip(pcs, out)}


def disassemble(elf: str, start: int, end: int, bias: int = 0) -> list[tuple[int, str]]:
    """[(run-time address, 'mnemonic operands')] of [start, end) with objdump."""
    exe = _tool("objdump")
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


def elf_bias(path: str, mmaps) -> int | None:
    """Load bias of an ELF from perf.data MMAP records: the mapping of a file with the same
    name whose offset falls in an executable PT_LOAD segment; None when it was not mapped."""
    from elftools.elf.elffile import ELFFile
    base = os.path.basename(path)
    with open(path, "rb") as f:
        elf = ELFFile(f)
        segs = [(s["p_offset"], s["p_filesz"], s["p_vaddr"]) for s in elf.iter_segments()
                if s["p_type"] == "PT_LOAD" and s["p_flags"] & 1]
    for m in mmaps:
        if os.path.basename(m.filename) != base:
            continue
        for off, size, vaddr in segs:
            if off <= m.pgoff < off + max(size, 1):
                return m.start - (vaddr + (m.pgoff - off))
    return None
