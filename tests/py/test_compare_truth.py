"""The labelled list of known riscv64-slower kernel contexts, as compare --truth reads it."""
from types import SimpleNamespace

import pytest

from conftest import ROOT
from hpmkit.compare import truth
from hpmkit.errors import FormatError

LIST = ROOT / "data" / "compare" / "known-riscv64-slower.tsv"


def test_rich_list_keeps_slower_rows_that_apply_to_the_lab():
    rows = [l.split("\t") for l in LIST.read_text().splitlines() if l and not l.startswith("#")]
    head, body = rows[0], rows[1:]
    lab, label = head.index("lab_applies"), head.index("label")
    want = sum(1 for r in body if r[label] == "slower" and r[lab] != "no")
    entries = truth.load(LIST)
    assert len(entries) == want and want >= 10
    assert all(e.workloads for e in entries)


def _row(anchor, kind="exact", a=(), b=(), workload="fd-alloc"):
    """A ranked row as truth.hits sees it: function, workload and the matched group."""
    anchor = tuple(anchor.split(">"))
    a = [tuple(p.split(">")) for p in a] or [anchor]
    b = [tuple(p.split(">")) for p in b] or [anchor]
    return SimpleNamespace(function=anchor[-1], workload=workload,
                           group=SimpleNamespace(anchor=anchor, kind=kind, a=a, b=b))


def test_a_hit_needs_the_labelled_function_in_the_contexts_own_frames():
    entries = truth.load(LIST)
    i = next(k for k, e in enumerate(entries) if e.function == "_find_next_zero_bit")
    # a context of the caller alone is not the bit search (alloc_fd is no alias any more)
    assert i not in truth.hits(_row("sys_dup>alloc_fd"), entries)
    # ... but when the bit search is merged into it (A deeper), the context holds it
    deeper = _row("sys_dup>alloc_fd", "partial", a=["sys_dup>alloc_fd", "sys_dup>alloc_fd>_find_next_zero_bit"])
    assert i in truth.hits(deeper, entries)
    # a caller above the context's function never counts
    below = _row("sys_dup>_find_next_zero_bit>__ffs", "partial")
    assert i not in truth.hits(below, entries)
    assert i in truth.hits(_row("sys_dup>alloc_fd>_find_next_zero_bit"), entries)
    # aliases are the same code: __arch_copy_to_user (arm64) normalises to raw_copy_to_user
    j = next(k for k, e in enumerate(entries) if e.function == "raw_copy_to_user")
    assert "_copy_to_user" not in entries[j].aliases
    assert j in truth.hits(_row("sys_read>raw_copy_to_user", workload="pipe"), entries)
    assert j not in truth.hits(_row("sys_read>_copy_to_user", workload="pipe"), entries)


def test_rich_entries_count_in_any_workload_simple_ones_where_they_say():
    entries = truth.load(LIST)
    i = next(k for k, e in enumerate(entries) if e.function == "_find_next_zero_bit")
    assert entries[i].workloads == frozenset({"fd-alloc"})        # where the list expects it
    assert i in truth.hits(_row("sys_dup>_find_next_zero_bit", workload="hackbench"), entries)
    simple = [truth.Truth("finish_task_switch", "futex", "", "", 2), truth.Truth("memset", None, "", "", 3)]
    assert truth.hits(_row("schedule>finish_task_switch", workload="futex"), simple) == [0]
    assert truth.hits(_row("schedule>finish_task_switch", workload="pipe"), simple) == []
    assert truth.hits(_row("do_page_fault>memset", workload="pipe"), simple) == [1]


def test_entry_code_context_hits_entries_naming_side_as_entry_frames():
    from hpmkit.compare.names import ENTRY_ONLY, EntryFrames
    entries = truth.load(LIST)
    i = next(k for k, e in enumerate(entries) if e.function == "handle_exception")
    rv = frozenset(EntryFrames.load("riscv64", "6.1.192").roles)
    row = _row(ENTRY_ONLY)
    assert i in truth.hits(row, entries, rv)
    assert i not in truth.hits(row, entries)          # without knowing A's entry frames


def test_reached_entries_and_recall_over_them():
    entries = [truth.Truth("memcpy", None, "", "", 2), truth.Truth("memset", None, "", "", 3),
               truth.Truth("clear_page", None, "", "", 4)]
    side = SimpleNamespace(by_workload={"w": {("kernel", ("sys_read", "memcpy")): 0,
                                              ("kernel", ("do_page_fault", "memset")): 0,
                                              ("user", ("main", "clear_page")): 0}})
    reached = truth.reached_names(side)
    assert reached == {"sys_read", "memcpy", "do_page_fault", "memset"}
    ev = truth.evaluate([_row("sys_read>memcpy", workload="w")], entries, ks=(1,), reached_names=reached)
    assert ev["reached"] == [0, 1] and ev["found"] == [0]
    assert ev["k"][0]["recall"] == pytest.approx(1 / 3) and ev["k"][0]["recall_reached"] == 0.5
    # a hit through B's frames merged into a context (arm64's clear_page below a fault whose
    # A side shows only memset) reaches the entry: found implies reached
    b_deeper = _row("w>do_page_fault", "partial", b=["w>do_page_fault>clear_page"], workload="w")
    ev = truth.evaluate([_row("sys_read>memcpy", workload="w"), b_deeper], entries, ks=(1,),
                        reached_names=reached)
    assert ev["found"] == [0, 2] and ev["reached"] == [0, 1, 2]
    assert [x["k"] for x in ev["k"]] == [1, "all"]
    assert ev["k"][0]["recall_reached"] == pytest.approx(1 / 3)
    assert ev["k"][1] == {"k": "all", "ranked": 2, "hits": 2, "precision": 1.0,
                          "recall": pytest.approx(2 / 3), "recall_reached": pytest.approx(2 / 3)}


def test_a_rich_list_without_slower_rows_is_an_error(tmp_path):
    f = tmp_path / "t.tsv"
    f.write_text("function\taliases\tlabel\tconfidence\tlab_applies\tworkloads\treason\n"
                 "memcpy\t\tnot-slower\thigh\tyes\tpipe\tcontrol\n")
    with pytest.raises(FormatError, match="no entries labelled 'slower'"):
        truth.load(f)
