"""A write that fails is one line, never a traceback (issue: write errors): the line names the
file, the cause and what to do, the command exits nonzero and leaves no partial file, no
temporary file and no folder it made.

A full disk is /dev/full (every write fails with ENOSPC) and a folder that takes no new files is
/proc: neither needs a mount, and both work as root, which bypasses permission bits (a chmod 0500
folder would not fail for root). Outputs that are devices are written in place: renaming a
finished file over /dev/full or /dev/stdout would replace the device, so every test here also
checks that /dev/full is still the device afterwards.
"""
from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_interrupts import sides  # noqa: F401 - the same two context tables

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO / "python"))
CMD = [sys.executable, "-m", "hpmkit.cli"]
FULL = Path("/dev/full")


def hpmkit(*args, cwd, **kw):
    return subprocess.run([*CMD, *map(str, args)], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=300, **kw)


@pytest.fixture(autouse=True)
def dev_full_stays_a_device():
    if not (FULL.exists() and stat.S_ISCHR(FULL.stat().st_mode)):
        pytest.skip("/dev/full is not the character device here")
    yield
    assert stat.S_ISCHR(FULL.stat().st_mode), "/dev/full was replaced by a file"


def one_line(p: subprocess.CompletedProcess, *parts: str) -> str:
    assert p.returncode != 0, p.stderr
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("hpmkit: "), p.stderr
    for part in parts:
        assert part in p.stderr, (part, p.stderr)
    return p.stderr


def test_compare_on_a_full_disk(sides, tmp_path):
    p = hpmkit("compare", sides / "rv.ctx.tsv", "--vs", sides / "arm.ctx.tsv", "-q",
               "--json", "r.json", "--html", FULL, cwd=tmp_path)
    err = one_line(p, "cannot write /dev/full: no space left on the device", "--html FILE")
    assert p.returncode == 1 and "free some space" in err
    assert p.stdout == ""


def test_compare_into_a_folder_that_takes_no_files(sides, tmp_path):
    p = hpmkit("compare", sides / "rv.ctx.tsv", "--vs", sides / "arm.ctx.tsv", "-q",
               "--json", "/proc/hpmkit-test.json", cwd=tmp_path)
    # root finds out when the file is made (one line, exit 1); others before the work (exit 2)
    one_line(p, "/proc/hpmkit-test.json")
    assert not Path("/proc/hpmkit-test.json").exists()
    assert not [f for f in os.listdir("/proc") if f.startswith(".hpmkit-test")]


@pytest.mark.parametrize("args,parts", [
    (["profile", "export", "s.folded", "--format", "svg", "-o", FULL],
     ["cannot write /dev/full: no space left on the device", "give another -o FILE"]),
    (["profile", "import", "s.folded", "-o", "/proc/s.hpmprof"], ["/proc/s.hpmprof"]),
])
def test_profile_outputs(tmp_path, args, parts):
    (tmp_path / "s.folded").write_text("main;a;b 3\nmain;c 2\n")
    p = hpmkit(*args, cwd=tmp_path)
    one_line(p, *parts)
    assert sorted(os.listdir(tmp_path)) == ["s.folded"]
    assert not Path("/proc/s.hpmprof").exists()


def test_a_full_standard_output_is_one_line(tmp_path):
    (tmp_path / "s.folded").write_text("main;a;b 3\nmain;c 2\n" * 5000)
    with open(FULL, "w") as full:
        p = subprocess.run([*CMD, "profile", "export", "s.folded", "--format", "folded"], cwd=tmp_path,
                           env=ENV, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    one_line(p, "no space left on the device", "free some space")
    assert p.returncode == 1


def test_a_device_output_is_written_not_replaced(tmp_path):
    (tmp_path / "s.folded").write_text("main;a;b 3\n")
    p = hpmkit("profile", "export", "s.folded", "--format", "folded", "-o", "/dev/stdout", cwd=tmp_path)
    assert (p.returncode, p.stderr, p.stdout) == (0, "", "main;a;b 3\n")
    assert Path("/dev/stdout").is_symlink() or not Path("/dev/stdout").is_file()


def test_write_text_leaves_nothing_behind(tmp_path, monkeypatch):
    from hpmkit import outputs
    from hpmkit.errors import OutputError

    def full(*a):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(outputs.os, "replace", full)
    with pytest.raises(OutputError) as e:
        outputs.write_text(tmp_path / "new" / "deeper" / "r.html", "<html>" * 1000, "--html")
    assert str(e.value) == (f"cannot write {tmp_path}/new/deeper/r.html: no space left on the device "
                            "(disk or quota full); nothing was written; free some space or give "
                            "another --html FILE")
    assert os.listdir(tmp_path) == [], "no temporary file, and no folder made for it"


def test_write_text_follows_a_link_to_a_file(tmp_path):
    from hpmkit import outputs
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    outputs.write_text(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_a_failed_profile_save_is_one_line(tmp_path, monkeypatch):
    import pyarrow.parquet as pq
    from hpmkit.errors import OutputError
    from hpmkit.profile import ingest
    (tmp_path / "s.folded").write_text("main;a;b 3\n")
    prof = ingest(tmp_path / "s.folded")

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(OutputError, match=r"s\.hpmprof: no space left .* give another -o DIR\.hpmprof$"):
        prof.save(tmp_path / "out" / "s.hpmprof", "-o DIR.hpmprof")
    assert sorted(os.listdir(tmp_path)) == ["out", "s.folded"] and os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_profile_import_honours_the_umask(tmp_path, umask):
    (tmp_path / "s.folded").write_text("main;a;b 3\n")
    p = subprocess.run([*CMD, "profile", "import", "s.folded", "-o", "s.hpmprof"], cwd=tmp_path,
                       env=ENV, capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: os.umask(umask))
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE((tmp_path / "s.hpmprof").stat().st_mode) == 0o777 & ~umask
    for f in (tmp_path / "s.hpmprof").iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f
