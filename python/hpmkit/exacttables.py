"""Read the lab's exact-count tables, the one reader for every room that uses them.

`hpmkit lab record --exact` and `hpmkit lab suite` write them beside each profile
(`hpmkit.lab.record.write_exact`), from the lab sampler's per-block counts (docs/pes.md):

<name>.exact.tsv        priv function dso insns loads stores branches
                        instructions per function, every instruction counted
<name>.exact-paths.tsv.gz  insns stack
                        kernel instructions per call path, the stack root first as
                        `;`-joined function names (a sample's kernel frames at that code);
                        gzip, as deep paths repeat their prefixes (71 MB of text for the
                        bundled suite, 3.3 MB compressed); read plain as well

The lab's truth checks read the first, `hpmkit compare` both (its exact column).
"""
from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator

from .errors import FormatError, ReadError

EXACT_COLUMNS = ("priv", "function", "dso", "insns", "loads", "stores", "branches")
PATHS_COLUMNS = ("insns", "stack")
COUNTS = ("insns", "loads", "stores", "branches")
HINT = "record it again with hpmkit lab record --exact (or hpmkit lab suite)"


def paths_name(exact_name: str) -> str:
    """X.exact.tsv -> X.exact-paths.tsv.gz"""
    return exact_name.removesuffix(".exact.tsv") + ".exact-paths.tsv.gz"


def _open_text(path: str | os.PathLike):
    """The file as text, gunzipped when it starts with gzip's magic bytes."""
    f = open(path, "rb")
    if f.peek(2)[:2] != b"\x1f\x8b":
        return io.TextIOWrapper(f, encoding="utf-8", errors="replace")
    return io.TextIOWrapper(gzip.GzipFile(fileobj=f), encoding="utf-8", errors="replace")


def _lines(path: str | os.PathLike, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    n = 1
    try:
        with _open_text(path) as f:
            head = f.readline().rstrip("\n").split("\t")
            if tuple(head) != columns:
                raise FormatError(path, f"header is not '{' '.join(columns)}'", HINT)
            for n, line in enumerate(f, 2):
                v = line.rstrip("\n").split("\t")
                if len(v) != len(columns):
                    raise FormatError(path, f"line {n} has {len(v)} columns, not {len(columns)}", HINT)
                yield n, v
    except (OSError, EOFError, zlib.error) as e:
        if isinstance(e, OSError) and e.strerror:   # not there, not a file, no permission
            raise ReadError(path, f"cannot read: {e.strerror}") from None
        raise FormatError(path, f"damaged compressed data after line {n} ({e})", HINT) from None


def _count(path, n: int, name: str, text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise FormatError(path, f"line {n}: {name} '{text[:20]}' is not a count", HINT)
    return v


def read_exact(path: str | os.PathLike) -> list[dict]:
    """Rows of an exact.tsv as dicts, counts as integers."""
    out = []
    for n, v in _lines(path, EXACT_COLUMNS):
        row: dict = dict(zip(EXACT_COLUMNS, v))
        for k in COUNTS:
            row[k] = _count(path, n, k, row[k])
        out.append(row)
    return out


def read_exact_paths(path: str | os.PathLike) -> list[tuple[int, list[str]]]:
    """(kernel instructions, stack root -> leaf) per call path of an exact-paths.tsv."""
    out = []
    for n, (c, stack) in _lines(path, PATHS_COLUMNS):
        if not stack:
            raise FormatError(path, f"line {n}: no call path", HINT)
        out.append((_count(path, n, "insns", c), stack.split(";")))
    return out
