"""Arm SPE decoder (src/native/spe_*.c via hpmkit.spe.native): packets, records, resync, streaming.

Fixtures in tests/data/spe/ are real captures from Apache/BSD projects (README.txt there)."""
import random
from pathlib import Path

import numpy as np
import pytest

from hpmkit.spe import native, synth
from hpmkit.spe.native import HAS, Decoder, decode_bytes, decode_packet

DATA = Path(__file__).resolve().parents[1] / "data" / "spe"


def golden(name):
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        hexs, desc = line.split("\t")
        rows.append((bytes.fromhex(hexs), desc))
    return rows


@pytest.mark.parametrize("name", ["quipper_arm_spe_decoder_test_golden.tsv",
                                  "telemetry-solution_spe_parser_packet_golden.tsv"])
def test_packet_descriptions_match_golden(name):
    rows = golden(name)
    assert len(rows) > 15
    for raw, want in rows:
        n, kind, _idx, _payload, desc = decode_packet(raw)
        assert n == len(raw), (raw.hex(), n)
        assert desc == want, raw.hex()


def test_packet_kinds_and_indexes():
    assert decode_packet(bytes.fromhex("b3e8098ad80b080080"))[1:4] == ("ADDRESS", 3, 0x800008_0bd88a09e8)
    assert decode_packet(bytes.fromhex("9a0100"))[1:3] == ("COUNTER", 2)
    # extended header: index bits 4:3 from the first byte -> address index 9, counter index 13
    n, kind, idx, payload, desc = decode_packet(bytes.fromhex("21b1") + (0x1234).to_bytes(8, "little"))
    assert (n, kind, idx, desc) == (10, "ADDRESS", 9, "ADDR 0x1234 (9)")
    n, kind, idx, payload, desc = decode_packet(bytes.fromhex("219d0500"))
    assert (n, kind, idx, payload, desc) == (4, "COUNTER", 13, 5, "LAT 5 ")
    # events and data source with 1/2/4/8-byte payloads
    assert decode_packet(bytes.fromhex("4202"))[0] == 2
    assert decode_packet(bytes.fromhex("7202000000" "00000000"))[1:4] == ("EVENTS", 8, 2)
    assert decode_packet(bytes.fromhex("630c000000"))[1:5] == ("DATA_SOURCE", 4, 12, "DATA-SOURCE 12")
    # operation types: SVE, conditional select, previous branch target (raw in perf 6.1)
    assert decode_packet(bytes.fromhex("4838"))[4] == "SVE-OTHER EVLEN 256"
    assert decode_packet(bytes.fromhex("4801"))[4] == "OTHER COND-SELECT"
    assert decode_packet(bytes.fromhex("491c"))[4] == "LD EVLEN 64 PRED"
    assert decode_packet(bytes.fromhex("4b00"))[4] == "OP-TYPE 0x0 (3)"
    assert decode_packet(bytes.fromhex("6600000000"))[4] == "CONTEXT 0x0 el3"
    # alignment: pads to the next 2^(n+1) boundary of the stream, zeros after it fold in
    assert decode_packet(bytes.fromhex("2300") + bytes(14) + b"\x01", pos=0)[0] == 16
    assert decode_packet(bytes.fromhex("2300") + bytes(8) + b"\x01" + bytes(10), pos=6)[0] == 10
    assert decode_packet(bytes.fromhex("2300") + bytes(8), pos=0)[0] == -11  # perf wants 16 bytes
    # too short / not a packet
    assert decode_packet(bytes.fromhex("b0000000"))[0] == -11
    assert decode_packet(bytes.fromhex("ff"))[0] == -74
    assert decode_packet(bytes.fromhex("20"))[0] == -74


def test_quipper_records_decode_to_expected_fields():
    recs, st = decode_bytes((DATA / "quipper_arm_spe_decoder_test.spe.bin").read_bytes(), cpu=2)
    assert len(recs) == 2 and st.bad_bytes == 0 and st.unterminated == 0
    r0, r1 = recs
    assert r0["pc"] == 0xFFFFBA66EDA1C2D0 and r0["pc_el"] == 2 and r0["pc_ns"] == 1
    assert r0["vaddr"] == 0xFFFF0E3703096B28
    assert (r0["total_lat"], r0["issue_lat"], r0["xlat_lat"]) == (12, 4, 1)
    assert r0["ts"] == 44731163950 and r0["context"] == 0x5F80 and r0["ctx_el"] == 2
    assert r0["data_source"] == 0 and r0["present"] & HAS["ds"]
    assert r0["op_class"] == 1 and r0["op"] == 0 and r0["events"] == 0x16 and r0["cpu"] == 2
    assert r1["pc"] == 0xFFFFBA66EDEFB0E0 and r1["tgt"] == 0xFFFFBA66EDEFB0E4
    assert (r1["total_lat"], r1["issue_lat"]) == (17, 16) and r1["ts"] == 44731164045
    assert r1["op_class"] == 2 and r1["op"] == 1 and not r1["present"] & HAS["va"]


def test_hiperf_captures_and_resync_counts():
    recs, st = decode_bytes((DATA / "hiperf_TestSpeDecoder.spe.bin").read_bytes())
    assert len(recs) == 4 and st.bad_bytes == 0
    assert sorted(recs["op_class"].tolist()) == [1, 1, 2, 2]
    # two corrupted bytes: each skipped alone; each ends the record it broke, which is kept with
    # what it had and flagged, as perf samples it (test_spe_perf_semantics.py checks it with perf)
    d = Decoder()
    d.set_origin(0, -1, 0)
    recs = np.concatenate(list(d.feed((DATA / "hiperf_TestSpeDumpRawData1.spe.bin").read_bytes())))
    st = d.stats()
    assert (len(recs), st.bad_bytes, st.bad_runs, st.cut_records, st.dropped_records) == (31, 2, 2, 2, 0)
    cut = recs[recs["present"] & HAS["cut"] != 0]
    assert len(cut) == 2 and not (cut["present"] & (HAS["end"] | HAS["ts"])).any()
    assert d.first_bad_offset() == 0x2E2
    # 6 bad bytes in 2 runs between records: no record of them (perf makes 6 empty samples)
    recs, st = decode_bytes((DATA / "hiperf_TestSpeDumpRawData2.spe.bin").read_bytes())
    assert (len(recs), st.bad_bytes, st.bad_runs, st.empty_cuts) == (2, 6, 2, 6)
    assert st.bytes == 112


def test_unterminated_record_is_counted_not_emitted():
    recs, st = decode_bytes((DATA / "telemetry_test_get_frame_neoverse.spe.bin").read_bytes())
    # the leading TS closes an (empty) record; the LD record after it has no END/TS
    assert len(recs) == 1 and recs[0]["op_class"] == 0xFF and recs[0]["ts"] == 13196304120239
    assert st.unterminated == 1


def test_unknown_indexes_are_counted():
    data = (synth.addr(0, 0x1000) + synth.addr(5, 0x55) + synth.counter(6, 9) + synth.op(1, 0)
            + synth.END)
    recs, st = decode_bytes(data)
    assert len(recs) == 1 and recs[0]["pc"] == 0x1000 and recs[0]["op_class"] == 1
    assert (st.unknown_addr, st.unknown_counter, st.unknown_op_class) == (1, 1, 0)


def test_operation_class_3_ends_the_record():
    """perf fails the record at a class-3 operation type ("Get packet error!") and samples what
    it had; before the stream's first complete record such a partial record is dropped."""
    first = synth.addr(0, 0x500) + synth.op(3, 0) + synth.addr(0, 0x600) + synth.op(2, 0) + synth.END
    recs, st = decode_bytes(first + synth.addr(0, 0x1000) + synth.op(1, 0) + synth.addr(2, 0x2000)
                            + synth.op(3, 0x55) + synth.addr(2, 0x3000) + synth.timestamp(7))
    assert recs["pc"].tolist() == [0x600, 0x1000, 0]
    assert (st.unknown_op_class, st.dropped_records, st.cut_records) == (2, 1, 1)
    cut, tail = recs[1], recs[2]
    assert cut["present"] & HAS["cut"] and cut["vaddr"] == 0x2000 and cut["op_class"] == 1 and cut["op"] == 0
    # nothing of the cut record leaks into the next one
    assert tail["vaddr"] == 0x3000 and tail["op_class"] == 0xFF and tail["ts"] == 7
    assert not tail["present"] & (HAS["cut"] | HAS["pc"])


def test_previous_branch_target_is_stored():
    data = synth.addr(0, 0xFFFF800000001000, el=1) + synth.op(2, 0) + synth.addr(4, 0xFFFF800000000F00, el=1) + synth.END
    recs, _ = decode_bytes(data)
    assert recs[0]["pbt"] == 0xFFFF800000000F00 and recs[0]["pbt_el"] == 1 and recs[0]["present"] & HAS["pbt"]


@pytest.mark.parametrize("seed", range(6))
def test_chunked_feeding_equals_one_piece(seed):
    """Streaming: any chunking gives the same records and counts (bounded memory per decoder)."""
    data = synth.any_stream(seed, 400, corrupt=0.1) + synth.RecordGen(seed).stream(50)
    whole, st_whole = decode_bytes(data, cpu=1)
    r = random.Random(seed)
    d = Decoder(batch=7)  # a tiny output batch also exercises the resume path
    d.set_origin(1, -1, 0)
    parts, i = [], 0
    while i < len(data):
        n = r.choice((1, 2, 3, 15, 16, 31, 32, 33, 100))
        parts += list(d.feed(data[i:i + n], last=i + n >= len(data)))
        i += n
    d.flush()
    got = np.concatenate(parts)
    assert got.tobytes() == whole.tobytes()
    assert d.stats() == st_whole
    assert st_whole.bytes == len(data)


def test_dump_lists_every_byte():
    data = synth.any_stream(3, 200, corrupt=0.2)
    lines = native.dump(data).splitlines()
    covered = sum(len(line[13:61].split()) for line in lines)
    assert covered == len(data)
    assert lines[0].startswith(".  00000000: ")


def test_fuzz_corpus_decodes_without_error():
    files = sorted((DATA / "fuzz-corpus").iterdir())
    assert len(files) >= 20
    for f in files:
        data = f.read_bytes()
        recs, st = decode_bytes(data)
        assert st.bytes == len(data)
        native.dump(data)


def test_fuzz_harness_replays_the_corpus_under_sanitizers():
    """The libFuzzer harness's checks (every byte counted, chunked == whole, fast == generic path,
    the table writer in both formats) on every corpus file and 3000 mutations of them, built
    with gcc's ASan + UBSan (tests/fuzz/spe_replay.c: no clang needed)."""
    import subprocess
    root = Path(__file__).resolve().parents[2]
    m = subprocess.run(["make", "-s", "spe-replay"], cwd=root, capture_output=True, text=True, timeout=300)
    assert m.returncode == 0, m.stderr
    p = subprocess.run([str(root / "build" / "fuzz" / "spe_replay"), str(DATA / "fuzz-corpus"), "3000"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    n = len(list((DATA / "fuzz-corpus").iterdir()))
    assert f"{n} corpus files and 3000 mutated inputs: no finding" in p.stdout


def test_dump_in_pieces_equals_whole():
    """Huge buffers are listed in pieces: same text whatever the piece and chunk sizes."""
    data = synth.any_stream(11, 3000, corrupt=0.1)
    whole = native.dump(data)
    r = random.Random(2)
    chunks, i = [], 0
    while i < len(data):
        n = r.randrange(1, 700)
        chunks.append(data[i:i + n])
        i += n
    assert "".join(native.dump_lines(chunks, piece=257)) == whole
    assert "".join(native.dump_lines([data], piece=64)) == whole
