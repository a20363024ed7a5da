"""Seed corpora for the fuzz targets, made from this project's own files (no third-party data):
our perf.data recordings (tests/data/perfdata/own), perf script text made from them by the
installed perf, the lab's hpm-stat files, the bundled event tables and truth list, a lab
console transcript as lab/init.c prints it, a bundled .hpmprof's meta.json.

    python tests/fuzz/seeds.py OUTDIR     -> OUTDIR/<target>/seed-*

A campaign starts from these plus the kept corpus tests/data/fuzz/<target> (tests/fuzz/run.sh).
"""
from __future__ import annotations

import base64
import gzip
import lzma
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
OWN = ROOT / "tests" / "data" / "perfdata" / "own"
MAX = 64 * 1024


def _own_recordings(out: Path) -> list[Path]:
    files = []
    for xz in sorted(OWN.glob("*.data.xz")):
        data = lzma.decompress(xz.read_bytes())
        if len(data) <= MAX:
            p = out / xz.name.removesuffix(".xz")
            p.write_bytes(data)
            files.append(p)
    return files


def _scan_preamble(pd) -> bytes:
    """tests/fuzz/perfdata_fuzz.c's 32-byte description of the events of a file."""
    attrs = pd.attrs[:3]
    b = bytearray(32)
    b[0] = (len(attrs) - 1) | 0x80
    b[1] = 15
    b[2] = 0
    b[3] = 0
    for i, a in enumerate(attrs):
        o = 4 + 9 * i
        b[o:o + 4] = struct.pack("<I", a.sample_type & 0x1FFFFFF)
        b[o + 4] = a.read_format & 0x1F
        b[o + 5] = bin(a.sample_regs_user).count("1") % 8
        b[o + 6] = bin(a.sample_regs_intr).count("1") % 8
        b[o + 8] = int(a.sample_id_all)
    return bytes(b)


def perfdata(out: Path, tmp: Path) -> None:
    for p in _own_recordings(tmp):
        shutil.copy(p, out / f"seed-{p.name}")


def perfdata_scan(out: Path, tmp: Path) -> None:
    from hpmkit.perfdata import PerfData
    for p in _own_recordings(tmp):
        with PerfData(p) as pd:
            if pd.pipe or pd.data_end is None:
                continue
            body = p.read_bytes()[pd.data_offset:pd.data_end]
            (out / f"seed-{p.stem}").write_bytes(_scan_preamble(pd) + body[:16384])


def script(out: Path, tmp: Path) -> None:
    perf = shutil.which("perf")
    for p in _own_recordings(tmp):
        if "pipe" in p.name or not perf:
            continue
        for i, fields in enumerate(([], ["-F", "comm,tid,time,event,ip,sym,dso,period"], ["-F", "ip,sym"])):
            r = subprocess.run([perf, "script", "-i", str(p), *fields], capture_output=True, timeout=60)
            if r.returncode == 0 and r.stdout:
                (out / f"seed-{p.stem}-{i}.txt").write_bytes(r.stdout[:16384])
    (out / "seed-folded.txt").write_text("app;main;work 10\napp;main;idle 3\n[kernel];do_syscall_64;ksys_read 7\n")


def stat_json(out: Path, tmp: Path) -> None:
    for p in sorted((ROOT / "tests" / "data" / "stat").glob("*.json")):
        shutil.copy(p, out / f"seed-{p.name}")


REGIONS = """{"format": "hpm-regions", "version": 1, "pid": 8243, "events": ["task-clock", "page-faults"],
 "unmatched_markers": 0, "dropped_regions": 0, "error": null, "regions": [
 {"name": "touch", "calls": 2, "values": {"task-clock": 182551, "page-faults": 128}},
 {"name": "idle", "calls": 1, "values": {"task-clock": 1081, "page-faults": 0}}]}
"""


def regions_json(out: Path, tmp: Path) -> None:
    (out / "seed-regions.json").write_text(REGIONS)


def truth(out: Path, tmp: Path) -> None:
    rich = (ROOT / "data" / "compare" / "known-riscv64-slower.tsv").read_text().splitlines()
    rows = [l for l in rich if l and not l.startswith("#")]
    (out / "seed-rich.tsv").write_text("\n".join(rows[:4]) + "\n")
    (out / "seed-plain.tsv").write_text("function\tworkload\treason\tevidence\n"
                                        "raw_copy_to_user\t*\tbyte loop\tarch/riscv/lib/uaccess.S:1\n"
                                        "alloc_fd\tfd-alloc\t\t\n")


def exact(out: Path, tmp: Path) -> None:
    """the bundled suite's exact tables, cut to their first lines (byte 0: which table)"""
    for arch in ("riscv64", "aarch64"):
        d = ROOT / "examples" / "lab-suite" / arch
        for k, name in enumerate(("pipe.exact.tsv", "pipe.exact-paths.tsv.gz")):
            f = d / name
            if f.is_file():
                raw = f.read_bytes()
                lines = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode().splitlines()[:40]
                text = ("\n".join(lines) + "\n").encode()
                (out / f"seed-{arch}-{k}").write_bytes(bytes([k]) + text)
                if k:   # as recorded: compressed
                    (out / f"seed-{arch}-{k}-gz").write_bytes(bytes([k]) + gzip.compress(text, mtime=0))


def protocol(out: Path, tmp: Path) -> None:
    data = b"hello from the guest\n"
    text = ("[    0.52] Run /init as init process\n\n@@HPMLAB BEGIN 1@@\n@@HPMLAB WARN cannot set x: y@@\n"
            "@@HPMLAB STATUS 0@@\n"
            f"@@HPMLAB FILE stdout {len(data)} {zlib.crc32(data):08x}@@\n"
            f"{base64.b64encode(data).decode()}\n@@HPMLAB END@@\n"
            "@@HPMLAB FILE out/empty 0 00000000@@\n@@HPMLAB END@@\n@@HPMLAB DONE 2@@\n")
    (out / "seed-console.txt").write_text(text)
    (out / "seed-execfail.txt").write_text("\n@@HPMLAB BEGIN 1@@\n@@HPMLAB EXECFAIL 2@@\n@@HPMLAB DONE 0@@\n")


def hpmprof(out: Path, tmp: Path) -> None:
    from targets import BASE_PROFILE
    meta = (BASE_PROFILE / "meta.json").read_bytes()
    (out / "seed-as-is").write_bytes(meta)
    (out / "seed-ops").write_bytes(meta + b"\n%%\n" + bytes([0, 3, 5, 1, 10, 2]))


def evtab(out: Path, tmp: Path) -> None:
    ev = ROOT / "data" / "events"
    for main, inc, mg, lst in (("sifive_u74", "riscv_sbi", "sifive_u74", "cycles,{INT_LOAD_RETIRED,instructions}:u"),
                               ("neoverse_n1", "armv8_pmuv3", "neoverse_n1", "PAPI_TOT_CYC,L1D_CACHE_REFILL:k,r11"),
                               # perf's named events with terms (cycles/period=N/)
                               ("neoverse_n1", "armv8_pmuv3", "neoverse_n1",
                                "cycles/period=1000/,instructions/name=ins/u,task-clock/freq=99/:k")):
        parts = [(ev / f"{main}.evt").read_text(), (ev / f"{inc}.evt").read_text(),
                 (ROOT / "data" / "metrics" / f"{mg}.mg").read_text(), lst]
        (out / f"seed-{main}{'-terms' if '/' in lst else ''}").write_text("\n%%\n".join(parts)[:60000])


def spe(out: Path, tmp: Path) -> None:
    for p in sorted((ROOT / "tests" / "data" / "spe" / "fuzz-corpus").iterdir())[:50]:
        shutil.copy(p, out / p.name)


def cfi(out: Path, tmp: Path) -> None:
    """tests/fuzz/cfi_fuzz.c's layout from the lab's own static binaries: a section of call-frame
    information, then code of the same binary as the code and stack image"""
    import struct as st
    from elftools.elf.elffile import ELFFile
    for arch, flag in (("riscv64", 0), ("aarch64", 1)):
        path = ROOT / "build" / arch / "bin" / "ksuite"
        if not path.exists():
            continue
        with open(path, "rb") as f:
            elf = ELFFile(f)
            text = elf.get_section_by_name(".text").data()
            for name, bit in ((".eh_frame", 0), (".debug_frame", 2)):
                sec = elf.get_section_by_name(name)
                if sec is None:
                    continue
                data = sec.data()[:16384]
                (out / f"seed-{arch}{name.replace('.', '-')}").write_bytes(
                    bytes([flag | bit]) + st.pack("<H", len(data)) + data + text[:16384])


SEEDS = {f.__name__: f for f in (perfdata, perfdata_scan, script, stat_json, regions_json, truth, exact, protocol,
                                 hpmprof, evtab, spe, cfi)}


def main(outdir: str, targets: list[str]) -> None:
    import tempfile
    sys.path.insert(0, str(Path(__file__).parent))
    base = Path(outdir)
    with tempfile.TemporaryDirectory() as t:
        for name in targets or SEEDS:
            d = base / name
            d.mkdir(parents=True, exist_ok=True)
            SEEDS[name](d, Path(t))
            print(f"{d}: {len(list(d.iterdir()))} seeds")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
