"""Progress of a long command on stderr, the same way for every hpmkit command.

On a terminal: a tqdm bar per stage (count or bytes, the current item beside it), removed
when the stage ends so the report that follows stays clean. Elsewhere (a pipe, a log file,
CI): one line per stage, so a log says where a slow run spent its time without a line per
file or per detector. Nothing with -q. Short commands print nothing at all: a stage is
shown only once the command has run for `delay` seconds (scripts and tests of quick runs
get an empty stderr).
"""
from __future__ import annotations

import os
import sys
import time
from typing import TextIO

# bars still drawn: the CLI closes them before it prints an error or "interrupted", so the
# one-line message starts on a line of its own
_ACTIVE: set["Progress"] = set()


STEPS = "{desc}{postfix} [{elapsed}]"   # the bar of a stage with neither total nor unit


class Progress:
    def __init__(self, command: str, quiet: bool = False, stream: TextIO | None = None,
                 delay: float = 1.0, tty: bool | None = None):
        self.command = command
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.tty = self.stream.isatty() if tty is None else tty
        self.t0 = time.monotonic()
        self.stage: str | None = None
        self.shown = False      # the current stage's line was printed (not a terminal)
        self.bar = None         # the current stage's tqdm bar (terminal)

    def __call__(self, stage: str, item: str | None = None, done: int | None = None,
                 total: int | None = None, unit: str = "") -> None:
        """Report progress in `stage`: on `item` (a file, a workload...), `done` of `total`
        units (None: one more step). unit "B" shows bytes."""
        if self.quiet:
            return
        if stage != self.stage:
            self.close()
            self.stage, self.shown = stage, False
        elapsed = time.monotonic() - self.t0
        if not self.tty:
            if not self.shown and elapsed >= self.delay:
                self._write(f"{self.command}: {stage} ({elapsed:.1f} s)\n")
                self.shown = True
            return
        if self.bar is None:
            from tqdm import tqdm
            # a stage of steps with no total and no unit (one step, or one per detector) shows
            # what it is on and for how long, not a bare count ("0it")
            steps = STEPS if not total and not unit else None
            self.bar = tqdm(total=total or None, desc=f"{self.command}: {stage}", file=self.stream,
                            leave=False, delay=max(0.0, self.delay - elapsed), **self._width(),
                            unit=unit or "it", unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000,
                            bar_format=steps)
            _ACTIVE.add(self)
        if total and self.bar.total != total:
            self.bar.total = total
            self.bar.bar_format = None
        if item is not None:
            self.bar.set_postfix_str(item, refresh=False)
        if done is None:
            self.bar.update(1)
        else:
            self.bar.update(max(0, done - self.bar.n))

    def _width(self) -> dict:
        """Follow the terminal's size; one that reports none (0 x 0: some emulators, a bare
        pseudo-terminal) gets 80 x 24, since tqdm would draw nothing."""
        try:
            size = os.get_terminal_size(self.stream.fileno())
        except (OSError, ValueError, AttributeError):
            size = os.terminal_size((0, 0))
        out = {"dynamic_ncols": True} if size.columns > 0 else {"ncols": 80}
        if size.lines <= 0:   # tqdm hides every bar below a screen of 0 lines
            out["nrows"] = 24
        return out

    def close(self) -> None:
        if self.bar is not None:
            try:
                self.bar.close()
            except (OSError, ValueError):   # stderr already gone: nothing to tidy
                pass
            self.bar = None
        _ACTIVE.discard(self)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):   # a closed stderr must not end the command
            pass


def close_all() -> None:
    """Remove every bar still drawn (before an error or interruption message)."""
    for p in list(_ACTIVE):
        p.close()
