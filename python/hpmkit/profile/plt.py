"""PLT slots named `<target>@plt`, as perf and objdump name them, for x86-64, aarch64 and
riscv64 ELF objects.

A slot is found by what it does: every PLT stub loads its target from one GOT word, and the
dynamic relocation at that word (.rela.plt: JUMP_SLOT or IRELATIVE; for x86-64's .plt.got,
.rela.dyn's GLOB_DAT) names the target. The stubs are decoded per machine:

* x86-64 (binutils' own method, _bfd_x86_elf_get_synthetic_symtab): `jmp *disp32(%rip)`,
  after an optional endbr64 and bnd prefix, at the start of each entry of .plt (lazy layout;
  its header and IBT's lazy `push; jmp` stubs load no GOT word of a relocation and are
  skipped), .plt.sec (IBT), .plt.bnd (MPX) and .plt.got. x86 ld writes IRELATIVE
  relocations after all JUMP_SLOT ones, so relocation i is not slot i (libc.so.6).
* aarch64: `adrp x16, page; ldr x17, [x16, #off]` (ILP32: `ldr w17`), the slot starting at
  a `bti` just before the adrp. binutils computes .plt + 32 + i * (16 or 24 with BTI/PAC
  stubs) from the DT_AARCH64_BTI_PLT/PAC_PLT tags and e_type; decoding gives the same
  addresses where that rule holds and the right ones where it does not (a PIE whose BTI
  stubs are 24 bytes long while the rule says 16: Debian's arm64 rt-tests).
* riscv64: `auipc t3, hi; ld t3, lo(t3)` (rv32: `lw`), as binutils' .plt + 32 + i * 16.

Where no stub decodes (an unknown stub layout), aarch64 and riscv fall back to binutils'
rule. A relocation without a symbol (IRELATIVE: a locally defined IFUNC, e.g. libc calling
its own memcpy) is named after the IFUNC symbol at its addend, as perf >= 6.3 does (objdump
prints `*ABS*+0x<addend>@plt`, used here when no such symbol exists).

perf 6.1 (its source) names relocation i at .plt + sh_entsize * (i + 1) on x86-64 and
riscv64 and .plt + 32 + 16 * i on aarch64: right for the lazy .plt of an object without
IRELATIVE relocations; it misnames libc's own slots (seen here) and riscv64's (one 16-byte
header short of binutils' 32) and leaves .plt.sec, .plt.got and 24-byte aarch64 stubs
unnamed or misplaced.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

EM_X86_64, EM_AARCH64, EM_RISCV = 62, 183, 243
# relocation types that own a PLT slot (JUMP_SLOT, IRELATIVE); IRELATIVE; GLOB_DAT, whose
# words x86-64's .plt.got stubs load
_SLOT_TYPES = {EM_X86_64: {7, 37}, EM_AARCH64: {1026, 1032}, EM_RISCV: {5, 58}}
_IRELATIVE = {EM_X86_64: 37, EM_AARCH64: 1032, EM_RISCV: 58}
_GLOB_DAT = {EM_X86_64: 6}
DT_AARCH64_BTI_PLT, DT_AARCH64_PAC_PLT = 0x70000001, 0x70000003

_RELA64 = np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])
_RELA32 = np.dtype([("offset", "<u4"), ("info", "<u4"), ("addend", "<i4")])
_REL64 = np.dtype([("offset", "<u8"), ("info", "<u8")])
_REL32 = np.dtype([("offset", "<u4"), ("info", "<u4")])
_SYM64_NAME = np.dtype([("name", "<u4"), ("pad", "V20")])
_SYM32_NAME = np.dtype([("name", "<u4"), ("pad", "V12")])


@dataclass(frozen=True)
class Reloc:
    offset: int         # the GOT word
    type: int
    symbol: str         # "" for none (IRELATIVE)
    addend: int


def _sec(elf, name: str):
    s = elf.get_section_by_name(name)
    if s is None or s["sh_type"] == "SHT_NOBITS" or s["sh_size"] == 0:
        return None     # a separate debug file keeps the headers, not the contents
    return s


def _relocs(elf, sec, types: set[int]) -> list[Reloc]:
    """The relocations of `types` in one REL/RELA section, with their symbols' names."""
    if sec is None or sec["sh_type"] not in ("SHT_RELA", "SHT_REL"):
        return []
    wide = elf.elfclass == 64
    dt = (_RELA64 if wide else _RELA32) if sec["sh_type"] == "SHT_RELA" else \
        (_REL64 if wide else _REL32)
    data = sec.data()
    raw = np.frombuffer(data, dtype=dt, count=len(data) // dt.itemsize)
    shift, mask = (32, 0xFFFFFFFF) if wide else (8, 0xFF)
    raw = raw[np.isin(raw["info"] & mask, list(types))]    # .rela.dyn can be 10^5 entries
    names: dict[int, str] = {}
    link = sec["sh_link"]
    if 0 < link < elf.num_sections():
        symsec = elf.get_section(link)
        if symsec["sh_type"] in ("SHT_DYNSYM", "SHT_SYMTAB"):     # not a debug file's NOBITS
            sdt = _SYM64_NAME if wide else _SYM32_NAME
            sdata = symsec.data()
            syms = np.frombuffer(sdata, dtype=sdt, count=len(sdata) // sdt.itemsize)
            strtab = elf.get_section(symsec["sh_link"]).data()
            for k in {int(i) >> shift for i in raw["info"]}:
                if 0 < k < len(syms):
                    o = int(syms["name"][k])
                    end = strtab.find(b"\0", o)
                    names[k] = strtab[o:end if end >= 0 else None].decode("utf-8", "replace")
    add = raw["addend"] if "addend" in dt.names else np.zeros(len(raw), np.int64)
    return [Reloc(int(o), int(i) & mask, names.get(int(i) >> shift, ""), int(a))
            for o, i, a in zip(raw["offset"], raw["info"], add)]


def _u32(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<u4", count=len(data) // 4)


def _x86_64_got(entry: bytes, addr: int) -> int | None:
    """GOT word of `jmp *disp32(%rip)` at the start of an x86-64 PLT entry."""
    n = 4 if entry[:4] == b"\xf3\x0f\x1e\xfa" else 0      # endbr64
    if entry[n:n + 1] == b"\xf2":                          # bnd
        n += 1
    if entry[n:n + 2] != b"\xff\x25" or len(entry) < n + 6:
        return None
    disp = int.from_bytes(entry[n + 2:n + 6], "little", signed=True)
    return addr + n + 6 + disp


def _x86_64_slots(elf) -> list[tuple[int, int, int]]:
    """(slot start, size, GOT word) of every decodable x86-64 PLT entry."""
    out = []
    for name in (".plt", ".plt.sec", ".plt.bnd", ".plt.got"):
        s = _sec(elf, name)
        if s is None:
            continue
        # lazy, IBT and BND stubs are 16 bytes, non-lazy ones (.plt.got, a static program's
        # IFUNC-only .plt, which has no sh_entsize) 8 or 16: 8-byte ones are 8-byte aligned
        step = s["sh_entsize"] if s["sh_entsize"] in (8, 16) else \
            (8 if s["sh_addralign"] == 8 else 16)
        data, base = s.data(), s["sh_addr"]
        for k in range(0, len(data) - 5, step):
            got = _x86_64_got(data[k:k + step], base + k)
            if got is not None:
                out.append((base + k, step, got))
    return out


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def _aarch64_slots(plt, ilp32: bool) -> list[tuple[int, int]]:
    """(slot start, GOT word) of `adrp x16; ldr x17|w17, [x16, #off]` pairs in .plt."""
    w = _u32(plt.data())
    base = plt["sh_addr"]
    ldr, scale = (0xB9400211, 4) if ilp32 else (0xF9400211, 8)
    out = []
    for i in np.nonzero(((w[:-1] & 0x9F00001F) == 0x90000010) &
                        ((w[1:] & 0xFFC003FF) == ldr))[0].tolist():
        a, b, pc = int(w[i]), int(w[i + 1]), base + 4 * i
        page = _sext((((a >> 5) & 0x7FFFF) << 2) | ((a >> 29) & 3), 21) << 12
        got = (pc & ~0xFFF) + page + ((b >> 10) & 0xFFF) * scale
        bti = i > 0 and (int(w[i - 1]) & 0xFFFFFF3F) == 0xD503241F
        out.append((pc - 4 if bti else pc, got))
    return out


def _riscv_slots(plt, rv32: bool) -> list[tuple[int, int]]:
    """(slot start, GOT word) of `auipc t3, hi; ld|lw t3, lo(t3)` pairs in .plt."""
    w = _u32(plt.data())
    base = plt["sh_addr"]
    load = 0xE2E03 if rv32 else 0xE3E03     # rd = rs1 = t3 (x28), funct3 lw / ld
    out = []
    for i in np.nonzero(((w[:-1] & 0xFFF) == 0xE17) & ((w[1:] & 0xFFFFF) == load))[0].tolist():
        a, b, pc = int(w[i]), int(w[i + 1]), base + 4 * i
        out.append((pc, pc + _sext(a & 0xFFFFF000, 32) + _sext(b >> 20, 12)))
    return out


def _aarch64_stub_size(elf) -> int:
    """binutils' aarch64 stub size (elfNN_aarch64_plt_sym_val) from the .dynamic tags."""
    dyn = elf.get_section_by_name(".dynamic")
    tags = set()
    if dyn is not None and dyn["sh_type"] == "SHT_DYNAMIC":
        tags = {t.entry.d_tag for t in dyn.iter_tags()}
    bti = DT_AARCH64_BTI_PLT in tags or "DT_AARCH64_BTI_PLT" in tags
    pac = DT_AARCH64_PAC_PLT in tags or "DT_AARCH64_PAC_PLT" in tags
    exe = elf.header["e_type"] == "ET_EXEC"
    return 24 if pac or (bti and exe) else 16


def _sized(found: list[tuple[int, int]], default: int, end: int) -> list[tuple[int, int, int]]:
    """(start, size, GOT word) for the (start, GOT word) slots of one section: each runs to
    the next one, at most the common stub size (the last is followed by the section end or,
    on aarch64, a TLSDESC stub)."""
    found = sorted(set(found))
    gaps = [b[0] - a[0] for a, b in zip(found, found[1:]) if b[0] > a[0]]
    size = min(gaps) if gaps else default
    out = []
    for k, (start, got) in enumerate(found):
        nxt = found[k + 1][0] if k + 1 < len(found) else end
        out.append((start, max(min(size, nxt - start), 1), got))
    return out


def plt_symbols(elf, ifunc_name: Callable[[int], str | None] | None = None
                ) -> list[tuple[int, int, str]]:
    """(address, size, "name@plt") of the PLT slots of an ELF object (pyelftools ELFFile),
    sorted by address; [] for other machines or an object without PLT relocations.
    `ifunc_name(addr)` names the IFUNC an IRELATIVE relocation's addend points at."""
    mach = elf.header["e_machine"]
    mach = {"EM_X86_64": EM_X86_64, "EM_AARCH64": EM_AARCH64, "EM_RISCV": EM_RISCV}.get(mach, mach)
    if mach not in _SLOT_TYPES or not elf.little_endian:
        return []
    rela = _sec(elf, ".rela.plt") or _sec(elf, ".rel.plt")
    plt_relocs = _relocs(elf, rela, _SLOT_TYPES[mach])
    by_got = {}
    if mach in _GLOB_DAT and _sec(elf, ".plt.got") is not None:
        for sec_name in (".rela.dyn", ".rel.dyn"):
            for r in _relocs(elf, _sec(elf, sec_name), {_GLOB_DAT[mach]}):
                if r.symbol:
                    by_got.setdefault(r.offset, r)
    by_got.update({r.offset: r for r in plt_relocs})
    if not by_got:
        return []

    plt = _sec(elf, ".plt")
    if mach == EM_X86_64:
        slots = _x86_64_slots(elf)
    elif plt is None:
        return []
    else:
        if mach == EM_AARCH64:
            found = _aarch64_slots(plt, elf.elfclass == 32)
            stub = _aarch64_stub_size(elf)
        else:
            found = _riscv_slots(plt, elf.elfclass == 32)
            stub = 16
        found = [(s, g) for s, g in found if g in by_got]
        if not found and plt_relocs:    # no stub decodes: binutils' rule, relocation i in slot i
            found = [(plt["sh_addr"] + 32 + i * stub, r.offset) for i, r in enumerate(plt_relocs)]
        slots = _sized(found, stub, plt["sh_addr"] + plt["sh_size"])

    out = {}
    for start, size, got in slots:
        r = by_got.get(got)
        if r is None or start in out:
            continue
        name = r.symbol
        if not name and r.type == _IRELATIVE[mach]:
            name = (ifunc_name(r.addend) if ifunc_name else None) or f"*ABS*+{r.addend:#x}"
        if not name:
            continue
        out[start] = (start, size, f"{name}@plt")
    return [out[a] for a in sorted(out)]
