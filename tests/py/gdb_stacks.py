"""Run inside gdb-multiarch (gdb -batch -x gdb_stacks.py), attached to a program under
QEMU user mode: a breakpoint at the entry of each function named in $STACKS_FUNCS (JSON
list of addresses); at every hit the return addresses of the real (not inlined, not
tail-call) frames above it, as gdb's own unwinder finds them (DWARF CFI, then prologue
analysis). Writes {entry: {"ret,ret,...": hits}} as JSON to $STACKS_OUT when the program
exits. Used by test_lab_unwind.py as the independent unwinder."""
import json
import os

import gdb

hits = {}


class Entry(gdb.Breakpoint):
    def __init__(self, addr):
        super().__init__(f"*{addr:#x}", internal=True)
        self.addr = addr

    def stop(self):
        rets = []
        try:
            f = gdb.newest_frame().older()
            while f is not None:
                if f.type() == gdb.NORMAL_FRAME:
                    rets.append(f.pc())
                f = f.older()
        except gdb.error:  # "PC not saved": the outermost frame (riscv _start)
            pass
        key = ",".join(f"{a:x}" for a in rets)
        h = hits.setdefault(f"{self.addr:x}", {})
        h[key] = h.get(key, 0) + 1
        return False


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set detach-on-fork on")
gdb.execute("set follow-fork-mode parent")
gdb.execute("set tcp auto-retry on")  # QEMU may not listen yet
gdb.execute("set tcp connect-timeout 30")
gdb.execute(f"target remote {os.environ['STACKS_TARGET']}")
for a in json.loads(os.environ["STACKS_FUNCS"]):
    Entry(a)
# continue returns at events such as a fork; go on until the program has exited
while gdb.selected_inferior().pid:
    try:
        gdb.execute("continue")
    except gdb.error:
        break
with open(os.environ["STACKS_OUT"], "w") as f:
    json.dump(hits, f)
