"""Errors hpmkit reports to the user. Each one renders as a single line saying what to do."""

from __future__ import annotations

import errno
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


class OutputError(HpmkitError):
    """An output file could not be written. The message names the file, the cause and what to
    do; the command left nothing new under that name."""

    exit_code = 1


def os_reason(e: OSError, writing: bool = True) -> str:
    """The cause of a failed file operation, in words (no errno names, no Python spelling).
    writing: the operation made a file (ENOENT then means a folder that takes none, like /proc)."""
    code = e.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "no space left on the device (disk or quota full)"
    if code == errno.EROFS:
        return "the file system is read-only"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if code == errno.ENOENT:
        return "the directory does not take new files" if writing else "no such file or directory"
    if code == errno.EFBIG:
        return "file too large for this file system or process limit"
    return e.strerror or str(e)


def os_hint(e: OSError, writing: bool = True) -> str:
    """What to do about a failed write (or, writing=False, any file operation), by its cause."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "choose a folder you can write to" if writing else "check its permissions"
    if writing and e.errno == errno.ENOENT:
        return "choose a folder you can write to"
    return "check the path"


def write_error(path: str | os.PathLike, e: OSError, option: str | None = None,
                partial: bool = False) -> OutputError:
    """The one-line error of a write of `path` that failed with `e`. `option` (e.g. "--html",
    or "-o DIR" with its own metavar) names the option to give another file to; `partial`: the file is a device or FIFO written in
    place, so what was written before the failure is out of our hands."""
    done = "the output is incomplete" if partial else "nothing was written"
    other = "write it elsewhere" if not option else f"give another {option}" + (
        "" if " " in option else " FILE")
    text = f"cannot write {os.fspath(path)}: {os_reason(e)}; {done}; {os_hint(e)} or {other}"
    return OutputError(" ".join(text.split()))   # one line, whatever the OS error said
