"""A reader for perf.data files (file mode, "PERFILE2", little-endian).

Generic on purpose: it knows the container (header, attrs with their ids, feature sections,
the record stream with byte offsets, sample_id trailers) and nothing about profiles, so other
analyses (e.g. AUXTRACE/Arm SPE) can iterate the same records. The fast SAMPLE decoder lives in
C (src/native/perfdata_scan.c, wrapped by hpmkit.perfdata.scan); this module decodes the rare
records in Python.

Every problem is a FormatError naming the file and the byte offset.
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from collections.abc import Iterator

from ..errors import FormatError, ReadError
from . import format as F

HINT = "the file is truncated or not a perf.data file; record it again"


class PerfDataError(FormatError):
    default_hint = HINT


@dataclass
class Attr:
    """One perf_event_attr of the file with the sample ids the kernel gave its instances."""
    index: int
    type: int
    config: int
    sample_period: int          # the period, or the frequency when freq is set
    freq: bool
    sample_type: int
    read_format: int
    flags: int
    branch_sample_type: int = 0
    sample_regs_user: int = 0
    sample_regs_intr: int = 0
    config1: int = 0
    config2: int = 0
    ids: list[int] = field(default_factory=list)
    name: str | None = None     # from EVENT_DESC when present

    def flag(self, name: str) -> bool:
        return bool(self.flags >> F.ATTR_FLAG_BITS[name] & 1)

    @property
    def sample_id_all(self) -> bool:
        return self.flag("sample_id_all")


@dataclass
class Record:
    offset: int                 # byte offset of the record header in the file
    type: int
    misc: int
    size: int                   # header.size (AUXTRACE data excluded)
    payload: memoryview         # bytes after the 8-byte header, header.size - 8 long
    aux: memoryview | None = None   # AUXTRACE: the trace data following the record

    @property
    def name(self) -> str:
        return F.RECORD_NAMES.get(self.type, f"type {self.type}")


def _cstr(b: bytes | memoryview) -> str:
    b = bytes(b)
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


class PerfData:
    """An open perf.data file. Use as a context manager or call close()."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        try:
            self._f = open(self.path, "rb")
        except OSError as e:
            raise ReadError(self.path, f"cannot open: {e.strerror}") from e
        try:
            self.size = os.fstat(self._f.fileno()).st_size
            if self.size == 0:
                raise PerfDataError(self.path, "empty file")
            self.map = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
            self.buf = memoryview(self.map)
            self._parse_header()
            self._parse_attrs()
            self._parse_feature_table()
            self._apply_event_desc()
        except BaseException:
            self.close()
            raise

    # -- plumbing ------------------------------------------------------------------------
    def close(self) -> None:
        # Records handed out keep views into the mapping; while one lives the map cannot
        # close, so it is then left to the garbage collector instead of failing.
        for name in ("buf", "map"):
            obj = getattr(self, name, None)
            if obj is not None:
                try:
                    obj.release() if name == "buf" else obj.close()
                except BufferError:
                    pass
                setattr(self, name, None)
        self._f.close()

    def __enter__(self) -> "PerfData":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def error(self, offset: int, what: str) -> PerfDataError:
        return PerfDataError(self.path, f"byte {offset}: {what}")

    def _need(self, offset: int, n: int, what: str) -> None:
        if offset < 0 or offset + n > self.size:
            raise self.error(offset, f"{what} ({n} bytes) runs past the end of the file "
                                     f"({self.size} bytes)")

    def _u64s(self, offset: int, n: int) -> tuple[int, ...]:
        return struct.unpack_from(f"<{n}Q", self.buf, offset)

    # -- header --------------------------------------------------------------------------
    def _parse_header(self) -> None:
        if self.size < 16:
            raise self.error(0, "shorter than a perf.data header")
        magic = bytes(self.buf[:8])
        if magic == F.MAGIC_BE:
            raise self.error(0, "big-endian perf.data is not supported")
        if magic != F.MAGIC:
            raise PerfDataError(self.path, f"byte 0: not a perf.data file (magic {magic!r}, "
                                f"want b'PERFILE2')", "give a file written by perf record or hpm record")
        hsize = self._u64s(8, 1)[0]
        if hsize == F.PIPE_HEADER_SIZE:
            raise PerfDataError(self.path, "byte 8: pipe-mode perf.data (perf record -o -) is "
                                "not supported", "convert it with 'perf inject -i IN -o OUT' or "
                                "record to a file")
        if hsize < F.FILE_HEADER_SIZE:
            raise self.error(8, f"header size {hsize} is smaller than {F.FILE_HEADER_SIZE}")
        self._need(0, F.FILE_HEADER_SIZE, "file header")
        (self.attr_size, a_off, a_size, d_off, d_size, _et_off, _et_size) = self._u64s(16, 7)
        self.features_bitmap = int.from_bytes(bytes(self.buf[72:104]), "little")
        if self.attr_size < 64 + 16 or self.attr_size > 4096:
            raise self.error(16, f"attr size {self.attr_size} is not a perf_file_attr size")
        if a_size % self.attr_size:
            raise self.error(24, f"attr section size {a_size} is not a multiple of the attr "
                                 f"size {self.attr_size}")
        self._need(a_off, a_size, "attr section")
        if d_off < F.FILE_HEADER_SIZE:
            raise self.error(40, f"data section offset {d_off} lies inside the header")
        if d_off + d_size > self.size:
            raise self.error(40, f"data section [{d_off}, {d_off + d_size}) runs past the end "
                                 f"of the file ({self.size} bytes)")
        self.attrs_offset, self.attrs_size = a_off, a_size
        self.data_offset, self.data_size = d_off, d_size

    def _parse_attr(self, off: int, size: int, index: int) -> Attr:
        if size < 64:
            raise self.error(off, f"perf_event_attr of {size} bytes (at least 64 expected)")
        typ, asize, config, period, stype, rfmt, flags = struct.unpack_from("<IIQQQQQ", self.buf, off)
        if asize and asize > size:
            # perf writes attr.size of the tool's struct; it must fit the slot it sits in
            raise self.error(off + 4, f"attr.size {asize} larger than the {size}-byte slot")
        get = lambda o: self._u64s(off + o, 1)[0] if size >= o + 8 else 0  # noqa: E731
        if stype & ~F.SAMPLE_KNOWN:
            raise self.error(off + 24, f"sample_type {stype:#x} has bits this reader does not "
                                       f"know ({stype & ~F.SAMPLE_KNOWN:#x})")
        return Attr(index=index, type=typ, config=config, sample_period=period,
                    freq=bool(flags >> F.ATTR_FLAG_BITS["freq"] & 1), sample_type=stype,
                    read_format=rfmt, flags=flags, config1=get(56), config2=get(64),
                    branch_sample_type=get(72), sample_regs_user=get(80),
                    sample_regs_intr=get(96))

    def _parse_attrs(self) -> None:
        self.attrs: list[Attr] = []
        n = self.attrs_size // self.attr_size
        body = self.attr_size - 16
        for i in range(n):
            off = self.attrs_offset + i * self.attr_size
            a = self._parse_attr(off, body, i)
            ids_off, ids_size = self._u64s(off + body, 2)
            if ids_size % 8:
                raise self.error(off + body + 8, f"id list size {ids_size} not a multiple of 8")
            self._need(ids_off, ids_size, f"id list of attr {i}")
            a.ids = list(self._u64s(ids_off, ids_size // 8)) if ids_size else []
            self.attrs.append(a)
        if not self.attrs:
            raise self.error(self.attrs_offset, "no event attributes (empty attr section)")

    # -- feature sections ----------------------------------------------------------------
    def _parse_feature_table(self) -> None:
        self.features: dict[int, tuple[int, int]] = {}
        bits = [b for b in range(256) if self.features_bitmap >> b & 1]
        table = self.data_offset + self.data_size
        if bits:
            self._need(table, 16 * len(bits), "feature section table")
        for i, b in enumerate(bits):
            off, size = self._u64s(table + 16 * i, 2)
            if off + size > self.size:
                raise self.error(table + 16 * i, f"feature {F.FEAT_NAMES.get(b, b)} section "
                                 f"[{off}, {off + size}) runs past the end of the file")
            self.features[b] = (off, size)

    def feature_bytes(self, feat: int | str) -> memoryview | None:
        bit = F.FEAT[feat] if isinstance(feat, str) else feat
        if bit not in self.features:
            return None
        off, size = self.features[bit]
        return self.buf[off:off + size]

    def _string_at(self, off: int, end: int) -> tuple[str, int]:
        """A perf_header_string (u32 len, len bytes NUL-padded) at off; returns (text, next)."""
        if off + 4 > end:
            raise self.error(off, "string header past the end of its feature section")
        (n,) = struct.unpack_from("<I", self.buf, off)
        if off + 4 + n > end:
            raise self.error(off, f"string of {n} bytes past the end of its feature section")
        return _cstr(self.buf[off + 4:off + 4 + n]), off + 4 + n

    def feature_string(self, feat: str) -> str | None:
        if F.FEAT[feat] not in self.features:
            return None
        off, size = self.features[F.FEAT[feat]]
        return self._string_at(off, off + size)[0]

    def nrcpus(self) -> tuple[int, int] | None:
        """(available, online) from HEADER_NRCPUS."""
        b = self.feature_bytes("NRCPUS")
        if b is None:
            return None
        if len(b) < 8:
            raise self.error(self.features[F.FEAT["NRCPUS"]][0], "NRCPUS section too short")
        return struct.unpack_from("<II", b, 0)

    def cmdline(self) -> list[str] | None:
        if F.FEAT["CMDLINE"] not in self.features:
            return None
        off, size = self.features[F.FEAT["CMDLINE"]]
        end = off + size
        if size < 4:
            raise self.error(off, "CMDLINE section too short")
        (n,) = struct.unpack_from("<I", self.buf, off)
        p, out = off + 4, []
        for _ in range(n):
            s, p = self._string_at(p, end)
            out.append(s)
        return out

    def event_desc(self) -> list[tuple[Attr, str, list[int]]] | None:
        """HEADER_EVENT_DESC: (attr, event name, ids) per event."""
        if F.FEAT["EVENT_DESC"] not in self.features:
            return None
        off, size = self.features[F.FEAT["EVENT_DESC"]]
        end = off + size
        if size < 8:
            raise self.error(off, "EVENT_DESC section too short")
        nre, sz = struct.unpack_from("<II", self.buf, off)
        p, out = off + 8, []
        for i in range(nre):
            if p + sz + 4 > end:
                raise self.error(p, f"EVENT_DESC event {i} past the end of its section")
            a = self._parse_attr(p, sz, i)
            (nids,) = struct.unpack_from("<I", self.buf, p + sz)
            name, p = self._string_at(p + sz + 4, end)
            if p + 8 * nids > end:
                raise self.error(p, f"EVENT_DESC ids of event {i} past the end of its section")
            ids = list(self._u64s(p, nids)) if nids else []
            p += 8 * nids
            out.append((a, name, ids))
        return out

    def _apply_event_desc(self) -> None:
        desc = self.event_desc() or []
        by_id = {i: name for _, name, ids in desc for i in ids}
        for k, a in enumerate(self.attrs):
            names = {by_id[i] for i in a.ids if i in by_id}
            if len(names) == 1:
                a.name = names.pop()
            elif len(desc) == len(self.attrs):
                a.name = desc[k][1]     # same order as the attr section

    def build_ids(self) -> list[tuple[int, bytes, str]]:
        """HEADER_BUILD_ID: (pid, build-id bytes, file name) per DSO perf saw samples in."""
        if F.FEAT["BUILD_ID"] not in self.features:
            return []
        off, size = self.features[F.FEAT["BUILD_ID"]]
        end, p, out = off + size, off, []
        while p + 8 <= end:
            _typ, misc, rsize = struct.unpack_from("<IHH", self.buf, p)
            if rsize < 36 or p + rsize > end:
                raise self.error(p, f"BUILD_ID entry of {rsize} bytes does not fit its section")
            (pid,) = struct.unpack_from("<i", self.buf, p + 8)
            raw = bytes(self.buf[p + 12:p + 36])
            n = raw[20] if misc & F.MISC_BUILD_ID_SIZE and 0 < raw[20] <= 20 else 20
            bid = raw[:n]
            if not misc & F.MISC_BUILD_ID_SIZE:
                bid = bid.rstrip(b"\0") or bid   # old files: zero padded 20 bytes
            out.append((pid, bid, _cstr(self.buf[p + 36:p + rsize])))
            p += rsize
        return out

    def kallsyms_text(self) -> str | None:
        """The hpmkit kallsyms section (feature bit 250): /proc/kallsyms text, stored raw or as
        a perf_header_string."""
        b = self.feature_bytes("HPM_KALLSYMS")
        if b is None:
            return None
        if len(b) >= 4:
            (n,) = struct.unpack_from("<I", b, 0)
            # kallsyms text starts with hex digits, which read as a u32 far above the size
            if 0 < n <= len(b) - 4:
                return _cstr(b[4:4 + n])
        return _cstr(b)

    # -- records -------------------------------------------------------------------------
    def records(self, start: int | None = None, end: int | None = None) -> Iterator[Record]:
        """Records of the data section in file order (pure Python; for the few non-SAMPLE
        records, or for tools that want everything)."""
        pos = self.data_offset if start is None else start
        end = self.data_offset + self.data_size if end is None else end
        buf = self.buf
        while pos < end:
            if end - pos < 8:
                raise self.error(pos, "truncated record header")
            typ, misc, size = struct.unpack_from("<IHH", buf, pos)
            if size < 8:
                raise self.error(pos, f"record size {size} below 8 (corrupt data section)")
            if pos + size > end:
                raise self.error(pos, f"{F.RECORD_NAMES.get(typ, typ)} record of {size} bytes "
                                      f"runs past the end of the data section (truncated file?)")
            rec = Record(pos, typ, misc, size, buf[pos + 8:pos + size])
            nxt = pos + size
            if typ == F.REC["AUXTRACE"]:
                if size < 16:
                    raise self.error(pos, "AUXTRACE record too short")
                (aux,) = struct.unpack_from("<Q", buf, pos + 8)
                if nxt + aux > end:
                    raise self.error(pos, "AUXTRACE data runs past the end of the data section")
                rec.aux = buf[nxt:nxt + aux]
                nxt += aux
            yield rec
            pos = nxt

    def record_at(self, offset: int) -> Record:
        return next(self.records(offset, offset + struct.unpack_from("<H", self.buf, offset + 6)[0]))

    # -- sample_id trailers --------------------------------------------------------------
    def attr_for_id(self, ident: int) -> Attr | None:
        if not hasattr(self, "_id_map"):
            self._id_map = {i: a for a in self.attrs for i in a.ids}
        return self._id_map.get(ident)

    @staticmethod
    def _trailer_layout(st: int) -> list[str]:
        names = []
        if st & F.SAMPLE_TID:
            names.append("pidtid")
        if st & F.SAMPLE_TIME:
            names.append("time")
        if st & F.SAMPLE_ID:
            names.append("id")
        if st & F.SAMPLE_STREAM_ID:
            names.append("stream_id")
        if st & F.SAMPLE_CPU:
            names.append("cpu")
        if st & F.SAMPLE_IDENTIFIER:
            names.append("identifier")
        return names

    def sample_id(self, rec: Record) -> dict:
        """The sample_id_all trailer of a non-SAMPLE kernel record: pid, tid, time, id, cpu
        (those the attr asks for); {} when the file has no trailers."""
        a0 = self.attrs[0]
        if not a0.sample_id_all or rec.type >= 64:
            return {}
        layout = self._trailer_layout(a0.sample_type)
        n = len(layout)
        if n * 8 > len(rec.payload):
            raise self.error(rec.offset, f"{rec.name} record too short for its sample_id trailer")
        vals = struct.unpack_from(f"<{n}Q", rec.payload, len(rec.payload) - 8 * n)
        out = {}
        for k, v in zip(layout, vals):
            if k == "pidtid":
                out["pid"], out["tid"] = v & 0xFFFFFFFF, v >> 32
            elif k == "cpu":
                out["cpu"] = v & 0xFFFFFFFF
            elif k == "identifier":
                out["id"] = v
            else:
                out[k] = v
        for k in ("pid", "tid"):
            if k in out and out[k] >= 1 << 31:
                out[k] -= 1 << 32
        return out

    def trailer_size(self) -> int:
        a0 = self.attrs[0]
        return 8 * len(self._trailer_layout(a0.sample_type)) if a0.sample_id_all else 0
