"""hpm bench in the lab guests (QEMU, -icount shift=0): exact instruction counts per copy that
match the copy loops' disassembly, the byte-copy vs word-copy ratio the code implies, and the
cycle-counter probe on both ISAs (QEMU riscv64's rdcycle is detected as broken, arm64's PMU
counter becomes readable through the perf page only with kernel.perf_user_access=1)."""
import json
import re

import pytest

from conftest import BUILD, run
from hpmkit.lab import guest

ARCHES = ["riscv64", "aarch64"]
WORD_LOAD = {"riscv64": re.compile(r"\bld\s"), "aarch64": re.compile(r"\bldr\s+x")}
BYTE_LOAD = {"riscv64": re.compile(r"\blbu\s"), "aarch64": re.compile(r"\bldrb\s")}


def loops(arch, func):
    """Backward-branch loops of func in the guest's hpm: lists of instruction texts from the
    branch target to the branch."""
    dis = run([f"{arch}-linux-gnu-objdump", "-d", "--no-show-raw-insn",
               f"--disassemble={func}", BUILD / arch / "bin" / "hpm"], check_rc=0).stdout
    body = dis.split(f"<{func}>:")[1]
    insns = [(int(m.group(1), 16), m.group(2)) for m in
             re.finditer(r"^\s*([0-9a-f]+):\s+(.*)$", body, re.M)]
    out = []
    for addr, text in insns:
        t = re.search(rf"\b([0-9a-f]+) <{func}\+0x[0-9a-f]+>", text)
        if t and int(t.group(1), 16) < addr:
            body = [x for a, x in insns if int(t.group(1), 16) <= a <= addr]
            # a jump back into shared tail code is not a loop: loops do not return
            if not any(re.match(r"ret\b", x) for x in body):
                out.append(body)
    return out


def loop_len(arch, func, load):
    found = [l for l in loops(arch, func) if any(load.search(x) for x in l)]
    assert found, (arch, func)
    return found


def lab_bench(arch, *args, sysctls=None):
    res = guest.run(arch, ["hpm", "bench", *map(str, args)], timeout=600, sysctls=sysctls)
    assert res.exec_errno is None and res.status == 0, res.stderr.decode()
    return res


@pytest.fixture(scope="module", params=ARCHES)
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def copies(arch):
    """Two boots of the same memcpy run, counting only instructions:u (QEMU riscv64 reads 0
    on one of two counters of the same kind, so one event)."""
    args = ["run", "-b", "memcpy", "--sizes", "1024,4096", "--align", "0:0,1:0", "-e",
            "instructions:u", "--epochs", "8", "--no-table", "--json", "m.json"]
    runs = []
    for _ in range(2):
        res = lab_bench(arch, *args)
        runs.append(json.loads(res.files["out/m.json"]))
    return runs


def ins(d, case):
    r = next(r for r in d["results"] if r["case"] == case)
    return r["counters"]["instructions:u"]


def test_instruction_counts_per_copy_are_exact(arch, copies):
    d, again = copies
    assert d["counters"]["events"] == ["instructions:u"] and not d["counters"]["missing"]
    assert len(d["results"]) == 20
    for r in d["results"]:
        s = r["counters"]["instructions:u"]
        # exact: an integer, the same in every pair of epochs (aarch64) or in most of
        # them (riscv64 counts kernel work too, so an interrupt can land in one epoch)
        assert s["median"] == int(s["median"]), r
        assert s["mad"] == 0, r
        if arch == "aarch64":
            assert s["min"] == s["median"], r
        # the same on a second boot
        assert ins(again, r["case"])["median"] == s["median"], r["case"]


def test_byte_vs_word_copy_ratio_matches_the_code(arch, copies):
    d = copies[0]
    lb = loop_len(arch, "bench_copy_bytes", BYTE_LOAD[arch])
    assert len(lb) == 1
    lb = len(lb[0])
    lw = [l for l in loop_len(arch, "bench_copy_words", WORD_LOAD[arch])]
    assert len(lw) == 1
    lw = len(lw[0])

    def slope(impl, off):
        a = ins(d, f"memcpy/{impl}/n=1024/{off}")["median"]
        b = ins(d, f"memcpy/{impl}/n=4096/{off}")["median"]
        return (b - a) / (4096 - 1024)  # instructions per byte

    # one loop iteration per byte, and per 8-byte word: exactly the loop bodies
    assert slope("bytes", "s0-d0") == lb
    assert slope("bytes", "s1-d0") == lb
    assert slope("words", "s0-d0") * 8 == lw
    assert slope("bytes", "s0-d0") / slope("words", "s0-d0") == 8 * lb / lw
    # src and dst differently aligned: the word copy falls back to its byte loop
    fallback = {len(l) for l in loop_len(arch, "bench_copy_words", BYTE_LOAD[arch])}
    assert slope("words", "s1-d0") in fallback
    # the shift copy stays a word loop when misaligned: under 2 instructions per byte
    assert slope("shift", "s1-d0") < 2 < slope("words", "s1-d0")
    print(f"{arch}: byte loop {lb} insns/byte, word loop {lw} insns/8 bytes, "
          f"ratio {8 * lb / lw:g}")


def clocks(arch, sysctls=None):
    out = lab_bench(arch, "clocks", sysctls=sysctls).stdout.decode()
    lines = out.splitlines()
    return {l.split()[0]: (l, lines[i + 1].strip()) for i, l in enumerate(lines)
            if not l.startswith(" ")}


def test_riscv64_rdcycle_misbehaviour_is_detected():
    c = clocks("riscv64")
    line, why = c["pmu-direct"]
    assert "rdcycle" in line and " no" in line
    assert "not trusted" in why, why
    # Linux 6.1: no user-space access through the perf page, and the reason names it
    line, why = c["pmu-mmap"]
    assert " no" in line and "Linux < 6.6" in why
    assert "<- used by hpm bench" in c["timestamp"][0] and "rdtime" in c["timestamp"][0]
    assert "1e+07 Hz" in c["timestamp"][0]  # the device tree's timebase-frequency


def test_aarch64_pmu_cycles_follow_perf_user_access():
    c = clocks("aarch64")
    line, why = c["pmu-mmap"]
    assert " no" in line and "kernel.perf_user_access is 0" in why
    line, why = c["pmu-direct"]
    assert " no" in line and "SIGILL" in why and "PMUSERENR_EL0" in why
    # CNTFRQ_EL0 of QEMU's virt machine: 62.5 MHz up to QEMU 8, 1 GHz from 9.0 (10.0 here)
    assert "<- used by hpm bench" in c["timestamp"][0] and "1e+09 Hz" in c["timestamp"][0]
    c = clocks("aarch64", sysctls={"/proc/sys/kernel/perf_user_access": "1"})
    line, why = c["pmu-mmap"]
    assert " yes" in line and "core cycles" in line and "<- used by hpm bench" in line
