"""perf.data container reading: header, attrs and ids, feature sections, records with offsets
(reader.PerfData), and the native SAMPLE scanner (scan.scan)."""
from .reader import Attr, PerfData, PerfDataError, Record

__all__ = ["Attr", "PerfData", "PerfDataError", "Record"]
