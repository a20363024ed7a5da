"""hpmpes, the lab's precise event sampler (a QEMU 10 TCG plugin, lab/pes, docs/pes.md), on
both lab ISAs: exact counts against the guest's own PMU, perf.data that Linux perf reads
sample for sample, periods that add up to the exact event counts, call chains through the
kernel into user space, byte-identical output for the same guest execution, sampled
function shares against exact ones, and bad arguments.

Skipped with the reason when QEMU 10 or the prepared lab kernels are absent."""
import collections
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, require
from hpmkit.lab import cpio, guest

ARCHES = ["riscv64", "aarch64"]
PLUGIN = BUILD / "lab" / "libhpmpes.so"
SUMMARY = re.compile(r"hpmpes: (\w+): (\d+) instructions, (\d+) tasks(?:, (\d+) blocks stopped early)?"
                     r"(?:; (\d+) samples of ([\w-]+) \(period (\d+), seed (\d+)\) written to (\S+))?")
CONTEXT_MAX = 2**64 - 4095          # perf's PERF_CONTEXT_MAX
CONTEXT = {2**64 - 128: "kernel", 2**64 - 512: "user", 2**64 - 32: "hv"}


def qemu_major(binary):
    p = subprocess.run([binary, "--version"], capture_output=True, text=True)
    m = re.search(r"version (\d+)\.", p.stdout)
    return int(m.group(1)) if m else 0


def cached_kernel(arch):
    """Image, System.map and structure offsets of the prepared lab kernel, or a skip."""
    m = guest.MACHINES[arch]
    if not shutil.which(m.qemu) or qemu_major(m.qemu) < 10:
        pytest.skip(f"{m.qemu} 10 is not installed (scripts/setup.sh installs it from "
                    "bookworm-backports)")
    if not list((guest.CACHE / arch).glob("Image-*")):
        pytest.skip(f"the {arch} lab kernel is not prepared (hpmkit lab prepare --arch both)")
    image = guest.kernel(arch)
    tag = image.name.split("Image-", 1)[1]
    smap, offs = image.parent / f"System.map-{tag}", image.parent / f"offsets-{tag}"
    for f in (smap, offs):
        if not f.exists():
            pytest.skip(f"{f} is missing: prepare the {arch} lab kernel again")
    return image, smap, offs


class Guest:
    """One initramfs (written once, so a recording can be replayed) booted with hpmpes."""

    def __init__(self, arch, argv, tmp, add=None):
        self.arch, self.tmp = arch, Path(tmp)
        self.image, self.smap, self.offs = cached_kernel(arch)
        require(PLUGIN)
        # the guest's files read once: the initramfs and the host copies of its /bin
        # (bins=) stay the same even if the build tree changes meanwhile
        files = guest.guest_binaries(arch)
        files.update(add or {})
        files["lab/argv"] = b"".join(str(a).encode() + b"\0" for a in argv)
        dirs = {str(Path(n).parent) for n in files if "/" in n}
        self.rd = self.tmp / f"rd-{arch}.cpio"
        self.rd.write_bytes(cpio.build(files, ["proc", "sys", "dev", "tmp", "out", *sorted(dirs)]))
        self.bins = self.tmp / f"bins-{arch}"
        self.bins.mkdir(exist_ok=True)
        for name, data in files.items():
            if name.startswith("bin/"):
                (self.bins / name[4:]).write_bytes(data)

    def plugin_arg(self, **args):
        base = {"arch": self.arch, "kernel": self.smap, "offsets": self.offs, "bins": self.bins}
        base.update(args)
        return ",".join([str(PLUGIN)] + [f"{k}={v}" for k, v in base.items() if v is not None])

    def boot(self, plugin=None, icount="shift=0,sleep=off", timeout=300):
        m = guest.MACHINES[self.arch]
        common = list(guest.COMMON)
        common[common.index("-icount") + 1] = icount
        cmd = [m.qemu, *m.args, *common, "-kernel", str(self.image), "-initrd", str(self.rd),
               "-append", f"{m.console} panic=-1 quiet loglevel=1 rdinit=/init"]
        if plugin:
            cmd += ["-plugin", plugin]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return p

    def run(self, timeout=300, icount="shift=0,sleep=off", **args):
        p = self.boot(self.plugin_arg(**args), icount=icount, timeout=timeout)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 0, err
        res = guest.parse(p.stdout.decode(errors="replace"), self.arch)
        assert res.status == 0, (res.stdout, res.stderr)
        m = SUMMARY.search(err)
        assert m, err
        return res, m


def perf_file(path):
    """Our own reading of the perf.data the plugin writes: (attr sample_type, records)."""
    d = Path(path).read_bytes()
    assert d[:8] == b"PERFILE2"
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQ", d, 24)
    sample_type = struct.unpack_from("<Q", d, attrs_off + 24)[0]
    recs, off = [], data_off
    while off < data_off + data_size:
        typ, misc, size = struct.unpack_from("<IHH", d, off)
        recs.append((typ, misc, d[off + 8:off + size]))
        off += size
    return sample_type, recs


def samples(path):
    """Every sample: dict(ip, pid, tid, time, addr, cpu, period, chain, misc)."""
    st, recs = perf_file(path)
    out = []
    for typ, misc, b in recs:
        if typ != 9:
            continue
        w = struct.unpack_from(f"<{len(b) // 8}Q", b)
        k = 1
        s = {"misc": misc, "ip": w[k]}
        k += 1
        s["pid"], s["tid"] = w[k] & 0xffffffff, w[k] >> 32
        k += 1
        s["time"] = w[k]
        k += 1
        if st & 0x8:  # PERF_SAMPLE_ADDR
            s["addr"] = w[k]
            k += 1
        s["cpu"] = w[k] & 0xffffffff
        s["period"] = w[k + 1]
        nr = w[k + 2]
        s["chain"] = list(w[k + 3:k + 3 + nr])
        out.append(s)
    return out


def comm_tids(path, comm):
    """tids that COMM records name comm"""
    _, recs = perf_file(path)
    out = set()
    for typ, misc, b in recs:
        if typ == 3:  # PERF_RECORD_COMM
            pid, tid = struct.unpack_from("<II", b)
            if b[8:].split(b"\0")[0].decode() == comm:
                out.add(tid)
    return out


def exact_rows(path):
    """(tgid, tid, comm, priv, start_pc, insns, loads, stores, branches, path id)"""
    lines = Path(path).read_text().splitlines()
    assert lines[0].split("\t") == ["tgid", "tid", "comm", "priv", "start_pc", "insns", "loads",
                                    "stores", "branches", "path"]
    rows = []
    for line in lines[1:]:
        tg, tid, comm, priv, pc, *n = line.split("\t")
        rows.append((int(tg), int(tid), comm, priv, int(pc, 16), *map(int, n)))
    return rows


def functions(elf):
    """(start, end, name) of every function symbol of a host copy of a guest binary."""
    arch = "aarch64" if "aarch64" in str(elf) else "riscv64"
    out = subprocess.run([f"{arch}-linux-gnu-nm", "-S", "--defined-only", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    fs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:  # no size: an assembly routine
            parts.insert(1, "0")
        if len(parts) == 4 and parts[2] in "tTwW":
            a, sz = int(parts[0], 16), int(parts[1], 16)
            fs.append((a, a + sz, parts[3]))
    return sorted(fs)


def func_of(fs, addr):
    """the function containing addr: by its size, or the one before it when the symbol
    has none (assembly routines); None outside the text"""
    best = None
    for a, e, name in fs:
        if a <= addr < e:
            return name
        if a <= addr and (best is None or a >= best[0]):
            best = (a, e, name)
    if best and best[1] == best[0] and addr - best[0] < 4096:
        return best[2]
    return None


@pytest.fixture(scope="module", params=ARCHES)
def arch(request):
    return request.param


def test_exact_counts_equal_the_guest_pmu(arch, tmp_path):
    """Exact mode: the user instructions of hpm-loop N equal in-guest `hpm stat -e
    instructions:u` (the PMU over QEMU's icount), for two N; blocks that stop early on a
    fault are counted to the faulting instruction; all rows add up to the run's total."""
    got = {}
    for n in (1000, 3000):
        g = Guest(arch, ["hpm", "stat", "-x,", "-e", "instructions:u", "--", "hpm-loop", n], tmp_path)
        res, m = g.run(exact=tmp_path / f"x{n}.tsv")
        pmu = int(res.stderr.decode().strip().splitlines()[-1].split(",")[0])
        rows = exact_rows(tmp_path / f"x{n}.tsv")
        user = sum(r[5] for r in rows if r[2] == "hpm-loop" and r[3] == "user")
        assert user == pmu, (arch, n, user, pmu)
        assert sum(r[5] for r in rows) == int(m.group(2))
        assert int(m.group(4)) > 0  # faulting blocks were met (page faults at start-up)
        order = {"user": 0, "kernel": 1, "firmware": 2}
        keys = [(r[0], r[1], r[2], order[r[3]], r[4], r[9]) for r in rows]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        got[n] = user
    assert got[3000] - got[1000] == 2 * 2000  # hpm-loop's 2-instruction loop
    print(f"{arch}: hpm-loop 1000 user instructions = {got[1000]} (plugin) = guest PMU")


def kallsyms(data, tmp):
    k = tmp / "kallsyms.txt"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hpmkit"), "profile", "kallsyms", str(data)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    k.write_text(p.stdout)
    return k


def perf_script(data, *args):
    p = subprocess.run(["perf", "script", "-i", str(data), *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_perf_script_reads_every_sample_with_its_chain(arch, tmp_path):
    """Linux perf 6.1 reads the file: as many samples as the plugin wrote, each with a call
    chain, kernel frames named from the stored kallsyms; the task's FORK, COMM (exec) and
    MMAP2 of /bin/hpm-loop; jittered periods; both instructions of hpm-loop's loop sampled
    about equally (no resonance with the 2-instruction loop)."""
    n = 3_000_000
    g = Guest(arch, ["hpm-loop", n], tmp_path)
    data = tmp_path / "pes.data"
    _, m = g.run(out=data, start="hpm-loop", period=10000, seed=7)
    written = int(m.group(5))
    ours = samples(data)
    assert len(ours) == written > 500
    k = kallsyms(data, tmp_path)
    text = perf_script(data, "--kallsyms", str(k), "-F", "comm,tid,time,period,ip,sym")
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    assert len(blocks) == written
    for b in blocks:
        head, *chain = b.splitlines()
        assert chain, b  # every sample has at least its own ip
    kernel_lines = [l for b in blocks for l in b.splitlines()[1:] if re.match(r"\s*ffff", l)]
    unknown = [l for l in kernel_lines if "[unknown]" in l]
    assert kernel_lines and len(unknown) <= len(kernel_lines) // 100, unknown[:5]
    # periods: uniform in [N - N/4, N + N/4], time stamps from the command's start
    periods = [s["period"] for s in ours]
    assert 7500 <= min(periods) < max(periods) <= 12500
    times = [s["time"] for s in ours]
    assert times == sorted(times) and times[0] < 2 * 12500
    # the loop: samples inside spin(), both of its instructions
    spin = [f for f in functions(g.bins / "hpm-loop") if f[2] == "spin"][0]
    mine = [s for s in ours if s["misc"] & 7 == 2 and s["pid"] == ours[0]["pid"]]
    in_spin = collections.Counter(s["ip"] for s in mine if spin[0] <= s["ip"] < spin[1])
    assert sum(in_spin.values()) >= 0.9 * len(mine) and len(in_spin) == 2, in_spin
    share = min(in_spin.values()) / sum(in_spin.values())
    assert 0.4 < share <= 0.5, in_spin
    # side-band records as perf shows them
    side = perf_script(data, "--show-task-events", "--show-mmap-events")
    side = [l for l in side.splitlines() if "PERF_RECORD" in l]
    pid = ours[0]["pid"] if ours[0]["misc"] & 7 == 2 else None
    assert any(re.search(r"PERF_RECORD_COMM exec: hpm-loop:(\d+)/\1", l) for l in side), side[:20]
    assert any("PERF_RECORD_FORK(" in l for l in side)
    mm = [l for l in side if "PERF_RECORD_MMAP2" in l and "/bin/hpm-loop" in l]
    assert mm and " @ 0 " in mm[0] and "r-xp" in mm[0], mm
    print(f"{arch}: {written} samples; spin() instructions {dict(in_spin)}")


MEMLOOP = r"""
/* the data addresses of sampled loads and stores must fall in buf */
volatile long buf[512];
__attribute__((noinline)) void touch(int r)
{
	for (int i = 0; i < 512; i++)
		buf[i] = buf[(i * 7) & 511] + r;
}
int main(void)
{
	for (int r = 0; r < 300; r++)
		touch(r);
	return 0;
}
"""

SHARES = r"""
/* three functions with fixed, different amounts of work */
__attribute__((noinline)) long f1(long x) { for (int i = 0; i < 1000; i++) x = x * 3 + i; return x; }
__attribute__((noinline)) long f2(long x) { for (int i = 0; i < 3000; i++) x ^= x >> 3 ^ i; return x; }
__attribute__((noinline)) long f3(long x) { for (int i = 0; i < 6000; i++) x += i & x; return x; }
volatile long sink;
int main(void)
{
	long x = 1;
	for (int r = 0; r < 200; r++)
		x = f1(x) + f2(x) + f3(x);
	sink = x;
	return 0;
}
"""


def cross_build(arch, name, source, tmp):
    cc = f"{arch}-linux-gnu-gcc"
    if not shutil.which(cc):
        pytest.fail(f"{cc} is missing (scripts/setup.sh installs the cross compilers)")
    src, exe = tmp / f"{name}.c", tmp / f"{name}-{arch}"
    src.write_text(source)
    subprocess.run([cc, "-O1", "-fno-omit-frame-pointer", "-fno-inline", "-static", "-o", str(exe),
                    str(src)], check=True)
    return exe.read_bytes()


@pytest.mark.parametrize("event", ["instructions", "loads", "stores", "branches"])
def test_periods_add_up_to_the_exact_counts(arch, event, tmp_path):
    """With exact counts in the same run, the samples' PERIOD fields add up to the exact
    total of the event (the rest is less than one period), and loads/stores carry the
    data address: inside the buffer the loop reads and writes."""
    prog = cross_build(arch, "memloop", MEMLOOP, tmp_path)
    g = Guest(arch, ["memloop"], tmp_path, add={"bin/memloop": prog})
    data, tsv = tmp_path / "pes.data", tmp_path / "x.tsv"
    period = 4000 if event == "instructions" else 1000
    _, m = g.run(out=data, exact=tsv, event=event, period=period, seed=3)
    ss = samples(data)
    rows = exact_rows(tsv)
    col = {"instructions": 5, "loads": 6, "stores": 7, "branches": 8}[event]
    total = sum(r[col] for r in rows)
    sampled = sum(s["period"] for s in ss)
    assert len(ss) == int(m.group(5)) and m.group(6) == event
    assert 0 <= total - sampled < period * 5 // 4, (total, sampled)
    if event in ("loads", "stores"):
        buf = [l.split() for l in subprocess.run(
            [f"{arch}-linux-gnu-nm", str(g.bins / "memloop")], capture_output=True, text=True,
            check=True).stdout.splitlines() if l.endswith(" buf")][0]
        lo = int(buf[0], 16)
        touch = [f for f in functions(g.bins / "memloop") if f[2] == "touch"][0]
        mine = [s for s in ss if s["misc"] & 7 == 2 and touch[0] <= s["ip"] < touch[1]]
        assert len(mine) > 50
        # the loop's accesses are to buf; the prologue/epilogue's to the stack, far above
        inbuf = [s for s in mine if lo <= s["addr"] < lo + 4096]
        bad = [hex(s["addr"]) for s in mine if not lo <= s["addr"] < lo + 4096 and s["addr"] < 2**32]
        assert len(inbuf) >= 0.95 * len(mine) and not bad, bad[:5]
    print(f"{arch} {event}: {len(ss)} samples, periods {sampled} of {total}")


def test_taken_branches_are_branches_that_jumped(arch, tmp_path):
    """taken-branches: every sampled PC in the test program is a branch instruction, and the
    periods add up to at most the exact number of branches (taken or not) and to at least
    the loop back-edges, which are always taken."""
    prog = cross_build(arch, "memloop", MEMLOOP, tmp_path)
    g = Guest(arch, ["memloop"], tmp_path, add={"bin/memloop": prog})
    data, tsv = tmp_path / "pes.data", tmp_path / "x.tsv"
    _, m = g.run(out=data, exact=tsv, event="taken-branches", period=500, seed=5)
    ss = samples(data)
    assert len(ss) == int(m.group(5)) and m.group(6) == "taken-branches"
    branches = sum(r[8] for r in exact_rows(tsv))
    taken = sum(s["period"] for s in ss)
    assert 0.3 * branches < taken <= branches, (taken, branches)
    dis = subprocess.run([f"{arch}-linux-gnu-objdump", "-d", "--no-show-raw-insn",
                          str(g.bins / "memloop")], capture_output=True, text=True, check=True).stdout
    op = {int(a, 16): t.split()[0] for a, t in re.findall(r"^\s*([0-9a-f]+):\s+(.*)$", dis, re.M)}
    touch = [f for f in functions(g.bins / "memloop") if f[2] == "touch"][0]
    mine = [s for s in ss if s["misc"] & 7 == 2 and touch[0] <= s["ip"] < touch[1]]
    jumps = re.compile(r"^(b|bl|br|blr|ret|b\..*|cbn?z|tbn?z|j|jal|jalr|jr|beq|bne|blt|bge|bltu|"
                       r"bgeu|beqz|bnez|bgez|bltz|blez|bgtz|bgt|ble|bgtu|bleu)$")
    assert len(mine) > 50 and all(jumps.match(op[s["ip"]]) for s in mine), \
        sorted({op[s["ip"]] for s in mine})
    print(f"{arch}: {len(ss)} samples, {taken} taken of {branches} branches")


def _before_power_off(path):
    """The records of a recording up to init's power-off: the trailing samples of pid 1
    (init after the command, the kernel's power-off path, and on riscv64 OpenSBI's hang loop
    after the shutdown request) are cut off and returned apart."""
    _, recs = perf_file(path)
    k = len(recs)
    while k and recs[k - 1][0] == 9 and struct.unpack_from("<I", recs[k - 1][2], 16)[0] == 1:
        k -= 1
    return recs[:k], recs[k:]


def test_same_execution_gives_identical_files(arch, tmp_path):
    """The output depends on the guest's execution only. One boot is recorded (QEMU
    record/replay) and replayed: two replays write the same records, byte for byte, up to
    init's power-off; the full mode (with exact counts: a callback per block) takes exactly
    the same samples as the fast mode (inline counters). After the guest's shutdown request a
    replay runs on until QEMU's main loop stops it, which depends on the host's timing
    (measured on riscv64, where OpenSBI then waits in a loop: 2 of 6 replays ran 2,906
    instructions longer, one more sample of init). A recording's profile keeps the command's
    own samples only, and plain boots (no replay) repeat whole files (test_lab_suite.py)."""
    g = Guest(arch, ["hpm-loop", 1_000_000], tmp_path)
    rr = tmp_path / "rr.bin"
    p = g.boot(icount=f"shift=0,sleep=off,rr=record,rrfile={rr}")
    assert p.returncode == 0, p.stderr.decode()
    runs = []
    for k, extra in enumerate([{}, {}, {"exact": tmp_path / "x.tsv"}]):
        out = tmp_path / f"r{k}.data"
        g.run(icount=f"shift=0,sleep=off,rr=replay,rrfile={rr}", out=out, seed=11, **extra)
        data = out.read_bytes()
        assert b"hpmpes" in data and b"PERFILE2" == data[:8]
        runs.append(_before_power_off(out))
    (first, tail), rest = runs[0], runs[1:]
    assert len(first) > 1000 and len(tail) < 50, (len(first), len(tail))
    for recs, t in rest:
        assert recs == first and len(t) < 50


def test_sampled_shares_match_exact_shares(arch, tmp_path):
    """Three functions with fixed work: the share of each among the program's user samples
    is within 2 percentage points of its exact share, for two jitter seeds."""
    prog = cross_build(arch, "shares", SHARES, tmp_path)
    g = Guest(arch, ["shares"], tmp_path, add={"bin/shares": prog})
    fs = functions(g.bins / "shares")
    exact = collections.Counter()
    for seed in (1, 2):
        data, tsv = tmp_path / f"s{seed}.data", tmp_path / f"s{seed}.tsv"
        g.run(out=data, exact=tsv, period=1000, seed=seed, start="shares")
        if not exact:
            for r in exact_rows(tsv):
                if r[2] == "shares" and r[3] == "user":
                    exact[func_of(fs, r[4])] += r[5]
        got = collections.Counter(func_of(fs, s["ip"]) for s in samples(data) if s["misc"] & 7 == 2)
        st, se = sum(got.values()), sum(exact.values())
        for f in ("f1", "f2", "f3"):
            assert abs(got[f] / st - exact[f] / se) < 0.02, (f, got, exact)
        print(f"{arch} seed {seed}: " + ", ".join(
            f"{f} {100 * got[f] / st:.1f}% (exact {100 * exact[f] / se:.1f}%)" for f in ("f1", "f2", "f3")))


def system_map(path):
    syms = []
    for line in Path(path).read_text().splitlines():
        a, t, name = line.split()[:3]
        if t in "tTwW":
            syms.append((int(a, 16), name))
    return sorted(syms)


def ksym(syms, addr):
    import bisect
    i = bisect.bisect_right(syms, (addr, "\xff")) - 1
    return syms[i][1] if i >= 0 else None


def split_chain(chain):
    """[(context, [addresses])] in chain order"""
    parts = []
    for a in chain:
        if a >= CONTEXT_MAX:
            parts.append((CONTEXT.get(a, hex(a)), []))
        elif parts:
            parts[-1][1].append(a)
    return parts


def test_chains_cross_from_kernel_into_user(arch, tmp_path):
    """ksuite's syscall loop: kernel samples carry kernel frames that name the syscall path
    (System.map), then the user context from the registers saved at kernel entry, walked
    through the user stack (read through the task's page tables) up to the workload's own
    run_one(); only samples in the entry code that is still saving those registers have no
    user part. User samples walk ksuite's frame pointers the same way."""
    g = Guest(arch, ["ksuite", "syscalls", 3000], tmp_path)
    data = tmp_path / "pes.data"
    g.run(out=data, period=2000, start="ksuite")
    ss = samples(data)
    syms = system_map(g.smap)
    addr = {name: a for a, name in syms}
    lo, hi = {"riscv64": ("handle_exception", "handle_syscall"),
              "aarch64": ("vectors", "ret_to_kernel")}[arch]
    fs = functions(g.bins / "ksuite")
    tids = comm_tids(data, "ksuite")
    mine = [s for s in ss if s["tid"] in tids]
    kern = [s for s in mine if s["misc"] & 7 == 1 and not addr[lo] <= s["ip"] < addr[hi]]
    user = [s for s in mine if s["misc"] & 7 == 2]
    assert len(kern) > 100 and len(user) > 20, (len(kern), len(user))
    names, loop_k, deep, resolved, frames = collections.Counter(), 0, 0, 0, 0
    exiting = vdso = 0
    for s in kern:
        parts = split_chain(s["chain"])
        assert parts[0][0] == "kernel" and parts[0][1][0] == s["ip"]
        knames = [ksym(syms, a) for a in parts[0][1]]
        names.update(knames)
        if len(parts) == 1 and "do_exit" in knames:
            exiting += 1  # the address space is gone (exit_mm): no user part, as in perf
            continue
        assert len(parts) == 2 and parts[1][0] == "user", ([c for c, _ in parts], knames)
        ufuncs = [func_of(fs, a) for a in parts[1][1]]
        if ufuncs[0] is None and parts[1][1][0] >= 1 << 40:
            vdso += 1  # the vDSO's clock_gettime fallback syscall (top of the address space)
            continue
        assert ufuncs[0], hex(parts[1][1][0])  # the user pc saved at entry
        resolved += sum(map(bool, ufuncs))
        frames += len(ufuncs)
        if "ks_syscalls" in ufuncs:  # a syscall of the workload's loop
            loop_k += 1
            deep += "run_one" in ufuncs
    assert resolved >= 0.98 * frames, (resolved, frames)
    assert exiting < 0.05 * len(kern) and vdso < 0.1 * len(kern), (exiting, vdso, len(kern))
    assert loop_k >= 0.5 * len(kern) and deep >= 0.95 * loop_k, (deep, loop_k, len(kern))
    assert any("getppid" in n for n in names if n), names.most_common(20)
    # user samples in the workload's own loop walk up to its caller
    loop = [[func_of(fs, a) for a in split_chain(s["chain"])[0][1]] for s in user]
    loop = [c for c in loop if c[0] == "ks_syscalls"]
    ldeep = sum("run_one" in c for c in loop)
    assert loop and ldeep >= 0.9 * len(loop), loop[:5]
    print(f"{arch}: {deep} of {loop_k} kernel samples in the loop's syscalls (of {len(kern)} "
          f"outside entry code) walk user space up to run_one; {ldeep} of {len(loop)} user "
          "samples in ks_syscalls do")


def exact_paths(path):
    """id -> callers (return address - 1, innermost first) of EXACT.paths (a trie:
    `path parent caller`, parents first)"""
    lines = Path(str(path) + ".paths").read_text().splitlines()
    assert lines[0].split("\t") == ["path", "parent", "caller"]
    out = {0: []}
    for line in lines[1:]:
        i, up, a = line.split("\t")
        out[int(i)] = [int(a, 16)] + out[int(up)]
    return out


@pytest.mark.parametrize("workload", ["syscalls", "pipe"])
def test_sampled_kernel_paths_match_exact_path_counts(arch, workload, tmp_path):
    """Exact mode counts every kernel instruction under its call path. The samples of the
    same run, taken at random instructions, must land on those paths in proportion: every
    context (call path with the entry code at its root dropped, as `hpmkit compare` matches
    them) with at least 2 % of the command's exact kernel instructions has a sampled share
    within 2 points of its exact share, and the contexts sampled most are among the exact
    ones. Both sides are named with the System.map alone. (Entry and exit code that loads
    ra or fp by hand changes its callers inside a block, where exact mode reads them at the
    block's start: such paths differ, but only in which entry-only path they count to.)"""
    from hpmkit.compare.contexts import ContextTable, contexts

    g = Guest(arch, ["ksuite", workload, 2000], tmp_path)
    data, tsv = tmp_path / "p.data", tmp_path / "p.tsv"
    _, m = g.run(out=data, exact=tsv, period=997, seed=7, start="ksuite")
    syms = system_map(g.smap)
    chains = exact_paths(tsv)
    ex, sm = ContextTable(arch), ContextTable(arch)
    total_kernel = 0
    for r in exact_rows(tsv):
        if r[2] == "ksuite" and r[3] == "kernel":
            stack = [ksym(syms, a) for a in [r[4], *chains[r[9]]]][::-1]
            ex.add(workload, stack, len(stack), r[5], None, r[5])
            total_kernel += r[5]
    tids = comm_tids(data, "ksuite")
    for smp in samples(data):
        if smp["tid"] in tids and smp["misc"] & 7 == 1:
            stack = [ksym(syms, a) for a in split_chain(smp["chain"])[0][1]][::-1]
            sm.add(workload, stack, len(stack), 1, None, 1)
    exact = {k: float(v[0]) for k, v in contexts(ex).by_workload[workload].items()}
    got = {k: float(v[0]) for k, v in contexts(sm).by_workload[workload].items()}
    st, se = sum(got.values()), sum(exact.values())
    assert st > 1000 and se == total_kernel, (st, se)
    big = [p for p, n in exact.items() if n >= 0.02 * se]
    assert len(big) >= 3, sorted(exact.items(), key=lambda kv: -kv[1])[:5]
    bad = [(p[1], round(100 * got.get(p, 0) / st, 2), round(100 * exact[p] / se, 2))
           for p in big if abs(got.get(p, 0) / st - exact[p] / se) >= 0.02]
    assert not bad, bad
    top = sorted(got, key=lambda p: -got[p])[:10]
    assert all(exact.get(p, 0) > 0 for p in top), [p for p in top if not exact.get(p)]
    print(f"{arch} {workload}: {len(exact)} exact kernel contexts, {len(big)} with >= 2 %; "
          + "; ".join(f"{' > '.join(p[1][-2:])} {100 * got.get(p, 0) / st:.1f} % "
                      f"(exact {100 * exact[p] / se:.1f} %)"
                      for p in sorted(big, key=lambda p: -exact[p])[:4]))


def test_bad_arguments_fail_before_boot_and_write_nothing(tmp_path):
    """Every bad argument: QEMU exits nonzero at start-up with one hpmpes line naming the
    problem and what to give instead; no output file (or temporary one) is left."""
    image, smap, offs = cached_kernel("riscv64")
    out = tmp_path / "o.data"
    good = {"arch": "riscv64", "kernel": smap, "offsets": offs, "out": out}
    cases = [
        ({"arch": None}, "arch= is required"),
        ({"arch": "x86_64"}, "arch=x86_64: choose riscv64 or aarch64"),
        ({"arch": "aarch64"}, "arch=aarch64 but this QEMU emulates riscv64"),
        ({"foo": "1"}, "unknown argument 'foo'"),
        ({"event": "cycles"}, "event=cycles: choose instructions, loads, stores, branches"),
        ({"period": "0"}, "period=0: give a whole number"),
        ({"period": "10k"}, "period=10k: give a whole number"),
        ({"seed": "-1"}, "seed=-1: give a non-negative whole number"),
        ({"kernel": tmp_path / "none"}, "cannot read kernel="),
        ({"kernel": offs}, "is not 'address type name': not a System.map"),
        ({"offsets": tmp_path / "none"}, "cannot read offsets="),
        ({"offsets": smap}, "is not 'name value'"),
        ({"kernel": None}, "kernel=System.map and offsets=FILE are required"),
        ({"out": tmp_path / "no" / "dir" / "x.data"}, "cannot write out="),
        ({"out": None}, "nothing to write: give out=PATH"),
        ({"bins": tmp_path / "nobins"}, "bins="),
        ({"start": "a-name-longer-than-15"}, "start=a-name-longer-than-15: give a task name"),
    ]
    m = guest.MACHINES["riscv64"]
    for change, message in cases:
        args = dict(good, **change)
        plug = ",".join([str(PLUGIN)] + [f"{k}={v}" for k, v in args.items() if v is not None])
        p = subprocess.run([m.qemu, *m.args, *guest.COMMON, "-kernel", str(image), "-plugin", plug],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.startswith("hpmpes:")]
        assert p.returncode != 0 and len(lines) == 1 and message in lines[0], (change, p.stderr)
        assert "Traceback" not in p.stderr
        assert list(tmp_path.glob("*.data*")) == [] and list(tmp_path.glob(".o.data*")) == []
