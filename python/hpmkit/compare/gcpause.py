"""Pause the cyclic garbage collector while building large trees of small containers.

Reducing 100k stacks creates millions of small lists and dicts and no cycles; with the
collector on, each generation-2 pass rescans all of them and the build turns quadratic
(9 s instead of 0.5 s for the flame-graph tree in bench/compare).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
