"""Reference for the benchmark: a pure-Python, packet-at-a-time SPE decoder in the style of
Arm's spe-parser (one Python object per packet, records as dicts of decoded fields).

Written for bench/spe/run.py only; hpmkit never uses it. It follows the same header rules as
the C decoder (src/native/spe_pkt.c) so both produce the same records on valid streams.
"""
from __future__ import annotations


def _payload(buf: bytes, i: int, size: int) -> int:
    return int.from_bytes(buf[i:i + size], "little")


def packets(buf: bytes):
    """Yield (kind, index, payload, length) per packet; bad bytes as ("BAD", 0, 0, 1)."""
    i, n = 0, len(buf)
    while i < n:
        h = buf[i]
        if h == 0x00:
            j = i + 1
            while j < n and j - i < 16 and buf[j] == 0:
                j += 1
            yield "PAD", 0, 0, j - i
            i = j
            continue
        if h == 0x01:
            yield "END", 0, 0, 1
            i += 1
            continue
        if h == 0x71:
            kind, idx, size, ext = "TS", 0, 8, 0
        elif (h & 0xCF) == 0x42:
            kind, idx, size, ext = "EV", 0, 1 << ((h >> 4) & 3), 0
        elif (h & 0xCF) == 0x43:
            kind, idx, size, ext = "DS", 0, 1 << ((h >> 4) & 3), 0
        elif (h & 0xFC) == 0x64:
            kind, idx, size, ext = "CTX", h & 3, 4, 0
        elif (h & 0xFC) == 0x48:
            kind, idx, size, ext = "OP", h & 3, 1, 0
        else:
            ext = 0
            hh = h
            if (h & 0xFC) == 0x20 and i + 1 < n and buf[i + 1] != 0:
                ext, hh = 1, buf[i + 1]
            if (hh & 0xF8) == 0xB0:
                kind, idx, size = "ADDR", ((h & 3) << 3 | (hh & 7)) if ext else hh & 7, 8
            elif (hh & 0xF8) == 0x98:
                kind, idx, size = "LAT", ((h & 3) << 3 | (hh & 7)) if ext else hh & 7, 2
            else:
                yield "BAD", 0, 0, 1
                i += 1
                continue
        if i + 1 + ext + size > n:
            yield "BAD", 0, 0, 1
            i += 1
            continue
        yield kind, idx, _payload(buf, i + 1 + ext, size), 1 + ext + size
        i += 1 + ext + size


def records(buf: bytes, cpu: int = 0) -> list[dict]:
    out: list[dict] = []
    rec: dict = {}
    for kind, idx, v, _n in packets(buf):
        if kind == "PAD":
            continue
        if kind == "BAD":
            rec = {}
            continue
        if kind == "ADDR":
            a = v & 0x00FFFFFFFFFFFFFF
            if idx in (0, 1, 4):
                el, ns = (v >> 61) & 3, v >> 63
                if ns and el in (1, 2):
                    a |= 0xFF << 56
                rec[("pc", "tgt", "", "", "pbt")[idx]] = a
                if idx == 0:
                    rec["el"] = el
            elif idx == 2:
                rec["vaddr"] = a | (0xFF << 56) if (a >> 48) & 0xFF == 0xFF else a
            elif idx == 3:
                rec["paddr"] = a
        elif kind == "LAT":
            name = {0: "total_lat", 1: "issue_lat", 2: "xlat_lat"}.get(idx)
            if name:
                rec[name] = v
        elif kind == "CTX":
            rec["context"] = v
        elif kind == "OP":
            rec["op_class"], rec["op"] = idx, v
        elif kind == "EV":
            rec["events"] = v
        elif kind == "DS":
            rec["data_source"] = v
        elif kind in ("TS", "END"):
            if kind == "TS":
                rec["ts"] = v
            rec["cpu"] = cpu
            out.append(rec)
            rec = {}
    return out
