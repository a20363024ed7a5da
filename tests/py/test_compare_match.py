"""hpmkit compare, step 1 and 2: names, kernel-entry split, context matching and coverage."""
from __future__ import annotations

import numpy as np
import pytest

from hpmkit.compare.contexts import ContextTable, contexts
from hpmkit.compare.match import match
from hpmkit.compare.names import EntryFrames, Normaliser
from hpmkit.errors import FormatError
from test_compare_support import kstacks, tables

N = Normaliser.load()


@pytest.mark.parametrize("raw,want", [
    ("finish_task_switch.isra.0", "finish_task_switch"),
    ("el0_svc_common.constprop.0", "el0_svc_common"),
    ("do_mprotect_pkey.constprop.0", "do_mprotect_pkey"),
    ("foo.part.0.cold.1", "foo"),
    ("foo.cold", "foo"),
    ("pipe_read+0x1a4", "pipe_read"),
    ("pipe_read+0x1a4/0x3c0", "pipe_read"),
    ("__riscv_sys_read", "sys_read"),
    ("__arm64_sys_read", "sys_read"),
    ("__x64_sys_read", "sys_read"),
    ("__se_sys_close", "sys_close"),
    ("__do_sys_close", "sys_close"),
    ("sys_read", "sys_read"),
    ("ksys_read", "ksys_read"),
    ("__memcpy", "memcpy"),
    ("__pi_memcpy", "memcpy"),
    ("__asm_copy_to_user", "raw_copy_to_user"),
    ("__arch_copy_to_user", "raw_copy_to_user"),
    ("0xffffffff81000000", "[unknown]"),
    (None, "[unknown]"),
])
def test_normalise(raw, want):
    assert N(raw) == want


def test_entry_frames_by_isa_and_version():
    rv61 = EntryFrames.load("riscv64", "6.1.192")
    assert rv61.roles["ret_from_syscall"] == "syscall"
    assert "do_trap_ecall_u" not in rv61.roles  # 6.1 still dispatches syscalls from entry.S
    rv66 = EntryFrames.load("riscv64", "6.6.0-rc1")
    assert rv66.roles["do_trap_ecall_u"] == "syscall" and "ret_from_syscall" not in rv66.roles
    arm = EntryFrames.load("arm64", "6.1.0-26-arm64")
    assert {"el0t_64_sync_handler", "el0_svc", "invoke_syscall"} <= arm.roles.keys()
    assert "el0_sync_handler" not in arm.roles
    assert "el0_sync_handler" in EntryFrames.load("aarch64", "5.10.0").roles
    x86 = EntryFrames.load("x86_64", None)
    assert {"entry_SYSCALL_64", "do_syscall_64"} <= x86.roles.keys()
    unknown = EntryFrames.load(None, None)  # every ISA's frames
    assert {"ret_from_syscall", "el0_svc", "do_syscall_64"} <= unknown.roles.keys()


def test_bad_entry_table(tmp_path):
    p = tmp_path / "e.tsv"
    p.write_text("isa\tfrom\tbefore\tframe\trole\nmips\t-\t-\tfoo\tsyscall\n")
    with pytest.raises(FormatError, match=r"e.tsv: line 2: isa 'mips'"):
        EntryFrames.load("riscv64", None, p)
    p.write_text("isa\tfrom\tbefore\tframe\trole\nriscv64\tsix\t-\tfoo\tsyscall\n")
    with pytest.raises(FormatError, match="line 2: versions must be major.minor"):
        EntryFrames.load("riscv64", None, p)


def _ctx(isa, kernel, rows):
    t = ContextTable.from_rows(isa, [dict(workload="w", stack=s, nkernel=nk, samples=1) for s, nk in rows], kernel)
    return contexts(t).by_workload["w"]


def test_split_at_entry_frames_same_path_on_both_isas():
    r = kstacks()[0]  # pipe_write -> ... -> copy from user
    rv = _ctx("riscv64", "6.1.192", [(r["user"] + r["riscv64"], len(r["riscv64"]))])
    arm = _ctx("aarch64", "6.1.0", [(r["user"] + r["aarch64"], len(r["aarch64"]))])
    want = ("kernel", ("sys_write", "ksys_write", "vfs_write", "pipe_write", "copy_page_from_iter",
                       "_copy_from_iter", "raw_copy_from_user"))
    assert list(rv) == [want] and list(arm) == [want]
    # without nkernel the split is found from the entry frames; the user part is not kernel
    rv2 = _ctx("riscv64", "6.1.192", [(r["user"] + r["riscv64"], None)])
    assert list(rv2) == [want]
    # riscv 6.6 generic entry: handle_exception -> do_trap_ecall_u -> syscall
    rv66 = _ctx("riscv64", "6.6.0", [(["main", "handle_exception", "do_trap_ecall_u", "__riscv_sys_write",
                                       "ksys_write"], 4)])
    assert list(rv66) == [("kernel", ("sys_write", "ksys_write"))]
    x86 = _ctx("x86_64", "6.1.0", [(["main", "entry_SYSCALL_64", "do_syscall_64", "__x64_sys_write", "ksys_write"], 4)])
    assert list(x86) == [("kernel", ("sys_write", "ksys_write"))]


def test_user_only_and_entry_only_samples():
    c = _ctx("aarch64", "6.1", [(["_start", "main", "spin"], 0), (["main", "el0t_64_sync", "el0t_64_sync_handler"], 2)])
    assert set(c) == {("user", ("_start", "main", "spin")), ("kernel", ("[kernel-entry]",))}


def test_normalisation_merges_wrapper_chain_but_keeps_recursion():
    c = _ctx("riscv64", "6.1", [(["ret_from_syscall", "__se_sys_read", "__do_sys_read", "ksys_read"], 4),
                                (["ret_from_syscall", "sys_x", "rec", "rec"], 4)])
    assert set(p for _, p in c) == {("sys_read", "ksys_read"), ("sys_x", "rec", "rec")}


def P(s):
    return tuple(s.split("/"))


def _m(a, b, **kw):
    one = np.ones(3)
    return match({P(p): one for p in a}, {P(p): one for p in b}, **kw)


def _kinds(res):
    return sorted((g.kind, "/".join(g.anchor), g.depth, sorted("/".join(p) for p in g.a),
                   sorted("/".join(p) for p in g.b)) for g in res.groups)


def test_exact():
    res = _m(["s/f/g", "s/h"], ["s/f/g", "s/h"])
    assert _kinds(res) == [("exact", "s/f/g", "0", ["s/f/g"], ["s/f/g"]),
                           ("exact", "s/h", "0", ["s/h"], ["s/h"])]
    assert res.unmatched_a == [] and res.unmatched_b == []


def test_partial_b_deeper_is_positive():
    # arm64 __switch_to -> cpu_switch_to: B has one more level; its cost merges into the caller
    res = _m(["s/sched/__switch_to"], ["s/sched/__switch_to/cpu_switch_to"])
    assert _kinds(res) == [("partial", "s/sched/__switch_to", "+1", ["s/sched/__switch_to"],
                            ["s/sched/__switch_to/cpu_switch_to"])]


def test_partial_a_deeper_is_negative_and_several_merge():
    res = _m(["s/f/g/h", "s/f/g/h/i", "s/f/g/k"], ["s/f/g"])
    assert _kinds(res) == [("partial", "s/f/g", "-2", ["s/f/g/h", "s/f/g/h/i", "s/f/g/k"], ["s/f/g"])]


def test_partial_joins_an_exact_match_and_both_sides_can_be_deeper():
    res = _m(["s/f", "s/f/x"], ["s/f", "s/f/y/z"])
    assert _kinds(res) == [("partial", "s/f", "+2/-1", ["s/f", "s/f/x"], ["s/f", "s/f/y/z"])]


def test_partial_limited_depth_then_parent():
    # 4 levels deeper than any context of the other side: beyond max_partial (3)
    res = _m(["s/a/b/c/d/e"], ["s/a"], max_partial=3)
    assert res.groups == [] and res.unmatched_a == [P("s/a/b/c/d/e")]
    assert _kinds(_m(["s/a/b/c/d/e"], ["s/a"], max_partial=4))[0][:3] == ("partial", "s/a", "-4")


def test_nearest_anchor_wins_and_anchor_is_not_walked_away():
    # B's s/f/g is A's nearest caller for s/f/g/h; B's s/f/g must stay there, not go to A's s/f
    res = _m(["s/f", "s/f/g/h"], ["s/f/g"])
    assert _kinds(res) == [("partial", "s/f/g", "-1", ["s/f/g/h"], ["s/f/g"])]
    assert res.unmatched_a == [P("s/f")]


def test_parent_stack_match():
    # timer interrupt: the arch timer handler differs, the generic parent agrees
    a = ["generic_handle_domain_irq/handle_percpu_devid_irq/riscv_timer_interrupt/hrtimer_interrupt"]
    b = ["generic_handle_domain_irq/handle_percpu_devid_irq/arch_timer_handler_virt/hrtimer_interrupt"]
    res = _m(a, b)
    assert _kinds(res) == [("parent", "generic_handle_domain_irq/handle_percpu_devid_irq", "+2/-2", a, b)]
    # the parent must keep at least two frames: a shared syscall alone is not a match
    res = _m(["sys_x/f/g"], ["sys_x/h/g2"], parent_levels=2)
    assert res.groups == []


def test_top_name_match_for_truncated_stacks():
    res = _m(["memset"], ["s/hrtimer_nanosleep/memset"])
    assert _kinds(res) == [("top-name", "memset", "0", ["memset"], ["s/hrtimer_nanosleep/memset"])]


def test_unmatched():
    res = _m(["s/only_a"], ["t/only_b"])
    assert res.groups == [] and res.unmatched_a == [P("s/only_a")] and res.unmatched_b == [P("t/only_b")]


def test_coverage_tables_on_realistic_stacks():
    from hpmkit.compare.analyse import Options, run
    a, b = tables()
    res = run(contexts(a), contexts(b), Options(detectors=["zscore"]))
    c = res.coverage
    # the fixture's 39 stacks per side (16 pipe, 11 futex, 12 mprotect) are 39 distinct paths
    assert c.contexts == [39, 39]
    assert c.by_kind["exact"] == [34, 34]
    # __switch_to (pipe, futex) and rw_verify_area: B deeper; the timer interrupt: parent
    assert c.by_kind["partial"] == [3, 4] and c.by_kind["parent"] == [1, 1]
    assert c.depth == {"0": 34, "+1": 3, "+2/-2": 1}
    # riscv64's vfs_read -> security_file_permission has no counterpart (rw_verify_area inlined)
    assert res.unmatched["pipe"][0] == [("kernel", ("sys_read", "ksys_read", "vfs_read", "security_file_permission"))]
    assert c.matched == [38, 39]
