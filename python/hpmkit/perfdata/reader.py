"""The perf.data reader: every file perf reads, streamed with bounded memory.

File mode ("PERFILE2", header of 104 or the old 72 bytes, legacy "PERFFILE") and pipe mode
(`perf record -o -`: a 16-byte header, attrs and features as records in the stream), attrs of
any size with or without ids, the feature sections (one that does not decode is noted and left
out, as perf leaves it out), AUXTRACE and tracing-data records with the payloads that follow
them, PERF_RECORD_COMPRESSED (zstd, decompressed as one stream, records may span two), and
files cut short: every complete record is kept and the lost bytes are counted (`truncation`).

Generic on purpose: it knows the container and nothing about profiles. records() yields every
record in stream order (pure Python: for the few non-SAMPLE records, SPE, tests); the fast
SAMPLE path is the C scanner (hpmkit.perfdata.scan) fed from the same stream.

Every problem is a FormatError naming the file and the byte offset.
"""
from __future__ import annotations

import os
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..errors import FormatError, ReadError
from . import features as FT
from . import format as F
from .features import Attr, FeatureError
from .stream import Source

HINT = "the file is not a perf.data file or is damaged; record it again"
STREAM_TYPES = {F.REC["AUXTRACE"], F.REC["HEADER_TRACING_DATA"]}   # a payload follows
COMPRESSED = {F.REC["COMPRESSED"], F.REC["COMPRESSED2"]}
EVENT_UPDATE_NAME = 2


class PerfDataError(FormatError):
    default_hint = HINT


@dataclass
class Record:
    offset: int                 # byte offset of the record header in the file
    type: int
    misc: int
    size: int                   # header.size (a following payload excluded)
    payload: bytes              # bytes after the 8-byte header, header.size - 8 long
    aux_size: int = 0           # AUXTRACE / TRACING_DATA: bytes that follow the record
    aux_offset: int = 0         # file offset of those bytes
    compressed: bool = False    # decompressed from the PERF_RECORD_COMPRESSED at `offset`

    @property
    def name(self) -> str:
        return F.RECORD_NAMES.get(self.type, f"type {self.type}")


@dataclass
class Truncation:
    """Where a cut-short file stops."""
    offset: int                 # file offset where the first incomplete record starts
    missing: int                # bytes the file should still hold (header, record, payload)
    partial: int                # bytes of that incomplete record present but not used
    what: str                   # what was cut

    def problem(self) -> str:
        """Where and how much, for a reader that refuses the file."""
        return (f"the file is cut short at byte {self.offset} inside {self.what}: "
                f"{self.missing + self.partial} bytes lost ({self.missing} missing, "
                f"{self.partial} of an incomplete record)")

    def describe(self) -> str:
        """The same, for a reader that keeps what came before the cut."""
        return f"{self.problem()}; every complete record before is used"


class _Decompressor:
    """perf record -z writes one zstd stream across all its COMPRESSED records."""

    def __init__(self, pd: "PerfData"):
        try:
            import zstandard
        except ImportError as e:
            raise pd.error(0, "compressed records (perf record -z) need the Python zstandard "
                           "package", "install hpmkit with its analysis extras "
                           "(pip install 'hpmkit[analysis]') or python3-zstandard") from e
        self.mod = zstandard
        self.obj = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            out.append(self.obj.decompress(data))
            data = self.obj.unused_data if self.obj.eof else b""
            if self.obj.eof:
                self.obj = self.mod.ZstdDecompressor().decompressobj()
        return b"".join(out)


class PerfData:
    """An open perf.data (path, or "-" for standard input). Use as a context manager."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.notes: list[str] = []          # what was read differently from a clean file
        self.truncation: Truncation | None = None
        self.features: dict[int, tuple[int, int] | bytes] = {}
        self.attrs: list[Attr] = []
        self.time_conv: bytes | None = None       # TIME_CONV payload (SPE needs it)
        self.auxtrace_info: bytes | None = None   # AUXTRACE_INFO payload
        self._pipe_build_ids: list[tuple[int, bytes, str]] = []
        self._attr_listeners: list[Callable[[list[Attr]], None]] = []
        self._id_map: dict[int, Attr] | None = None
        self._walked = False
        if self.path == "-":
            self._f = sys.stdin.buffer
            self.size = None
        else:
            try:
                self._f = open(self.path, "rb", buffering=0)
            except OSError as e:
                raise ReadError(self.path, f"cannot open: {e.strerror}") from e
        try:
            if self.path != "-":
                st = os.fstat(self._f.fileno())
                self.size = st.st_size if os.path.isfile(self.path) else None
            self._parse_header()
        except BaseException:
            self.close()
            raise

    # -- plumbing ------------------------------------------------------------------------
    def close(self) -> None:
        if self.path != "-":
            self._f.close()

    def __enter__(self) -> "PerfData":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def error(self, offset: int, what: str, hint: str | None = None) -> PerfDataError:
        return PerfDataError(self.path, f"byte {offset}: {what}", hint)

    def _pread(self, offset: int, n: int) -> bytes:
        """Up to n bytes at offset (fewer at the end of the file, none past it)."""
        n = max(0, min(n, (self.size or 0) - offset))
        if not n or offset < 0:
            return b""
        return os.pread(self._f.fileno(), n, offset)

    # -- header --------------------------------------------------------------------------
    def _read_start(self, n: int) -> bytes:
        if self.size is not None:
            return self._pread(0, n)
        b = b""
        while len(b) < n:
            got = self._f.read(n - len(b))
            if not got:
                break
            b += got
        return b

    def _parse_header(self) -> None:
        head = self._read_start(16)
        if self.size == 0 or not head:
            raise PerfDataError(self.path, "empty file", "record it again")
        if len(head) < 16:
            raise self.error(0, "shorter than a perf.data header")
        magic = head[:8]
        if magic == F.MAGIC_BE:
            raise self.error(0, "big-endian perf.data is not supported",
                             "convert it with 'perf inject -i IN -o OUT' on a little-endian host")
        if magic not in F.MAGICS:
            raise PerfDataError(self.path, f"byte 0: not a perf.data file (magic {magic!r}, "
                                f"want b'PERFILE2')", "give a file written by perf record or hpm record")
        (hsize,) = struct.unpack_from("<Q", head, 8)
        self.pipe = hsize == F.PIPE_HEADER_SIZE
        if self.pipe:
            self.data_offset, self.data_end = F.PIPE_HEADER_SIZE, self.size
            self.data_size = None if self.size is None else self.size - F.PIPE_HEADER_SIZE
            self._prelude()
            return
        if self.size is None:
            raise self.error(8, "a file-mode perf.data read from a pipe",
                             "give the file's path (its header points backwards and forwards)")
        if hsize not in (F.FILE_HEADER_SIZE, F.FILE_HEADER_SIZE_OLD):
            raise self.error(8, f"header size {hsize} is neither {F.FILE_HEADER_SIZE} nor the "
                                f"old {F.FILE_HEADER_SIZE_OLD}")
        head = self._pread(0, hsize)
        if len(head) < hsize:
            raise self.error(0, f"shorter than its {hsize}-byte header")
        (self.attr_size, a_off, a_size, d_off, d_size, _et_off, _et_size) = \
            struct.unpack_from("<7Q", head, 16)
        self.features_bitmap = int.from_bytes(head[72:104], "little") if hsize == 104 else 0
        if magic == F.MAGIC_V1 and self.attr_size - 16 not in F.ATTR_SIZES[:5]:
            # the legacy magic predates attrs larger than VER4 (perf refuses these too)
            raise self.error(16, f"legacy 'PERFFILE' header with attr size {self.attr_size}, "
                                 f"which no perf of that format wrote")
        if self.attr_size < F.ATTR_SIZE_VER0 + 16 or self.attr_size > 4096:
            raise self.error(16, f"attr size {self.attr_size} is not a perf_file_attr size")
        if a_size % self.attr_size:
            raise self.error(24, f"attr section size {a_size} is not a multiple of the attr "
                                 f"size {self.attr_size}")
        if a_off + a_size > self.size:
            raise self.error(24, f"attr section [{a_off}, {a_off + a_size}) runs past the end "
                                 f"of the file ({self.size} bytes)")
        if d_off < F.FILE_HEADER_SIZE_OLD:
            raise self.error(40, f"data section offset {d_off} lies inside the header")
        if d_off > self.size:
            raise self.error(40, f"data section offset {d_off} lies past the end of the file "
                                 f"({self.size} bytes)")
        if d_size == 0:
            # perf writes the size when it stops; a killed perf record leaves 0
            self.notes.append("the header's data size is 0 (perf record did not stop cleanly): "
                              "records read to the end of the file, no feature sections")
            d_size = self.size - d_off
            self.features_bitmap = 0
        self.data_offset, self.data_size = d_off, d_size
        self.data_end = min(d_off + d_size, self.size)
        self._declared_end = d_off + d_size
        self._parse_attrs(a_off, a_size)
        self._parse_feature_table()
        self._apply_event_desc()

    def _parse_attrs(self, a_off: int, a_size: int) -> None:
        # perf reads each attr by its own size field (64 when 0), then its ids section
        raw = self._pread(a_off, a_size)
        p = 0
        for i in range(a_size // self.attr_size):
            if p + F.ATTR_SIZE_VER0 > a_size:
                raise self.error(a_off + p, f"attr {i} runs past the end of the attr section")
            (sz,) = struct.unpack_from("<I", raw, p + 4)
            sz = sz or F.ATTR_SIZE_VER0
            if sz < F.ATTR_SIZE_VER0 or p + sz + 16 > a_size:
                raise self.error(a_off + p + 4, f"attr {i} of {sz} bytes does not fit the attr "
                                                f"section")
            try:
                a = FT.parse_attr(raw, p, sz, i)
            except FeatureError as e:
                raise self.error(a_off + p + 24 if "sample_type" in str(e) else a_off + p,
                                 str(e)) from None
            ids_off, ids_size = struct.unpack_from("<QQ", raw, p + sz)
            if ids_size % 8:
                raise self.error(a_off + p + sz + 8, f"id list size {ids_size} not a multiple of 8")
            if ids_off + ids_size > self.size:
                raise self.error(a_off + p + sz, f"id list of attr {i} [{ids_off}, "
                                 f"{ids_off + ids_size}) runs past the end of the file")
            if ids_size:
                a.ids = list(struct.unpack(f"<{ids_size // 8}Q", self._pread(ids_off, ids_size)))
            self.attrs.append(a)
            p += sz + 16
        if not self.attrs:
            raise self.error(a_off, "no event attributes (empty attr section)")

    # -- feature sections ----------------------------------------------------------------
    def _parse_feature_table(self) -> None:
        bits = [b for b in range(256) if self.features_bitmap >> b & 1]
        if not bits:
            return
        table = self._declared_end
        raw = self._pread(table, 16 * len(bits))
        if len(raw) < 16 * len(bits):
            self.notes.append(f"feature section table at byte {table} is missing (the file "
                              f"ends before it): no header features")
            return
        for i, b in enumerate(bits):
            off, size = struct.unpack_from("<QQ", raw, 16 * i)
            if off + size > self.size:
                self.notes.append(f"feature {F.FEAT_NAMES.get(b, b)} section [{off}, "
                                  f"{off + size}) runs past the end of the file: left out")
                continue
            self.features[b] = (off, size)

    def feature_bytes(self, feat: int | str) -> bytes | None:
        bit = F.FEAT[feat] if isinstance(feat, str) else feat
        v = self.features.get(bit)
        if v is None or isinstance(v, bytes):
            return v
        return self._pread(v[0], v[1])

    def _feature(self, feat: str, decode):
        """A decoded feature, or None when absent or undecodable (noted)."""
        b = self.feature_bytes(feat)
        if b is None:
            return None
        try:
            return decode(b)
        except (FeatureError, struct.error, UnicodeError) as e:
            msg = f"feature {feat} does not decode ({e}): left out"
            if msg not in self.notes:
                self.notes.append(msg)
            return None

    def feature_string(self, feat: str) -> str | None:
        return self._feature(feat, FT.string)

    def nrcpus(self) -> tuple[int, int] | None:
        return self._feature("NRCPUS", FT.nrcpus)

    def cmdline(self) -> list[str] | None:
        return self._feature("CMDLINE", FT.cmdline)

    def event_desc(self) -> list[tuple[Attr, str, list[int]]] | None:
        return self._feature("EVENT_DESC", FT.event_desc)

    def compression(self) -> dict | None:
        return self._feature("COMPRESSED", FT.compressed)

    def build_ids(self) -> list[tuple[int, bytes, str]]:
        return (self._feature("BUILD_ID", FT.build_ids) or []) + self._pipe_build_ids

    def kallsyms_text(self) -> str | None:
        return self._feature("HPM_KALLSYMS", FT.kallsyms_text)

    def _apply_event_desc(self) -> None:
        desc = self.event_desc() or []
        by_id = {i: name for _, name, ids in desc for i in ids}
        for k, a in enumerate(self.attrs):
            if a.name:
                continue
            names = {by_id[i] for i in a.ids if i in by_id}
            if len(names) == 1:
                a.name = names.pop()
            elif len(desc) == len(self.attrs):
                a.name = desc[k][1]     # same order as the attr section

    # -- pipe mode: attrs and features come as records ---------------------------------
    def _prelude(self) -> None:
        """Read the records before the first kernel, AUXTRACE or compressed record (attrs,
        features, tracing data): what a pipe-mode file says about itself."""
        self._src = Source(self._f, F.PIPE_HEADER_SIZE, None)
        if self.size is None:
            self._src.seekable = False      # standard input, even when it is a file
        self._prelude_records: list[Record] = []
        for rec in self._walk(self._src, stop_at_kernel=True):
            self._prelude_records.append(rec)
        self._prelude_end = self._src.offset
        self._apply_event_desc()
        if not self.attrs and self.truncation is None and self._src.avail:
            raise self.error(self._src.offset, "pipe-mode data before any event attribute "
                             "(HEADER_ATTR record)")

    def apply_user(self, rec: Record) -> None:
        """Take what a perf-synthesised record says about the file (pipe mode, SPE)."""
        t, p = rec.type, rec.payload
        try:
            if t == F.REC["HEADER_ATTR"]:
                (sz,) = struct.unpack_from("<I", p, 4)
                sz = sz or F.ATTR_SIZE_VER0
                a = FT.parse_attr(p, 0, sz, len(self.attrs))
                n = (len(p) - sz) // 8
                a.ids = list(struct.unpack_from(f"<{n}Q", p, sz)) if n > 0 else []
                self.attrs.append(a)
                self._id_map = None
                for cb in self._attr_listeners:
                    cb([a])
            elif t == F.REC["HEADER_FEATURE"]:
                (feat,) = struct.unpack_from("<Q", p, 0)
                self.features[feat] = bytes(p[8:])
                if feat == F.FEAT["EVENT_DESC"]:
                    self._apply_event_desc()
            elif t == F.REC["EVENT_UPDATE"]:
                kind, ident = struct.unpack_from("<QQ", p, 0)
                a = self.attr_for_id(ident)
                if kind == EVENT_UPDATE_NAME and a is not None:
                    a.name = FT.cstr(p[16:])
            elif t == F.REC["HEADER_BUILD_ID"]:
                self._pipe_build_ids += FT.build_ids(struct.pack("<IHH", t, rec.misc, rec.size) + p)
            elif t == F.REC["TIME_CONV"]:
                self.time_conv = p
            elif t == F.REC["AUXTRACE_INFO"]:
                self.auxtrace_info = p
        except (FeatureError, struct.error) as e:
            raise self.error(rec.offset, f"{rec.name} record does not decode ({e})") from None

    # -- records -------------------------------------------------------------------------
    def _source(self) -> Source:
        if self.pipe:
            if self.size is None:
                if self._walked:
                    raise self.error(self._src.offset, "a pipe can be read only once")
                self._walked = True
                return self._src
            return Source(self._f, self._prelude_end, None)
        return Source(self._f, self.data_offset, self.data_end)

    def records(self, progress: Callable[[int, int | None], None] | None = None) -> Iterator[Record]:
        """Every record in stream order (records inside COMPRESSED ones included, the
        COMPRESSED records themselves not). An AUXTRACE record's payload can be read with
        aux_chunks() before the next record is asked for."""
        self.truncation = None
        if self.pipe:
            yield from self._prelude_records
        yield from self._walk(self._source(), progress=progress)

    def aux_chunks(self, rec: Record, chunk: int = 16 << 20) -> Iterator[memoryview]:
        """The payload that follows `rec` (AUXTRACE), read in pieces; only while records()
        stands at rec. Pieces are views valid until the next one is asked for."""
        src, want = self._aux_at
        if want is not rec:
            raise RuntimeError("aux_chunks() of a record records() has left")
        self._aux_at = (src, None)
        yield from src.chunks(rec.aux_size, chunk)

    def _cut(self, src: Source, what: str, need: int) -> None:
        """The data ends at src.offset inside a record that needs `need` bytes. Lost: the
        bytes of that record present, and those missing up to the end the header declares
        (pipe mode: up to the end of that record)."""
        present = src.avail
        missing = need - present if self.pipe else self._declared_end - self.data_end
        self.truncation = Truncation(src.offset, missing, present, what)

    def _walk(self, src: Source, *, stop_at_kernel: bool = False, native=None,
              progress=None, off_fixed: int | None = None) -> Iterator[Record]:
        """Records of src. With native(src, off_fixed) -> stop, the records it can take go to
        the C scanner in bulk and only the others are handled here (nothing is yielded)."""
        unpack = struct.unpack_from
        zd = None
        carry = b""
        total = self.data_size
        start = src.offset
        step = 0
        while True:
            if src.avail < 8 and src.fill(8) < 8:
                if src.avail and off_fixed is None:
                    self._cut(src, "a record header", 8)
                break
            typ, misc, size = unpack("<IHH", src.mv, src.lo)
            off = off_fixed if off_fixed is not None else src.offset
            if size < 8:
                raise self.error(off, f"record at offset {off:#x} (type {typ}) has size {size} "
                                      f"< 8: the data section is damaged")
            if stop_at_kernel and (typ < F.USER_TYPE_START or typ in COMPRESSED or
                                   typ == F.REC["AUXTRACE"]):
                break
            if src.avail < size and src.fill(size) < size:
                if off_fixed is None:
                    self._cut(src, f"a {F.RECORD_NAMES.get(typ, f'type {typ}')} record", size)
                break
            if native is not None and typ not in COMPRESSED and typ not in STREAM_TYPES \
                    and typ != F.REC["HEADER_ATTR"]:
                native(src, off_fixed)
                if progress:
                    step += 1
                    if step % 8 == 0:
                        progress(src.offset - start, total)
                continue
            payload = bytes(src.mv[src.lo + 8:src.lo + size])
            src.consume(size)
            rec = Record(off, typ, misc, size, payload, compressed=off_fixed is not None)
            if typ in COMPRESSED:
                if native is not None:
                    native.count(typ)
                zd = zd or self._decompressor()
                data = payload
                if typ == F.REC["COMPRESSED2"]:
                    (n,) = unpack("<Q", payload, 0)
                    data = payload[8:8 + n]
                try:
                    plain = zd.feed(data)
                except Exception as e:     # zstd errors have no common base class
                    raise self.error(off, f"compressed record does not decompress ({e})") from None
                inner = Source(start=off, data=carry + plain)
                yield from self._walk(inner, native=native, off_fixed=off)
                carry = bytes(inner.mv[inner.lo:inner.hi])
                continue
            if typ in STREAM_TYPES:
                n = unpack("<Q" if typ == F.REC["AUXTRACE"] else "<I", payload, 0)[0] \
                    if len(payload) >= 8 else None
                if n is None:
                    raise self.error(off, f"{rec.name} record of {size} bytes is too short")
                rec.aux_size, rec.aux_offset = n, src.offset
                if native is not None:
                    native.note(rec)
                else:
                    self._aux_at = (src, rec)
                    yield rec
                    self._aux_at = (src, None)
                # the rest of the payload (all of it unless the caller read it)
                left = n - (src.offset - rec.aux_offset)
                if left > 0:
                    got = src.skip(left)
                    if got < left and off_fixed is None:
                        missing = left - got if self.pipe else self._declared_end - self.data_end
                        self.truncation = Truncation(rec.aux_offset + (n - left) + got,
                                                     missing, 0,
                                                     f"the payload of the {rec.name} record at "
                                                     f"byte {off} ({n} bytes announced)")
                        break
                continue
            if typ >= F.USER_TYPE_START:
                self.apply_user(rec)
                if native is not None:
                    native.note(rec)
                    continue
            yield rec
        if off_fixed is None and self.truncation is None and not self.pipe and \
                self.data_end < self._declared_end and src.offset >= self.data_end:
            self.truncation = Truncation(self.data_end, self._declared_end - self.data_end, 0,
                                         "the data section (at a record boundary)")
        if carry and off_fixed is None:
            self.notes.append(f"{len(carry)} bytes of an incomplete record at the end of the "
                              f"compressed data: left out")
        if progress and off_fixed is None:
            progress(src.offset - start, total)

    def _decompressor(self) -> _Decompressor:
        return _Decompressor(self)

    # -- ids and sample_id trailers ------------------------------------------------------
    def attr_for_id(self, ident: int) -> Attr | None:
        if self._id_map is None:
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

    def trailer_attr(self, rec: Record) -> Attr | None:
        """The event a non-SAMPLE kernel record's trailer belongs to (perf: the id at the
        position the first event's layout gives, counted from the end)."""
        if not self.attrs:
            return None
        a0 = self.attrs[0]
        if len(self.attrs) == 1 or not a0.sample_id_all:
            return a0
        st = a0.sample_type
        if st & F.SAMPLE_IDENTIFIER:
            pos = 1
        elif st & F.SAMPLE_ID:
            pos = 1 + bool(st & F.SAMPLE_CPU) + bool(st & F.SAMPLE_STREAM_ID)
        else:
            return a0
        if 8 * pos > len(rec.payload):
            return None
        (ident,) = struct.unpack_from("<Q", rec.payload, len(rec.payload) - 8 * pos)
        return a0 if ident == 0 else self.attr_for_id(ident)

    def sample_id(self, rec: Record) -> dict:
        """The sample_id_all trailer of a non-SAMPLE kernel record: pid, tid, time, id, cpu
        (those its event asks for); {} when the record has none."""
        if rec.type >= F.USER_TYPE_START or not self.attrs or not self.attrs[0].sample_id_all:
            return {}
        a = self.trailer_attr(rec)
        if a is None:
            return {}
        layout = self._trailer_layout(a.sample_type)
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

    def trailer_size(self, rec: Record) -> int:
        if rec.type >= F.USER_TYPE_START or not self.attrs or not self.attrs[0].sample_id_all:
            return 0
        a = self.trailer_attr(rec)
        return 8 * len(self._trailer_layout(a.sample_type)) if a else 0
