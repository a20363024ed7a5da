"""perf.data reading: one streaming reader for every file perf reads (reader.PerfData: header,
attrs and ids, feature sections, records in stream order, AUXTRACE payloads, compressed
records, cut-short files), and the native SAMPLE scanner with perf's delivery order
(scan.scan)."""
from .features import Attr
from .reader import PerfData, PerfDataError, Record, Truncation

__all__ = ["Attr", "PerfData", "PerfDataError", "Record", "Truncation"]
