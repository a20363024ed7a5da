"""Errors hpmkit reports to the user. Each one renders as a single line saying what to do."""

from __future__ import annotations

import os


class HpmkitError(Exception):
    """Base of every error hpmkit expects; the CLI prints it as one line and exits exit_code."""

    exit_code = 1


class UsageError(HpmkitError):
    """The command line asks for something that cannot be done (e.g. --sort on an absent event)."""

    exit_code = 2


class InputError(HpmkitError):
    """An input file cannot be used. The message names the file, the problem and the fix."""

    default_hint = "check the path"

    def __init__(self, path: str | os.PathLike, detail: str, hint: str | None = None):
        self.path = os.fspath(path)
        self.detail = detail
        self.hint = self.default_hint if hint is None else hint
        # one line, whatever the file contained: details may quote file content
        text = f"{self.path}: {detail}" + (f"; {self.hint}" if self.hint else "")
        super().__init__(" ".join(text.split()))


class ReadError(InputError):
    """The file could not be opened or read (missing, permissions, a directory...)."""


class FormatError(InputError):
    """The file is not a valid hpm file of a format and version this hpmkit reads."""

    default_hint = "re-create it with the hpm core (hpm stat --json, or HPM_REGION_OUT)"
