"""The C side's one kallsyms reader (src/sym/kallsyms.c) names kernel addresses as hpmkit's
symboliser does, and hpm record's kallsyms copy (perf.data feature section 250) keeps every
name of an address it keeps, so that the reader on the workstation can choose.

* hpm top's kernel table (the test hook HPM_TOP_KSYMS_DUMP=FILE of src/sym/tasksyms.c) against
  choose_alias (hpmkit.profile.symbols.Kallsyms) on the lab kernels' kallsyms excerpts
  (tests/data/kallsyms: riscv64 and aarch64, with section markers such as
  __sched_text_start sharing a function's address) and on this machine's /proc/kallsyms;
* hpm record's copy, read with hpmkit.perfdata, holds every alias of each stored address in
  /proc/kallsyms order (used symbols and --kallsyms all), and perf script reads it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import BUILD, HPM, ROOT, require, run

from hpmkit.perfdata import PerfData
from hpmkit.profile.symbols import Kallsyms, choose_alias

DATA = ROOT / "tests" / "data" / "kallsyms"
# the lab kernels' excerpts (README.md there): every aliased address of their /proc/kallsyms
EXCERPTS = [DATA / "riscv64-6.1.192.kallsyms", DATA / "aarch64-6.1.192.kallsyms"]
TOUCH = BUILD / "bin" / "touch-pages"


def top_table(path) -> dict[int, str]:
    """address -> name of hpm top's kernel table for a kallsyms text (the test hook)."""
    p = run([require(HPM), "top", "-b", "--", "true"], env={"HPM_TOP_KSYMS_DUMP": str(path)})
    assert p.returncode == 0 and not p.stderr, (p.returncode, p.stderr)
    out = {}
    for line in p.stdout.splitlines():
        a, _end, name = line.split(" ", 3)[:3]
        out[int(a, 16)] = name
    return out


def function_groups(text: str) -> dict[int, list[str]]:
    """address -> the function names listed there, in listing order (zero addresses out)."""
    groups: dict[int, list[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "tTwW" and int(parts[0], 16):
            groups.setdefault(int(parts[0], 16), []).append(parts[2])
    return groups


@pytest.mark.parametrize("path", EXCERPTS, ids=lambda p: p.name)
def test_top_names_aliased_kernel_addresses_as_choose_alias(path):
    text = path.read_text()
    ours = top_table(path)
    k = Kallsyms(text, str(path))
    theirs = dict(zip((int(a) for a in k.addrs), k.names))
    assert ours == theirs
    aliased = {a: n for a, n in function_groups(text).items() if len(n) > 1}
    assert len(aliased) > 20
    # every aliased address named as choose_alias names it, and the marker rule did bite
    wrong = {hex(a): (n, ours[a]) for a, n in aliased.items() if ours[a] != n[choose_alias(n)[0]]}
    assert not wrong
    assert any(ours[a] != n[-1] for a, n in aliased.items())


@pytest.mark.parametrize("path", sorted(DATA.glob("*.kallsyms")), ids=lambda p: p.name)
def test_top_table_equals_hpmkits_on_every_kallsyms_fixture(path):
    """Module symbols ("[mod]") and files without aliases too: one name per address each."""
    k = Kallsyms(path.read_text(), str(path))
    assert top_table(path) == dict(zip((int(a) for a in k.addrs), k.names))


def test_top_marker_rule_on_riscv64():
    """riscv64 6.1 lists __sched_text_start after __schedule: perf shows the marker, we the function."""
    path = DATA / "riscv64-6.1.192.kallsyms"
    groups = function_groups(path.read_text())
    at = [a for a, n in groups.items() if "__sched_text_start" in n]
    assert at and groups[at[0]][-1] == "__sched_text_start"
    assert top_table(path)[at[0]] == "__schedule"


def test_top_rules_on_this_machines_kallsyms():
    text = Path("/proc/kallsyms").read_text()
    if not any(int(l.split()[0], 16) for l in text.splitlines()[:50]):
        pytest.skip("kptr_restrict hides kernel addresses here")
    ours = top_table("/proc/kallsyms")
    k = Kallsyms(text, "/proc/kallsyms")
    theirs = dict(zip((int(a) for a in k.addrs), k.names))
    # modules may come and go between the two reads: compare the addresses both have
    common = ours.keys() & theirs.keys()
    assert len(common) > 0.99 * len(theirs)
    assert {a: ours[a] for a in common} == {a: theirs[a] for a in common}


def test_top_hook_refuses_a_file_without_functions(tmp_path):
    f = tmp_path / "ks"
    f.write_text("0000000000000000 T _text\n0000000000000000 t foo\n")
    p = run([require(HPM), "top", "-b", "--", "true"], env={"HPM_TOP_KSYMS_DUMP": str(f)})
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1


def record_copy(tmp_path, *args) -> tuple[Path, str]:
    out = tmp_path / "r.data"
    p = run([require(HPM), "record", "-o", out, "-e", "cpu-clock", "-c", "200000", "-g", *args,
             "--", TOUCH, "20000"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    with PerfData(out) as pd:
        text = pd.kallsyms_text()
    assert text
    return out, text


def check_every_alias(copy: str, proc: dict[int, list[str]]) -> dict[int, list[str]]:
    lines = copy.splitlines()
    addrs = [int(l.split()[0], 16) for l in lines]
    assert addrs == sorted(addrs)                       # by address, listing order within
    got = function_groups(copy)
    missing = {hex(a): (n, proc.get(a)) for a, n in got.items() if a in proc and n != proc[a]}
    assert not missing, f"aliases dropped or reordered: {list(missing.items())[:5]}"
    return got


def test_record_copy_keeps_every_alias_of_used_addresses(tmp_path):
    if not any(int(l.split()[0], 16) for l in Path("/proc/kallsyms").read_text().splitlines()[:50]):
        pytest.skip("kptr_restrict hides kernel addresses here")
    out, copy = record_copy(tmp_path)
    proc = function_groups(Path("/proc/kallsyms").read_text())
    got = check_every_alias(copy, proc)
    assert "_text" in copy.split() or "_stext" in copy.split()
    # the reader chooses among the stored names as it would in the full table
    k_copy, k_full = Kallsyms(copy, "copy"), Kallsyms(Path("/proc/kallsyms").read_text(), "proc")
    full = dict(zip((int(a) for a in k_full.addrs), k_full.names))
    assert all(full.get(int(a), n) == n for a, n in zip(k_copy.addrs, k_copy.names))
    assert len(got) < 5000
    # perf reads the copy and names kernel frames from it
    (tmp_path / "ks").write_text(copy)
    p = run(["perf", "script", "-i", out, "--kallsyms", tmp_path / "ks", "-F", "ip,sym"])
    assert p.returncode == 0, p.stderr
    kernel_syms = set(re.findall(r"^\s+ffff[0-9a-f]+ (\S+)", p.stdout, re.M))
    assert kernel_syms and "[unknown]" not in kernel_syms
    assert kernel_syms <= {n for names in got.values() for n in names}


def test_record_copy_all_keeps_every_alias(tmp_path):
    if not any(int(l.split()[0], 16) for l in Path("/proc/kallsyms").read_text().splitlines()[:50]):
        pytest.skip("kptr_restrict hides kernel addresses here")
    out, copy = record_copy(tmp_path, "--kallsyms", "all")
    proc = function_groups(Path("/proc/kallsyms").read_text())
    got = check_every_alias(copy, proc)
    aliased = [a for a, n in proc.items() if len(n) > 1]
    assert aliased and all(len(got.get(a, [])) == len(proc[a]) for a in aliased)
    (tmp_path / "ks").write_text(copy)
    p = run(["perf", "script", "-i", out, "--kallsyms", tmp_path / "ks", "-F", "ip,sym"])
    assert p.returncode == 0, p.stderr
    assert "[unknown]" not in set(re.findall(r"^\s+ffff[0-9a-f]+ (\S+)", p.stdout, re.M))
