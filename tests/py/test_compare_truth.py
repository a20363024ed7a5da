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


def test_aliases_and_workloads_decide_a_hit():
    entries = truth.load(LIST)
    i = next(k for k, e in enumerate(entries) if e.function == "_find_next_zero_bit")
    row = SimpleNamespace(function="alloc_fd", workload="fd-alloc", dominant_leaf=lambda *a: "x")
    assert i in truth.hits(row, entries, {})
    row.workload = "pipe"
    assert i not in truth.hits(row, entries, {})


def test_a_rich_list_without_slower_rows_is_an_error(tmp_path):
    f = tmp_path / "t.tsv"
    f.write_text("function\taliases\tlabel\tconfidence\tlab_applies\tworkloads\treason\n"
                 "memcpy\t\tnot-slower\thigh\tyes\tpipe\tcontrol\n")
    with pytest.raises(FormatError, match="no entries labelled 'slower'"):
        truth.load(f)
