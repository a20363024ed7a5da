"""Plain-text tables and the number formats the reports share."""

from __future__ import annotations

import math
from collections.abc import Sequence


def render(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """Columns padded to their widest cell; align has one 'l' or 'r' per column."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def count(v: float | None) -> str:
    """A counter value: thousands separators; one decimal only when it is a mean with one."""
    if v is None:
        return "-"
    if not math.isfinite(v):
        return str(v)
    if v == int(v):
        return f"{int(v):,}"
    return f"{v:,.1f}"


def metric(v: float | None) -> str:
    """A derived value (IPC, MPKI, ratios): four significant digits, no exponent above 1000."""
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def ratio(a: float | None, b: float | None) -> float | None:
    """b / a, or None when it is undefined (a missing value or a zero baseline)."""
    if a is None or b is None or a == 0:
        return None
    return b / a


def ratio_text(r: float | None) -> str:
    return "-" if r is None else f"{r:.3f}"
