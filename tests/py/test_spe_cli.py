"""`hpmkit spe ...` end to end: tables, reports, HTML, errors and what is printed about skips."""
from pathlib import Path

import pytest

from hpmkit.cli import main
from hpmkit.spe import perfwrite, synth

DATA = Path(__file__).resolve().parents[1] / "data" / "spe"


def run(capsys, *argv):
    rc = main(["spe", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("ts", ["ts0", "ts1"])
def test_raw_decode_matches_spe_parser_golden_csv(capsys, tmp_path, ts):
    rc, out, err = run(capsys, "decode", "--raw", DATA / f"telemetry_spe-b1-{ts}.spe.bin", "-o", tmp_path / "t")
    assert rc == 0 and err == ""
    assert (tmp_path / "t-branch.csv").read_text() == (DATA / f"telemetry_spe-b1-{ts}.expected.csv").read_text()
    assert "t-branch.csv: 1 branch records" in out
    assert (tmp_path / "t-ldst.csv").read_text().startswith('"cpu","op","pc","el","atomic","excl","ar","subclass"')


def test_decode_ldst_csv_values(capsys, tmp_path):
    rc, out, err = run(capsys, "decode", "--raw", DATA / "quipper_arm_spe_decoder_test.spe.bin", "-o", tmp_path / "q")
    lines = (tmp_path / "q-ldst.csv").read_text().splitlines()
    assert lines[1] == ("0,LD,0xffffba66eda1c2d0,2,false,false,false,GP-REG,RETIRED:L1D-ACCESS:TLB-ACCESS,4,12,"
                        "0xffff0e3703096b28,1,,L1D,0x5f80,44731163950")


def test_decode_parquet_and_symbols(capsys, tmp_path):
    import pyarrow.parquet as pq
    p = tmp_path / "s.data"
    perfwrite.write_perf_data(p, [(0, -1, synth.RecordGen(5).stream(200)), (1, -1, synth.RecordGen(6).stream(100))])
    k = tmp_path / "kallsyms"
    k.write_text("ffff800008010000 T _stext\nffff800008050000 T _etext\n")
    rc, out, err = run(capsys, "decode", p, "-o", tmp_path / "s", "--format", "parquet", "--symbols", k)
    assert rc == 0
    tabs = {kind: pq.read_table(tmp_path / f"s-{kind}.parquet") for kind in ("ldst", "branch", "other")}
    assert sum(t.num_rows for t in tabs.values()) == 300
    ld = tabs["ldst"].to_pydict()
    assert str(tabs["ldst"].schema.field("pc").type) == "uint64"
    assert set(ld["cpu"]) == {0, 1}
    kern = [s for pc, s in zip(ld["pc"], ld["symbol"]) if pc >= 0xFFFF800008010000]
    assert kern and set(kern) == {"_stext"}
    assert tabs["ldst"].column_names[-1] == "symbol"


def test_corrupt_stream_reports_skips(capsys, tmp_path):
    p = tmp_path / "c.data"
    perfwrite.write_perf_data(p, [(0, -1, synth.any_stream(4, 300, corrupt=0.2))])
    rc, out, err = run(capsys, "info", p)
    assert rc == 0
    assert "bad byte(s) skipped" in out
    rc, out, err = run(capsys, "decode", p, "-o", tmp_path / "c")
    assert rc == 0 and "warning" in err and "bad byte(s) skipped" in err


def test_bad_input_one_line_no_output(capsys, tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"hello world" * 10)
    rc, out, err = run(capsys, "decode", junk, "-o", tmp_path / "j")
    assert rc == 1 and err.count("\n") == 1 and err.startswith("hpmkit: ") and "--raw" in err
    assert list(tmp_path.iterdir()) == [junk]
    p = tmp_path / "t.data"
    perfwrite.write_perf_data(p, [(0, -1, synth.RecordGen(1).stream(50))])
    cut = tmp_path / "cut.data"
    cut.write_bytes(p.read_bytes()[:-100])
    rc, out, err = run(capsys, "decode", cut, "-o", tmp_path / "x", "--format", "parquet")
    assert rc == 1 and err.count("\n") == 1 and "truncated" in err
    assert not list(tmp_path.glob("x-*")) and not list(tmp_path.glob(".spe-*"))
    rc, out, err = run(capsys, "decode", cut, "-o", tmp_path / "x", "--truncated-ok")
    assert rc == 0 and "100 byte(s) of AUX data missing" in err


def test_help_has_examples(capsys):
    for sub in ([], ["decode"], ["c2c"], ["estimate"], ["latency"]):
        with pytest.raises(SystemExit) as e:
            main(["spe", *sub, "--help"])
        assert e.value.code == 0
        assert "examples:" in capsys.readouterr().out


def test_reports_and_html(capsys, tmp_path):
    p = tmp_path / "s.data"
    rc, out, err = run(capsys, "synth", p, "--records", "3000", "--cpus", "2", "--seed", "3")
    assert rc == 0 and "3000 records on 2 CPU(s)" in out
    for cmd in ("hotspots", "latency", "sources", "events", "c2c"):
        html = tmp_path / f"{cmd}.html"
        rc, out, err = run(capsys, cmd, p, "--html", html)
        assert rc == 0, err
        text = html.read_text()
        assert "<svg" in text and "<script" not in text and "http" not in text
    rc, out, err = run(capsys, "latency", p, "--op", "ld", "--min-latency", "100")
    assert "filters: op=ld, total latency >= 100" in out


def test_estimate_and_interval(capsys, tmp_path):
    # 10 loads 1152 ticks apart at 40 ns per tick, interval 1152 -> 40 ns / load
    from hpmkit.spe.synth import addr, counter, op, timestamp
    data = b"".join(addr(0, 0x1000) + op(1, 0) + counter(0, 9) + addr(2, 0x2000) + timestamp(1000 + 1152 * i)
                    for i in range(10))
    f = tmp_path / "l.bin"
    f.write_bytes(data)
    rc, out, err = run(capsys, "estimate", "--raw", f, "--period", "1024", "--jitter", "1", "--cntfrq", "25e6",
                       "--bytes-per-load", "8")
    assert rc == 0, err
    assert "sampling interval      1152 (base 1024 + 128)" in out
    assert "loads executed (est.)  11520" in out
    # span 9*1152 ticks * 40 ns / 11520 loads = 36 ns
    assert "derived load latency   36.000 ns" in out
    assert "bytes read (est.)      92160" in out
    rc, out, err = run(capsys, "interval", "--period", "1000", "--min-interval", "256")
    assert "actual interval 769" in out
    rc, out, err = run(capsys, "quality", "--counts", "SAMPLE_POP=1000,SAMPLE_FEED=10,SAMPLE_FILTRATE=5,SAMPLE_COLLISION=1")
    assert "spe_sampling_ratio        0.010000" in out


def test_progress_bar(capsys, tmp_path):
    p = tmp_path / "s.data"
    perfwrite.write_perf_data(p, [(0, -1, synth.RecordGen(1).stream(500))])
    rc, out, err = run(capsys, "decode", p, "-o", tmp_path / "s", "--progress")
    assert rc == 0
    assert "decoding [" in err and "100.0%" in err and "500 records" in err


def test_raw_dump(capsys):
    rc, out, err = run(capsys, "dump", "--raw", DATA / "hiperf_TestSpeDumpRawData2.spe.bin")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == ". ... ARM SPE data: size 0x70 bytes"
    assert lines[4] == ".  0000000d:  90                                              Bad packet!"
    assert sum("Bad packet!" in ln for ln in lines) == 6


def test_perf_time_column(capsys, tmp_path):
    from hpmkit.spe.perfmeta import TimeConv
    from hpmkit.spe.synth import END, addr, counter, op, timestamp
    data = addr(0, 0x1000) + op(2, 0) + counter(0, 3) + timestamp(1000) + addr(0, 0x1004) + op(2, 0) + END
    p = tmp_path / "t.data"
    perfwrite.write_perf_data(p, [(0, -1, data)], time_conv=TimeConv(10, 40 << 10, 5000))  # 40 ns per tick
    rc, out, err = run(capsys, "decode", p, "-o", tmp_path / "t", "--perf-time")
    assert rc == 0, err
    rows = (tmp_path / "t-branch.csv").read_text().splitlines()
    assert rows[0].endswith(',"ts","time"')
    assert rows[1].endswith(",1000,45000") and rows[2].endswith(",0,0")
    rc, out, err = run(capsys, "decode", "--raw", DATA / "quipper_arm_spe_decoder_test.spe.bin", "-o",
                       tmp_path / "r", "--perf-time")
    assert rc == 2 and "TIME_CONV" in err


STAT_JSON = """{
  "format": "hpm-stat", "version": 1, "command": ["./app"], "pid": 0, "all_cpus": false,
  "pmu": "arm_neoverse_n1", "cpu_id": "arm midr=0x41:0xd0c", "runs": 1, "exit_status": 0, "elapsed_s": 1.0,
  "events": [
    %s
  ],
  "not_supported": [], "metrics": []
}"""


def _ev(name, value, counted=True):
    return ('{"name": "%s", "value": %s, "stddev_pct": 0.0, "raw": %d, "enabled_ns": 1, "running_ns": 1, '
            '"scaled": false, "group": 0, "read_path": "read", "read_path_reason": "", "counted": %s}'
            % (name, value, int(value), "true" if counted else "false"))


def test_quality_from_hpm_stat_json(capsys, tmp_path):
    f = tmp_path / "stat.json"
    f.write_text(STAT_JSON % ",\n".join([_ev("armv8_pmuv3_0::SAMPLE_POP", 4000000.0), _ev("SAMPLE_FEED:u", 4000.0),
                                         _ev("SAMPLE_FILTRATE", 1000.0), _ev("SAMPLE_COLLISION", 40.0)]))
    rc, out, err = run(capsys, "quality", "--stat", f)
    assert rc == 0, err
    assert "spe_sampling_ratio        0.001000" in out and "spe_filter_ratio          0.250000" in out
    assert "spe_collision_ratio       0.000010" in out
    f.write_text(STAT_JSON % ",\n".join([_ev("SAMPLE_POP", 1.0), _ev("SAMPLE_FEED", 0.0, counted=False)]))
    rc, out, err = run(capsys, "quality", "--stat", f)
    assert rc == 1 and "SAMPLE_FEED was never counted" in err
    rc, out, err = run(capsys, "quality")
    assert rc == 2 and "--counts" in err
