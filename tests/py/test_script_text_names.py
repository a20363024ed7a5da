"""perf script text read as perf reads the recording: thread names with spaces or digits
(prctl(PR_SET_NAME)), a period printed without the event, and the order of several events.
Fixtures (tests/data/script_text_names, README there): perf script text and perf report
--stdio output of the same recordings, made with Debian's perf 6.1; no perf needed here."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

from hpmkit.profile import ingest
from hpmkit.profile.script_ingest import AMBIGUOUS_COMM, strict_header

DATA = ROOT / "tests" / "data" / "script_text_names"
NAMES = {"my thread 7", "4242", "x [001] y", "a: b", "12345", "1 2", "9.5: z", " lead", "K 77",
         "tnames"}
REPORT = ("--sort", "comm", "-g", "none", "--no-children", "--show-total-period")


def report(text: str, *args: str) -> list[str]:
    """hpmkit report's stdout from the '# Samples:' line, as perf_report_*.out holds perf's."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-m", "hpmkit.cli", "report", "-q", "-i", str(DATA / text),
                        *args], env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    first = next(i for i, l in enumerate(lines) if l.startswith("# Samples: "))
    lines = lines[first:]
    while lines and (lines[-1].strip() in ("", "#") or lines[-1].startswith("# (")):
        lines.pop()
    return lines


def perf_out(name: str) -> list[str]:
    return (DATA / name).read_text().rstrip("\n").split("\n")


def without_event_name(lines: list[str]) -> list[str]:
    # text without the event column (and no --header) cannot name the event: 'samples'
    return [l.split(" of event ")[0] if l.startswith("# Samples: ") else l for l in lines]


@pytest.mark.parametrize("text", ["names_g.txt", "names_period_g.txt"])
def test_thread_names_with_spaces_and_digits_are_kept(text):
    prof = ingest(DATA / text)
    assert set(prof.samples["comm"].to_pylist()) == NAMES
    assert prof.samples.num_rows == 33
    assert not prof.meta.get("skipped")
    assert not prof.meta.get("notes")
    # every thread keeps its tid: the name '4242' is no thread id
    tids = {}
    for c, t in zip(prof.samples["comm"].to_pylist(), prof.samples["tid"].to_pylist()):
        tids.setdefault(c, set()).add(t)
    assert all(len(v) == 1 and next(iter(v)) > 10000 for v in tids.values()), tids
    assert len({next(iter(v)) for v in tids.values()}) == len(NAMES)


def test_sort_comm_equals_perf_report():
    assert report("names_g.txt", *REPORT) == perf_out("perf_report_names.out")
    assert without_event_name(report("names_period_g.txt", *REPORT)) == \
        without_event_name(perf_out("perf_report_names.out"))


def test_names_without_callchain():
    # '%16s ' comm: the right-aligned name's leading space is perf's padding, so ' lead' reads
    # 'lead'; no period printed, so compare the samples and their shares only
    prof = ingest(DATA / "names_nog.txt")
    assert set(prof.samples["comm"].to_pylist()) == (NAMES - {" lead"}) | {"lead"}
    assert "4242" not in {str(t) for t in prof.samples["tid"].to_pylist()}
    rows = [l for l in report("names_nog.txt", "--sort", "comm", "-g", "none", "--no-children")
            if not l.startswith("#")]
    want = [l for l in perf_out("perf_report_names.out") if not l.startswith("#")]
    share = lambda l: (l.split()[0], l[26:].strip())        # noqa: E731
    assert sorted(r.split(None, 1)[0] + " " + r.split(None, 1)[1].strip() for r in rows) == \
        sorted(f"{a} {b.strip()}" for a, b in map(share, want))


@pytest.mark.parametrize("text", ["pf_period_g.txt", "pf_period_nog.txt", "names_period_g.txt"])
def test_period_without_event_is_read(text):
    prof = ingest(DATA / text)
    periods = prof.samples["period"].to_pylist()
    assert None not in periods
    want = perf_out("perf_report_names.out" if text.startswith("names") else "perf_report_pf.out")
    total = int(next(l for l in want if l.startswith("# Event count")).split(":")[1])
    assert sum(periods) == total
    assert BEFORE not in (prof.meta.get("skipped") or {})
    assert without_event_name(report(text, *REPORT)) == without_event_name(want)


BEFORE = "columns before the sample's ip (addr, weight, data_src, flags...)"


def test_periods_vary():
    assert len(set(ingest(DATA / "pf_period_nog.txt").samples["period"].to_pylist())) > 10


def test_events_in_perf_order_with_header():
    prof = ingest(DATA / "two_events_header.txt")
    first = prof.samples["event"][0].as_py()
    assert first == "page-faults"                   # the text's first sample
    assert [e["name"] for e in prof.meta["events"]] == ["cpu-clock", "page-faults"]
    assert report("two_events_header.txt", *REPORT) == perf_out("perf_report_two_events.out")


def test_events_without_header_in_order_of_first_sample():
    # the text without --header says nothing of the recording's event list
    prof = ingest(DATA / "two_events.txt")
    assert [e["name"] for e in prof.meta["events"]] == ["page-faults", "cpu-clock"]


@pytest.mark.parametrize("line, callchain, comm, tid, period, event", [
    ("my thread 7 16317 68606.934266:     250000 cpu-clock: ", True, "my thread 7", "16317",
     "250000", "cpu-clock"),
    ("x [001] y 16317 68606.934266:     250000 cpu-clock: ", True, "x [001] y", "16317",
     "250000", "cpu-clock"),
    ("a: b 16317 68606.934266:     250000 cpu-clock: ", True, "a: b", "16317", "250000",
     "cpu-clock"),
    ("4242 16317     250000", True, "4242", "16317", "250000", None),
    ("12345    42     250000", True, "12345", "42", "250000", None),
    ("            4242 16317      55a51664d1e7 spin (/tmp/weird)", False, "4242", "16317", None,
     None),
    ("     my thread 7 16317     250000      55a51664d1e7 spin (/tmp/weird)", False,
     "my thread 7", "16317", "250000", None),
    ("  9.5: z 16317 [001] 68606.934266: sched:sched_switch: prev_comm=x prev_pid=1", True,
     "  9.5: z", "16317", None, "sched:sched_switch"),
])
def test_strict_header_reads_one_way(line, callchain, comm, tid, period, event):
    hits = strict_header(line, callchain)
    best = max(hits, key=lambda h: sum(h.layout))
    assert [h for h in hits if sum(h.layout) == sum(best.layout)] == [best]
    g = best.groupdict()
    assert (g["comm"], g["pid"], g["period"], g["event"]) == (comm, tid, period, event)


def test_misc_is_six_columns():
    # perf prints misc's letters padded to 6 columns, then the period's '%10lu'
    hits = strict_header("sh U         250000 task-clock:     ", True)
    best = max(hits, key=lambda h: sum(h.layout))
    assert (best.g["comm"], best.g["misc"], best.g["period"]) == ("sh", "U", "250000")


def test_an_ambiguous_name_is_noted(tmp_path):
    # -F comm,tid,ip with -g: 'my 12345 16317 ' is the thread 'my 12345' (tid 16317) or 'my'
    # (tid 12345) with a column before its callchain. The longest name is taken, and noted
    t = tmp_path / "amb.txt"
    t.write_text("my 12345 16317 \n\t            11e7 spin (/tmp/x)\n\n")
    prof = ingest(t)
    assert prof.samples["comm"].to_pylist() == ["my 12345"]
    assert prof.samples["tid"].to_pylist() == [16317]
    assert any(AMBIGUOUS_COMM in n for n in prof.meta.get("notes") or ())
