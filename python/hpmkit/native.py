"""Load the C helpers that hpmkit's hot loops call through ctypes.

They are built by `make` (mk/*.mk) into build/native/lib<name>.so; HPMKIT_NATIVE_DIR points
elsewhere (an installed copy). A missing library is an error that says how to build it,
never a silent fall-back to a slow path.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .errors import HpmkitError

ROOT = Path(__file__).resolve().parents[2]
_loaded: dict[str, ctypes.CDLL] = {}


def native_dir() -> Path:
    env = os.environ.get("HPMKIT_NATIVE_DIR")
    return Path(env) if env else ROOT / "build" / "native"


def load(name: str) -> ctypes.CDLL:
    """The shared library lib<name>.so, loaded once."""
    if name not in _loaded:
        path = native_dir() / f"lib{name}.so"
        if not path.is_file():
            raise HpmkitError(f"{path} is missing: run 'make' in {ROOT} (it builds hpmkit's "
                              f"C helpers), or set HPMKIT_NATIVE_DIR")
        try:
            _loaded[name] = ctypes.CDLL(str(path))
        except OSError as e:
            raise HpmkitError(f"cannot load {path}: {e}; rebuild with 'make'") from e
    return _loaded[name]
