"""Symbolisation, the one place hpmkit turns addresses into names: kernel addresses through a
kallsyms text, user addresses through the ELF symbol tables (.symtab, else .dynsym) of the DSO
a MMAP/MMAP2 record names, with a build-id check and DWARF line tables for srcline, and its
PLT slots named `<target>@plt` from its PLT relocations (plt.py). Lookups are vectorised
with numpy over sorted starts.

Profiles, compare and the lab look addresses up per DSO (Kallsyms, DsoCache). SPE holds one
file for all its PCs: SymbolMap is that file's names at run-time addresses (an ELF moved by
its load bias, which map_bias finds in the MMAP records, or a kallsyms text), with the same
alias rules and line tables.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FormatError, InputError, ReadError
from .plt import plt_symbols

KALLSYMS_TEXT_TYPES = set("tTwW")
# aliases perf and we use to check that a kallsyms text belongs to the recorded kernel boot
REF_SYMBOLS = ("_text", "_stext")
LAST_SYMBOL_SPAN = 4096     # the last kallsyms symbol has no successor: give it one page


def span_lookup(starts: np.ndarray, ends: np.ndarray, addrs) -> tuple[np.ndarray, np.ndarray]:
    """Index of the [start, end) span holding each address (-1: none) and the offset into it;
    `starts` sorted. Kernel and ELF tables differ only in how they make `ends`."""
    addrs = np.asarray(addrs, dtype=np.uint64)
    if not len(starts):
        return np.full(len(addrs), -1, np.int64), np.zeros(len(addrs), np.uint64)
    i = np.searchsorted(starts, addrs, side="right").astype(np.int64) - 1
    ic = np.maximum(i, 0)
    ok = (i >= 0) & (addrs < ends[ic])
    return np.where(ok, ic, -1), np.where(ok, addrs - starts[ic], 0).astype(np.uint64)


def alias_rank(name: str, weak: bool, glob: bool, sized: bool = True) -> tuple:
    """Sort key choosing one name among symbols at the same address, by perf's rules:
    sized before zero-sized, non-weak, global, fewer leading underscores, longer name."""
    return (not sized, weak, not glob, len(name) - len(name.lstrip("_")), -len(name))


# Section and linker-script markers: symbols the kernel's linker script (or an asm macro)
# places at a section boundary. They share their address with the first function of the
# section (riscv64 6.1: __sched_text_start = __schedule, __lock_text_start = _raw_spin_lock),
# and naming that function after its section hides it from cross-ISA matching. The pattern
# covers the text-section markers of Linux's vmlinux.lds.h and arch linker scripts
# (__X_text_start/_end, __init_begin, __inittext_begin, _stext/_etext, _sinittext, the riscv
# SoC tables in init text) and the linker's own _GLOBAL_OFFSET_TABLE_; it is narrower than
# scripts/kallsyms.c's __X_start/__X_end test, which also takes functions such as
# __start_tty and __hrtick_start.
_MARKER = re.compile(r"_s?text|_etext|_[se]inittext|__\w*text_(start|end|begin)|__\w+_begin"
                     r"|__\w+_table_(start|end)|__(init|exit)\w*_end|_GLOBAL_OFFSET_TABLE_")


def is_marker(name: str) -> bool:
    """Is `name` a section/linker marker rather than a function?"""
    return _MARKER.fullmatch(name) is not None


_SYSCALL_WRAPPER = re.compile(r"__(?:se|do|[a-z0-9]+)_sys_(\w+)")

# Why a name other than perf's was chosen at an address (docs/compare.md, "Symbol names").
ALIAS_RULES = {
    "marker": "a section/linker marker never names a function that shares its address",
    "syscall": "sys_X over its SYSCALL_DEFINE wrappers (__se_sys_X, __<arch>_sys_X) at the same "
               "address; sys_ni_syscall over the cond_syscall() weak stubs aliased to it",
    "memcpy": "one routine serving memcpy and memmove (arm64 memcpy.S) is named memcpy, "
              "the name riscv64's memcpy has",
}


def choose_alias(names: list[str]) -> tuple[int, str | None]:
    """One name for the symbols listed at one address, in listing order.

    perf 6.1 shows the last one listed (symbols__fixup_end gives the earlier aliases zero
    size, symbols__fixup_duplicate then keeps the sized one); /proc/kallsyms lists
    linker-script markers last at an address, so perf names __schedule `__sched_text_start`
    on riscv64. We keep perf's choice except where a rule of ALIAS_RULES applies; returns
    (index, rule or None)."""
    pick, rule = len(names) - 1, None
    if is_marker(names[pick]):
        real = [i for i, n in enumerate(names) if not is_marker(n)]
        if real:
            pick, rule = real[-1], "marker"
    name = names[pick]
    if "sys_ni_syscall" in names and name != "sys_ni_syscall":
        return names.index("sys_ni_syscall"), "syscall"
    m = _SYSCALL_WRAPPER.fullmatch(name)
    if m and f"sys_{m[1]}" in names:
        return names.index(f"sys_{m[1]}"), "syscall"
    if "memmove" in name and name.replace("memmove", "memcpy") in names:
        return names.index(name.replace("memmove", "memcpy")), "memcpy"
    return pick, rule


class Kallsyms:
    """Function symbols of one kernel boot, from /proc/kallsyms text (or a System.map).

    Lines whose address is not hex are skipped and counted (`bad_lines`, the first in
    `first_bad`); read_kallsyms refuses a file with any. Zero addresses (what kptr_restrict
    shows to an unprivileged reader) name nothing and are left out."""

    def __init__(self, text: str, source: str):
        self.source = source
        listed: dict[int, list[tuple[str, str | None]]] = {}
        self.refs: dict[str, int] = {}
        self.bad_lines, self.first_bad, self.zero_addrs = 0, None, 0
        for ln, line in enumerate(text.splitlines(), 1):
            parts = line.split()
            if len(parts) < 3:
                continue
            try:
                a = int(parts[0], 16)
            except ValueError:
                self.bad_lines += 1
                self.first_bad = self.first_bad or (ln, parts[0])
                continue
            if a == 0:
                self.zero_addrs += 1
                continue
            if parts[2] in REF_SYMBOLS and parts[2] not in self.refs:
                self.refs[parts[2]] = a
            if parts[1] not in KALLSYMS_TEXT_TYPES:
                continue
            listed.setdefault(a, []).append((parts[2], parts[3].strip("[]") if len(parts) > 3 else None))
        # one name per address; where a rule overrode perf's choice: addr -> (perf's, ours, rule)
        self.overridden: dict[int, tuple[str, str, str]] = {}
        addrs = sorted(listed)
        self.names, self.mods = [], []
        for a in addrs:
            cands = listed[a]
            i, rule = choose_alias([n for n, _ in cands]) if len(cands) > 1 else (0, None)
            if rule is not None:
                self.overridden[a] = (cands[-1][0], cands[i][0], rule)
            self.names.append(cands[i][0])
            self.mods.append(cands[i][1])
        self.addrs = np.array(addrs, dtype=np.uint64)
        # a symbol ends where the next address starts; the last one gets a page
        self.ends = np.append(self.addrs[1:], self.addrs[-1:] + np.uint64(LAST_SYMBOL_SPAN)) \
            if len(addrs) else self.addrs.copy()

    def __len__(self) -> int:
        return len(self.addrs)

    def ref(self) -> tuple[str, int] | None:
        for n in REF_SYMBOLS:
            if n in self.refs:
                return n, self.refs[n]
        return None

    def lookup(self, addrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Index into names (-1: not covered) and offset from the symbol start."""
        return span_lookup(self.addrs, self.ends, addrs)


KALLSYMS_HINT = "give a copy of the recording machine's /proc/kallsyms (read as root)"


def read_kallsyms(path: str | os.PathLike) -> Kallsyms:
    """A kallsyms file a user gave: every line must be one, and it must name functions."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise ReadError(path, f"cannot read kallsyms: {e.strerror}", KALLSYMS_HINT) from e
    k = Kallsyms(text, os.fspath(path))
    if k.first_bad:
        ln, word = k.first_bad
        raise FormatError(path, f"line {ln}: {word[:40]!r} is not a hex address "
                          f"({k.bad_lines} such lines; not a /proc/kallsyms text?)", KALLSYMS_HINT)
    if not len(k):
        why = (f"all {k.zero_addrs} addresses are 0 (kptr_restrict hid them)" if k.zero_addrs
               else "no function symbols (not a /proc/kallsyms text?)")
        raise FormatError(path, why, KALLSYMS_HINT)
    return k


@dataclass
class ElfImage:
    """Symbols, load segments, build-id and (lazily) line table of one ELF file."""
    path: str
    build_id: bytes | None
    segments: list[tuple[int, int, int]]        # (p_offset, p_filesz, p_vaddr) of PT_LOAD
    starts: np.ndarray
    sizes: np.ndarray
    names: list[str]
    et_dyn: bool
    _lines: tuple | None = field(default=None, repr=False)
    has_dwarf: bool = False
    has_symtab: bool = False
    dwarf_path: str | None = None
    # the segments of `segments` mapped executable (PF_X): where a code MMAP record points
    exec_segments: list[tuple[int, int, int]] = field(default_factory=list)
    # the file's own PLT slots (address, size, "name@plt"): kept apart so that they stay when
    # the symbols of a separate debug file (whose .plt and .rela.plt are NOBITS) replace the
    # file's own (DsoCache.get)
    plt: list[tuple[int, int, str]] = field(default_factory=list)

    def set_symbols(self, starts: np.ndarray, sizes: np.ndarray, names: list[str]) -> None:
        """Function symbols from `starts/sizes/names` plus this file's PLT slots; a slot at an
        address that already has a symbol (a debug file that is a full copy) is not added."""
        have = set(starts.tolist())
        extra = [p for p in self.plt if p[0] not in have]
        names = list(names)
        if extra:
            starts = np.append(starts, np.array([p[0] for p in extra], np.uint64))
            sizes = np.append(sizes, np.array([p[1] for p in extra], np.uint64))
            names += [p[2] for p in extra]
            order = np.argsort(starts, kind="stable")
            starts, sizes = starts[order], sizes[order]
            names = [names[i] for i in order.tolist()]
        self.starts, self.sizes, self.names = starts, sizes, names

    def offset_to_vaddr(self, off: np.ndarray) -> np.ndarray:
        """File offsets to link-time virtual addresses; -1 outside every PT_LOAD."""
        out = np.full(len(off), -1, dtype=np.int64)
        o = off.astype(np.int64)
        for p_off, p_sz, p_va in self.segments:
            m = (o >= p_off) & (o < p_off + max(p_sz, 1))
            out = np.where(m & (out < 0), o - p_off + p_va, out)
        return out

    def ends(self) -> np.ndarray:
        """End of each symbol: start + size, or the next symbol's start for a zero size
        (computed on demand: DsoCache swaps in a debug file's symbols after opening)."""
        nxt = np.append(self.starts[1:], np.uint64(2**64 - 1))
        return np.where(self.sizes > 0, self.starts + self.sizes, nxt)

    def lookup(self, vaddr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return span_lookup(self.starts, self.ends(), vaddr)

    def srclines(self, vaddr: np.ndarray) -> list[str | None]:
        if not self.has_dwarf or not len(vaddr):
            return [None] * len(vaddr)
        if self._lines is None:
            self._lines = _LineTables(self.dwarf_path or self.path)
        return [self._lines.at(int(v)) for v in vaddr]


class _LineTables:
    """DWARF line rows, decoded only for the compile units that hold wanted addresses (found
    through .debug_aranges): a libc debug file has thousands of units, a profile needs few."""
    FULL_DECODE_MAX = 4 << 20   # without aranges, decode everything only for small files

    def __init__(self, path: str):
        from elftools.elf.elffile import ELFFile
        self._f = open(path, "rb")
        self.elf = ELFFile(self._f)
        self.dw = self.elf.get_dwarf_info()
        try:
            self.ar = self.dw.get_aranges()
        except Exception:  # noqa: BLE001 - broken aranges: treat as absent
            self.ar = None
        self.cu_rows: dict[int, tuple] = {}
        self.all_rows = None

    def _rows(self, cus) -> tuple:
        rows: list[tuple[int, str | None, int]] = []
        for cu in cus:
            lp = self.dw.line_program_for_CU(cu)
            if lp is None:
                continue
            files = lp["file_entry"]
            v5 = lp.header["version"] >= 5
            for e in lp.get_entries():
                st = e.state
                if st is None:
                    continue
                if st.end_sequence:
                    rows.append((st.address, None, 0))
                    continue
                k = st.file if v5 else st.file - 1
                name = files[k].name.decode(errors="replace") if 0 <= k < len(files) else "?"
                rows.append((st.address, os.path.basename(name), st.line))
        rows.sort(key=lambda r: r[0])   # stable: an end_sequence before a new row keeps order
        return (np.array([r[0] for r in rows], dtype=np.uint64), [r[1] for r in rows],
                [r[2] for r in rows])

    @staticmethod
    def _find(table, addr: int) -> str | None:
        addrs, files, lines = table
        i = int(np.searchsorted(addrs, np.uint64(addr), side="right")) - 1
        return f"{files[i]}:{lines[i]}" if i >= 0 and files[i] is not None else None

    def at(self, addr: int) -> str | None:
        if self.ar is not None:
            off = self.ar.cu_offset_at_addr(addr)
            if off is None:
                return None
            if off not in self.cu_rows:
                self.cu_rows[off] = self._rows([self.dw.get_CU_at(off)])
            return self._find(self.cu_rows[off], addr)
        if self.all_rows is None:
            sec = self.elf.get_section_by_name(".debug_line")
            big = sec is not None and sec["sh_size"] > self.FULL_DECODE_MAX
            self.all_rows = (np.zeros(0, np.uint64), [], []) if big else \
                self._rows(self.dw.iter_CUs())
        return self._find(self.all_rows, addr) if len(self.all_rows[0]) else None


def elf_build_id(elf) -> bytes | None:
    for sec in elf.iter_sections():
        if sec.header.sh_type == "SHT_NOTE":
            for note in sec.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID":
                    return bytes.fromhex(note["n_desc"])
    return None


def open_elf(path: str) -> ElfImage:
    """Parse an ELF file's symbols; raises OSError or ELFError for unusable files."""
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        elf = ELFFile(f)
        bid = elf_build_id(elf)
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        segs = [(s["p_offset"], s["p_filesz"], s["p_vaddr"]) for s in loads]
        exec_segs = [g for g, s in zip(segs, loads) if s["p_flags"] & PF_X]
        symtab = elf.get_section_by_name(".symtab")
        has_symtab = symtab is not None and symtab.num_symbols() > 1
        starts, sizes, names, ifuncs = _func_symbols(elf, symtab if has_symtab else
                                                     elf.get_section_by_name(".dynsym"))
        try:
            plt = [(a, n, _demangle_plt(name)) for a, n, name in plt_symbols(elf, ifuncs.get)]
        except Exception:  # noqa: BLE001 - a damaged PLT costs its slots, not the functions
            plt = []
        has_dwarf = elf.get_section_by_name(".debug_line") is not None
        et_dyn = elf.header["e_type"] == "ET_DYN"
    img = ElfImage(path, bid, segs, starts, sizes, names, et_dyn, has_dwarf=has_dwarf,
                   has_symtab=has_symtab, exec_segments=exec_segs, plt=plt)
    img.set_symbols(starts, sizes, names)
    return img


def _demangle_plt(name: str) -> str:
    """perf demangles a PLT slot's target before it adds "@plt"."""
    return demangle(name[:-4]) + "@plt" if name.endswith("@plt") else name


_SYM64 = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"),
                   ("value", "<u8"), ("size", "<u8")])
_SYM32 = np.dtype([("name", "<u4"), ("value", "<u4"), ("size", "<u4"), ("info", "u1"),
                   ("other", "u1"), ("shndx", "<u2")])
STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC = 0, 2, 10
STB_GLOBAL, STB_WEAK = 1, 2
SHF_EXECINSTR = 0x4
PF_X = 0x1


def _func_symbols(elf, sec):
    """Code symbols of one symbol table, read as a numpy array (pyelftools' per-symbol parsing
    is ~100x slower on a libc debug file): functions, IFUNCs and labels in executable
    sections; one name per address, chosen by perf's alias rules. Also the IFUNC symbols'
    names by address (the same rules among IFUNCs only), which name IRELATIVE PLT slots."""
    if sec is None or not elf.little_endian:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64), [], {}
    dt = _SYM64 if elf.elfclass == 64 else _SYM32
    raw = np.frombuffer(sec.data(), dtype=dt)
    strtab = elf.get_section(sec["sh_link"]).data()
    typ, bind = raw["info"] & 0xF, raw["info"] >> 4
    nsec = elf.num_sections()
    exec_sec = np.zeros(max(nsec, 1) + 1, bool)
    for i in range(nsec):
        exec_sec[i] = bool(elf.get_section(i)["sh_flags"] & SHF_EXECINSTR)
    shndx = raw["shndx"].astype(np.int64)
    in_sec = (shndx > 0) & (shndx < nsec)          # excludes UNDEF, ABS, COMMON
    ok = in_sec & (raw["value"] != 0) & (raw["name"] != 0) & (
        np.isin(typ, (STT_FUNC, STT_GNU_IFUNC)) |
        ((typ == STT_NOTYPE) & exec_sec[np.where(in_sec, shndx, nsec)]))
    idx = np.nonzero(ok)[0]
    best: dict[int, tuple[tuple, str, int]] = {}
    ifunc: dict[int, tuple[tuple, str]] = {}
    for k in idx.tolist():
        o = int(raw["name"][k])
        name = strtab[o:strtab.index(b"\0", o)].decode("utf-8", "replace")
        if not name or name[0] in "$.":
            continue        # mapping symbols ($x, $d) and local labels
        v, sz, b = int(raw["value"][k]), int(raw["size"][k]), int(bind[k])
        r = alias_rank(name, b == STB_WEAK, b == STB_GLOBAL, sz > 0)
        if v not in best or r < best[v][0]:
            best[v] = (r, name, sz)
        if typ[k] == STT_GNU_IFUNC and (v not in ifunc or r < ifunc[v][0]):
            ifunc[v] = (r, name)
    starts = np.array(sorted(best), dtype=np.uint64)
    return (starts, np.array([best[int(v)][2] for v in starts], dtype=np.uint64),
            [demangle(best[int(v)][1]) for v in starts], {v: n for v, (_, n) in ifunc.items()})


_demangler = None


def demangle(name: str) -> str:
    """A C++ name as perf report prints it ("ns::W::spin" for _ZN2ns1W4spinEi): demangled
    without parameters by src/sym/demangle.c, the code hpm top uses too; other names, and
    all names where no libstdc++ is installed, as they are. The choice among aliases is made
    on the symbol-table names before this, as perf does."""
    global _demangler
    if not name.startswith("_Z"):
        return name
    if _demangler is None:
        import ctypes
        from .. import native
        fn = native.load("hpmperf").pd_demangle
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
        fn.restype = ctypes.c_int
        buf = ctypes.create_string_buffer(1 << 16)

        def run(n: str) -> str:
            k = fn(n.encode("utf-8", "surrogateescape"), buf, len(buf))
            return buf.value.decode("utf-8", "replace") if k > 0 else n
        _demangler = run
    return _demangler(name)


PSEUDO_DSOS = ("[vdso]", "[vsyscall]", "[heap]", "[stack]", "[anon", "//anon", "[uprobes]",
               "[vectors]", "[sigpage]", "/memfd:", "anon_inode:", "/dev/zero")


class DsoCache:
    """Finds and opens the ELF file behind a DSO name, once per (name, build-id)."""

    def __init__(self, symfs: str | None = None, srcline: str = "own"):
        self.symfs = symfs
        # srcline: "own" = DWARF in the mapped file itself (a program built with -g), "all" =
        # also separate debug files (slow for libc: its line programs are large), "none"
        self.srcline = srcline
        self.images: dict[tuple[str, bytes | None], ElfImage | None] = {}
        self.status: dict[str, str] = {}

    def candidates(self, name: str, build_id: bytes | None) -> list[str]:
        out = []
        if self.symfs:
            out.append(os.path.join(self.symfs, name.lstrip("/")))
            out.append(os.path.join(self.symfs, os.path.basename(name)))
        else:
            out.append(name)
        if build_id:
            h = build_id.hex()
            for root in ([self.symfs] if self.symfs else []) + [os.path.expanduser("~")]:
                out.append(os.path.join(root, ".debug", ".build-id", h[:2], h[2:], "elf"))
                out.append(os.path.join(root, ".debug", ".build-id", h[:2], h[2:], "debug"))
        return out

    def debug_candidates(self, name: str, build_id: bytes) -> list[str]:
        """Separate debug files (full .symtab and DWARF) where distributions and perf keep
        them: /usr/lib/debug/.build-id, perf's ~/.debug cache, under --symfs when given."""
        h = build_id.hex()
        roots = [self.symfs] if self.symfs else ["/", os.path.expanduser("~")]
        out = []
        for r in roots:
            out.append(os.path.join(r, "usr/lib/debug/.build-id", h[:2], h[2:] + ".debug"))
            out.append(os.path.join(r, ".debug/.build-id", h[:2], h[2:], "debug"))
            out.append(os.path.join(r, ".debug", name.lstrip("/"), h, "debug"))
            out.append(os.path.join(r, "usr/lib/debug", name.lstrip("/") + ".debug"))
        return out

    def get(self, name: str, build_id: bytes | None) -> ElfImage | None:
        key = (name, build_id)
        if key in self.images:
            return self.images[key]
        img = None
        if name.startswith(PSEUDO_DSOS) or not name.startswith("/"):
            self.status[name] = "no file (pseudo mapping)"
        else:
            why = "not found" + (f" under --symfs {self.symfs}" if self.symfs else "")
            for path in self.candidates(name, build_id):
                if not os.path.isfile(path):
                    continue
                try:
                    cand = open_elf(path)
                except Exception as e:  # noqa: BLE001 - any unreadable file: try the next one
                    why = f"unreadable ELF {path}: {e}"
                    continue
                if build_id and cand.build_id and cand.build_id != build_id:
                    why = (f"build-id mismatch at {path} (recorded {build_id.hex()}, "
                           f"file {cand.build_id.hex()})")
                    continue
                img = cand
                if self.srcline == "none":
                    img.has_dwarf = False
                why = f"ok: {path}" + ("" if build_id else " (no recorded build-id)")
                break
            bid = build_id or (img.build_id if img else None)
            if img is not None and bid and not img.has_symtab:
                # stripped file: symbols and lines from its debug file, load map from itself
                for dpath in self.debug_candidates(name, bid):
                    if not os.path.isfile(dpath):
                        continue
                    try:
                        dbg = open_elf(dpath)
                    except Exception:  # noqa: BLE001
                        continue
                    if dbg.build_id not in (None, bid) or not dbg.has_symtab:
                        continue
                    img.set_symbols(dbg.starts, dbg.sizes, dbg.names)
                    img.has_symtab = True
                    img.has_dwarf = dbg.has_dwarf and self.srcline == "all"
                    img.dwarf_path = dpath
                    why += f", symbols from {dpath}"
                    break
            self.status[name] = why
        self.images[key] = img
        return img


class SymbolMap:
    """Function names at run-time addresses from one file, for a caller that symbolises every
    address with that file (SPE's --symbols): an ELF's symbols moved by `bias` (the load
    address of a PIE or shared library, 0 for an executable or a vmlinux), or a kallsyms
    text. The names are the ones profiles and compare give, by the same alias rules."""

    def __init__(self, path: str, starts, ends, names: list[str], bias: int = 0,
                 image: ElfImage | None = None):
        self.path = path
        self.bias = bias
        self.image = image
        # Python lists: SPE asks for one PC at a time, where bisect beats a numpy call
        self.starts = [int(a) for a in starts]
        self.ends = [int(a) for a in ends]
        self.names = list(names)

    @classmethod
    def of_elf(cls, img: ElfImage, bias: int = 0) -> "SymbolMap":
        return cls(img.path, img.starts, img.ends(), img.names, bias, img)

    @classmethod
    def of_kallsyms(cls, k: Kallsyms) -> "SymbolMap":
        return cls(k.source, k.addrs, k.ends, k.names)

    @property
    def is_elf(self) -> bool:
        return self.image is not None

    def lookup(self, pc: int) -> tuple[str, int, int] | None:
        """(name, start, end) in run-time addresses, or None."""
        import bisect
        a = pc - self.bias
        i = bisect.bisect_right(self.starts, a) - 1
        if i >= 0 and a < self.ends[i]:
            return self.names[i], self.starts[i] + self.bias, self.ends[i] + self.bias
        return None

    def name(self, pc: int) -> str | None:
        hit = self.lookup(int(pc))
        return hit[0] if hit else None

    def find(self, name: str) -> tuple[int, int]:
        """Run-time [start, end) of a function by name."""
        try:
            i = self.names.index(name)
        except ValueError:
            raise InputError(self.path, f"has no function named {name!r}",
                             "check the name with 'nm' or the hotspots list") from None
        return self.starts[i] + self.bias, self.ends[i] + self.bias

    def source_lines(self, pcs: list[int]) -> dict[int, str]:
        """pc -> 'file:line' from the ELF's DWARF line table; '??:0' where it has none (the
        text addr2line prints)."""
        if self.image is None or not pcs:
            return {pc: "??:0" for pc in pcs}
        va = np.array([pc - self.bias for pc in pcs], dtype=np.uint64)
        return {pc: s or "??:0" for pc, s in zip(pcs, self.image.srclines(va))}


def load(path: str, bias: int = 0) -> SymbolMap:
    """The symbols of an ELF file or a kallsyms copy, told apart by the ELF magic."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    if magic != b"\x7fELF":
        return SymbolMap.of_kallsyms(read_kallsyms(path))
    try:
        img = open_elf(path)
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from e
    except Exception as e:  # noqa: BLE001 - pyelftools' errors on a damaged file are many kinds
        raise FormatError(path, f"is not a readable ELF file ({e})", "give the binary that ran") from e
    if not len(img.starts):
        raise FormatError(path, "has no function symbols (stripped?)",
                          "give an unstripped build or its debug file")
    return SymbolMap.of_elf(img, bias)


def map_bias(img: ElfImage, maps) -> int | None:
    """Load bias of an ELF from its mappings (hpmkit.perfdata.records.Mmap, as the reader
    decodes MMAP/MMAP2): the executable mapping of a file with the same base name whose offset
    falls in an executable PT_LOAD segment; None when the file was not mapped."""
    base = os.path.basename(img.path)
    for m in maps:
        # a data mapping (perf record -d) of the file says nothing about where its code is
        if not m.exec or os.path.basename(m.filename) != base:
            continue
        for off, size, vaddr in img.exec_segments:
            if off <= m.pgoff < off + max(size, 1):
                return m.start - (vaddr + (m.pgoff - off))
    return None
