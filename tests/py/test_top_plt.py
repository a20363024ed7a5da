"""hpm top's own symboliser (src/sym/tasksyms.c with src/sym/plt.c, for targets without
Python) names PLT slots `<target>@plt` as hpmkit's Python symbols (hpmkit.profile.plt) and
objdump do: by decoding each stub's GOT load and matching it to the relocation of that GOT
word, not by `.plt header + 16 * i`, which misnames x86-64 libc's own slots (IRELATIVE
relocations are written last), .plt.sec/.plt.got, aarch64's 24-byte BTI stubs and riscv64.

The C view comes from top_syms.c's test hook: HPM_TOP_SYMS_DUMP=FILE makes `hpm top` print
the table it names FILE's addresses with ("START END NAME" lines) and exit. Checked:

* every fixture of tests/data/plt (x86-64, aarch64, riscv64: the C code parses foreign-ISA
  files) against its committed golden list (objdump's disassembly + readelf, see
  make_golden.py), with hpmkit's slot sizes; the BTI-PIE and undecodable-stub variants;
* this machine's libc (its IRELATIVE slots out of relocation order) and a few other programs
  and libraries, and static programs, against make_golden and objdump's own labels;
* the cross toolchains' libraries and the lab's rt-tests guest binaries against hpmkit's
  names (which test_symbols_plt checks against their disassembly);
* a live `hpm top` of a PLT hot loop names samples in the program's slots.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import HPM, ROOT, require, run

from hpmkit.profile.symbols import open_elf

# the fixtures, their objdump-derived lists and hpmkit's names: the Python test's own
from test_symbols_plt import DATA, FIXTURES, RT_TESTS, committed, dm, make_golden  # noqa: E402


def c_symbols(path) -> list[tuple[int, int, str]]:
    """(start, end, name) of hpm top's symbol table for an ELF file (the test hook)."""
    p = run([require(HPM), "top", "-b", "--", "true"], env={"HPM_TOP_SYMS_DUMP": str(path)})
    assert p.returncode == 0 and not p.stderr, (p.returncode, p.stderr)
    out = []
    for line in p.stdout.splitlines():
        a, e, n = line.split(" ", 2)
        out.append((int(a, 16), int(e, 16), n))
    return out


def c_plt(path) -> list[tuple[int, int, str]]:
    """(address, size, "name@plt") of the PLT slots in hpm top's table, by address."""
    return [(a, e - a, n) for a, e, n in c_symbols(path) if n.endswith("@plt")]


def c_names(path) -> list[tuple[int, str]]:
    return [(a, n) for a, _, n in c_plt(path)]


def objdump_labels(path: Path, objdump: str) -> dict[int, str]:
    """objdump's `<name@plt>` labels in the PLT sections (not `<name@plt-0x10>` ones)."""
    out = subprocess.run([objdump, "-d", "-j", ".plt", "-j", ".plt.sec", "-j", ".plt.got",
                          str(path)], capture_output=True, text=True).stdout
    return {int(m[1], 16): m[2] for m in re.finditer(r"^([0-9a-f]+) <(.*@plt)>:$", out, re.M)}


def elf_files(d: Path) -> list[Path]:
    return [f for f in sorted(d.iterdir()) if f.is_file() and not f.is_symlink()
            and f.read_bytes()[:4] == b"\x7fELF"]


# ------------------------------------------------------------------------------------------
# the fixtures of all three machines


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_slots_equal_golden(name):
    path = DATA / "bin" / name
    gold = committed(name)
    assert gold
    assert c_names(path) == [(a, dm(n)) for a, n, _ in gold]
    # one stub each, as hpmkit sizes them: 16 bytes (x86-64 .plt/.plt.sec, riscv64, plain
    # aarch64), 24 (aarch64 BTI or PAC stubs), 8 or 16 (x86-64 .plt.got)
    slots = c_plt(path)
    assert slots == [tuple(s) for s in open_elf(str(path)).plt]
    want = {"x86_64": {8, 16}, "riscv64": {16}}.get(name.split("-")[0])
    if want is None:
        want = {24} if ("bti" in name and "nopie" in name) or "pac" in name else {16}
    assert {s for _, s, _ in slots} <= want


def test_fixtures_cover_three_machines_and_the_ifunc_slot():
    """The C code read foreign-ISA files here: every fixture's machine is named, and each
    one's local IFUNC slot (an IRELATIVE relocation) is named after the IFUNC."""
    machines = {make_golden.machine(str(DATA / "bin" / n)) for n in FIXTURES}
    assert machines == {62, 183, 243}
    for name in FIXTURES:
        names = [n for _, n in c_names(DATA / "bin" / name)]
        ifunc = "mylen@plt" if name.endswith(".so") else "pick@plt"
        assert (ifunc in names) != ("stripped" in name), name
        if "stripped" in name:
            assert any(n.startswith("*ABS*+0x") for n in names)


def test_bti_stubs_in_a_pie(tmp_path):
    """24-byte BTI stubs in an ET_DYN object (Debian's arm64 PIEs, where binutils' rule says
    16): the aarch64-bti-nopie fixture made ET_DYN keeps its slots, found by decoding."""
    raw = bytearray((DATA / "bin" / "aarch64-bti-nopie").read_bytes())
    assert struct.unpack_from("<H", raw, 16)[0] == 2          # ET_EXEC
    struct.pack_into("<H", raw, 16, 3)                         # ET_DYN
    f = tmp_path / "bti-pie"
    f.write_bytes(bytes(raw))
    assert c_names(f) == [(a, dm(n)) for a, n, _ in committed("aarch64-bti-nopie")]
    assert {s for _, s, _ in c_plt(f)} == {24}


@pytest.mark.parametrize("name", ["aarch64-lazy", "aarch64-pac", "aarch64-bti-nopie",
                                  "riscv64-lazy", "riscv64-lib.so"])
def test_undecodable_stubs_use_binutils_rule(tmp_path, name):
    """Stubs that do not decode (zeroed) fall back to binutils' rule, relocation i at
    .plt + 32 + i * stub size (24 for PAC stubs and BTI ones in a program)."""
    f = make_golden.zeroed_plt(DATA / "bin" / name, tmp_path / name)
    assert c_names(f) == [(a, dm(n)) for a, n, _ in committed(name)]
    assert c_plt(f) == [tuple(s) for s in open_elf(str(f)).plt]


def test_not_an_elf_file(tmp_path):
    f = tmp_path / "text"
    f.write_text("hello\n")
    p = run([require(HPM), "top", "-b", "--", "true"], env={"HPM_TOP_SYMS_DUMP": str(f)})
    assert p.returncode == 1 and p.stdout == ""
    assert "no 64-bit little-endian ELF file" in p.stderr


# ------------------------------------------------------------------------------------------
# this machine's objects


SYSTEM = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
          "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
          "/usr/bin/ls", "/usr/bin/bash", "/usr/bin/python3", "/usr/bin/git", "/usr/bin/gdb",
          "/usr/bin/perf"]


@pytest.mark.parametrize("path", SYSTEM)
def test_system_objects_equal_objdump(path):
    """This machine's libc and other objects: hpm top's slots are objdump's labels."""
    p = Path(path).resolve()
    if not p.exists():
        if "libc.so" in path:
            pytest.fail(f"{path} is missing")
        pytest.skip(f"{path} is not installed")
    gold = make_golden.golden(str(p), "objdump")
    assert gold
    assert objdump_labels(p, "objdump") == {a: o for a, _, o in gold}
    assert c_names(p) == [(a, dm(n)) for a, n, _ in gold]


def test_libc_own_slots_are_out_of_relocation_order():
    """What the old `.plt + 16 * (i + 1)` rule got wrong, present in this libc: IRELATIVE
    slots (objdump's *ABS* names) before JUMP_SLOT ones while .rela.plt lists them last."""
    p = Path("/lib/x86_64-linux-gnu/libc.so.6").resolve()
    gold = make_golden.golden(str(p), "objdump")
    absolute = [i for i, (_, _, o) in enumerate(gold) if o.startswith("*ABS*")]
    named = [i for i, (_, _, o) in enumerate(gold) if not o.startswith("*ABS*")]
    if not absolute or not named:
        pytest.skip("this libc has no IRELATIVE and JUMP_SLOT slots both")
    assert min(absolute) < max(named)
    rel = subprocess.run(["readelf", "-rW", str(p)], capture_output=True, text=True).stdout
    plt_rel = [ln for ln in rel[rel.index("'.rela.plt'"):].splitlines()[2:] if ln.strip()]
    types = ["IRELATIVE" in ln for ln in plt_rel if "R_X86_64" in ln]
    assert types == sorted(types)           # all JUMP_SLOTs, then all IRELATIVEs
    names = dict(c_names(p))
    assert all(names[gold[i][0]] == dm(gold[i][1]) for i in absolute)
    assert not any(names[gold[i][0]].startswith("*ABS*") for i in absolute)


@pytest.mark.parametrize("static", ["-static", "-static-pie"])
def test_static_program(tmp_path, static):
    """A static program's PLT holds only IRELATIVE slots (libc's IFUNCs: strlen, memcpy...),
    named after the IFUNC as perf >= 6.3 does (from .symtab); stripped, after their addends
    as objdump does. objdump labels none (no dynamic symbols), so the reference is
    make_golden's reading of the disassembly and readelf; hpm top's C names and hpmkit's."""
    from test_symbols_plt import ours
    exe = tmp_path / "static"
    p = subprocess.run(["gcc", "-O1", static, "-o", exe, DATA / "plt_loop.c"],
                       capture_output=True, text=True)
    if p.returncode:
        pytest.skip(f"no static libc: {p.stderr.strip()[:200]}")
    gold = make_golden.golden(str(exe), "objdump")
    assert len(gold) > 3 and all(not n.startswith("*ABS*") for _, n, _ in gold)
    assert c_names(exe) == ours(exe) == [(a, dm(n)) for a, n, _ in gold]
    subprocess.run(["strip", "-s", exe], check=True)
    assert c_names(exe) == ours(exe) == [(a, dm(o)) for a, _, o in gold]


@pytest.mark.parametrize("arch", ["aarch64", "riscv64"])
def test_cross_libraries_equal_hpmkit(arch):
    """The cross toolchains' libraries (libc, libstdc++, the sanitizers...): hpm top's slots
    are hpmkit's, names and sizes (test_symbols_plt checks hpmkit's against objdump)."""
    d = Path(f"/usr/{arch}-linux-gnu/lib")
    if not d.is_dir():
        pytest.skip(f"no {arch} cross toolchain (gcc-{arch}-linux-gnu)")
    files = [f for f in elf_files(d) if ".so" in f.name]
    slots = 0
    for f in files:
        mine = c_plt(f)
        assert mine == [tuple(s) for s in open_elf(str(f)).plt], f.name
        slots += len(mine)
    assert len(files) > 10 and slots > 300


@pytest.mark.parametrize("arch", ["aarch64", "riscv64"])
def test_rt_tests_guest_binaries_equal_hpmkit(arch):
    """Debian's rt-tests (the lab's guest programs; aarch64 PIEs with 24-byte BTI stubs)."""
    d = RT_TESTS / arch / "bin"
    if not d.is_dir():
        pytest.skip(f"{d} is not there (hpmkit lab fetches it)")
    n = 0
    for f in elf_files(d):
        mine = c_plt(f)
        assert mine == [tuple(s) for s in open_elf(str(f)).plt], f.name
        n += len(mine)
    assert n > 100


# ------------------------------------------------------------------------------------------
# hpm top itself


ROW = re.compile(r"^\s+([\d.]+)%\s+(\d+)\s+(\S+)\s+(\[.\])\s+(.*)$")


@pytest.mark.parametrize("flags", [[], ["-fcf-protection", "-Wl,-z,ibtplt"]],
                         ids=["lazy", "ibt"])
def test_top_names_samples_in_plt_slots(tmp_path, flags):
    """cpu-clock samples of a PLT hot loop (tests/data/plt/plt_loop.c): the rows of the
    program's own slots are strcoll@plt and mempcpy@plt (with IBT: in .plt.sec)."""
    exe = tmp_path / "loop"
    run(["gcc", "-O1", "-fno-builtin", "-fno-omit-frame-pointer", *flags, "-o", exe,
         DATA / "plt_loop.c"], check_rc=0)
    labels = objdump_labels(exe, shutil.which("objdump") or "objdump")
    assert set(labels.values()) >= {"strcoll@plt", "mempcpy@plt"}
    p = run([require(HPM), "top", "-b", "-e", "cpu-clock", "-E", "0", "--", exe, "60000000"],
            check_rc=0)
    rows = {}
    for line in p.stdout.splitlines():
        m = ROW.match(line)
        if m and m[3] == "loop":
            rows[m[5]] = int(m[2])
    assert rows.get("strcoll@plt", 0) > 0 and rows.get("mempcpy@plt", 0) > 0, p.stdout
