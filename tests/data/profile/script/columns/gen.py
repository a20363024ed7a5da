"""Hand-made perf script text of columns a task-clock recording cannot print (branch stacks,
IPC), laid out as perf 6.1's builtin-script.c prints them (process_event and the helpers it
calls): comm '%16s ' (or '%s ' before a callchain), tid '%5d ', time '%12s: ', event '%*s: ',
ip ' %16x' + ' SYM+0xOFF' + ' (DSO)' (or a newline and '\t%16x SYM+0xOFF (DSO)' lines),
brstack entries ' 0x%x(DSO)/0x%x(DSO)/%c/%c/%c/%d/%s ', brstacksym entries
'SYM+0xOFF(DSO)/SYM+0xOFF(DSO)/%c/%c/%c/%d/%s ', ipc ' \t IPC: %u.%02u (%lu/%lu) ', then '\n'."""
import sys

DSO = "/tmp/loop"
# (comm, tid, time, ip, sym, off, chain[(ip, sym, off, dso)])
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
KERNEL = "[kernel.kallsyms]"
SAMPLES = [
    ("loop", 4242, "12345.678901", 0x401136, "main", 0x16,
     [(0x401136, "main", 0x16, DSO), (0x7f0011223344, "__libc_start_call_main", 0x80, LIBC)]),
    ("loop", 4242, "12345.679901", 0x401150, "work", 0x0,
     [(0x401150, "work", 0x0, DSO), (0x401140, "main", 0x20, DSO)]),
    ("loop", 4243, "12345.680901", 0xffffffff81000c82, "asm_exc_page_fault", 0x22,
     [(0xffffffff81000c82, "asm_exc_page_fault", 0x22, KERNEL), (0x401150, "work", 0x0, DSO)]),
    ("loop", 4242, "12345.681901", 0x401150, "work", 0x4,
     [(0x401154, "work", 0x4, DSO), (0x401140, "main", 0x20, DSO)]),
]
BRANCHES = [(0x401140, 0x401130, "P", "-", "-", 3, "COND"), (0x40114a, 0x401140, "M", "-", "-", 0, ""),
            (0x401160, 0x401150, "-", "-", "-", 12, "N/A")]
SYMS = {0x401140: ("main", 0x20), 0x401130: ("main", 0x10), 0x40114a: ("main", 0x2a),
        0x401160: ("work", 0x10), 0x401150: ("work", 0x0)}


def brstack(kind: str) -> str:
    out = ""
    for frm, to, p, x, a, cyc, typ in BRANCHES:
        if kind == "brstack":
            f, t = f"0x{frm:x}", f"0x{to:x}"
            out += f" {f}({DSO})/{t}({DSO})"
        elif kind == "brstackoff":
            out += f" 0x{frm - 0x400000:x}({DSO})/0x{to - 0x400000:x}({DSO})"
        else:
            (fs, fo), (ts, to_) = SYMS[frm], SYMS[to]
            out += f"{fs}+0x{fo:x}({DSO})/{ts}+0x{to_:x}({DSO})"
        out += f"/{p}/{x}/{a}/{cyc}/{typ} "
    return out


def ipc(i: int) -> str:
    insn, cyc = 500 + i, 400
    v = insn * 100 // cyc
    return f" \t IPC: {v // 100}.{v % 100:02d} ({insn}/{cyc}) "


def script(kind: str, g: bool) -> str:
    out = []
    for i, (comm, tid, tm, ip, sym, off, chain) in enumerate(SAMPLES):
        ev = "cycles"
        if g:
            line = f"{comm} {tid:5d} {tm:>12}: {ev}: \n"
            for cip, cs, co, cd in chain:
                line += f"\t{cip:16x} {cs}+0x{co:x} ({cd})\n"
        else:
            d = "[kernel.kallsyms]" if ip >> 63 else DSO
            line = f"{comm:>16} {tid:5d} {tm:>12}: {ev}: {ip:16x} {sym}+0x{off:x} ({d})"
        tail = brstack(kind) if kind.startswith("brstack") else ipc(i)
        line += tail + "\n"
        if g and not tail.strip():
            line += "\n"
        out.append(line)
    return "".join(out)


if __name__ == "__main__":
    kind, g = sys.argv[1], sys.argv[2] == "g"
    sys.stdout.write(script(kind, g))
