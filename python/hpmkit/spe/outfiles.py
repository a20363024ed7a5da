"""Output files of `hpmkit spe` commands: all or nothing, and one-line errors.

Every output is written to a temporary file next to its final path and renamed into place only
when all outputs of the command are complete, so a failure (a missing or read-only directory,
a full disk, an output name that is a directory) leaves nothing new behind: no partial file, no
temporary file. Missing folders of an output path are made when the outputs are opened (the
`--help` examples write `-o out/run`) and removed again if the command fails before publishing.
Failures are OutputError: one line naming the path, the reason and what to do.
"""
from __future__ import annotations

import os
import tempfile

from ..errors import OutputError, os_reason as _reason

__all__ = ["OutputError", "Outputs", "check", "error", "write_text"]


def error(path: str, e: OSError, hint: str) -> OutputError:
    return OutputError(f"cannot write {path}: {_reason(e)}; nothing was written; {hint}")


def _existing(d: str) -> str:
    """The nearest folder of `d` (itself or an ancestor) that exists."""
    while not os.path.exists(d):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d


def check(path: str, hint: str) -> None:
    """The checks that need no writing (so a command can fail before its work, not after): the
    nearest existing folder of the path is a folder that can be written to (missing folders
    below it are made later), the path is not a directory."""
    d = os.path.dirname(os.path.abspath(path))
    base = _existing(d)
    if not os.path.isdir(base):
        raise OutputError(f"cannot write {path}: {base} is not a directory; {hint}")
    if os.path.isdir(path):
        raise OutputError(f"cannot write {path}: it is a directory; remove it or {hint}")
    if os.path.exists(path) and not os.path.isfile(path):
        # renaming the finished file over /dev/null or a FIFO would replace it, not write to it
        raise OutputError(f"cannot write {path}: it is a device or FIFO, not a file; {hint}")
    if os.statvfs(base).f_flag & os.ST_RDONLY:
        raise OutputError(f"cannot write {path}: the file system is read-only; {hint}")
    if not os.access(base, os.W_OK):
        raise OutputError(f"cannot write {path}: permission denied on {base}; {hint}")


def _make_dirs(d: str, made: list[str]) -> None:
    """Make folder `d` and its missing parents, appending each one made to `made` (outermost
    first) so a failed command can take them away again."""
    missing = []
    while not os.path.exists(d):
        missing.append(d)
        d = os.path.dirname(d)
    for m in reversed(missing):
        os.mkdir(m)
        made.append(m)


class Outputs:
    """Temporary files for `paths`, published together by publish(); discarded on any error.

        with Outputs([a, b], hint="give another -o PREFIX") as out:
            fd = out.fd(a) ...          # write through the descriptors
            out.publish()
    """

    def __init__(self, paths: list[str], hint: str):
        self.paths = [os.fspath(p) for p in paths]
        self.hint = hint
        self.tmp: dict[str, str] = {}
        self.fds: dict[str, int] = {}
        self.published = False
        self.made: list[str] = []  # folders this command made, outermost first
        for p in self.paths:  # every path is checked before anything is created
            check(p, hint)
        try:
            for p in self.paths:
                _make_dirs(os.path.dirname(os.path.abspath(p)), self.made)
                fd, tmp = tempfile.mkstemp(prefix=".spe-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(p)))
                self.tmp[p], self.fds[p] = tmp, fd
        except OSError as e:
            self.discard()
            raise error(p, e, hint) from None

    def fd(self, path: str) -> int:
        return self.fds[path]

    def file(self, path: str, mode: str = "wb"):
        """A file object on the temporary file of `path` (it owns the descriptor from now on)."""
        f = os.fdopen(self.fds.pop(path), mode)
        self.fds[path] = -1
        return f

    def fail(self, e: OSError, path: str | None = None) -> OutputError:
        """The error to raise for a write that failed (the temporary files go at __exit__)."""
        return error(path or ", ".join(self.paths), e, self.hint)

    def publish(self) -> None:
        """Close the temporary files and rename them into place, all of them or none."""
        try:
            for p, fd in list(self.fds.items()):
                if fd >= 0:
                    os.close(fd)  # may report a delayed write error
                self.fds[p] = -1
        except OSError as e:
            raise self.fail(e) from None
        for p in self.paths:  # things may have changed while the data was written
            check(p, self.hint)
        mask = os.umask(0)
        os.umask(mask)
        done = []
        try:
            for p in self.paths:
                os.chmod(self.tmp[p], 0o666 & ~mask)  # mkstemp made it 0600
                os.replace(self.tmp[p], p)
                done.append(p)
        except OSError as e:
            for p in done:  # all or nothing
                try:
                    os.unlink(p)
                except OSError:
                    pass
            raise error(p, e, self.hint) from None
        self.published = True

    def discard(self) -> None:
        for p, fd in self.fds.items():
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fds = {p: -1 for p in self.fds}
        for tmp in self.tmp.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self.tmp = {}
        for d in reversed(self.made):  # a failed command leaves no new empty folder either
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.made = []

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, *exc) -> None:
        if not self.published:
            self.discard()


def write_text(path: str, text: str, hint: str) -> None:
    """One text file, complete or not at all."""
    with Outputs([path], hint) as out:
        try:
            with out.file(path, "w") as f:
                f.write(text)
        except OSError as e:
            raise out.fail(e, path) from None
        out.publish()
